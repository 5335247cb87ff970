#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/whatif/test_whatif_real.sh - tlm whatif against the real PyTorch
# allocator: the CUDA wheel of tools/torch-venv.sh on the simulated device
# (`tlm run --simulate`). Skipped (77) when either is missing.
#  1. churn.py (3000 mixed requests, OOMs caught, an empty_cache()) under the
#     defaults, max_split_size_mb:32, roundup_power2_divisions:4 and
#     expandable segments, and frag.py under each setting of 2.: the replay
#     under the recorded settings must reproduce each run's driver calls
#     event for event and the allocator's totals at every block event.
#  2. frag.py under the defaults: the predictions for other settings (peak
#     reserved, OOMs, device allocations and frees) must equal what
#     torch.cuda.memory_stats() says in runs under those settings.
set -eu
: "${TLM_TEST_TLM:?}" "${TLM_TEST_SRC:?}"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
if ! [ -x "$py" ] || ! "$py" -c 'import torch' >/dev/null 2>&1; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): tlm whatif not checked against the real allocator"
fi
"$TLM_TEST_TLM" run --help 2>/dev/null | grep -q -- --simulate ||
	tlm_skip simulate "tlm run has no --simulate: tlm whatif not checked against the real allocator"
command -v python3 >/dev/null || tlm_skip python3 "python3 not found: tlm whatif not checked against the real allocator"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
real="$TLM_TEST_SRC/tests/whatif/real"

run() { # NAME MEMORY CONF SCRIPT ARGS...
	n=$1 m=$2 c=$3
	shift 3
	PYTORCH_CUDA_ALLOC_CONF=$c "$TLM_TEST_TLM" run --no-summary --simulate "$m" -o "$dir/$n.trace" -- \
		"$py" "$@" >"$dir/$n.out" 2>&1
}

for c in "" max_split_size_mb:32 roundup_power2_divisions:4 expandable_segments:True; do
	n=churn_$(printf '%s' "$c" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' _)
	run "$n" 160M "$c" "$real/churn.py" 3000 || { cat "$dir/$n.out"; echo "FAIL: churn.py under '$c'"; exit 1; }
	"$TLM_TEST_TLM" whatif --format json "$dir/$n.trace" >"$dir/$n.json" || { echo "FAIL: whatif $n"; exit 1; }
done

run frag 64M "" "$real/frag.py" "$dir/frag.stats" || { cat "$dir/frag.out"; echo "FAIL: frag.py"; exit 1; }
"$TLM_TEST_TLM" whatif --format json --setting max_split_size_mb:32 --setting max_split_size_mb:20 \
	--setting roundup_power2_divisions:4 --setting expandable_segments:True \
	--setting garbage_collection_threshold:0.5,per_process_memory_fraction:0.9 \
	"$dir/frag.trace" >"$dir/frag.json" || { echo "FAIL: whatif frag"; exit 1; }
for c in max_split_size_mb:32 max_split_size_mb:20 roundup_power2_divisions:4 expandable_segments:True \
	 garbage_collection_threshold:0.5,per_process_memory_fraction:0.9; do
	n=frag_$(printf '%s' "$c" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' _)
	rc=0
	run "$n" 64M "$c" "$real/frag.py" "$dir/$n.stats" || rc=$?
	if [ "$rc" != 0 ]; then
		# torch with expandable segments needs driver calls the simulated
		# device does not have yet (it dies): said, not failed
		echo "not checked: frag.py under $c exited with $rc on the simulated device"
		rm -f "$dir/$n.stats"
	else
		"$TLM_TEST_TLM" whatif --format json "$dir/$n.trace" >"$dir/self_$n.json" ||
			{ echo "FAIL: whatif $n"; exit 1; }
	fi
done

python3 - "$dir" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
def fail(m):
    print("FAIL: " + m); sys.exit(1)
for f in sorted(glob.glob(os.path.join(d, "churn_*.json")) + glob.glob(os.path.join(d, "self_*.json"))):
    dev = json.load(open(f))["devices"][0]
    c = dev["check"]
    if c["mismatches"] or c["block_events"] < (1000 if "churn" in f else 40):
        fail("%s: %r" % (os.path.basename(f), c))
    print("ok %s: real run reproduced: %d driver calls, %d block events (ties by segment: %s)" %
          (os.path.basename(f), c["driver_calls"], c["block_events"], c["ties_by_segment"]))
j = json.load(open(os.path.join(d, "frag.json")))["devices"][0]
if j["check"]["mismatches"]: fail("frag: %r" % j["check"])
base = json.load(open(os.path.join(d, "frag.stats")))
r0 = j["settings"][0]
if (r0["peak_reserved_bytes"], r0["ooms"], r0["driver_allocs"], r0["driver_frees"]) != \
   (base["reserved_bytes.all.peak"], base["num_ooms"], base["num_device_alloc"], base["num_device_free"]):
    fail("frag: the recorded replay %r vs torch %r" % (r0, base))
checked = 0
for s in j["settings"][1:]:
    n = "frag_" + "".join(ch if ch in "abcdefghijklmnopqrstuvwxyz0123456789" else "_" for ch in s["label"].lower())
    p = os.path.join(d, n + ".stats")
    if not os.path.exists(p):
        continue
    real = json.load(open(p))
    got = (s["peak_reserved_bytes"], s["ooms"], s["driver_allocs"], s["driver_frees"])
    want = (real["reserved_bytes.all.peak"], real["num_ooms"], real["num_device_alloc"], real["num_device_free"])
    if got != want:
        fail("%s: predicted (peak reserved, OOMs, device allocs, frees) %r, torch says %r" % (s["label"], got, want))
    print("ok %s: predicted = real: %r" % (s["label"], got))
    checked += 1
if checked < 3: fail("only %d settings could be compared" % checked)
PY
echo PASS
