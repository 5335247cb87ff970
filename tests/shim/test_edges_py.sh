#!/bin/sh
# Python at the edges: KeyboardInterrupt (Python re-raises SIGINT) reads
# "ended by signal 2", not "truncated"; a fork child leaving by os._exit
# keeps its events ("left by _exit"); the interpreter still sees SIG_DFL.
# usage: test_edges_py.sh LIBTLM TLM LIBPATH SCRIPT (LIBPATH: the driver and runtime double dirs)
set -eu
# (Python's KeyboardInterrupt and SIGTERM as a program starts with them)
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/signals.sh"
lib=$1 tlm=$2 sim=$3 py=$4
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null || tlm_skip python3 "python3 not found: Python edges not tested"
case "${TLM_TEST_PRELOAD_FIRST:-}" in *tsan*)
	# ThreadSanitizer runs handlers at its own safe points: Python's
	# kill(getpid(), SIGINT) returns before the handler ran and Python exits
	tlm_skip build "ThreadSanitizer build: signal timing not tested" ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pre="$lib"
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && pre="$TLM_TEST_PRELOAD_FIRST $lib"
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
run() { LD_LIBRARY_PATH="$sim" TLM_OUTPUT="$dir/$1-%p.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre" python3 "$py" "$1" 2> "$dir/$1.err"; }
set +e
run ki; ki=$?
run fork; fk=$?
set -e
check "[ $ki -eq 130 ]"   # died of SIGINT, as without tlm
check "[ $fk -eq 0 ]"
check "grep -q '^sigterm True' '$dir/ki.err'"
check "[ \$(ls '$dir'/ki-*.trace | wc -l) -eq 1 ]"
"$tlm" info "$dir"/ki-*.trace > "$dir/ki.info"
check "grep -q '^state:        ended by signal 2 (SIGINT)$' '$dir/ki.info'"
check "grep -q '^events:       3$' '$dir/ki.info'"
for t in "$dir"/fork-*.trace; do "$tlm" info "$t"; done > "$dir/fork.info"
check "[ \$(grep -c '^state:        clean (left by _exit)$' '$dir/fork.info') -eq 1 ]"
check "[ \$(grep -c '^state:        clean$' '$dir/fork.info') -eq 1 ]"
check "grep -q '^events:       1$' '$dir/fork.info'"
if [ $fail -ne 0 ]; then cat "$dir"/*.err "$dir"/*.info; exit 1; fi
echo "1 passed, 0 failed"
