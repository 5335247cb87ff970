#!/bin/sh
# SPDX-License-Identifier: MIT
# `tlm report --format torch-snapshot` on two runs on the simulated driver:
# the caching-allocator double (tests/torch: PyTorch's blocks inside its
# segments, two OOMs) and the demo (raw cudaMalloc: segments of their own).
# check_torch_snapshot.py checks each file against tlm's JSON report of the
# same trace and the double's own accounting.
#
# usage (meson sets the environment): torch_snapshot.sh [--viz]
# --viz: PyTorch's own torch.cuda._memory_viz must read the files; needs a
# python with torch: $TLM_TORCH_PYTHON, else the venv of the real-PyTorch
# tests ($TLM_TORCH_VENV, default /root/.cache/tlm/torch-venv), else tools/viz-venv.sh's; exit 77
# (skipped) when none imports torch.
set -eu
: "${TLM_TEST_TLM:?run through meson test}" "${TLM_TEST_DEMO:?}" "${TLM_TEST_LIBTLM:?}" "${TLM_TEST_SIMDIR:?}"
here=$(dirname "$0")
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
py=python3
if [ "${1:-}" = "--viz" ]; then
	py=""
	for p in "${TLM_TORCH_PYTHON:-}" "${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python" "${TLM_VIZ_VENV:-/root/.cache/tlm/viz-venv}/bin/python"; do
		# without the test's LD_LIBRARY_PATH: torch must load its own CUDA libraries, not
		# the simulated (in a sanitized build, sanitized) ones; it reads files only here
		[ -n "$p" ] && tlm_has_modules "$p" torch &&
			{ py=$p; break; }
	done
	[ -n "$py" ] || tlm_skip torch-venv "no python imports torch (tools/torch-venv.sh, or set TLM_TORCH_PYTHON): PyTorch's memory_viz did not read tlm's snapshots"
	echo "torch: $py"
fi
command -v python3 >/dev/null 2>&1 || tlm_skip python3 "no python3: the snapshot was not checked"
work=$(mktemp -d /tmp/tlm-snapshot-XXXXXX)
trap 'rm -rf "$work"' EXIT
pre="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$TLM_TEST_LIBTLM"
LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/demo.trace" TLM_SUMMARY=0 \
	TLM_SIM_DEVICES=1 "$TLM_TEST_DEMO" 20 >"$work/demo.out" 2>&1 || {
	echo "FAIL: the demo failed"; cat "$work/demo.out"; exit 1; }
runs="demo"
if [ -n "${TLM_TEST_TORCH_WORKLOAD:-}" ]; then
	mkdir -p "$work/tree/torch/lib"
	cp "$TLM_TEST_C10_V24/libc10.so" "$TLM_TEST_C10_V24/libc10_cuda.so" "$work/tree/torch/lib/"
	printf "__version__ = '2.4.0+cu121'\n" >"$work/tree/torch/version.py"
	LD_PRELOAD="$pre" LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" TLM_OUTPUT="$work/torch.trace" TLM_SUMMARY=0 \
		TLM_SIM_MEMORY=64M TLM_SIM_DEVICES=2 TLM_TEST_TRUTH="$work/torch.truth" \
		"$TLM_TEST_TORCH_WORKLOAD" "$work/tree" >"$work/torch.out" 2>&1 || {
		echo "FAIL: the allocator double's workload failed"; cat "$work/torch.out"; exit 1; }
	runs="demo torch"
fi
status=0
for run in $runs; do
	"$TLM_TEST_TLM" report --format torch-snapshot -o "$work/$run.pickle" "$work/$run.trace"
	"$TLM_TEST_TLM" report --format json -o "$work/$run.json" "$work/$run.trace"
	truth=""
	[ "$run" = torch ] && truth="$work/torch.truth"
	echo "== $run"
	if [ -n "${1:-}" ]; then
		env -u LD_LIBRARY_PATH "$py" -W ignore "$here/check_torch_snapshot.py" "$work/$run.pickle" "$work/$run.json" \
			--viz || status=1
	else
		# shellcheck disable=SC2086
		"$py" "$here/check_torch_snapshot.py" "$work/$run.pickle" "$work/$run.json" $truth || status=1
	fi
done
[ $status -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $status
