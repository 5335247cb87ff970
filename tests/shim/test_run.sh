#!/bin/sh
# `tlm run`: preloads libtlm.so, prints the end-of-run report on stderr,
# writes the trace where --output says, and exits with the program's status.
# usage: test_run.sh TLM WORKLOAD SIMDIR
set -eu
tlm=$1 wl=$2 sim=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LD_LIBRARY_PATH="$sim"
# a sanitized build's runtime must be preloaded first; tlm run keeps it first
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && export LD_PRELOAD="$TLM_TEST_PRELOAD_FIRST"
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }

# a normal run: status 0, summary on stderr, nothing of it on stdout
"$tlm" run --output "$dir/a.trace" -- "$wl" burst 10 > "$dir/out" 2> "$dir/err"
check "[ -s '$dir/a.trace' ]"
check "grep -q '^tlm: pid [0-9]*, .*exit clean, 20 events, lost events 0$' '$dir/err'"
check "grep -q '^full report: tlm report $dir/a.trace$' '$dir/err'"
check "! grep -q 'full report' '$dir/out'"
# a rerun replaces a fixed --output
"$tlm" run --no-summary --output "$dir/a.trace" -- "$wl" burst 5 2> "$dir/err2"
check "[ ! -e '$dir/a.trace.1' ]"
check "[ ! -s '$dir/err2' ]"
# the program's exit status and death by signal come back
set +e
"$tlm" run --no-summary --output "$dir/b.trace" -- "$wl" no-such-scenario 2>/dev/null
st=$?
"$tlm" run --no-summary --output "$dir/c.trace" -- "$wl" kill9 5 50 2>/dev/null
sk=$?
"$tlm" run -- /nonexistent/program 2> "$dir/err3"
sn=$?
"$tlm" run 2> "$dir/err4"
su=$?
set -e
check "[ $st -eq 64 ]"
check "[ $sk -eq 137 ]"
check "[ $sn -eq 127 ]"
check "grep -q 'tlm run: cannot run /nonexistent/program' '$dir/err3'"
check "[ $su -eq 64 ]"
check "grep -q '^usage: tlm run' '$dir/err4'"
if [ $fail -ne 0 ]; then
	cat "$dir/err" "$dir/out"
	exit 1
fi
echo "1 passed, 0 failed"
