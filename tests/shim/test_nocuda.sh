#!/bin/sh
# No libcuda loaded: each recorded call used to repeat a failed driver
# look-up (a dlopen of libcuda.so.1, about 17-45 us); now it is repeated only
# after a new object is loaded. The bound (8 us a call) is 10x the measured
# cost on a busy 2-core machine and far below the old one.
# usage: test_nocuda.sh LIBTLM TLM NOCUDA DOUBLEDIR (build/src/sim/runtime: the runtime double)
set -eu
lib=$1 tlm=$2 prog=$3 sim=$4
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
[ -z "${TLM_TEST_PRELOAD_FIRST:-}" ] || tlm_skip build "sanitized build: the timing of a call is not tested"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/lib"
cp "$sim/libcudart.so.13" "$dir/lib/" # the runtime alone: no libcuda.so.1
out=$(LD_LIBRARY_PATH="$dir/lib" TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 LD_PRELOAD="$lib" "$prog")
echo "$out"
ns=${out%% ns*}
fail=0
[ "$ns" -lt 8000 ] || { echo "failed: $ns ns per call (bound 8000)"; fail=1; }
echo "$out" | grep -q ', 0 succeeded$' || { echo "failed: calls succeeded without a driver"; fail=1; }
"$tlm" info "$dir/t.trace" > "$dir/info"
grep -q '^events:       20001$' "$dir/info" || { echo "failed: not every call recorded"; cat "$dir/info"; fail=1; }
[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
