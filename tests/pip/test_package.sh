#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python package, built once (meson-python's build directory kept in the
# test's temporary directory, -Cbuild-dir) and checked two ways:
# 1. pip install of the checkout into a fresh venv (pyproject.toml), then the
#    installed package against the build tree and known truth:
#   - tlm --version, python -m tlm --version, the package's metadata and
#     tlm.__version__ all say meson.build's version; python -m tlm is tlm
#     (same output, same exit status);
#   - man finds tlm(1) and libtlm(7) from the venv's bin on PATH;
#   - the installed tlm run --simulate (its own libtlm.so and simulated
#     device: the build tree is nowhere on its paths) runs job_workload.c:
#     peak 8 + (RANK + 1) MiB, and its report is byte for byte the build
#     tree's tlm report of the same trace;
#   - a real PyTorch loop under the installed tlm run --simulate 2G:
#     tlm.load(trace).report()'s peak allocated is torch.cuda.max_memory_allocated(),
#     len(events) is tlm info's event count, to_parquet() writes them all
#     (installed without the parquet extra: the package's own writer; read
#     back by pyarrow and DuckDB).
# 2. tools/wheel.sh's manylinux wheel, packed from the same build directory
#    (TLM_WHEEL_BUILD_DIR; checked: ninja reruns under a tenth of its steps,
#    the generated sources whose commands name pip's temporary build
#    environment and what links them, 13 of 225; by hand: the raw wheel's
#    files are byte for byte those of a build from scratch): auditwheel show grades it
#    manylinux, and installed into a fresh venv it runs tlm run --simulate on
#    job_workload.c (peak 8 + (RANK + 1) MiB in tlm.load(trace).report())
#    with the libraries it carries in tlm.libs/; libunwind.so.8 is beside
#    libtlm.so (both installs) with every library it needs found.
# usage: test_package.sh SRC VERSION BUILD_TLM WORKLOAD
# Without python3 -m venv, or the py venv, wheelhouse and torch venv of the
# bootstrap: skipped (77) with one line; under CI=true a failure.
set -u
src=$1 version=$2 btlm=$3 wl=$4
wheels=${TLM_PY_WHEELS:-/root/.cache/tlm/py-wheels}
torch_py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
pyv=${TLM_PY_VENV:-/root/.cache/tlm/py-venv}/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
[ -f "$wheels/.complete" ] && [ -x "$pyv" ] && [ -x "${pyv%/python}/auditwheel" ] ||
	tlm_skip py-venv "no py venv or wheelhouse at $wheels (tools/py-venv.sh): pip install and the wheel not tested"
tmp=$(mktemp -d /tmp/tlm-pipinst-XXXXXX)
[ -n "${TLM_TEST_KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
venv=$tmp/venv
python3 -m venv "$venv" || tlm_skip python3-venv "python3 -m venv failed: pip install not tested"
start=$(date +%s)
if ! "$venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$wheels" \
	"-Cbuild-dir=$tmp/build" "$src" \
	>"$tmp/pip.log" 2>&1; then
	tail -n 40 "$tmp/pip.log"
	echo "failed: pip install $src"
	exit 1
fi
echo "pip install: $(($(date +%s) - start)) s"
tlm=$venv/bin/tlm py=$venv/bin/python

# one version, everywhere
check "[ \"\$('$tlm' --version)\" = 'tlm $version' ]"
check "[ \"\$('$py' -m tlm --version)\" = 'tlm $version' ]"
check "[ \"\$('$py' -c 'import importlib.metadata as m; print(m.version(\"tlm\"))')\" = '$version' ]"
check "[ \"\$('$py' -c 'import tlm; print(tlm.__version__)')\" = '$version' ]"
# python -m tlm is tlm: output and exit status
"$tlm" info "$tmp/absent.trace" >"$tmp/a.out" 2>&1; a=$?
"$py" -m tlm info "$tmp/absent.trace" >"$tmp/b.out" 2>&1; b=$?
"$btlm" info "$tmp/absent.trace" >"$tmp/c.out" 2>&1; c=$?
check "[ $a -eq 2 ] && [ $b -eq 2 ] && [ $c -eq 2 ] && cmp -s '$tmp/a.out' '$tmp/b.out' && cmp -s '$tmp/a.out' '$tmp/c.out'"
"$py" -m tlm frobnicate >/dev/null 2>&1; b=$?
check "[ $b -eq 64 ]"
# man pages, found from PATH as man does for any prefix
check "[ \"\$(env -u MANPATH PATH='$venv/bin:/usr/bin:/bin' man -w tlm)\" = '$venv/man/man1/tlm.1' ]"
check "[ \"\$(env -u MANPATH PATH='$venv/bin:/usr/bin:/bin' man -w 7 libtlm)\" = '$venv/man/man7/libtlm.7' ]"
# libunwind.so.8 beside the installed libtlm.so
check "ls '$venv'/lib/python*/site-packages/tlm/_prefix/lib/libtlm.so '$venv'/lib/python*/site-packages/tlm/_prefix/lib/libunwind.so.8 >/dev/null"

# the installed tlm run --simulate on a C workload: its own libtlm.so and driver
env -u LD_LIBRARY_PATH -u LD_PRELOAD -u TLM_LIBRARY -u TLM_SIM_DIR RANK=3 TLM_SUMMARY=0 \
	"$tlm" run --no-summary -o "$tmp/wl.trace" --simulate 1G -- "$wl" >"$tmp/wl.log" 2>&1 ||
	{ cat "$tmp/wl.log"; echo "failed: installed tlm run --simulate"; fail=1; }
"$tlm" report --format json "$tmp/wl.trace" >"$tmp/inst.json"
"$btlm" report --format json "$tmp/wl.trace" >"$tmp/build.json"
check "cmp -s '$tmp/inst.json' '$tmp/build.json'"
check "'$py' -c 'import json,sys; d=json.load(open(sys.argv[1]))[\"devices\"][0]; sys.exit(d[\"peak_allocated_bytes\"] != 12 << 20)' '$tmp/inst.json'"

# a real PyTorch loop
if tlm_has_modules "$torch_py" torch; then
	# PyTorch's exit abort closed at exit (tests/common/torch_settle.py, beside loop.py)
	cp "$src/tests/common/torch_settle.py" "$tmp/"
	cat >"$tmp/loop.py" <<'PY'
import torch
import torch_settle  # noqa: F401
m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.Adam(m.parameters())
for step in range(10):
    x = torch.randn(256, 512, device="cuda")
    loss = m(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("max_allocated", torch.cuda.max_memory_allocated())
PY
	env -u LD_LIBRARY_PATH -u LD_PRELOAD TLM_SUMMARY=0 "$tlm" run --no-summary -o "$tmp/t.trace" --simulate 2G -- \
		"$torch_py" "$tmp/loop.py" >"$tmp/torch.log" 2>&1 ||
		{ tail -n 30 "$tmp/torch.log"; echo "failed: the PyTorch loop under the installed tlm"; fail=1; }
	want=$(sed -n 's/^max_allocated //p' "$tmp/torch.log")
	events=$("$tlm" info "$tmp/t.trace" | sed -n 's/^events: *//p')
	check "'$py' - '$tmp/t.trace' '$want' '$events' '$tmp/t.parquet' <<'PY'
import sys
import tlm
path, want, events, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = tlm.load(path)
dev = [d for d in t.report()['devices'] if d['device'] == 0 and d['kind'] == 'device'][0]
print('torch max_memory_allocated', want, 'tlm peak allocated', dev['peak_allocated_bytes'],
      'events', len(t.events), 'tlm info', events)
t.to_parquet(out)  # no pyarrow in this venv: the package's own writer
sys.exit(0 if dev['peak_allocated_bytes'] == want > 0 and len(t.events) == events > 0 else 1)
PY"
	# read back by pyarrow and DuckDB (the test venv's): every event, the same sizes
	check "'$pyv' -c 'import sys, duckdb, pyarrow.parquet as pq; n, s = duckdb.connect().execute(\"SELECT count(*), sum(size) FROM read_parquet(?)\", [sys.argv[1]]).fetchall()[0]; sys.exit(not (pq.read_table(sys.argv[1]).num_rows == n == int(sys.argv[2]) and s > 0))' '$tmp/t.parquet' '$events'"
else
	tlm_skip_case torch-venv "no PyTorch venv (tools/torch-venv.sh): the PyTorch loop under the installed tlm not run" || fail=1
fi
[ $fail -eq 0 ] && echo "ok: the installed package"

# ---- 2: the manylinux wheel, from the same build -------------------------
start=$(date +%s) steps=$(wc -l <"$tmp/build/.ninja_log")
touch "$tmp/before-wheel"
TLM_WHEEL_BUILD_DIR=$tmp/build sh "$src/tools/wheel.sh" "$tmp/dist" >"$tmp/wheel.log" 2>&1 ||
	{ tail -n 40 "$tmp/wheel.log"; echo "failed: tools/wheel.sh"; exit 1; }
echo "tools/wheel.sh from the kept build: $(($(date +%s) - start)) s"
check "[ '$tmp/build/build.ninja' -nt '$tmp/before-wheel' ]" # meson-python set it up again: it was used
check "[ \$((\$(wc -l <'$tmp/build/.ninja_log') - $steps)) -lt $((steps / 10)) ]"
check "grep -q 'is consistent with the following platform tag: \"manylinux_2_[0-9]*_x86_64\"' '$tmp/wheel.log' ||
	tr '\n' ' ' <'$tmp/wheel.log' | grep -q 'consistent with the following platform tag: \"manylinux_2_[0-9]*_x86_64\"'"
whl=$(ls "$tmp"/dist/tlm-*-py3-none-manylinux_*.whl 2>/dev/null | head -n 1)
check "[ -n '$whl' ]"
python3 -m venv "$tmp/w" && "$tmp/w/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$wheels" "$whl" \
	>"$tmp/pipw.log" 2>&1 || { tail -n 20 "$tmp/pipw.log"; echo "failed: installing $whl"; exit 1; }
check "unzip -l '$whl' | grep -q ' tlm.libs/libdw'"
# libunwind.so.8 beside libtlm.so (opened first: GPU images often have none), its needs met
wu=$(ls "$tmp"/w/lib/python*/site-packages/tlm/_prefix/lib/libunwind.so.8 2>/dev/null)
check "[ -n '$wu' ] && [ -f \"\$(dirname '$wu')/libtlm.so\" ] && ! ldd '$wu' | grep -q 'not found'"
env -u LD_LIBRARY_PATH -u LD_PRELOAD RANK=5 TLM_SUMMARY=0 "$tmp/w/bin/tlm" run --no-summary -o "$tmp/w.trace" \
	--simulate 1G -- "$wl" >"$tmp/w.log" 2>&1 || { cat "$tmp/w.log"; fail=1; }
check "'$tmp/w/bin/python' -c 'import sys, tlm; d = tlm.load(sys.argv[1]).report()[\"devices\"][0]; sys.exit(d[\"peak_allocated_bytes\"] != 14 << 20)' '$tmp/w.trace'"
[ $fail -eq 0 ] && echo "ok: $(basename "$whl")"
exit $fail
