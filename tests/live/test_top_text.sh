#!/bin/sh
# SPDX-License-Identifier: MIT
# `tlm top` as plain text (docs/top.md): the program of test_top_tmux.sh
# (holds 123 MiB, then 456 MiB, each until told to go on) on the simulated
# device, and:
#  1. --once in each state: the device row and the live site, exactly, in
#     the trace within LAT_MAX s of the allocation (the drain latency);
#  2. --interval following it to its end: both states in order, then
#     "ended (exit)", exit 0, by itself;
#  3. the process killed (SIGKILL: no END record): --interval notices the pid
#     is gone and ends with "truncated"; --once on that trace says the same;
#  4. the trace cut inside its last chunk: --once reads what is whole;
#  5. a job directory, ranks 1 and 0 (env RANK) holding 456 and 123 MiB: one
#     row per rank in rank order;
#  6. bad usage: exit 64; --once on a path that is not there: exit 2;
#  7. the report's rules: on the native training loop of tests/steps (40
#     steps, 8 KiB kept per step: fewer allocations than the window, so the
#     window is the whole run) --once gives the steps, the growth per step and
#     the forecast `tlm report` gives.
# usage: test_top_text.sh TLM LIVE_WL STEPS_WORKLOAD
set -u
tlm=$1 wl=$2 sw=$3
LAT_MAX=${TLM_TEST_LAT_MAX:-5}
dir=$(mktemp -d)
if [ -n "${TLM_TEST_KEEP:-}" ]; then echo "keeping $dir"; else trap 'rm -rf "$dir"' EXIT; fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ] || { bad "$1 did not appear"; return 1; }
}
wait_grep() { # waits (up to 30 s) until file $1 has a line matching $2
	i=0
	while ! grep -qE "$2" "$1" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	grep -qE "$2" "$1" || bad "$1 never showed /$2/"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# --once until it shows /$3/ in $2 (the writer drains every 20 ms: what the
# program holds is in the file within a bounded time, LAT_MAX s here)
once_until() {
	t0=$(now_ms)
	while :; do
		"$tlm" top --once "$1" > "$2" || bad "--once exited $?"
		grep -qE "$3" "$2" && break
		if [ $(($(now_ms) - t0)) -gt $((LAT_MAX * 1000)) ]; then
			bad "--once did not show /$3/ within $LAT_MAX s:"
			cat "$2"
			return 1
		fi
	done
	echo "$(basename "$2"): in the trace $(($(now_ms) - t0)) ms after the program held it"
}
has() { grep -qE "$2" "$1" || { bad "$1 lacks /$2/:"; cat "$1"; }; }
start() { # start DIR TRACE [ENV...]: the program under tlm run, writing TRACE
	d=$1 t=$2
	shift 2
	mkdir -p "$d"
	env "$@" TLM_SUMMARY=0 LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
		"$tlm" run --no-summary --simulate 1G -o "$t" -- "$wl" "$d" 123 456 > "$d/run.out" 2>&1 &
}
dev1='^  dev 0 +reserved 123\.0 MiB \(peak 123\.0 MiB\), allocated 123\.0 MiB \(peak 123\.0 MiB\) of 1\.0 GiB$'
dev2='^  dev 0 +reserved 456\.0 MiB \(peak 456\.0 MiB\), allocated 456\.0 MiB \(peak 456\.0 MiB\) of 1\.0 GiB$'
site1='^ +123\.0 MiB +1 +- +hold_first \(live_wl\.c:[0-9]+\) \[live_wl\]$'
site2='^ +456\.0 MiB +1 +- +hold_second \(live_wl\.c:[0-9]+\) \[live_wl\]$'

# ---- 1, 2: each state is left only once --interval printed it ----------------------------------------------------------------
start "$dir/a" "$dir/a/t.trace"
run=$!
"$tlm" top --interval 0.3 "$dir/a/t.trace" > "$dir/a/follow.txt" 2>&1 &
top=$!
wait_file "$dir/a/held.1"
once_until "$dir/a/t.trace" "$dir/a/once1.txt" "$dev1"
has "$dir/a/once1.txt" "$site1"
has "$dir/a/once1.txt" '^  running, '
wait_grep "$dir/a/follow.txt" "$dev1"
touch "$dir/a/go.1"
wait_file "$dir/a/held.2"
once_until "$dir/a/t.trace" "$dir/a/once2.txt" "$dev2"
has "$dir/a/once2.txt" "$site2"
grep -q hold_first "$dir/a/once2.txt" && bad "a freed site is listed live"
wait_grep "$dir/a/follow.txt" "$dev2"
touch "$dir/a/go.2"
wait $run || bad "the program's tlm run exited $?"
wait $top || bad "tlm top --interval exited $?"
has "$dir/a/follow.txt" '^  ended \(exit\), '
# both states, in turn, then the end
awk -v a="$dev1" -v b="$dev2" '$0 ~ a && !x { x = NR } $0 ~ b && !y { y = NR } /ended \(exit\)/ { z = NR }
	END { exit !(x && y > x && z > y) }' "$dir/a/follow.txt" || { bad "--interval did not show 123 then 456 MiB, then the end:"; cat "$dir/a/follow.txt"; }

# ---- 3: SIGKILL ------------------------------------------------------------
start "$dir/k" "$dir/k/t.trace"
run=$!
wait_file "$dir/k/held.1"
"$tlm" top --interval 0.3 "$dir/k/t.trace" > "$dir/k/follow.txt" 2>&1 &
top=$!
sleep 0.5
kill -9 "$(cat "$dir/k/held.1")"
wait $run
i=0
while kill -0 $top 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $top 2>/dev/null; then
	bad "tlm top did not end within 10 s of its program's SIGKILL"
	kill $top
fi
wait $top
has "$dir/k/follow.txt" '^  ended \(truncated '
"$tlm" top --once "$dir/k/t.trace" > "$dir/k/once.txt"
has "$dir/k/once.txt" '^  ended \(truncated '
has "$dir/k/once.txt" '^  dev 0 +reserved 123\.0 MiB \(peak 123\.0 MiB\)'

# ---- 4: a cut trace ----------------------------------------------------------
size=$(stat -c %s "$dir/a/t.trace")
head -c $((size - 7)) "$dir/a/t.trace" > "$dir/cut.trace"
"$tlm" top --once "$dir/cut.trace" > "$dir/cut.txt" || bad "--once on a cut trace exited $?"
has "$dir/cut.txt" '^  ended \(truncated '

# ---- 5: a job directory --------------------------------------------------
mkdir "$dir/j"
start "$dir/r1" "$dir/j/a.trace" RANK=1
r1=$!
start "$dir/r0" "$dir/j/b.trace" RANK=0
r0=$!
wait_file "$dir/r1/held.1" && touch "$dir/r1/go.1" && wait_file "$dir/r1/held.2"
wait_file "$dir/r0/held.1"
once_until "$dir/j/b.trace" "$dir/j/b.txt" "$dev1"
once_until "$dir/j/a.trace" "$dir/j/a.txt" "$dev2"
"$tlm" top --once "$dir/j" > "$dir/j/once.txt" || bad "--once DIR exited $?"
has "$dir/j/once.txt" '^tlm top: job .*: 2 traces, 0 ended$'
awk '/^ +0 +[0-9]+ running +0 +123\.0 MiB +123\.0 MiB +123\.0 MiB .* b\.trace$/ { a = NR }
     /^ +1 +[0-9]+ running +0 +456\.0 MiB +456\.0 MiB +456\.0 MiB .* a\.trace$/ { b = NR }
     END { exit !(a && b == a + 1) }' "$dir/j/once.txt" || { bad "the job's rows:"; cat "$dir/j/once.txt"; }
has "$dir/j/once.txt" '^the most allocated now: rank 1, pid [0-9]+ \(a\.trace\)$'
touch "$dir/r1/go.2" "$dir/r0/go.1" "$dir/r0/go.2"
wait $r1
wait $r0

# ---- 6: usage --------------------------------------------------------------
"$tlm" top > /dev/null 2>&1; [ $? = 64 ] || bad "tlm top without a path did not exit 64"
"$tlm" top --sort size x > /dev/null 2>&1; [ $? = 64 ] || bad "--sort size did not exit 64"
"$tlm" top --once --interval 1 x > /dev/null 2>&1; [ $? = 64 ] || bad "--once --interval did not exit 64"
"$tlm" top --once "$dir/nothing.trace" > /dev/null 2>&1; [ $? = 2 ] || bad "--once on a missing file did not exit 2"
echo "not a trace" > "$dir/junk.trace"
"$tlm" top --once "$dir/junk.trace" > "$dir/junk.txt" 2>&1; [ $? = 2 ] || bad "--once on junk did not exit 2"
has "$dir/junk.txt" 'failed: not a tlm trace'
# ---- 7: the report's rules ---------------------------------------------------
mkdir "$dir/s"
TLM_SUMMARY=0 TLM_TEST_TRUTH="$dir/s/truth" LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
	"$tlm" run --no-summary --simulate 1G -o "$dir/s/t.trace" -- "$sw" train 40 8192 > "$dir/s/run.out" 2>&1 ||
	bad "the steps workload failed: $(cat "$dir/s/run.out")"
"$tlm" top --once "$dir/s/t.trace" > "$dir/s/top.txt"
"$tlm" report "$dir/s/t.trace" > "$dir/s/report.txt"
fc=$(sed -n 's/^FORECAST: dev 0: \(.* more steps\) (.*/\1/p' "$dir/s/report.txt")
[ -n "$fc" ] || bad "the report has no forecast: $(grep -A2 '^STEPS' "$dir/s/report.txt")"
grep -qF "  forecast: dev 0: $fc (" "$dir/s/top.txt" || { bad "the forecast differs from the report's ($fc):"; cat "$dir/s/top.txt"; }
has "$dir/s/top.txt" "^  steps: $(sed -n 's/^STEPS: \([0-9]*\) steps of .*/\1/p' "$dir/s/report.txt") in the last "
has "$dir/s/top.txt" '^ +[0-9.]+ [KM]iB +40 +\+8\.0 KiB +'
[ $fail = 0 ] && echo "ok"
exit $fail
