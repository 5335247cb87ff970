#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile inputs to the reading side (issue 26, docs/reliability.md): every
# reader of untrusted input opens only regular files it can read, says so for
# each one it cannot, and never waits on a FIFO, a device, a socket or a debug
# link; an unreadable trace in a directory is listed and the exit status says
# so; no raw terminal escape from a trace, a JSON input or a file name reaches
# the terminal, whatever the command; crafted sizes stay bounded.
# Each command runs with a deadline: a hang fails instead of hanging.
# usage: test_inputs.sh TLM HOSTILE_GEN   (env: the e2e paths of tests/shim)
set -eu
tlm=$1 gen=$2
wl=${TLM_TEST_WORKLOAD:?} lib=${TLM_TEST_LIBTLM:?}
sim=${TLM_TEST_SIMDIR:?} rt=${TLM_TEST_DOUBLEDIR:?}
dir=$(mktemp -d /tmp/tlm-inputs-XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
# run NAME CMD...: stdout+stderr in $dir/NAME.out, the status in $dir/NAME.rc;
# 124 when it ran past its deadline: 30 s, 120 s in a sanitized build (a
# hang is for ever either way; ThreadSanitizer's tlm took more than 30 s for
# the 4 M-event snapshot on a loaded 2-core machine)
deadline=30
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && deadline=120
run() {
	n=$1
	shift
	set +e
	timeout -k 5 $deadline "$@" > "$dir/$n.out" 2>&1
	echo $? > "$dir/$n.rc"
	set -e
}
rc() { cat "$dir/$1.rc"; }
has() { grep -qF -- "$2" "$dir/$1.out"; }
show() { echo "--- $1 (status $(rc "$1")):"; head -c 2000 "$dir/$1.out" | cat -v; echo; }
# a sanitized build's runtime must be preloaded ahead of libtlm.so
preload=$lib
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && preload="$TLM_TEST_PRELOAD_FIRST $lib"
record() { # OUT ARGS...: the workload, recorded
	o=$1
	shift
	env LD_PRELOAD="$preload" LD_LIBRARY_PATH="$sim:$rt:$(dirname "$wl")" TLM_OUTPUT="$o" TLM_SUMMARY=0 "$@" > /dev/null
}
record "$dir/t.trace" "$wl" runtime
[ -s "$dir/t.trace" ] || { echo "no trace recorded"; exit 1; }

# ---- 1. never wait on a FIFO, a device, a socket; a pipe is read as a stream
mkfifo "$dir/fifo.trace" "$dir/fifo.json"
for c in "report" "info" "whatif" "report --format json" "top --once"; do
	n=fifo-$(echo "$c" | tr ' ' '_')
	run "$n" $tlm $c "$dir/fifo.trace"
	check "[ $(rc "$n") -ne 124 ] && [ $(rc "$n") -ne 0 ] || { show $n; false; }"
done
run diff-fifo "$tlm" diff "$dir/fifo.trace" "$dir/t.trace"
check "[ $(rc diff-fifo) -eq 2 ] && has diff-fifo 'not a regular file (a FIFO)' || { show diff-fifo; false; }"
for d in /dev/zero /dev/null; do
	run dev "$tlm" report "$d"
	check "[ $(rc dev) -eq 2 ] && has dev '$d: not a regular file (a character device)' || { show dev; false; }"
done
run dev-info "$tlm" info /dev/zero
check "[ $(rc dev-info) -eq 2 ] && has dev-info 'not a regular file (a character device)' || { show dev-info; false; }"
# a glob and a directory: the FIFO, a socket and an unopenable link listed, the trace read
mkdir "$dir/g"
cp "$dir/t.trace" "$dir/g/a.trace"
mkfifo "$dir/g/b.trace"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$dir/g/c.trace"
ln -s "$dir/nonexistent" "$dir/g/d.trace"
for n in glob dir job-json; do
	case $n in
	glob) run $n "$tlm" report "$dir/g/*.trace" ;;
	dir) run $n "$tlm" report "$dir/g" ;;
	job-json) run $n "$tlm" report "$dir/t.trace" "$dir/fifo.json" ;;
	esac
	check "[ $(rc $n) -eq 2 ] || { show $n; false; }"
	check "has $n 'tlm job report: 1 process'"
done
check "has glob 'g/b.trace: not a regular file (a FIFO)' && has glob 'c.trace: not a regular file' && has glob 'd.trace: cannot open: No such file'"
check "has dir '3 inputs could not be read' && has dir 'g/b.trace: not a regular file (a FIFO)'"
check "has job-json 'fifo.json: not a regular file (a FIFO)'"
# a pipe: read as a stream, as a file is; every output reads it once (the
# report's one pass), so the snapshot from a pipe is the file's
"$tlm" report "$dir/t.trace" | tail -n +2 > "$dir/file.txt"
run pipe sh -c "cat '$dir/t.trace' | '$tlm' report /dev/stdin"
check "[ $(rc pipe) -eq 0 ] && tail -n +2 '$dir/pipe.out' | cmp -s - '$dir/file.txt' || { show pipe; false; }"
run pipe-info sh -c "cat '$dir/t.trace' | '$tlm' info /dev/stdin"
check "[ $(rc pipe-info) -eq 0 ] && has pipe-info 'integrity:    ok'"
run file-snap sh -c "'$tlm' report --format torch-snapshot -o '$dir/f.pkl' /dev/stdin < '$dir/t.trace'"
run pipe-snap sh -c "cat '$dir/t.trace' | '$tlm' report --format torch-snapshot -o '$dir/p.pkl' /dev/stdin"
check "[ $(rc pipe-snap) -eq 0 ] && [ $(rc file-snap) -eq 0 ] && cmp -s '$dir/p.pkl' '$dir/f.pkl' || { show pipe-snap; false; }"
# a debug link naming a FIFO (the symbolizer opens it): the program's own
# frames are named from its symbols, the FIFO is said once
mkdir "$dir/dl"
cp "$wl" "$dir/dl/wl"
objcopy --only-keep-debug "$dir/dl/wl" "$dir/dl/wl.debug"
objcopy --strip-debug "$dir/dl/wl"
objcopy --add-gnu-debuglink="$dir/dl/wl.debug" "$dir/dl/wl"
rm "$dir/dl/wl.debug"
mkfifo "$dir/dl/wl.debug"
record "$dir/dl.trace" "$dir/dl/wl" runtime
run debuglink "$tlm" report "$dir/dl.trace"
check "[ $(rc debuglink) -eq 0 ] && has debuglink 'from main [wl]' || { show debuglink; false; }"
check "[ \$(grep -c 'its debug file $dir/dl/wl.debug: not a regular file (a FIFO); not used' '$dir/debuglink.out') -eq 1 ]"
run debuglink-job "$tlm" report "$dir/dl.trace" "$dir/t.trace"
check "[ $(rc debuglink-job) -eq 0 ] || { show debuglink-job; false; }"
# tlm run: a run's program can name anything in its manifest
run run-fifo env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} LD_LIBRARY_PATH="$sim:$rt:$(dirname "$wl")" TLM_LIBRARY="$lib" "$tlm" run -o "$dir/r.trace" -- \
	sh -c "mkfifo '$dir/mf'; echo '$dir/mf' >> \"\$TLM_RUN_MANIFEST\"; exec '$wl' runtime"
check "[ $(rc run-fifo) -eq 0 ] && has run-fifo 'exit clean' || { show run-fifo; false; }"

# ---- 2. an unreadable trace in a directory is listed, and the status says it
other= # not root: a 0000 file is unreadable to us already
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv > /dev/null || { echo "setpriv not found (util-linux)"; exit 1; }
	other="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
mkdir "$dir/u"
for k in 1 2 3; do cp "$dir/t.trace" "$dir/u/r$k.trace"; done
chmod 644 "$dir/u/r1.trace"
chmod 600 "$dir/u/r2.trace"
chmod 000 "$dir/u/r3.trace"
[ "$(id -u)" -eq 0 ] || chmod 000 "$dir/u/r2.trace"
for n in unread-dir unread-glob; do
	case $n in
	unread-dir) run $n $other "$tlm" report "$dir/u" ;;
	*) run $n $other "$tlm" report "$dir/u/*.trace" ;;
	esac
	check "[ $(rc $n) -eq 2 ] || { show $n; false; }"
	check "has $n 'tlm job report: 1 process' && has $n '2 inputs could not be read'"
	check "has $n 'u/r2.trace: cannot open: Permission denied' && has $n 'u/r3.trace: cannot open: Permission denied'"
done
run unread-one $other "$tlm" report "$dir/u/r2.trace"
check "[ $(rc unread-one) -eq 2 ] && has unread-one 'cannot open: Permission denied'"

# ---- 3. no raw terminal escape reaches the terminal, whatever the command
"$gen" esc "$dir/esc.trace"
mkdir "$dir/e"
cp "$dir/esc.trace" "$dir/e/a.trace"
cp "$dir/esc.trace" "$dir/e/b.trace"
# a file name with escapes, in a directory and on the command line
evil=$(printf 'x\033]52;c;aGk=\007\033[2J\302\233y')
cp "$dir/esc.trace" "$dir/e/$evil.trace"
mkfifo "$dir/e/$evil.fifo.trace"
"$tlm" report --format json "$dir/e" > "$dir/job.json" 2> /dev/null || true
"$tlm" report --format json "$dir/esc.trace" > "$dir/esc.json" 2> /dev/null || true
# any byte a terminal acts on: C0 controls but newline, DEL, C1 (raw or in UTF-8)
clean() { python3 - "$dir/$1.out" << 'EOF'
import re, sys
b = open(sys.argv[1], 'rb').read()
m = re.search(rb'[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|(?<![\xc0-\xf7])[\x80-\x9f]', b)
sys.exit(1 if m else 0)
EOF
}
i=0
while read -r c; do
	i=$((i + 1))
	run esc$i sh -c "$c"
	check "[ $(rc esc$i) -ne 124 ] && clean esc$i || { echo '$c'; show esc$i; false; }"
done << EOF
'$tlm' report '$dir/esc.trace'
'$tlm' report --summary '$dir/esc.trace'
'$tlm' report --format json '$dir/esc.trace'
'$tlm' report --format chrome '$dir/esc.trace'
'$tlm' report --format collapsed '$dir/esc.trace'
'$tlm' info '$dir/esc.trace'
'$tlm' whatif '$dir/esc.trace'
'$tlm' whatif --format json '$dir/esc.trace'
'$tlm' diff '$dir/esc.trace' '$dir/t.trace'
'$tlm' diff '$dir/esc.json' '$dir/esc.json'
'$tlm' diff --format json '$dir/esc.trace' '$dir/esc.trace'
'$tlm' report '$dir/e'
'$tlm' report --format json '$dir/e'
'$tlm' report '$dir/job.json'
'$tlm' report '$dir/job.json' '$dir/esc.trace'
'$tlm' diff '$dir/e' '$dir/job.json'
'$tlm' top --once '$dir/esc.trace'
'$tlm' top --once '$dir/e'
'$tlm' report '$dir/e/$evil.trace'
'$tlm' info '$dir/e/$evil.nonexistent'
'$tlm' report '$dir/e/$evil.nonexistent' '$dir/t.trace'
'$tlm' report --format '$evil' '$dir/t.trace'
EOF
# tlm run: the trace paths it reads from its manifest, and the traces' strings
run esc-run env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} LD_LIBRARY_PATH="$sim:$rt:$(dirname "$wl")" TLM_LIBRARY="$lib" "$tlm" run -o "$dir/r2.trace" -- \
	sh -c "cp '$dir/esc.trace' '$dir/e/$evil.2.trace'; echo '$dir/e/$evil.2.trace' >> \"\$TLM_RUN_MANIFEST\"; exec '$wl' runtime"
check "[ $(rc esc-run) -eq 0 ] && has esc-run 'traces from this run' && clean esc-run || { show esc-run; false; }"

# ---- 4. crafted sizes: memory and output bounded by the live state
"$gen" many "$dir/many.trace" 1000000 # 4 million events in ~30 KB
run snap "$tlm" report --format torch-snapshot -o "$dir/many.pkl" "$dir/many.trace"
check "[ $(rc snap) -eq 0 ] && [ \$(wc -l < '$dir/snap.out') -eq 1 ] && has snap 'left out (allocations_not_kept)' || { show snap; false; }"
check "[ \$(wc -c < '$dir/many.pkl') -lt 67108864 ] || { ls -l '$dir/many.pkl'; false; }" # was 444 MB
# ---- 6. undefined behaviour on crafted times (checked in the sanitized build)
"$gen" times "$dir/times.trace"
for f in text torch-snapshot html chrome json; do
	run times-$f "$tlm" report --format $f -o "$dir/times.$f" "$dir/times.trace"
	check "[ $(rc times-$f) -eq 0 ] || { show times-$f; false; }"
done
mkdir "$dir/rt"
"$gen" realtime "$dir/rt/a.trace" 0
"$gen" realtime "$dir/rt/b.trace" 9223372036854775808
"$gen" realtime "$dir/rt/c.trace" 18446744073709551615
run realtime "$tlm" report "$dir/rt"
check "[ $(rc realtime) -eq 0 ] && ! has realtime ' --9' || { show realtime; false; }"
check "has realtime '+9223372036.855 s'" # 2^63 ns and more after the first start: held at 2^63 - 1
exit $fail
