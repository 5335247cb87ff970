#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/common/torch_settle.py (the suite's PyTorch programs end without
# PyTorch's exit abort, docs/simulate.md "Exit status 134"), two ways:
#   - settle.py under tlm run --simulate (2 devices, one used): after
#     settle_autograd() the last backward's graph task has been released,
#     nothing was allocated, no context made;
#   - every PyTorch program of the suite that runs a backward imports it
#     (a Python file, or a heredoc of a shell test): a new one that does not
#     fails here, before it fails CI now and then.
#   settle.sh TLM SRCDIR
set -u
tlm=$1 src=$2
py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
[ -x "$py" ] || tlm_skip torch-venv "no venv at ${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv} (tools/torch-venv.sh)"
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_SUMMARY=0 "$tlm" run --no-summary \
	-o "$tmp/t.trace" --simulate 1G --devices 2 -- "$py" "$src/tests/torch/real/settle.py" || status=1
# tests/gpu runs on a real GPU, where kernels take time; settle.py is the check itself
missing=$(cd "$src" && grep -rlE '\.backward\(|autograd\.backward\(' tests --include='*.py' --include='*.sh' |
	grep -v -e '^tests/gpu/' -e '^tests/torch/real/settle' -e '^tests/common/torch_settle.py$' |
	while read -r f; do
		grep -q torch_settle "$f" || echo "$f"
	done)
# gpt.py is a module: the programs that import it settle
missing=$(echo "$missing" | grep -v -e '^tests/torch/real/gpt.py$' -e '^$')
if [ -n "$missing" ]; then
	echo "settle: FAIL these run a backward on the device and do not import tests/common/torch_settle.py:"
	echo "$missing" | sed 's/^/  /'
	status=1
else
	echo "settle: every backward-running program of the suite imports torch_settle"
fi
exit $status
