#!/bin/sh
# SPDX-License-Identifier: MIT
# The venv the export tests' browser automation runs in (playwright, driving
# the system's Chromium through executable_path: no browser download), kept
# outside the tree in $TLM_VIZ_VENV (default /root/.cache/tlm/viz-venv) and
# reused when present. Prints the venv's python on success; exit 1 when it
# cannot be made (the tests that need it then skip).
# PyTorch for the torch-snapshot checks is not installed here: a venv with
# torch (tools/ of the real-PyTorch issue, /root/.cache/tlm/torch-venv) is
# used when one exists (tests/export/torch_python.sh finds it).
set -eu
venv=${TLM_VIZ_VENV:-/root/.cache/tlm/viz-venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import playwright.sync_api' 2>/dev/null; then
	echo "$venv/bin/python"
	exit 0
fi
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv" >&2 || { echo "tlm: python3 -m venv failed (python3-venv missing?)" >&2; exit 1; }
"$venv/bin/pip" install -q --disable-pip-version-check playwright >&2 ||
	{ echo "tlm: pip install playwright failed" >&2; exit 1; }
echo "$venv/bin/python"
