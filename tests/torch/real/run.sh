#!/bin/sh
# SPDX-License-Identifier: MIT
# One real-PyTorch test: the tiny GPT workload (workload.py) on the simulated
# device under `tlm run --simulate`, then check.py compares tlm's report and
# trace with torch's own figures; then tlm's torch-snapshot export of the
# same run against PyTorch's own history of it (tests/export).
#   run.sh CASE TLM TRACE_EVENTS SRCDIR
# CASE: default | expandable | async | twodev
# Without the venv of tools/torch-venv.sh: skipped (tests/common/skip.sh;
# under CI=true a failure).
set -u
case=$1 tlm=$2 events=$3 src=$4
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
if ! tlm_has_modules "$py" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): real-PyTorch test '$case' not run"
fi
tmp=$(mktemp -d)
[ -n "${TLM_TEST_KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
devs=1 conf="" args="--history $tmp/history.pickle" size=256M
case $case in
default) ;;
expandable) conf=expandable_segments:True ;;
async) conf=backend:cudaMallocAsync args="--no-oom" size=1G ;;
twodev) devs=2 args="$args --no-oom" size=1G ;;
*) echo "run.sh: unknown case '$case'"; exit 2 ;;
esac
# 256 MiB devices where the OOM scenario runs (it fills them quickly), else 1 GiB
# shellcheck disable=SC2086
# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
env ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_SUMMARY=0 \
	"$tlm" run --no-summary -o "$tmp/t.trace" --simulate "$size" --devices "$devs" -- \
	"$py" "$src/workload.py" "$tmp/torch.json" --devices "$devs" $args >"$tmp/run.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -n 40 "$tmp/run.log"
	echo "workload failed (exit $rc)"
	exit 1
fi
"$tlm" report -f json -o "$tmp/report.json" "$tmp/t.trace" || exit 1
"$events" "$tmp/t.trace" >"$tmp/events.txt" || exit 1
status=0
"$py" "$src/check.py" "$case" "$tmp" "$src/workload.py" || status=1
# The same run's torch-snapshot export against PyTorch's own history of it
# (tests/export/compare_torch_snapshot.py; docs/exports.md): one torch run
# checked for both (the async backend keeps no history).
if [ "$case" != async ]; then
	exp=$src/../../export
	"$tlm" report --format torch-snapshot -o "$tmp/tlm.pickle" "$tmp/t.trace" || exit 1
	"$py" -W ignore "$exp/compare_torch_snapshot.py" "$tmp/history.pickle" "$tmp/tlm.pickle" "$tmp/report.json" || status=1
	"$py" -W ignore "$exp/check_torch_snapshot.py" "$tmp/tlm.pickle" "$tmp/report.json" || status=1
	# torch's own memory_viz reads the pickle outside the build's libraries:
	# the same check whatever the build, so only in the normal one (in a
	# sanitized build, TLM_TEST_PRELOAD_FIRST names the sanitizer's runtime)
	if [ -z "${TLM_TEST_PRELOAD_FIRST:-}" ]; then
		env -u LD_LIBRARY_PATH -u LD_PRELOAD "$py" -W ignore "$exp/check_torch_snapshot.py" "$tmp/tlm.pickle" \
			"$tmp/report.json" --viz || status=1
	fi
fi
exit $status
