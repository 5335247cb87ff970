#!/bin/sh
# SPDX-License-Identifier: MIT
# `tlm top` in a real terminal (tmux: send-keys, capture-pane), docs/top.md.
# A program on the simulated device holds 123 MiB (hold_first), then frees
# it and holds 456 MiB (hold_second); it keeps each state until this test
# has seen it on the screen (it waits for DIR/go.N), so no check depends on
# timing. Checked:
#  1. `tlm top TRACE`, started before the trace exists: each state in turn
#     (the device row and the site's label), within LAT_MAX seconds of the
#     allocation (the drain latency: the writer drains every 20 ms, the screen
#     redraws every second); the sort and pause keys; the end of the program
#     ends tlm top by itself (exit 0) with its last view as text;
#  2. `tlm run --live -- CMD`: the same states on the screen, CMD's output
#     kept off it and shown after, then the end-of-run report; q closes the
#     screen while the program runs on;
#  3. a real PyTorch program (the venv of tools/torch-venv.sh), when there:
#     torch.empty of 123 MiB, then of 456 MiB: the screen gives, for each,
#     what torch.cuda.memory_allocated() and memory_reserved() said then (the
#     caching allocator rounds the 123 MiB tensor's block up to 124 MiB).
# usage: test_top_tmux.sh TLM LIVE_WL
set -u
tlm=$1 wl=$2
LAT_MAX=${TLM_TEST_LAT_MAX:-5}
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v tmux >/dev/null 2>&1 || tlm_skip tmux "tmux is not installed: tlm top was not tested in a terminal"
dir=$(mktemp -d)
sock=$dir/tmux.sock
T() { tmux -S "$sock" -f /dev/null "$@"; }
cleanup() { T kill-server 2>/dev/null; rm -rf "$dir"; }
if [ -n "${TLM_TEST_KEEP:-}" ]; then echo "keeping $dir"; else trap cleanup EXIT; fi
# A session that lives as long as the test keeps one tmux server up
# throughout: when the last session is killed the server exits, and a
# new-session sent while it is exiting reaches the dying server, fails with
# "server exited unexpectedly" and starts none (seen in CI, under load).
T new-session -d -s keep -x 20 -y 5 "sleep 3600"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# waits (up to 60 s) for a file
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ] || { bad "$1 did not appear"; return 1; }
}
# waits (up to $3 s, default 30) until pane $1's screen matches the regex $2
wait_screen() {
	end=$(($(now_ms) + ${3:-30} * 1000))
	while :; do
		T capture-pane -p -t "$1" > "$dir/screen" 2>/dev/null
		grep -qE "$2" "$dir/screen" && return 0
		[ "$(now_ms)" -gt $end ] && break
		sleep 0.05
	done
	bad "the screen of $1 never matched /$2/; it was:"
	cat "$dir/screen"
	return 1
}

# ---- 1: tlm top TRACE --------------------------------------------------
mkdir "$dir/a"
T new-session -d -s top -x 100 -y 30 "'$tlm' top '$dir/a/t.trace'; echo \$? > '$dir/a/top.rc'; sleep 600"
wait_screen top 'waiting for the trace' 10
TLM_SUMMARY=0 LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
	"$tlm" run --simulate 1G -o "$dir/a/t.trace" -- "$wl" "$dir/a" 123 456 > "$dir/a/run.out" 2>&1 &
run=$!
wait_file "$dir/a/held.1"
t0=$(now_ms)
if wait_screen top 'ALC\[.*123\.0 MiB\]' && wait_screen top 'hold_first \(live_wl\.c:[0-9]+\)'; then
	lat=$(($(now_ms) - t0))
	echo "state 1 on the screen $lat ms after the allocation"
	[ $lat -le $((LAT_MAX * 1000)) ] || bad "state 1 took $lat ms to show (bound ${LAT_MAX} s)"
	grep -q '456\.0 MiB' "$dir/screen" && bad "456 MiB shown before it was allocated"
	grep -q 'RES\[.*123\.0 MiB/1\.0 GiB\]' "$dir/screen" || bad "reserved 123 MiB of the 1 GiB device not shown"
fi
touch "$dir/a/go.1"
wait_file "$dir/a/held.2"
t0=$(now_ms)
if wait_screen top 'ALC\[.*456\.0 MiB\]' && wait_screen top 'hold_second \(live_wl\.c:[0-9]+\)'; then
	lat=$(($(now_ms) - t0))
	echo "state 2 on the screen $lat ms after the allocation"
	[ $lat -le $((LAT_MAX * 1000)) ] || bad "state 2 took $lat ms to show (bound ${LAT_MAX} s)"
	grep -q 'hold_first' "$dir/screen" && bad "the freed 123 MiB site still listed as live"
fi
# keys: the sort column, pause
T send-keys -t top s
wait_screen top 'sort: growth' 10
T send-keys -t top b
wait_screen top 'sort: bytes' 10
T send-keys -t top ' '
wait_screen top 'PAUSED' 10
T send-keys -t top ' '
wait_screen top 'sort: bytes *$' 10
# the program ends: tlm top ends by itself, its last view stays as text
touch "$dir/a/go.2"
wait $run || bad "tlm run exited $?"
wait_file "$dir/a/top.rc" && [ "$(cat "$dir/a/top.rc")" = 0 ] || bad "tlm top did not exit 0 at the program's end"
wait_screen top 'ended \(exit\)' 10
grep -q 'dev 0 .*reserved 0 B (peak 456\.0 MiB), allocated 0 B (peak 456\.0 MiB) of 1\.0 GiB' "$dir/screen" ||
	bad "the last view does not give the peaks"
T kill-session -t top

# ---- 2: tlm run --live ---------------------------------------------------
mkdir "$dir/b"
T new-session -d -s run -x 100 -y 30 "TLM_SUMMARY=0 LD_PRELOAD='${TLM_TEST_PRELOAD_FIRST:-}' '$tlm' run --live --simulate 1G -o '$dir/b/t.trace' -- sh -c 'echo the program says hello; exec \"$wl\" \"$dir/b\" 123 456'; echo \$? > '$dir/b/run.rc'; sleep 600"
wait_file "$dir/b/held.1"
wait_screen run 'ALC\[.*123\.0 MiB\]' && grep -q 'the program says hello' "$dir/screen" &&
	bad "the program's output was drawn over the screen"
touch "$dir/b/go.1"
wait_file "$dir/b/held.2"
wait_screen run 'ALC\[.*456\.0 MiB\]'
T send-keys -t run q
wait_screen run 'the screen was closed; pid [0-9]+ runs on' 10
touch "$dir/b/go.2"
wait_file "$dir/b/run.rc" && [ "$(cat "$dir/b/run.rc")" = 0 ] || bad "tlm run --live did not exit 0"
wait_screen run 'full report: tlm report' 10
# the program's line, then the end-of-run report of its trace
awk '/the program says hello/ { h = NR } /dev 0 device: peak 456\.0 MiB/ { p = NR } END { exit !(h && p > h) }' \
	"$dir/screen" || { bad "the program's output and then the report were not printed after the screen:"; cat "$dir/screen"; }
T kill-session -t run

# ---- 3: real PyTorch -------------------------------------------------------
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
if ! tlm_has_modules "$py" torch; then
	tlm_skip_case torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): part 3, tlm top on real PyTorch, not tested" || fail=1
else
	mkdir "$dir/c"
	cat > "$dir/c/hold.py" <<'EOF'
import os, sys, time, torch
d = sys.argv[1]
def state(n):
    with open(os.path.join(d, "held.%d.tmp" % n), "w") as f:
        f.write("%d %d\n" % (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()))
    os.rename(os.path.join(d, "held.%d.tmp" % n), os.path.join(d, "held.%d" % n))
    for _ in range(12000):
        if os.path.exists(os.path.join(d, "go.%d" % n)):
            return
        time.sleep(0.01)
    sys.exit(3)
x = torch.empty(123 << 20, dtype=torch.uint8, device="cuda")
state(1)
del x
y = torch.empty(456 << 20, dtype=torch.uint8, device="cuda")
state(2)
EOF
	T new-session -d -s torch -x 100 -y 30 "'$tlm' top '$dir/c/t.trace'; sleep 600"
	TLM_SUMMARY=0 LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
		"$tlm" run --simulate 2G -o "$dir/c/t.trace" -- "$py" "$dir/c/hold.py" "$dir/c" > "$dir/c/run.out" 2>&1 &
	run=$!
	mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; } # as tlm prints sizes
	for n in 1 2; do
		wait_file "$dir/c/held.$n" || break
		read -r a r < "$dir/c/held.$n"
		line=$((n == 1 ? 12 : 15))
		wait_screen torch "RES\\[.*$(mib "$r")/2\\.0 GiB\\]" && wait_screen torch "ALC\\[.*$(mib "$a")\\]" &&
			wait_screen torch "$(mib "$a") +1 +- +<module> \\(hold\\.py:$line\\)"
		touch "$dir/c/go.$n"
	done
	touch "$dir/c/go.2"
	wait $run || { bad "tlm run (PyTorch) exited $?"; cat "$dir/c/run.out"; }
	wait_screen torch 'ended \(exit\)' 20
fi
[ $fail = 0 ] && echo "ok"
exit $fail
