#!/bin/sh
# SPDX-License-Identifier: MIT
# vary_heaptrack.sh - what tlm and KDE heaptrack add per event on varying
# native stacks (bench_vary: 8 call paths, depth 10-29, a shifting stack
# pointer, so that whole-stack caches miss), a benchmark, not a test (issue
# 29 asks for at most 1/3 of heaptrack's cost). Each round runs, in turn:
# bench_vary cuda plain, then under each LIB given (libtlm.so preloaded,
# on the simulated driver), then bench_vary malloc plain and under
# heaptrack (its interpreter process counted: /usr/bin/time waits for it).
# Each tool's added cost per event is its run minus the plain run just
# before it, over 2 x PAIRS events: wall time and CPU (user + sys, every
# thread and child). Prints each round, then the medians.
#   sh tests/bench/vary_heaptrack.sh [BUILD_DIR] [PAIRS] [ROUNDS] [LIB...]
# defaults: build 1000000 7 BUILD_DIR/src/recording/libtlm.so
set -u
b=$(cd "${1:-build}" && pwd)
pairs=${2:-1000000} rounds=${3:-7}
[ $# -gt 3 ] && shift 3 || set --
libs=${*:-$b/src/recording/libtlm.so}
command -v heaptrack >/dev/null 2>&1 || { echo "vary_heaptrack.sh: heaptrack is not installed"; exit 2; }
tmp=$(mktemp -d /tmp/tlm-vary.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bench=$b/tests/bench/bench_vary
# CMD...: "WALL_NS CPU_NS" of the whole command
run() {
	/usr/bin/time -f '%e %U %S' "$@" 2>"$tmp/time" >/dev/null || { echo "vary_heaptrack.sh: $* failed" >&2; exit 1; }
	tail -1 "$tmp/time" | awk '{printf "%.0f %.0f", $1 * 1e9, ($2 + $3) * 1e9}'
}
added() { # NAME PLAIN TOOL: one line, ns per event
	echo "$2 $3" | awk -v n=$((2 * pairs)) -v w="$1" '{printf "%s wall %.0f cpu %.0f\n", w, ($3 - $1) / n, ($4 - $2) / n}'
}
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	p=$(run env LD_LIBRARY_PATH="$b/src/sim" "$bench" cuda "$pairs")
	for l in $libs; do
		t=$(run env LD_LIBRARY_PATH="$b/src/sim" LD_PRELOAD="$l" TLM_SUMMARY=0 TLM_FORCE=1 \
			TLM_OUTPUT="$tmp/t.trace" "$bench" cuda "$pairs")
		rm -f "$tmp"/t.trace*
		added "tlm:$l" "$p" "$t" | tee -a "$tmp/all"
	done
	m=$(run "$bench" malloc "$pairs")
	h=$(run heaptrack -o "$tmp/ht" "$bench" malloc "$pairs")
	rm -f "$tmp"/ht*
	added heaptrack "$m" "$h" | tee -a "$tmp/all"
done
echo "medians of $rounds rounds, ns added per event:"
awk -f "$(dirname "$0")/zoo_median.awk" -f - "$tmp/all" <<'AWK'
	{ n[$1]++; x[$1, n[$1]] = $3; n[$1 " cpu"]++; x[$1 " cpu", n[$1 " cpu"]] = $5; if (!seen[$1]++) who[++k] = $1 }
	END { for (i = 1; i <= k; i++) printf "  %s wall %s cpu %s\n", who[i], med(who[i]), med(who[i] " cpu") }
AWK
