#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one test of the Python package (tests/pip) with the venv of
# tools/py-venv.sh (numpy, pandas, pyarrow, duckdb), the package from the
# source tree and libtlmpy.so from the build tree:
#   run.sh SRC_PYTHON_DIR LIBTLMPY TEST.py ARGS...
# Without that venv: skipped (77) with one line, but under CI=true, where the
# bootstrap installs it, a failure (tests/common/skip.sh).
set -u
pkg=$1 lib=$2
shift 2
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
venv=${TLM_PY_VENV:-/root/.cache/tlm/py-venv}
py=$venv/bin/python
if [ ! -x "$py" ] || ! "$py" -c 'import numpy, pandas, pyarrow, duckdb' >/dev/null 2>&1; then
	tlm_skip py-venv "no Python test venv at $venv (tools/py-venv.sh): $(basename "$1") not run"
fi
# a sanitized libtlmpy.so needs its runtime loaded first (tests/shim's e2e_env)
exec env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} PYTHONPATH="$pkg" TLM_PYLIB="$lib" \
	PYTHONDONTWRITEBYTECODE=1 "$py" "$@"
