#!/bin/sh
# Quick start, step 2: the whole test suite, as CI runs it: the normal build,
# then ASan+UBSan, then ThreadSanitizer on the recording (concurrency) tests.
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
setup() { # DIR ARGS...
	d=$1
	shift
	[ -f "$d/build.ninja" ] || meson setup "$d" "$@" >/dev/null
	ninja -C "$d" -j "$jobs" >/dev/null
}
status=0
setup build
meson test -C build --print-errorlogs --num-processes "$jobs" || status=1
setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	meson test -C build-asan --print-errorlogs --num-processes "$jobs" || status=1
setup build-tsan -Db_sanitize=thread -Db_lundef=false
TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --suite shim --print-errorlogs --num-processes "$jobs" || status=1
if [ $status -eq 0 ]; then echo "tlm: all suites passed"; else echo "tlm: FAILURES above"; fi
exit $status
