#!/bin/sh
# SPDX-License-Identifier: MIT
# Training steps of a real PyTorch loop on the simulated device:
# test_steps_torch.sh TLM SRCDIR. Needs the venv of tools/torch-venv.sh
# ($TLM_TORCH_VENV, default /root/.cache/tlm/torch-venv) and `tlm run
# --simulate`; without either it is skipped (exit 77). TLM_TEST_RECORDER
# may name another tlm to record with (its libtlm.so and simulated device).
set -u
tlm=$1 src=$2
rec=${TLM_TEST_RECORDER:-$tlm}
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
if ! tlm_has_modules "$venv/bin/python" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): real-PyTorch steps not tested"
fi
"$rec" run --help 2>&1 | grep -q -- --simulate || tlm_skip simulate "tlm run has no --simulate: real-PyTorch steps not tested"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() { # tag ckpt leak
	# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
	env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} "$rec" run --no-summary --simulate 4G -o "$tmp/$1.trace" -- "$venv/bin/python" "$src/torch_steps.py" \
		10 "$2" "$3" 256 6 512 "$tmp/$1.truth" >"$tmp/$1.log" 2>&1 &&
		"$tlm" report -f json -o "$tmp/$1.json" "$tmp/$1.trace" || { cat "$tmp/$1.log"; return 1; }
}
one leak 0 65536 && one base 0 0 && one ck1 1 0 && one ck2 2 0 || exit 1
"$venv/bin/python" "$src/check_torch.py" "$tmp/leak.json" "$tmp/leak.truth" "$tmp/base.json" "$tmp/ck1.truth" \
	"$tmp/ck2.truth"
