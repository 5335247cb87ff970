#!/bin/sh
# SPDX-License-Identifier: MIT
# The HTML report's active-memory timeline, driven in headless Chromium by
# playwright (active_browser.py): the demo's run, the caching-allocator
# double's and a synthetic run of 100k allocations. Exit 77 (skipped)
# without chromium or without the playwright venv (tools/viz-venv.sh).
# usage (meson sets the environment): active_browser.sh [--screenshot PNG]
# With --screenshot, also writes the picture of the demo's device-0 timeline
# (how docs/active-timeline.png is made).
set -eu
shot=""
[ "${1:-}" = "--screenshot" ] && shot=$(realpath "$2")
: "${TLM_TEST_TLM:?run through meson test}" "${TLM_TEST_DEMO:?}" "${TLM_TEST_LIBTLM:?}" "${TLM_TEST_SIMDIR:?}"
here=$(dirname "$0")
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
browser=""
for b in chromium chromium-browser; do
	command -v "$b" >/dev/null 2>&1 && { browser=$(command -v "$b"); break; }
done
[ -n "$browser" ] || tlm_skip chromium "chromium is not installed: the timeline was not driven"
venv=${TLM_VIZ_VENV:-/root/.cache/tlm/viz-venv}
py="$venv/bin/python"
if ! [ -x "$py" ] || ! "$py" -c 'import playwright.sync_api' 2>/dev/null; then
	tlm_skip playwright "no playwright in $venv (tools/viz-venv.sh makes it): the timeline was not driven"
fi
work=$(mktemp -d /tmp/tlm-active-XXXXXX)
trap 'rm -rf "$work"' EXIT
pre="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$TLM_TEST_LIBTLM"
LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/demo.trace" TLM_SUMMARY=0 \
	TLM_SIM_DEVICES=1 "$TLM_TEST_DEMO" 20 >"$work/demo.out" 2>&1 || {
	echo "FAIL: the demo failed"; cat "$work/demo.out"; exit 1; }
"$TLM_TEST_TLM" report --format html -o "$work/demo.html" "$work/demo.trace"
set -- --demo "$work/demo.html"
[ -n "$shot" ] && set -- "$@" --shot "$shot"
if [ -n "${TLM_TEST_TORCH_WORKLOAD:-}" ]; then
	mkdir -p "$work/tree/torch/lib"
	cp "$TLM_TEST_C10_V24/libc10.so" "$TLM_TEST_C10_V24/libc10_cuda.so" "$work/tree/torch/lib/"
	printf "__version__ = '2.4.0+cu121'\n" >"$work/tree/torch/version.py"
	LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/torch.trace" TLM_SUMMARY=0 \
		TLM_SIM_MEMORY=64M TLM_SIM_DEVICES=2 TLM_TEST_TRUTH="$work/torch.truth" \
		"$TLM_TEST_TORCH_WORKLOAD" "$work/tree" >"$work/torch.out" 2>&1 || {
		echo "FAIL: the allocator double's workload failed"; cat "$work/torch.out"; exit 1; }
	"$TLM_TEST_TLM" report --format html -o "$work/torch.html" "$work/torch.trace"
	set -- "$@" --torch "$work/torch.html" "$work/torch.truth"
fi
if [ -n "${TLM_TEST_GEN_ACTIVE:-}" ]; then
	"$TLM_TEST_GEN_ACTIVE" 100000 "$work/gen.html" >"$work/gen.out"
	set -- "$@" --gen "$work/gen.html" "$work/gen.out"
fi
"$py" "$here/active_browser.py" --browser "$browser" "$@"
