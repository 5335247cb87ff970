#!/bin/sh
# SPDX-License-Identifier: MIT
# The HTML report in a real browser: the demo runs under libtlm.so on the
# simulated driver, `tlm report --format html` writes its page, headless
# Chromium loads it (no network: the page needs none) and the DOM it dumps
# after the page's script ran must hold the timeline (SVG step paths with
# points, an OOM marker), the segment map and the table rows; then the same
# for a run of the caching-allocator double (blocks inside the segments).
#
# usage (meson sets the environment): browser.sh [--screenshot PNG]
# With --screenshot, also writes a 1040-pixel-wide picture of the page (how
# docs/report-html.png is made). Exit 77 (skipped) without chromium.
set -eu
shot=""
[ "${1:-}" = "--screenshot" ] && shot=$2
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
browser=""
for b in chromium chromium-browser; do
	command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
[ -n "$browser" ] || tlm_skip chromium "chromium is not installed (tools/deps.sh installs it): the HTML page was not drawn"
: "${TLM_TEST_TLM:?run through meson test}" "${TLM_TEST_DEMO:?}" "${TLM_TEST_LIBTLM:?}" "${TLM_TEST_SIMDIR:?}"
work=$(mktemp -d /tmp/tlm-browser-XXXXXX)
trap 'rm -rf "$work"' EXIT
pre="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$TLM_TEST_LIBTLM"
LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/demo.trace" TLM_SUMMARY=0 \
	TLM_SIM_DEVICES=1 "$TLM_TEST_DEMO" 20 >"$work/demo.out" 2>&1 || {
	echo "FAIL: the demo failed"; cat "$work/demo.out"; exit 1; }
"$TLM_TEST_TLM" report --format html -o "$work/report.html" "$work/demo.trace"

run_browser() { # ARGS...
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$work/profile" "$@" 2>>"$work/browser.log"
}
run_browser --dump-dom "file://$work/report.html" >"$work/dom.html" || {
	echo "FAIL: $browser failed"; tail -20 "$work/browser.log"; exit 1; }

fails=0
check() { # WHAT PATTERN [MIN_COUNT]
	n=$(grep -o -- "$2" "$work/dom.html" | wc -l)
	if [ "$n" -ge "${3:-1}" ]; then
		echo "ok: $1 ($n)"
	else
		echo "FAIL: $1: '$2' found $n times, want >= ${3:-1}"
		fails=$((fails + 1))
	fi
}
# the script ran (it marks <body>) and found the two timelines (host pinned, device 0)
check "the page's script ran" 'data-tlm-ready="1"'
check "the script saw both timelines" 'data-tlm-charts="2"'
check "reserved step paths with points" '<path class="series reserved" d="M[0-9.,]*L[0-9.,]*L' 2
check "allocated step paths" '<path class="series allocated" d="M[0-9.,]*L' 2
check "the OOM marker on the timeline" '<line class="oom-marker"' 1
check "the segment map" '<svg class="segmap"' 2
check "segments drawn" '<g class="seg"><title>0x' 20
check "no-tap note" 'blocks unknown: no allocator tap' 2
check "leak table row" '<tr class="site">' 5
check "leak site named" 'record_loss (tlm-demo.c:' 1
check "OOM table row" '<tr class="oom-row">' 1
check "expandable stacks" '<details class="stack">' 5
check "the expand button is shown by the script" '<p class="tools" id="tools">' 1
if grep -q 'http[s]*://' "$work/report.html"; then
	echo "FAIL: the page names a network address"
	fails=$((fails + 1))
fi
# With the caching-allocator double (tests/torch): the blocks inside the
# segments at the peak, and the free space between them.
if [ -n "${TLM_TEST_TORCH_WORKLOAD:-}" ]; then
	mkdir -p "$work/tree/torch/lib"
	cp "$TLM_TEST_C10_V24/libc10.so" "$TLM_TEST_C10_V24/libc10_cuda.so" "$work/tree/torch/lib/"
	printf "__version__ = '2.4.0+cu121'\n" >"$work/tree/torch/version.py"
	LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/torch.trace" TLM_SUMMARY=0 \
		TLM_SIM_MEMORY=64M TLM_SIM_DEVICES=2 TLM_TEST_TRUTH="$work/torch.truth" \
		"$TLM_TEST_TORCH_WORKLOAD" "$work/tree" >"$work/torch.out" 2>&1 || {
		echo "FAIL: the allocator double's workload failed"; cat "$work/torch.out"; exit 1; }
	"$TLM_TEST_TLM" report --format html -o "$work/torch.html" "$work/torch.trace"
	run_browser --dump-dom "file://$work/torch.html" >"$work/dom.html" || {
		echo "FAIL: $browser failed"; tail -20 "$work/browser.log"; exit 1; }
	check "allocator double: the page's script ran" 'data-tlm-ready="1"'
	check "allocator double: reserved ranges drawn" '<g class="seg"><title>reserved 0x' 12
	check "allocator double: blocks drawn" '<g class="blk"><title>block 0x' 20
	check "allocator double: free space inside" 'free inside: [0-9.]* [KMG]*i*B, largest gap' 1
fi
if [ -n "$shot" ]; then
	run_browser --hide-scrollbars --window-size=1040,2600 --screenshot="$shot" "file://$work/report.html" \
		>/dev/null && echo "screenshot: $shot"
fi
if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed; the DOM: $work/dom.html (kept)"
	trap - EXIT
	exit 1
fi
echo "1 passed, 0 failed"
