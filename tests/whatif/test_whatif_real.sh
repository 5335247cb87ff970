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
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
if ! tlm_has_modules "$py" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): tlm whatif not checked against the real allocator"
fi
"$TLM_TEST_TLM" run --help 2>/dev/null | grep -q -- --simulate ||
	tlm_skip simulate "tlm run has no --simulate: tlm whatif not checked against the real allocator"
command -v python3 >/dev/null || tlm_skip python3 "python3 not found: tlm whatif not checked against the real allocator"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$TLM_TEST_SRC/tests/whatif/real/oracle.py" "$TLM_TEST_TLM" "$py" "$dir"
