#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/simulate.md's measurements: the tiny GPT's training step on the
# simulated device (CPU only), plain, under tlm (Python stacks on, native
# stacks default and off) and under torch.cuda.memory._record_memory_history
# (stacks="python"). Each configuration runs ROUNDS times (default 3),
# interleaved; prints every run's median step time (wall and CPU time of all
# the process's threads) and the lowest medians of each configuration (the
# least disturbed by other load).
#   sh tests/torch/real/bench.sh [BUILD_DIR] [ROUNDS] [STEPS]
set -u
b=${1:-build} rounds=${2:-3} steps=${3:-100}
src=$(cd "$(dirname "$0")" && pwd)
py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
sim=$b/src/sim
export TORCH_CUDNN_SDPA_DEPRIORITIZED=1 TLM_SIM_DEVICES=1 TLM_SIM_MEMORY=1G
pre="$sim/libcuda.so.1 $sim/libnvidia-ml.so.1 $sim/libtlm_simblas.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() { # NAME CMD...: the median step time in ms
	name=$1
	shift
	ms=$("$@" 2>/dev/null | awk '/^step_ms/ {print $2, $5}')
	echo "$name $ms" >>"$tmp/all"
	echo "  $name: ${ms:-FAILED} (ms wall, ms CPU)"
}
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	echo "round $i"
	one plain env LD_PRELOAD="$pre" "$py" "$src/bench.py" --steps "$steps"
	one tlm "$b/src/command/tlm" run --no-summary -f -o "$tmp/t.trace" --simulate 1G -- "$py" "$src/bench.py" --steps "$steps"
	one tlm-python-only env TLM_STACK_DEPTH=0 "$b/src/command/tlm" run --no-summary -f -o "$tmp/t.trace" --simulate 1G -- \
		"$py" "$src/bench.py" --steps "$steps"
	one torch-recorder env LD_PRELOAD="$pre" "$py" "$src/bench.py" --steps "$steps" --history
done
echo "lowest median per configuration (ms per step: wall, CPU):"
for c in plain tlm tlm-python-only torch-recorder; do
	w=$(awk -v c="$c" '$1 == c {print $2}' "$tmp/all" | sort -n | head -n 1)
	p=$(awk -v c="$c" '$1 == c {print $3}' "$tmp/all" | sort -n | head -n 1)
	echo "  $c $w $p"
done
