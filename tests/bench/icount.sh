#!/bin/sh
# SPDX-License-Identifier: MIT
# icount.sh - the recording path's cost as instruction counts, against limits.
#
# A regression guard that does not time anything (CI machines are shared and
# noisy): each workload runs under valgrind's callgrind with N and 2N pairs,
# plain and under libtlm.so; tlm's instructions per event are
#   ((tlm(2N) - tlm(N)) - (plain(2N) - plain(N))) / (2 N),
# so start-up, exit and the workload's own work cancel out, and everything
# the recording adds (hooks, stack capture, rings, the writer thread's merge,
# encoding) stays in. Each figure must stay at or below its limit in
# LIMITS (what it measured when the limit was set plus 15 %: LIMITS says
# when a limit may change), so a slow creep fails too. The writer drains once,
# at exit, into a ring no producer fills (TLM_DRAIN_MS, TLM_RING_SIZE): the
# number of timed drains and of waits follows a run's wall time under
# valgrind, which the machine's load sets, and spread the same build's
# figures past the limits. Chunks are written plain (TLM_COMPRESS=0): zstd's
# work depends on the bytes, whose times differ run to run, and was the
# whole of the rest of the spread (callgrind by function, one build, three
# runs of the python workload: 800,000 instructions apart, all of it in
# libzstd and crc32; plain, 2,000 apart). zstd is a library's cost, taken
# only while it pays (TLM_TW_ZSTD_PAYS). Skipped without
# valgrind, or in a sanitized build (the counts would measure the sanitizer).
#
# usage: icount.sh BUILD_DIR LIMITS [SANITIZE]
# TLM_ICOUNT_LIB: another libtlm.so to count (a build to compare with);
# TLM_ICOUNT_ONLY: the workloads to count (names, space-separated), not all.
set -u
build=$1
limits=$2
san=${3:-none}
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
if [ "$san" != none ] && [ -n "$san" ]; then
	tlm_skip build "icount: not measured: sanitized build ($san)"
fi
command -v valgrind >/dev/null 2>&1 || tlm_skip valgrind "icount: not measured: valgrind not installed"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=$(cd "$build" && pwd)
sim=$build/src/sim
lib=${TLM_ICOUNT_LIB:-$build/src/recording/libtlm.so} # another build's, to compare

# total instructions of one run: count MODE(tlm|plain) CMD...
count() {
	mode=$1
	shift
	out=$work/cg.$$
	rm -f "$out"
	if [ "$mode" = tlm ]; then
		env LD_PRELOAD="$lib" TLM_OUTPUT="$work/t.trace" TLM_SUMMARY=0 TLM_DRAIN_MS=10000 TLM_RING_SIZE=1048576 TLM_COMPRESS=0 \
			valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >"$work/log" 2>&1
	else
		valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >"$work/log" 2>&1
	fi
	st=$?
	rm -f "$work"/t.trace*
	if [ $st -ne 0 ] || [ ! -s "$out" ]; then
		echo "icount: failed ($st): $*" >&2
		tail -5 "$work/log" >&2
		echo x
		return
	fi
	sed -n 's/^totals: *//p' "$out"
}

fail=0
# check NAME N K CMD-WITH-@N@: per-event instructions against the limit NAME;
# the command makes K*@N@ pairs (plus a constant)
check() {
	name=$1
	n=$2
	k=$3
	shift 3
	case " ${TLM_ICOUNT_ONLY:-$name} " in *" $name "*) ;; *) return ;; esac # a developer's subset
	lim=$(awk -v k="$name" '$1 == k { print $2 }' "$limits")
	if [ -z "$lim" ]; then
		echo "icount: $name: no limit in $limits"
		fail=1
		return
	fi
	r=""
	for mode in plain tlm; do
		for m in 1 2; do
			c=$(count "$mode" $(echo "$@" | sed "s/@N@/$((n * m))/g"))
			r="$r $c"
		done
	done
	case $r in *x*) fail=1; return ;; esac
	# shellcheck disable=SC2086
	per=$(echo $r | awk -v n="$n" -v k="$k" '{ printf "%d", (($4 - $3) - ($2 - $1)) / (2 * n * k) }')
	if [ "$per" -le "$lim" ]; then
		echo "icount: $name: $per instructions per event (limit $lim)"
	else
		echo "icount: $name: $per instructions per event, over the limit $lim"
		fail=1
	fi
}

export PYTHONHASHSEED=0 # the Python runs' own work the same in each
export LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# one call path of 30 frames, repeated: the unwind cache hits
check repeated 2000 1 "$build/tests/bench/bench_shim" --child @N@ 30
# the same with stacks off: the fixed part every event pays
TLM_STACK_DEPTH=0 check off 2000 1 "$build/tests/bench/bench_shim" --child @N@ 30
# 8 paths, recursion depth 10-29, shifting stack pointer: the cache misses
check varying 2000 1 "$build/tests/bench/bench_vary" cuda @N@ 8 20
# 4 producer threads into their rings, merged by the writer
check threads 1000 4 "$build/tests/bench/bench_vary" cuda @N@ 8 20 4
# the torch tap: 128 stacks (16 paths x 8 depths) through one allocator call
# site, at their own stack positions, as a training step's blocks come
check tap 2000 1 "$build/tests/bench/bench_tap" @N@ 16 8
# Python: 10 nested calls per pair from 16 paths (native + Python stacks)
# the interpreter itself, not a wrapper script (pyenv's shims are scripts)
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$py" ] && [ -x "$py" ]; then
	TLM_TEST_CUDART=$sim/runtime/libcudart.so.13 check python 500 3 "$py" "$(dirname "$0")/../python/bench_paths.py" 16 10 @N@
	# the same, each pair 0-4 calls deeper than 10, the depth changing from
	# one pair to the next under the same outer frames (pywalk.c realign)
	TLM_TEST_CUDART=$sim/runtime/libcudart.so.13 check python_shift 500 3 "$py" "$(dirname "$0")/../python/bench_paths.py" 16 10 @N@ 5
	# the torch tap from Python: 16 paths, 10 calls deeper, 2 blocks per
	# line allocated and then freed (a free: its Python frames), 3 runs
	check tap_python 500 6 "$py" "$(dirname "$0")/bench_tap.py" 16 10 @N@ 2
else
	tlm_skip_case python3 "icount: python: not measured: python3 not found" || fail=1
fi
exit $fail
