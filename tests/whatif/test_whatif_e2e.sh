#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/whatif/test_whatif_e2e.sh - `tlm whatif` end to end on the simulated
# driver. pt_workload allocates like PyTorch's caching allocator (through the
# model) under libtlm.so; each trace, replayed under the settings it was
# recorded with, must reproduce its own driver calls event for event and the
# allocator's totals at every block event (peaks to the byte). Then the
# predictions made from the default run must equal what the runs under
# max_split_size_mb:32 and expandable segments recorded, the text output must
# name the setting that avoids the OOM, and bad input gets one line.
set -eu
: "${TLM_TEST_LIBTLM:?}" "${TLM_TEST_SIMDIR:?}" "${TLM_TEST_TLM:?}" "${TLM_TEST_PT_WORKLOAD:?}"
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null || tlm_skip python3 "python3 not found: tlm whatif's JSON not checked"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pre="${TLM_TEST_PRELOAD_FIRST:-}"
[ -n "$pre" ] && pre="$pre:"

# The scenarios' arithmetic is the allocator's on the whole device: no
# context holds part of it (tests/sim/test_machine.c tests that cost).
record() { # NAME SCENARIO MEMORY CONF [WHATIF ARGS]
	PYTORCH_CUDA_ALLOC_CONF="$4" TLM_SIM_MEMORY="$3" TLM_SIM_CONTEXT_MEMORY=0 LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" \
	LD_PRELOAD="$pre$TLM_TEST_LIBTLM" TLM_OUTPUT="$dir/$1.trace" TLM_STACK_DEPTH=0 \
		"$TLM_TEST_PT_WORKLOAD" "$2" 2>"$dir/$1.err" || { cat "$dir/$1.err"; echo "FAIL: workload $1"; exit 1; }
	t=$1
	shift 4
	"$TLM_TEST_TLM" whatif --format json "$@" "$dir/$t.trace" >"$dir/$t.json" ||
		{ echo "FAIL: tlm whatif $t"; exit 1; }
}

for conf in "" "max_split_size_mb:32" "expandable_segments:True" \
	    "garbage_collection_threshold:0.5,per_process_memory_fraction:0.9" "roundup_power2_divisions:4"; do
	n=frag_$(printf '%s' "$conf" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' _)
	record "$n" frag 64M "$conf"
	n=churn_$(printf '%s' "$conf" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' _)
	record "$n" churn 160M "$conf"
done

python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    with open(os.path.join(d, n + ".json")) as f:
        return json.load(f)
def fail(msg):
    print("FAIL: " + msg); sys.exit(1)
names = sorted(n[:-5] for n in os.listdir(d) if n.endswith(".json"))
for n in names:
    j = load(n)
    if len(j["devices"]) != 1: fail(n + ": expected one device")
    dev = j["devices"][0]
    c = dev["check"]
    if not c["done"] or c["mismatches"]:
        fail("%s: the recorded replay differs: %s" % (n, c["first_mismatch"]))
    if c["driver_calls"] < 2 or c["block_events"] < 40:
        fail("%s: too little was compared: %r" % (n, c))
    r0 = dev["settings"][0]
    if r0["peak_reserved_bytes"] != dev["recorded_peak_reserved_bytes"] or \
       r0["peak_allocated_bytes"] != dev["recorded_peak_allocated_bytes"]:
        fail(n + ": peaks differ")
    if r0["ooms"] != dev["recorded_ooms"]:
        fail(n + ": OOMs differ")
    if not j["recorded_settings_known"]:
        fail(n + ": the trace did not carry torch.alloc_conf")
    print("ok %s: %d driver calls, %d block events, peak reserved %d" %
          (n, c["driver_calls"], c["block_events"], r0["peak_reserved_bytes"]))

# the default frag run: one OOM, avoided by max_split_size_mb:32 and expandable
base = load("frag_")["devices"][0]
if base["memory_bytes"] != 64 << 20: fail("device memory %d" % base["memory_bytes"])
if base["memory_source"] != "failure": fail("memory source " + base["memory_source"])
# without a failed allocation: libtlm's device memory samples (what the
# process held plus the driver's free memory; no context here)
ex = load("frag_expandable_segments_true")["devices"][0]
if (ex["memory_bytes"], ex["memory_source"]) != (64 << 20, "sample"): fail("expandable run: memory %r" % ex)
if base["recorded_ooms"] != 1 or base["settings"][0]["ooms"] != 1: fail("frag: expected one OOM")
if base["settings"][0]["oom"][0]["verdict"] != "fragmentation": fail("frag: not a fragmentation OOM")
by = {s["label"]: s for s in base["settings"]}
for label, run in (("max_split_size_mb:32", "frag_max_split_size_mb_32"),
                   ("expandable_segments:True", "frag_expandable_segments_true")):
    if label not in by: fail("grid lacks " + label)
    p, real = by[label], load(run)["devices"][0]
    got = (p["peak_reserved_bytes"], p["ooms"], p["driver_allocs"], p["driver_frees"])
    want = (real["recorded_peak_reserved_bytes"], real["recorded_ooms"],
            real["settings"][0]["driver_allocs"], real["settings"][0]["driver_frees"])
    if got != want: fail("%s predicted %r, the run under it %r" % (label, got, want))
    if p["ooms"] != 0 or p["recorded_ooms_avoided"] != 1: fail(label + " should avoid the OOM")
rec = base["recommendation"]
if base["recommended"] is None or "avoids the OOM at" not in rec: fail("recommendation: " + rec)
print("ok recommendation: " + rec)
PY

# text output and the recommendation line
"$TLM_TEST_TLM" whatif "$dir/frag_.trace" >"$dir/frag.txt"
grep -q "recorded settings: PyTorch's defaults" "$dir/frag.txt" || { cat "$dir/frag.txt"; echo "FAIL: text header"; exit 1; }
grep -q "=> max_split_size_mb:32 avoids the OOM at 0\.[0-9]* s: peak reserved 42\.0 MiB -> 54\.0 MiB" "$dir/frag.txt" ||
	{ cat "$dir/frag.txt"; echo "FAIL: text recommendation"; exit 1; }
grep -q "reproduces the trace" "$dir/frag.txt" || { cat "$dir/frag.txt"; echo "FAIL: text check"; exit 1; }

# the report's OOM section and the end-of-run summary name the setting
for mode in "" --summary; do
	"$TLM_TEST_TLM" report $mode "$dir/frag_.trace" >"$dir/rep.txt"
	grep -q "what-if: max_split_size_mb:32 avoids it (peak reserved 42.0 MiB -> 54.0 MiB; tlm whatif)" "$dir/rep.txt" ||
		{ cat "$dir/rep.txt"; echo "FAIL: report $mode: no what-if line"; exit 1; }
done
# no OOM, no line
"$TLM_TEST_TLM" report "$dir/frag_expandable_segments_true.trace" >"$dir/rep.txt"
! grep -q "what-if" "$dir/rep.txt" || { echo "FAIL: what-if line without an OOM"; exit 1; }

# --setting replaces the grid
"$TLM_TEST_TLM" whatif --setting max_split_size_mb:64 --format json "$dir/frag_.trace" >"$dir/one.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); s=j["devices"][0]["settings"]; assert [x["label"] for x in s]==["recorded","max_split_size_mb:64"], s' "$dir/one.json" ||
	{ echo "FAIL: --setting"; exit 1; }

# bad input: one line, exit 2 or 64
one_line() { # EXPECTED_RC PATTERN ARGS...
	rc=0; want=$1; pat=$2; shift 2
	"$TLM_TEST_TLM" whatif "$@" >/dev/null 2>"$dir/e" || rc=$?
	[ "$rc" = "$want" ] && [ "$(wc -l <"$dir/e")" = 1 ] && grep -q "$pat" "$dir/e" ||
		{ cat "$dir/e"; echo "FAIL: whatif $* (rc $rc)"; exit 1; }
}
one_line 64 "unrecognized allocator setting 'nope'" --setting nope:1 "$dir/frag_.trace"
one_line 2 "no PyTorch allocator blocks on device 0" --device 0 "$dir/frag_.trace"
one_line 2 "No such file" "$dir/absent.trace"
printf 'not a trace' >"$dir/junk"
one_line 2 "junk" "$dir/junk"
# a trace without blocks, and one made with backend:cudaMallocAsync
LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" LD_PRELOAD="$pre$TLM_TEST_LIBTLM" TLM_OUTPUT="$dir/async.trace" \
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync TLM_SIM_MEMORY=64M "$TLM_TEST_PT_WORKLOAD" frag 2>/dev/null || true
one_line 2 "cudaMallocAsync, which tlm whatif does not model" "$dir/async.trace"
# damaged traces (cut, bits flipped, bytes overwritten): a report of what
# could be read, or one line; never a crash (the sanitized suite checks memory)
python3 - "$TLM_TEST_TLM" "$dir/churn_.trace" "$dir" <<'PY'
import random, subprocess, sys
tlm, src, d = sys.argv[1:]
data = open(src, "rb").read()
random.seed(16)
for i in range(30):
    b = bytearray(data)
    if i % 3 == 0:
        b = b[:random.randrange(len(b))]
    elif i % 3 == 1:
        for _ in range(5):
            b[random.randrange(len(b))] ^= 1 << random.randrange(8)
    else:
        p = random.randrange(len(b))
        b[p:p + 64] = bytes(random.randrange(256) for _ in range(64))
    path = "%s/damaged.trace" % d
    open(path, "wb").write(b)
    r = subprocess.run([tlm, "whatif", path], capture_output=True, timeout=60)
    if r.returncode not in (0, 2) or (r.returncode == 2 and r.stderr.count(b"\n") != 1):
        print("FAIL: damaged trace %d: rc %d: %r" % (i, r.returncode, r.stderr[-400:]))
        sys.exit(1)
print("ok 30 damaged traces")
PY
echo "PASS"
