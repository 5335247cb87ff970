#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/wheel.sh's manylinux wheel: auditwheel show grades it manylinux, and
# installed into a fresh venv it runs tlm run --simulate on job_workload.c
# (peak 8 + (RANK + 1) MiB in tlm.load(trace).report()) with the libraries
# it carries in tlm.libs/.
# usage: test_wheel.sh SRC WORKLOAD
# Skipped (77) without the bootstrap's venv and wheelhouse; under CI=true a failure.
set -u
src=$1 wl=$2
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
venv=${TLM_PY_VENV:-/root/.cache/tlm/py-venv}
wheels=${TLM_PY_WHEELS:-/root/.cache/tlm/py-wheels}
if [ ! -x "$venv/bin/auditwheel" ] || [ ! -f "$wheels/.complete" ]; then
	tlm_skip py-venv "no py venv or wheelhouse (tools/py-venv.sh): the manylinux wheel not tested"
fi
tmp=$(mktemp -d /tmp/tlm-pipwhl-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sh "$src/tools/wheel.sh" "$tmp/dist" >"$tmp/wheel.log" 2>&1 || { tail -n 40 "$tmp/wheel.log"; echo "failed: tools/wheel.sh"; exit 1; }
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
check "grep -q 'is consistent with the following platform tag: \"manylinux_2_[0-9]*_x86_64\"' '$tmp/wheel.log' ||
	tr '\n' ' ' <'$tmp/wheel.log' | grep -q 'consistent with the following platform tag: \"manylinux_2_[0-9]*_x86_64\"'"
whl=$(ls "$tmp"/dist/tlm-*-py3-none-manylinux_*.whl 2>/dev/null | head -n 1)
check "[ -n '$whl' ]"
python3 -m venv "$tmp/v" && "$tmp/v/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$wheels" "$whl" \
	>"$tmp/pip.log" 2>&1 || { tail -n 20 "$tmp/pip.log"; echo "failed: installing $whl"; exit 1; }
check "unzip -l '$whl' | grep -q ' tlm.libs/libdw'"
env -u LD_LIBRARY_PATH -u LD_PRELOAD RANK=5 TLM_SUMMARY=0 "$tmp/v/bin/tlm" run --no-summary -o "$tmp/t.trace" \
	--simulate 1G -- "$wl" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail=1; }
check "'$tmp/v/bin/python' -c 'import sys, tlm; d = tlm.load(sys.argv[1]).report()[\"devices\"][0]; sys.exit(d[\"peak_allocated_bytes\"] != 14 << 20)' '$tmp/t.trace'"
[ $fail -eq 0 ] && echo "ok: $(basename "$whl")"
exit $fail
