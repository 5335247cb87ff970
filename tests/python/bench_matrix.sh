#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_matrix.sh - bench_paths.py on every pyenv CPython 3.8-3.13 with 1, 16
# and 256 call paths, plain and under libtlm.so, interleaved (plain, tlm,
# plain, tlm, ...) so that a machine whose speed drifts affects both alike.
# Prints, per version and path count, the added cost per event in ns,
#   (median tlm - median plain) / 2, and (min tlm - min plain) / 2,
# of wall time and of the process's CPU time (all threads, the writer's too;
# the steadier figure on a loaded machine), and the unwind cache's hits and
# misses (TLM_DEBUG_STACK_STATS).
# A benchmark, not a test: figures go into notes with this command.
#
# usage: tests/python/bench_matrix.sh BUILD_DIR [RUNS] [ITERATIONS]
set -eu
build=$(cd "$1" && pwd)
runs=${2:-5}
iters=${3:-20000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TLM_TEST_CUDART="$build/src/sim/runtime/libcudart.so.13" LD_LIBRARY_PATH="$build/src/sim" TLM_SUMMARY=0
export TLM_OUTPUT="$work/t-%p.trace"
lib=$build/src/recording/libtlm.so
# median and minimum of column COL of stdin
stats() { sort -n -k"$1" | awk -v c="$1" '{ v[NR] = $c } END { printf "%s %s", v[int((NR + 1) / 2)], v[1] }'; }
half() { echo $((($1 - $2) / 2)); }
printf '%-8s %5s %10s %10s %9s %9s %9s %9s  %s\n' python paths "plain" "tlm" "wall med" "wall min" "cpu med" \
	"cpu min" "stack cache"
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python3 2>/dev/null | tail -1)
	[ -n "$py" ] && [ -x "$py" ] || { echo "$v: not installed"; continue; }
	for p in 1 16 256; do
		: >"$work/plain"
		: >"$work/tlm"
		i=0
		while [ $i -lt "$runs" ]; do
			"$py" "$here/bench_paths.py" $p 10 "$iters" >>"$work/plain"
			LD_PRELOAD=$lib "$py" "$here/bench_paths.py" $p 10 "$iters" >>"$work/tlm"
			rm -f "$work"/t-*
			i=$((i + 1))
		done
		# shellcheck disable=SC2046
		set -- $(stats 1 <"$work/plain") $(stats 1 <"$work/tlm") $(stats 2 <"$work/plain") $(stats 2 <"$work/tlm")
		st=$(LD_PRELOAD=$lib TLM_DEBUG_STACK_STATS=1 "$py" "$here/bench_paths.py" $p 10 5000 2>&1 >/dev/null |
			sed -n 's/.*stack cache: \([0-9]*\) hits, \([0-9]*\) misses.*/\1 hits, \2 misses/p')
		rm -f "$work"/t-*
		printf '%-8s %5s %10s %10s %9s %9s %9s %9s  %s\n' \
			"$("$py" -c 'import platform; print(platform.python_version())')" $p "$1" "$3" \
			"$(half "$3" "$1")" "$(half "$4" "$2")" "$(half "$7" "$5")" "$(half "$8" "$6")" "$st"
	done
done
