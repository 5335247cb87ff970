#!/bin/sh
# SPDX-License-Identifier: MIT
# A SIGABRT while the Python interpreter is finalizing (what PyTorch's
# autograd thread does at shutdown, by chance: docs/simulate.md, "Exit status
# 134") is named as such by `tlm run`'s summary and `tlm report`, in one
# line; a SIGABRT from the program itself is not. Both made on purpose, so
# nothing here depends on luck: an object whose __del__ aborts, collected
# when the interpreter tears its modules down (after finalization began),
# and os.abort() in the program's body, each after one allocation on the
# simulated device; once more with PyTorch loaded (its wording): one short
# torch import, the only deterministic check of it. The venv's Python.
#   exit_abort.sh TLM
set -u
tlm=$1
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
[ -x "$py" ] || tlm_skip torch-venv "no venv at $venv (tools/torch-venv.sh): its Python runs the test"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
note="note: SIGABRT while Python exited, after the program's end"
torch_note="$note: PyTorch's own (its autograd thread)"
note="$note (a thread that needed the GIL then)"
plain="note: the process died of signal 6 SIGABRT; the report covers what was recorded"
# one device allocation through the (simulated) driver, so there is a trace
alloc='import ctypes
cu = ctypes.CDLL("libcuda.so.1")
ctx, p = ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuInit(0) == 0 and cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert cu.cuCtxSetCurrent(ctx) == 0 and cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20) == 0
'
status=0
# CASE WANT UNWANTED PROGRAM
one() {
	name=$1 want=$2 unwanted=$3
	# shellcheck disable=SC2086
	env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} "$tlm" run --simulate 1G -o "$tmp/$name.trace" -- \
		"$py" -c "$alloc$4" >"$tmp/$name.out" 2>&1
	rc=$?
	"$tlm" report "$tmp/$name.trace" >"$tmp/$name.txt" 2>&1
	if [ $rc -ne 134 ]; then
		echo "FAIL $name: tlm run exited $rc, want 134 (the program's SIGABRT)"
		status=1
	fi
	for f in out txt; do
		if [ "$(grep -cxF "$want" "$tmp/$name.$f")" -ne 1 ] || grep -qF "$unwanted" "$tmp/$name.$f"; then
			echo "FAIL $name: want exactly one '$want' in $f, and no '$unwanted':"
			cat "$tmp/$name.$f"
			status=1
		fi
	done
	[ $status -eq 0 ] && echo "ok: $name: $want"
}
one at_exit "$note" "$plain" '
import os
class AbortAtTeardown:
    def __del__(self, abort=os.abort):
        abort()
keep = AbortAtTeardown()
'
# the same with PyTorch loaded (its caching allocator's tap attached): PyTorch's wording
one at_exit_torch "$torch_note" "$plain" '
import os, torch
torch.empty(1 << 18, device="cuda")
class AbortAtTeardown:
    def __del__(self, abort=os.abort):
        abort()
keep = AbortAtTeardown()
'
one in_body "$plain" "while the Python interpreter was exiting" 'import os; os.abort()'
exit $status
