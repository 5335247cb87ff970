#!/bin/sh
# SPDX-License-Identifier: MIT
# torch_zoo_ab.sh - what recording costs on the real PyTorch loops of
# tests/bench/torch_zoo.py, each cost read inside one process (a benchmark,
# not a test): PyTorch's recorder by `--ab K` (K steps without it, K with
# it, in turn), tlm by `--tlm-ab K` under `tlm run` with TLM_DEBUG_PAUSE=1
# (K steps paused, K recorded, the writer's work for them drained and timed
# with them). Separate runs (torch_zoo.sh) differ by more than tlm's whole
# cost on a shared machine; steps interleaved in one process see the same
# machine. What a paused hook still costs (a call passed through, a few ns)
# is in neither side. ROUNDS runs of each, interleaved; prints every run's
# OFF and ON (ms of process CPU per step, all threads), then per loop the
# median of each side's added cost (ON - OFF, per run) and their ratio
# (issue 29 asks for at most 0.2).
#   sh tests/bench/torch_zoo_ab.sh [BUILD_DIR] [ROUNDS] [STEPS] [K] [LOOPS...]
# defaults: build 5 100 10 gpt resnet gpt2 many
# On a machine with a GPU (tests/gpu/run.sh): TLM_ZOO_LIB=path/libtlm.so runs
# on the real driver, libtlm.so preloaded directly (BUILD_DIR unused), with
# TLM_ZOO_PYTHON (default python3) holding PyTorch.
set -u
b=${1:-build} rounds=${2:-5} steps=${3:-100} k=${4:-10}
[ $# -gt 4 ] && shift 4 || set --
loops=${*:-gpt resnet gpt2 many}
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/tlm-zoo-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${TLM_ZOO_LIB:-}" ]; then
	py=${TLM_ZOO_PYTHON:-python3}
	pre=
	traced() { rm -f "$tmp/t.trace"; env LD_PRELOAD="$TLM_ZOO_LIB" TLM_SUMMARY=0 TLM_OUTPUT="$tmp/t.trace" "$@"; }
	nvidia-smi -L 2>/dev/null
else
	py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
	sim=$b/src/sim
	export TORCH_CUDNN_SDPA_DEPRIORITIZED=1 TLM_SIM_DEVICES=1 TLM_SIM_MEMORY=4G
	pre="$sim/libcuda.so.1 $sim/libnvidia-ml.so.1 $sim/libtlm_simblas.so"
	traced() { "$b/src/command/tlm" run --no-summary -f -o "$tmp/t.trace" --simulate 4G -- "$@"; }
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
one() { # LOOP WHO KEY CMD...: appends "LOOP WHO OFF ON"
	l=$1 who=$2 key=$3
	shift 3
	r=$("$@" 2>"$tmp/err" | awk -v k="$key" '$1 == k {print $2, $3}')
	[ -n "$r" ] || { echo "  $l $who: FAILED"; tail -3 "$tmp/err"; return; }
	echo "$l $who $r" >>"$tmp/all"
	echo "  $l $who: off $(echo "$r" | cut -d' ' -f1), on $(echo "$r" | cut -d' ' -f2) ms CPU per step"
}
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	echo "round $i"
	for l in $loops; do
		one "$l" recorder ab_cpu_ms env LD_PRELOAD="$pre" "$py" "$src/torch_zoo.py" "$l" --steps "$steps" --ab "$k"
		one "$l" tlm tlm_ab_cpu_ms traced env TLM_DEBUG_PAUSE=1 "$py" "$src/torch_zoo.py" "$l" --steps "$steps" --tlm-ab "$k"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "added ms CPU per step (ON - OFF in one process), median [min-max] of $rounds runs"
for l in $loops; do
	awk -v l="$l" -f "$src/zoo_median.awk" -f - "$tmp/all" <<'AWK'
	$1 == l { n[$2]++; x[$2, n[$2]] = $4 - $3 }
	END {
		if (!n["tlm"] || !n["recorder"]) { print l ": incomplete"; exit }
		t = med("tlm"); r = med("recorder")
		printf "%s: tlm %.3f [%.3f-%.3f], recorder %.3f [%.3f-%.3f], ratio %.2f\n", l, t, lo["tlm"], hi["tlm"],
			r, lo["recorder"], hi["recorder"], (r > 0) ? t / r : 0
	}
AWK
done
