#!/bin/sh
# Quick start, step 2: the whole test suite, as CI runs it: the normal build,
# then ASan+UBSan, then ThreadSanitizer on the recording (concurrency) tests,
# then the fuzzers. Each skip is shown with its reason (tools/test-summary.py);
# the last line counts every stage: "N passed, N failed, N skipped". Under
# CI=true (.ci/run) a test whose prerequisite tools/bootstrap.sh installs
# fails instead of skipping (tests/common/skip.sh).
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
tally=$(mktemp /tmp/tlm-test-tally.XXXXXX)
trap 'rm -f "$tally"' EXIT
summary() { python3 tools/test-summary.py "$@"; }
setup() { # STAGE DIR ARGS...
	s=$1 d=$2
	shift 2
	[ -f "$d/build.ninja" ] || meson setup "$d" "$@" > "$d.setup.log" 2>&1 ||
		{ cat "$d.setup.log"; summary count "$s" failed "$tally"; return 1; }
	# quiet when it builds, the whole log when it does not
	ninja -C "$d" -j "$jobs" > "$d.build.log" 2>&1 ||
		{ tail -60 "$d.build.log"; echo "tlm: $s: the build failed"; summary count "$s" failed "$tally"; return 1; }
}
stage() { # STAGE DIR MESON-TEST-ARGS...
	s=$1 d=$2
	shift 2
	# (a stale log must not count: meson writes it anew)
	rm -f "$d/meson-logs/testlog.json"
	meson test -C "$d" --print-errorlogs --num-processes "$jobs" "$@" || status=1
	summary meson "$s" "$d" "$tally" || status=1
}
status=0
if setup normal build; then stage normal build; else status=1; fi
if setup asan build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		stage asan build-asan
else
	status=1
fi
if setup tsan build-tsan -Db_sanitize=thread -Db_lundef=false; then
	TSAN_OPTIONS=halt_on_error=1 stage tsan build-tsan --suite shim --suite hardening
else
	status=1
fi
# Fuzzing (clang + libFuzzer, ASan+UBSan): each harness of tests/fuzz runs for
# TLM_FUZZ_SECONDS (default 20) on a copy of its seed corpus (reader, report,
# whatif, pyreader and live read traces: corpus/reader; diff reads report JSON: corpus/diff;
# job reads job and report JSON and traces: corpus/job), as many at once as
# there are cores (each harness is one process); any crash, leak, hang (10 s
# per input) or sanitizer report fails the suite. The reproducer is kept as
# build-fuzz/crash-<harness>-*.
fuzz_one() { # HARNESS: runs it, leaves its verdict in build-fuzz/fuzz-HARNESS.rc
	h=$1
	case $h in diff | job) corpus=$h ;; *) corpus=reader ;; esac
	work=$(mktemp -d)
	cp "tests/fuzz/corpus/$corpus"/* "$work/"
	rc=0
	(cd build-fuzz && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"./tests/fuzz/fuzz_$h" -max_total_time="$fuzz_s" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="crash-$h-" "$work" >"fuzz-$h.log" 2>&1) || rc=$?
	echo $rc >"build-fuzz/fuzz-$h.rc"
	rm -rf "$work"
}
if command -v clang >/dev/null 2>&1; then
	fuzz_s=${TLM_FUZZ_SECONDS:-20}
	[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link >build-fuzz.setup.log 2>&1 ||
		{ cat build-fuzz.setup.log; status=1; summary count fuzz failed "$tally"; }
	harnesses= targets=
	for h in reader report diff whatif job pyreader live; do
		[ -f "tests/fuzz/fuzz_$h.c" ] && [ -f build-fuzz/build.ninja ] || continue
		harnesses="$harnesses $h"
		targets="$targets tests/fuzz/fuzz_$h" # only these (and what they link) are built with clang
	done
	if [ -n "$harnesses" ] && ! ninja -C build-fuzz -j "$jobs" $targets >build-fuzz.build.log 2>&1; then
		tail -60 build-fuzz.build.log
		status=1
		summary count fuzz failed "$tally"
		harnesses=
	fi
	set -- $harnesses
	while [ $# -gt 0 ]; do
		batch= n=0
		while [ $# -gt 0 ] && [ $n -lt "$jobs" ]; do
			echo "tlm: fuzzing $1 for ${fuzz_s}s"
			rm -f "build-fuzz/fuzz-$1.rc"
			fuzz_one "$1" &
			batch="$batch $!" n=$((n + 1))
			shift
		done
		for p in $batch; do wait "$p"; done
	done
	for h in $harnesses; do
		if [ "$(cat "build-fuzz/fuzz-$h.rc" 2>/dev/null)" != 0 ]; then
			tail -n 60 "build-fuzz/fuzz-$h.log"
			echo "tlm: fuzz_$h found a crash: build-fuzz/crash-$h-*"
			status=1
			summary count fuzz failed "$tally"
		else
			grep -E '^#[0-9]+[[:space:]]+DONE' "build-fuzz/fuzz-$h.log" || true
			summary count fuzz passed "$tally"
		fi
	done
else
	echo "tlm: clang not found (tools/deps.sh installs it): the fuzzers did not run"
	status=1
	summary count fuzz failed "$tally"
fi
if [ $status -eq 0 ]; then echo "tlm: all suites passed"; else echo "tlm: FAILURES above"; fi
summary total "$tally"
exit $status
