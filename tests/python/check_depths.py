# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of depths.py: python3 check_depths.py REPORT.json DEPTHS.py
# Every allocation site of live_at_end must have the frames the program had
# at that call, innermost first, and the count and bytes it made there; the
# truth is worked out here from depths.py's own loop, not from tlm.
import sys

import markers
import sitecheck

report, workload = sys.argv[1], sys.argv[2]
L = markers.lines_of(workload)
malloc_line = L["MALLOC"]
KiB = 1 << 10
# replay depths.py's loop: which allocations are live at the end, and where each was made
live = []  # (frames, size)
for i in range(12):
    for d in (3, 4, 2, 5, 0, 6, 1, 3, 2):
        size = (d * 2 + i % 2 + 1) * KiB
        outer = (("down", L["DOWN"]),) * d + (("step", L["STEP"]), ("<module>", L["MAIN"]))
        live.append(((("malloc", malloc_line), ("down", L["FIRST"])) + outer, size))
        live.append(((("malloc", malloc_line), ("down", L["SECOND"])) + outer, size + KiB))
        if d == 6:
            fr = (("malloc", malloc_line), ("far", L["FARALLOC"])) + (("far", L["FAR"]),) * 9 + (
                ("step", L["STEPFAR"]), ("<module>", L["MAIN"]))
            live.append((fr, 64 * KiB))
        if len(live) > 40:
            live.pop(0)
# the thread of rec(6): level k allocates (k + 1) * 3 KiB under 6 - k calls
for k in range(7):
    live.append(((("malloc", malloc_line), ("rec", L["RECALLOC"])) + (("rec", L["REC"]),) * (6 - k), (k + 1) * 3 * KiB))
truth = sitecheck.tally(live)

got, fails = sitecheck.live_sites(report, "depths.py")
fails += sitecheck.compare(got, truth)
if len(truth) < 8:
    fails.append("the truth has %d sites: the workload changed?" % len(truth))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
