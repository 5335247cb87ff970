#!/bin/sh
# `tlm run`: preloads libtlm.so, prints the end-of-run report on stderr,
# writes the trace where --output says, and exits with the program's status.
# usage: test_run.sh TLM WORKLOAD SIMDIR
set -eu
# (SIGTERM to tlm run must reach the program as it would a program started normally)
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/signals.sh"
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
# a rerun never replaces an existing file unless -f/--force (it once
# destroyed a source file); a symbolic link is never followed
cp "$dir/a.trace" "$dir/a.keep"
set +e
"$tlm" run --no-summary --output "$dir/a.trace" -- "$wl" burst 5 2> "$dir/err2"
sr=$?
set -e
check "[ $sr -eq 1 ]"
check "grep -q 'a.trace exists; refusing to replace it (use -f/--force' '$dir/err2'"
check "cmp -s '$dir/a.trace' '$dir/a.keep'"
"$tlm" run --no-summary --force --output "$dir/a.trace" -- "$wl" burst 5 2> "$dir/err2"
check "[ ! -e '$dir/a.trace.1' ]"
check "[ ! -s '$dir/err2' ]"
check "! cmp -s '$dir/a.trace' '$dir/a.keep'"
echo precious > "$dir/precious"
ln -s "$dir/precious" "$dir/link.trace"
set +e
"$tlm" run --no-summary -f --output "$dir/link.trace" -- "$wl" burst 5 2> "$dir/err5"
sl=$?
set -e
check "[ $sl -eq 1 ]"
check "grep -q 'is a symbolic link; refusing' '$dir/err5'"
check "[ \"\$(cat '$dir/precious')\" = precious ] && [ -L '$dir/link.trace' ]"
# SIGTERM to tlm run reaches the program, which is waited for; the status is
# 128 + 15 and the report of what it recorded is printed
"$tlm" run --output "$dir/t.trace" -- "$wl" term 0 3 > /dev/null 2> "$dir/err6" &
tp=$!
for _ in $(seq 600); do [ -s "$dir/t.trace" ] && break; sleep 0.05; done
sleep 0.2
kill -TERM $tp
set +e
wait $tp
stt=$?
set -e
check "[ $stt -eq 143 ]"
check "grep -q 'exit signal, 3 events' '$dir/err6'"
# every signal whose default action ends a process is forwarded, SIGUSR1 and
# SIGUSR2 too (they once killed tlm and orphaned the program, no report); and
# a signal to tlm's whole process group (setsid: tlm leads its own) reaches
# the program, in its own group without a terminal, through tlm
for how in USR1 USR2 group; do
	rm -f "$dir/u.trace"
	if [ $how = group ]; then
		setsid "$tlm" run --output "$dir/u.trace" -- "$wl" term 0 3 > /dev/null 2> "$dir/err6u" &
	else
		"$tlm" run --output "$dir/u.trace" -- "$wl" term 0 3 > /dev/null 2> "$dir/err6u" &
	fi
	tp=$!
	for _ in $(seq 600); do [ -s "$dir/u.trace" ] && break; sleep 0.05; done
	sleep 0.2
	case $how in group) kill -TERM "-$tp"; want=143 ;; USR1) kill -USR1 $tp; want=138 ;; *) kill -USR2 $tp; want=140 ;; esac
	set +e
	wait $tp
	stu=$?
	set -e
	check "[ $stu -eq $want ] || { echo '$how: tlm run exited $stu, want $want'; false; }"
	check "grep -q 'exit signal, 3 events' '$dir/err6u' || { echo '$how:'; cat '$dir/err6u'; false; }"
done
# children: every trace of the run is listed, with the command for the report
# (ThreadSanitizer cannot follow the fork child's writer thread)
case "${TLM_TEST_PRELOAD_FIRST:-}" in *tsan*) ;; *)
"$tlm" run --output "$dir/f-%p.trace" -- "$wl" fork > /dev/null 2> "$dir/err7"
check "grep -q '^tlm run: 2 traces from this run:$' '$dir/err7'"
check "[ \$(grep -c '^  $dir/f-[0-9]*.trace: pid [0-9]*, exit clean, ' '$dir/err7') -eq 2 ]"
check "grep -q '^full report: tlm report ' '$dir/err7'"
;; esac
# a parent that records nothing but whose child does: never "left no trace"
"$tlm" run --output "$dir/q-%p.trace" -- sh -c "\"$wl\" burst 3" > /dev/null 2> "$dir/err8"
check "! grep -q 'left no trace' '$dir/err8'"
check "grep -q '^tlm run: 1 trace from this run:$' '$dir/err8'"
check "grep -q 'exit clean, 6 events' '$dir/err8'"
# ... and its only trace gets the short report the program's own would get
check "grep -q '^tlm: pid [0-9]*, .*, exit clean, 6 events, lost events 0$' '$dir/err8'"
check "grep -q '^full report: tlm report $dir/q-[0-9]*.trace$' '$dir/err8'"
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
	cat "$dir/err" "$dir/out" "$dir"/err[0-9]* 2>/dev/null
	exit 1
fi
echo "1 passed, 0 failed"
