#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/whatif/test_whatif_memory.sh - tlm whatif's memory follows the live
# state, not the event count: the peak RSS of a replay of 2 M block events
# with one live block is within 4 MiB of that of 0.2 M (5.4 MB both; when it
# kept every event, 17 MB and 130 MB); a trace with more blocks live at once than
# a replay keeps stops with one line (exit 2).
set -eu
: "${TLM_TEST_TLM:?}" "${TLM_TEST_WI_GEN:?}" "${TLM_TEST_PEAK_RSS:?}"
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null || tlm_skip python3 "python3 not found: tlm whatif's memory bound not tested"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$TLM_TEST_WI_GEN" churn "$dir/small.trace" 100000
"$TLM_TEST_WI_GEN" churn "$dir/big.trace" 1000000
"$TLM_TEST_WI_GEN" live "$dir/live.trace" 262200
"$TLM_TEST_WI_GEN" churnoom "$dir/early.trace" 1000
"$TLM_TEST_WI_GEN" churnoom "$dir/late.trace" 2100000
python3 - "$TLM_TEST_TLM" "$dir" "$TLM_TEST_PEAK_RSS" <<'PY'
import os, subprocess, sys
tlm, d, peak = sys.argv[1], sys.argv[2], sys.argv[3]
def fail(m):
    print("FAIL: " + m); sys.exit(1)
def run(*args):
    """exit status, stderr and peak RSS (KiB) of one tlm whatif"""
    p = subprocess.run([peak, tlm, "whatif"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stderr, int(p.stdout.split()[0])
rc1, e1, small = run(os.path.join(d, "small.trace"))
rc2, e2, big = run(os.path.join(d, "big.trace"))
if rc1 or rc2: fail("tlm whatif: %d %s / %d %s" % (rc1, e1, rc2, e2))
print("ok peak RSS: %d KiB for 200002 block events, %d KiB for 2000002" % (small, big))
if big - small > 4096: fail("the replay's memory grew with the events: %d KiB more" % (big - small))
rc, err, _ = run("--setting", "expandable_segments:True", os.path.join(d, "live.trace"))
lines = err.strip().split("\n")
if rc != 2 or len(lines) != 1 or "more than 262144 blocks live at once on one device: stopped" not in lines[0]:
    fail("262200 live blocks: exit %d, %r" % (rc, err))
print("ok the size limit: exit 2, " + lines[0])
# a split limit at the churn's segment size (20 MiB) makes a segment per
# request with memory to spare: that alternative is given up past 16384 live
# driver allocations, the recorded settings' row and the rest go on (the
# replay was quadratic: the report's what-if hint runs every split limit)
p = subprocess.run([tlm, "whatif", "--setting", "max_split_size_mb:20", "--setting", "expandable_segments:True",
                    os.path.join(d, "small.trace")], stdout=subprocess.PIPE, universal_newlines=True)
rows = [l.split() for l in p.stdout.split("\n")]
given = [r for r in rows if r[:1] == ["max_split_size_mb:20"]]
if p.returncode or len(given) != 1 or " ".join(given[0][1:]) != \
        "not modelled to the end: more than 16384 driver allocations live at once":
    fail("max_split_size_mb:20 on the churn: exit %d, %r" % (p.returncode, p.stdout))
if not any(r[:2] == ["expandable_segments:True", "20.0"] for r in rows):
    fail("the other alternative's row is missing: %r" % p.stdout)
print("ok an alternative past 16384 live driver allocations is given up, the rest go on")
# tlm report's what-if hint replays at most 4 Mi events before a first OOM
# (its cost: every split limit of the grid); a later OOM says to run tlm whatif
late = "what-if: not replayed (the first OOM came after 4194304 events): run `tlm whatif TRACE`"
for tag, want in (("early", False), ("late", True)):
    p = subprocess.run([tlm, "report", "-f", "text", os.path.join(d, tag + ".trace")], stdout=subprocess.PIPE,
                       universal_newlines=True)
    got = any(l.strip() == late for l in p.stdout.split("\n"))
    if p.returncode or "out of memory" not in p.stdout.lower() or got != want:
        fail("tlm report on the %s OOM: exit %d, the line %s" % (tag, p.returncode, "shown" if got else "not shown"))
print("ok the report's what-if hint: an OOM after 4 Mi events points to tlm whatif, an early one does not")
PY
echo PASS
