#!/bin/sh
# A thread blocked inside a hooked free (it returns 4 s later) and one
# cancelled there: the main thread's 2000 events are written while they are
# stuck, the late one is written and flagged (tlm info: "late: 1"), the
# cancelled one is counted lost ("lost: 1"), and nothing else is missing.
# usage: test_stuck.sh WL_STUCK TLM
set -eu
wl=$1
tlm=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST:}$TLM_TEST_LIBTLM" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" \
	TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 TLM_COMPRESS=0 TLM_DRAIN_MS=20 TLM_SIM_SLOW_FREE_MS=4000 \
	"$wl" "$dir/t.trace" >"$dir/out" 2>"$dir/err" || { cat "$dir/out" "$dir/err"; fail "the workload failed"; }
cat "$dir/out" "$dir/err"
grew=$(sed -n 's/^grew //p' "$dir/out")
# 2000 events are at least 4000 bytes (uncompressed)
[ "${grew:-0}" -ge 4000 ] || fail "the trace grew by ${grew:-?} bytes while two threads were stuck: events held back"
grep -q 'inside one CUDA call for more than' "$dir/err" || fail "the stuck thread was not reported"
"$tlm" info "$dir/t.trace" >"$dir/info" || fail "tlm info failed"
cat "$dir/info"
# 2 (warm-up) + 2 (A's and B's allocations) + 2000 + A's late free
grep -Eq '^events: +2005$' "$dir/info" || fail "events != 2005"
grep -Eq '^late: +1 ' "$dir/info" || fail "the late free is not flagged"
grep -Eq '^lost: +1$' "$dir/info" || fail "the cancelled thread's free is not counted lost"
grep -Eq '^state: +clean' "$dir/info" || fail "trace not clean"
echo "ok"
