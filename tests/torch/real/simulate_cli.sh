#!/bin/sh
# SPDX-License-Identifier: MIT
# `tlm run --simulate`, without PyTorch: bad arguments give one line and exit
# 64 without running anything; a CUDA program (tlm-demo, linked to the
# runtime double) runs on the simulated device of the given size, the banner
# says so, and the report has the device and its figures.
#   simulate_cli.sh TLM DEMO
set -u
tlm=$1 demo=$2
# sanitized builds: their runtime must come first in the program's preload list
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && export LD_PRELOAD="$TLM_TEST_PRELOAD_FIRST"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { # EXPECTED-MESSAGE ARGS...
	want=$1
	shift
	"$tlm" run "$@" -- sh -c "touch $tmp/ran" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 64 ] || [ "$(wc -l <"$tmp/out")" -ne 1 ] || ! grep -q "$want" "$tmp/out" || [ -e "$tmp/ran" ]; then
		echo "FAIL: tlm run $*: exit $rc, output:"
		cat "$tmp/out"
		fail=1
	else
		echo "ok: tlm run $*: $(cat "$tmp/out")"
	fi
}
bad "bad size list '1.5G'" --simulate 1.5G
bad "bad size list '1M'" --simulate 1M
bad "bad size list '300G'" --simulate 300G
bad "bad size list '80G,'" --simulate 80G,
bad "lists 2 sizes but --devices is 3" --simulate 80G,40G --devices 3
bad "expected 1..16, got '0'" --simulate 80G --devices 0
bad "expected 1..16, got 'x'" --simulate 80G --devices x
# a real run: 3 devices of 2 GiB; tlm-demo allocates on device 0 and ends with an OOM
TLM_SUMMARY=0 "$tlm" run -o "$tmp/t.trace" --simulate 2G --devices 3 -- "$demo" >"$tmp/run.out" 2>&1
rc=$?
for want in "tlm: simulated CUDA device: 3 x 2 GiB (no GPU is used" "NCCL moves no data between ranks" \
	"dev 0 device: peak 532.0 MiB" "2.1 GiB requested, 1.6 GiB free on the device: exhaustion"; do
	if ! grep -qF "$want" "$tmp/run.out"; then
		echo "FAIL: '$want' not in the output of the simulated run (exit $rc):"
		cat "$tmp/run.out"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok: tlm-demo on 3 simulated 2 GiB devices (exit $rc)"
exit $fail
