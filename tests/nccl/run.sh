#!/bin/sh
# SPDX-License-Identifier: MIT
# DDP and FSDP (fully_shard) over NCCL on the simulated device under real
# torchrun, one process per rank (docs/simulate.md, "NCCL"); then check.py
# asserts each rank's figures against PyTorch's own and NCCL's own account of
# its device memory (NCCL_DEBUG=INFO, subsystems ALLOC and P2P).
#   run.sh CASE TLM DUMP SRCDIR
# CASE ddp2: DDP on 2 devices; fsdp4: FSDP on 4 devices.
# Without the venv of tools/torch-venv.sh: skipped (tests/common/skip.sh; under CI=true a failure).
set -u
case=$1 tlm=$2 dump=$3 src=$4
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
if ! tlm_has_modules "$py" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): NCCL test '$case' not run"
fi
case $case in
ddp2) mode=ddp n=2 ;;
fsdp4) mode=fsdp n=4 ;;
*) echo "run.sh: unknown case '$case'"; exit 2 ;;
esac
tmp=$(mktemp -d)
if [ -n "${TLM_TEST_KEEP:-}" ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
mkdir "$tmp/t" "$tmp/out"
start=$(date +%s.%N)
# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
# shellcheck disable=SC2086
env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} \
	NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALLOC,P2P NCCL_DEBUG_FILE="$tmp/out/nccl.%h.%p" \
	"$tlm" run --simulate 1G --devices $n -o "$tmp/t/%h-%r-%p.trace" -- \
	"$venv/bin/torchrun" --standalone --nproc-per-node $n "$src/train.py" $mode "$tmp/out" \
	>"$tmp/run.out" 2>"$tmp/run.log"
rc=$?
secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
if ! "$tlm" report --format json "$tmp/t" >"$tmp/job.json"; then
	tail -n 40 "$tmp/run.log"
	echo "tlm report failed on the traces of the run (tlm run exited $rc)"
	exit 1
fi
for f in "$tmp"/t/*.trace; do
	b=$(basename "$f" .trace)
	"$tlm" report --format json "$f" >"$tmp/t/$b.json" && "$dump" "$f" >"$tmp/t/$b.dump" || exit 1
done
if ! "$py" "$src/check.py" "$mode" "$n" "$tmp" "$rc"; then
	tail -n 60 "$tmp/run.log"
	exit 1
fi
echo "tlm run over torchrun ($n ranks, $mode) took $secs s"
