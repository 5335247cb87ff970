#!/bin/sh
# SPDX-License-Identifier: MIT
# torch_zoo.sh - what recording costs on real PyTorch training loops (a
# benchmark, not a test): each loop of tests/bench/torch_zoo.py (the tiny
# GPT, ResNet-18 through cuDNN, transformers' GPT-2, many small tensors) on
# the simulated device, three ways: plain (the simulated device alone),
# under tlm (default stacks: native and Python), and under PyTorch's own
# recorder (_record_memory_history(stacks="python"), no tlm). The variants
# are interleaved, ROUNDS runs each; a figure is the process's CPU time (user
# + system, all threads) per training step, because wall time on a shared
# machine measures the other load. Prints every run, then per loop the
# median and the spread (min-max) of each variant, the added CPU per step of
# tlm and of the recorder (medians, minus plain's) and their ratio (issue 29
# asks for at most 0.2), and the machine's load average before and after.
#   sh tests/bench/torch_zoo.sh [BUILD_DIR] [ROUNDS] [STEPS] [LOOPS...]
# defaults: build 5 100 gpt resnet gpt2 many. TLM_ZOO_ENV="VAR=VALUE ..." is
# put in the environment of the tlm runs (e.g. TLM_DEBUG_STACK_STATS=1).
# TLM_ZOO_BASE=OTHER_BUILD_DIR adds a variant "base": tlm of that build, in
# the same rounds (before and after figures of a change, paired).
set -u
b=${1:-build} rounds=${2:-5} steps=${3:-100}
[ $# -gt 3 ] && shift 3 || set --
loops=${*:-gpt resnet gpt2 many}
src=$(cd "$(dirname "$0")" && pwd)
py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
sim=$b/src/sim
tlm=$b/src/command/tlm
export TORCH_CUDNN_SDPA_DEPRIORITIZED=1 TLM_SIM_DEVICES=1 TLM_SIM_MEMORY=4G
pre="$sim/libcuda.so.1 $sim/libnvidia-ml.so.1 $sim/libtlm_simblas.so"
tmp=$(mktemp -d /tmp/tlm-zoo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
one() { # LOOP VARIANT CMD...: appends "LOOP VARIANT MEAN MEDIAN BLOCKS"
	l=$1 v=$2
	shift 2
	r=$("$@" 2>"$tmp/err" | awk '/^step_cpu_ms/ {print $2, $3, $5}')
	[ -n "$r" ] || { echo "  $l $v: FAILED"; tail -3 "$tmp/err"; return; }
	echo "$l $v $r" >>"$tmp/all"
	echo "  $l $v: $r (ms CPU per step: mean, median; blocks per step)"
}
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	echo "round $i"
	for l in $loops; do
		one "$l" plain env LD_PRELOAD="$pre" "$py" "$src/torch_zoo.py" "$l" --steps "$steps"
		one "$l" tlm env ${TLM_ZOO_ENV:-} "$tlm" run --no-summary -f -o "$tmp/t.trace" --simulate 4G -- \
			"$py" "$src/torch_zoo.py" "$l" --steps "$steps"
		[ -n "${TLM_ZOO_BASE:-}" ] && one "$l" base env ${TLM_ZOO_ENV:-} "$TLM_ZOO_BASE/src/command/tlm" run \
			--no-summary -f -o "$tmp/t.trace" --simulate 4G -- "$py" "$src/torch_zoo.py" "$l" --steps "$steps"
		one "$l" recorder env LD_PRELOAD="$pre" "$py" "$src/torch_zoo.py" "$l" --steps "$steps" --history
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ms CPU per step (mean over $steps steps), median [min-max] of $rounds runs; added = median - plain's"
for l in $loops; do
	awk -v l="$l" -f "$src/zoo_median.awk" -f - "$tmp/all" <<'AWK'
	$1 == l { n[$2]++; x[$2, n[$2]] = $3; blocks = $5 }
	END {
		if (!n["plain"] || !n["tlm"] || !n["recorder"]) { print l ": incomplete"; exit }
		p = med("plain"); t = med("tlm"); r = med("recorder")
		printf "%s (%.0f blocks/step): plain %.3f [%.3f-%.3f]  tlm %.3f [%.3f-%.3f]  recorder %.3f [%.3f-%.3f]\n",
			l, blocks, p, lo["plain"], hi["plain"], t, lo["tlm"], hi["tlm"], r, lo["recorder"], hi["recorder"]
		printf "  added: tlm %.3f, recorder %.3f, ratio %.2f; tlm per block event %.0f ns\n",
			t - p, r - p, (r > p) ? (t - p) / (r - p) : 0, blocks ? (t - p) * 1e6 / (2 * blocks) : 0
		if (n["base"]) {
			q = med("base")
			printf "  base %.3f [%.3f-%.3f]: added %.3f, ratio %.2f\n", q, lo["base"], hi["base"], q - p,
				(r > p) ? (q - p) / (r - p) : 0
		}
	}
AWK
done
