#!/bin/sh
# Stacks that vary, from threads whose first events race: every stack the
# shim computed (walked or taken from its cache) equals libunwind's own
# unwind (TLM_DEBUG_STACK_VERIFY=1), the walk handled them (none left to
# libunwind), and the trace has every event. Under TSan the race of first
# events is checked too (the suite runs there with halt_on_error=1).
# usage: test_stacks.sh WL_STACKS TLM
set -eu
wl=$1
tlm=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
threads=8 pairs=300
# Under TSan, libunwind's own per-thread trace cache destructor (made by the
# unw_backtrace that verification calls on each worker) crashes inside TSan's
# mutex interceptor at thread exit: there, only the race of first events and
# the counts are checked, not the verification.
verify=1
case "${TLM_TEST_PRELOAD_FIRST:-}" in *tsan*) verify=0 ;; esac
LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST:}$TLM_TEST_LIBTLM" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" \
	TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 TLM_DEBUG_STACK_VERIFY=$verify TLM_DEBUG_STACK_STATS=1 \
	"$wl" $threads $pairs 2>"$dir/err" || { cat "$dir/err"; echo "FAIL: the workload failed"; exit 1; }
cat "$dir/err"
fail() { echo "FAIL: $*"; exit 1; }
if [ $verify = 1 ]; then
line=$(grep 'stack cache verification' "$dir/err") || fail "no verification line"
# exactly: N cached stacks checked, 0 differed; M walked stacks checked, 0 differed
echo "$line" | grep -Eq ' [1-9][0-9]* cached stacks checked, 0 differed; [1-9][0-9]* walked stacks checked, 0 differed$' ||
	fail "a computed stack differed from libunwind's: $line"
fi
stats=$(grep 'stack cache: ' "$dir/err") || fail "no stats line"
hits=$(echo "$stats" | sed -E 's/.*: ([0-9]+) hits, ([0-9]+) misses \(([0-9]+) of them.*/\1/')
misses=$(echo "$stats" | sed -E 's/.*: ([0-9]+) hits, ([0-9]+) misses \(([0-9]+) of them.*/\2/')
slow=$(echo "$stats" | sed -E 's/.*: ([0-9]+) hits, ([0-9]+) misses \(([0-9]+) of them.*/\3/')
[ $((hits + misses)) -eq $((threads * pairs * 2)) ] || fail "captures $hits + $misses != $((threads * pairs * 2))"
[ "$hits" -gt 0 ] || fail "the repeated stack never hit the cache"
[ "$slow" -eq 0 ] || fail "$slow stacks left to libunwind on plain frame-pointer code"
"$tlm" info "$dir/t.trace" >"$dir/info" || fail "tlm info failed"
grep -Eq "^events: +$((threads * pairs * 2))$" "$dir/info" || { cat "$dir/info"; fail "events != $((threads * pairs * 2))"; }
grep -Eq '^state: +clean' "$dir/info" || fail "trace not clean"
echo "ok: $threads threads, $((threads * pairs * 2)) events, $hits hits, $misses misses, all equal to libunwind's"
