#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/whatif/test_whatif_real.sh - tlm whatif against PyTorch's real
# allocator: the CUDA wheel of tools/torch-venv.sh on the simulated device
# (`tlm run --simulate`). Six fragmenting workloads (tests/whatif/real/
# workloads.py) run under the defaults, recorded; tlm whatif predicts every
# setting of its grid and two more from each trace; each workload runs again
# under each setting, and each prediction (peak reserved, OOMs, device
# allocations and frees) must equal torch's own figures for that run
# (real/oracle.py). Without the venv: skipped (77), but under CI=true, where
# the README's first command makes it, a failure.
set -eu
: "${TLM_TEST_TLM:?}" "${TLM_TEST_SRC:?}"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
need() { # a prerequisite the README's first command installs
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1 (CI=true: tools/bootstrap.sh installs it)"
		exit 1
	fi
	echo "SKIP: $1: tlm whatif not checked against the real allocator"
	exit 77
}
[ -x "$py" ] && "$py" -c 'import torch' >/dev/null 2>&1 || need "no PyTorch venv at $venv (tools/torch-venv.sh)"
"$TLM_TEST_TLM" run --help 2>/dev/null | grep -q -- --simulate || need "tlm run has no --simulate"
command -v python3 >/dev/null || need "python3 not found"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$TLM_TEST_SRC/tests/whatif/real/oracle.py" "$TLM_TEST_TLM" "$py" "$dir"
