#!/bin/sh
# SPDX-License-Identifier: MIT
# Each claim of `tlm run --simulate`'s banner and docs/simulate.md ("What is
# exact, what is not"), against the real PyTorch wheel: claims.py's outcomes,
# the banner's lines, no runtime of the wheels unknown to the simulated
# driver, cuDNN's own allocations in the trace (frames in libcudnn), and
# PyTorch's peaks equal to tlm's.
#   claims.sh TLM DUMP SRCDIR
# Without the venv of tools/torch-venv.sh: skipped (tests/common/skip.sh; under CI=true a failure).
set -u
tlm=$1 dump=$2 src=$3
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
if ! tlm_has_modules "$py" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): the simulated device's claims not tested"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# cuDNN opens its sub-libraries (libcudnn_graph, _ops, _engines_*) with dlopen,
# found through its own RUNPATH; under ASan the interceptor is the caller, so
# the search falls back to the system's (a toolkit's cuDNN 9.19, runtime 13.1):
# name the wheel's directory so both stages test the wheel's cuDNN
cudnn=$("$py" -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
# shellcheck disable=SC2086
env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} ${cudnn:+LD_LIBRARY_PATH=$cudnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}} TLM_SUMMARY=0 \
	"$tlm" run --simulate 2G -o "$tmp/t.trace" -- "$py" "$src/claims.py" "$tmp/out.json" \
	>"$tmp/run.out" 2>"$tmp/run.log"
rc=$?
"$tlm" report --format json "$tmp/t.trace" >"$tmp/report.json" && "$dump" "$tmp/t.trace" >"$tmp/dump" || {
	tail -n 30 "$tmp/run.log"
	exit 1
}
"$py" - "$tmp" "$rc" <<'PY' || { tail -n 30 "$tmp/run.log"; exit 1; }
import json, os, sys
d, rc = sys.argv[1], int(sys.argv[2])
def fail(m):
    print("claims.sh:", m); sys.exit(1)
def eq(what, got, want):
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))
eq("tlm run's exit status", rc, 0)
log = open(os.path.join(d, "run.log")).read()
banner = [
    "tlm: simulated CUDA device: 1 x 2 GiB (no GPU is used; see docs/simulate.md)",
    "tlm:   every allocation decision is the real library's (PyTorch, cuBLAS, cuDNN, NCCL); no kernel",
    "tlm:   runs and GEMMs do no math, so values read back from the device are not computed ones and",
    "tlm:   code whose shapes or branches depend on tensor values may take other paths than on a GPU;",
    "tlm:   NCCL moves no data between ranks; cuDNN's convolutions, BatchNorm and attention run, its",
    "tlm:   RNNs (nn.LSTM, nn.GRU) fail with a cuDNN error"]
eq("the banner", log.splitlines()[:len(banner)], banner)
if "is not one this simulated driver was checked with" in log:
    fail("a runtime of the wheels is unknown to the simulated driver: " +
         [l for l in log.splitlines() if "checked with" in l][0])
o = json.load(open(os.path.join(d, "out.json")))
eq("cuDNN convolutions and BatchNorm, forward and backward, autocast too", o["conv_bn"], "ran")
for rnn in ("lstm", "gru"):
    if not o[rnn].startswith("failed: cuDNN error: CUDNN_STATUS_"):
        fail("cuDNN's RNN (%s): %r, the banner says it fails with a cuDNN error" % (rnn, o[rnn]))
eq("cuDNN's fused attention (sdpa_kernel(CUDNN_ATTENTION))", o["sdpa_cudnn"], "ran")
eq("TORCH_CUDNN_SDPA_DEPRIORITIZED as tlm run leaves it", o["sdpa_deprioritized"], None)
eq("scaled_dot_product_attention, PyTorch's choice", o["sdpa_default"], "ran")
eq("PyTorch's flash attention", o["sdpa_flash"], "ran")
eq("a host-to-device copy read back", o["copied_back"], [1.0, 2.0, 3.0])
if o["computed_back"] == [2.0, 4.0, 6.0]:
    fail("a kernel's output read back is the computed one (x * 2): the banner says no kernel runs")
r = json.load(open(os.path.join(d, "report.json")))
dev = [x for x in r["devices"] if x["kind"] == "device"]
eq("devices", [x["device"] for x in dev], [0])
eq("tlm's peak allocated = max_memory_allocated()", dev[0]["peak_allocated_bytes"], o["max_memory_allocated"])
ar = dev[0]["allocator_reported"]
eq("the allocator's peaks = max_memory_allocated/reserved()", (ar["peak_allocated_bytes"], ar["peak_reserved_bytes"]),
   (o["max_memory_allocated"], o["max_memory_reserved"]))
cudnn = 0
for ln in open(os.path.join(d, "dump")):
    if ln.startswith("E 1 "):
        frames = ln.partition("|")[2].split()
        if any(os.path.basename(f.rpartition("+")[0]).startswith("libcudnn") for f in frames):
            cudnn += 1
if cudnn == 0:
    fail("no allocation in the trace comes from cuDNN (a frame in libcudnn*): cudnnCreate did not run")
print("ok: cuDNN %d: convolutions, BatchNorm and fused attention ran (%d allocations from cuDNN itself), RNNs "
      "failed as documented, PyTorch's attention ran, kernels computed nothing; the banner as documented" %
      (o["cudnn_version"], cudnn))
PY
# "NVIDIA's CUPTI does not run on the simulated driver": asked for anyway
# (TLM_CUPTI=on, which tlm run leaves as set), PyTorch's CUPTI is not loaded
# (it overflowed its stack there, killing the program): one line says so
# and the program runs under interposition alone
# shellcheck disable=SC2086
env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_CUPTI=on TLM_SUMMARY=0 \
	"$tlm" run --no-summary --simulate 2G -o "$tmp/c.trace" -- "$py" -c \
	"import torch; x = torch.tensor([1.0, 2.0]).cuda(); print('copied back', x.cpu().tolist())" \
	>"$tmp/c.out" 2>"$tmp/c.log"
rc=$?
if [ $rc -ne 0 ] || ! grep -qxF "copied back [1.0, 2.0]" "$tmp/c.out" ||
	[ "$(grep -c CUPTI "$tmp/c.log")" -ne 1 ] ||
	! "$tlm" info "$tmp/c.trace" | grep -qF "cupti:        CUPTI not used (the driver is tlm's simulator"; then
	echo "claims.sh: TLM_CUPTI=on on the simulated device: exit $rc"
	cat "$tmp/c.out" "$tmp/c.log"
	"$tlm" info "$tmp/c.trace" | grep -i cupti
	exit 1
fi
echo "ok: TLM_CUPTI=on on the simulated device: CUPTI not loaded, said once, the program ran"
