#!/bin/sh
# SPDX-License-Identifier: MIT
# The real-PyTorch cross-check of `--format torch-snapshot`: the tiny GPT
# workload of tests/torch/real (training steps with a leak, a reference
# cycle, empty_cache, a fragmentation OOM) runs on the simulated device
# under `tlm run --simulate`, recording its own history with
# torch.cuda.memory._record_memory_history; compare_torch_snapshot.py checks
# tlm's snapshot of the run against PyTorch's _dump_snapshot, and PyTorch's
# memory_viz must read tlm's.
#   torch_real_snapshot.sh CASE TLM WORKLOAD_DIR     CASE: default | expandable | twodev
# Skipped (exit 77, one line) without the venv of tools/torch-venv.sh.
set -u
case=$1 tlm=$2 src=$3
here=$(dirname "$0")
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
if [ ! -x "$py" ] || ! env -u LD_LIBRARY_PATH -u LD_PRELOAD "$py" -c 'import torch' >/dev/null 2>&1; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): tlm's snapshot was not compared with PyTorch's"
fi
work=$(mktemp -d /tmp/tlm-real-snapshot-XXXXXX)
trap 'rm -rf "$work"' EXIT
devs=1 args="" conf=""
case $case in
default) ;;
expandable) conf=expandable_segments:True ;;
twodev) devs=2 args="--no-oom" ;;
*) echo "torch_real_snapshot.sh: unknown case '$case'"; exit 2 ;;
esac
# shellcheck disable=SC2086
env ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_SUMMARY=0 "$tlm" run --no-summary -o "$work/t.trace" --simulate 256M --devices "$devs" -- \
	"$py" "$src/workload.py" "$work/torch.json" --devices "$devs" --history "$work/torch.pickle" $args \
	>"$work/run.log" 2>&1 || { tail -n 40 "$work/run.log"; echo "FAIL: the workload failed"; exit 1; }
"$tlm" report --format torch-snapshot -o "$work/tlm.pickle" "$work/t.trace" || exit 1
"$tlm" report --format json -o "$work/report.json" "$work/t.trace" || exit 1
"$py" -W ignore "$here/compare_torch_snapshot.py" "$work/torch.pickle" "$work/tlm.pickle" "$work/report.json" || exit 1
"$py" -W ignore "$here/check_torch_snapshot.py" "$work/tlm.pickle" "$work/report.json" || exit 1
"$py" -W ignore "$here/check_torch_snapshot.py" "$work/tlm.pickle" "$work/report.json" --viz
