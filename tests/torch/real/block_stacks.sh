#!/bin/sh
# SPDX-License-Identifier: MIT
# The stacks of PyTorch's allocator blocks (docs/recording.md, "Python
# stacks"): block_stacks.py under tlm run --simulate, as is and with
# TLM_BLOCK_NATIVE_STACKS=1; block_stacks_check.py reads both traces with
# the tlm Python reader and their tlm report --full-stacks -f json: the main
# thread's block has its Python frames (the marked line) and native frames
# only with the variable; the autograd thread's blocks have native frames,
# and no Python ones, either way.
#   block_stacks.sh TLM SRCDIR LIBTLMPY
# Without the venv of tools/torch-venv.sh: skipped (under CI=true, a failure).
set -u
tlm=$1 src=$2 pylib=$3
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
tlm_has_modules "$py" torch numpy || tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): block stacks not tested"
tmp=$(mktemp -d)
[ -n "${TLM_TEST_KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
here=$src/tests/torch/real
cp "$src/tests/common/torch_settle.py" "$tmp/"
cp "$here/block_stacks.py" "$tmp/"
for v in 0 1; do
	# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
	env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_SUMMARY=0 TLM_BLOCK_NATIVE_STACKS=$v \
		"$tlm" run --no-summary -o "$tmp/t$v.trace" --simulate 1G -- "$py" "$tmp/block_stacks.py" "$tmp/line" \
		>"$tmp/run$v.log" 2>&1 || { tail -n 30 "$tmp/run$v.log"; echo "block_stacks.py failed (TLM_BLOCK_NATIVE_STACKS=$v)"; exit 1; }
	"$tlm" report --full-stacks -f json -o "$tmp/t$v.trace.json" "$tmp/t$v.trace" || exit 1
done
# the reader's libtlmpy.so is the build's (sanitized in a sanitizer build: its runtime first)
env -u LD_LIBRARY_PATH ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} PYTHONPATH="$src/python" \
	TLM_PYLIB="$pylib" "$py" "$here/block_stacks_check.py" "$tmp/t0.trace" "$tmp/t1.trace" "$tmp/line"
