# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of lines.py: python3 check_lines.py REPORT.json LINES.py
# Each of three's lines holds the 10 allocations made there, their bytes
# worked out here from lines.py's own loop, not from tlm.
import json
import sys

import markers
import sitecheck

report, workload = sys.argv[1], sys.argv[2]
L = markers.lines_of(workload)
KiB = 1 << 10
live = []
for i in range(10):
    for line, size in (("A", 1 * KiB + i), ("B", 2 * KiB + i), ("C", 4 * KiB + i)):
        live.append(((("three", L[line]), ("<module>", L["MAIN"])), size))
truth = sitecheck.tally(live)
r = json.load(open(report))
got, fails = {}, []
for s in r["live_at_end"]:
    py = [fr for fr in s["stack"] if fr["kind"] == "python"]
    k = tuple((fr["function"].rsplit(".", 1)[-1], fr["line"]) for fr in py)
    if k in got:
        fails.append("two sites with the same frames %s" % (k,))
    got[k] = (s["bytes"], s["count"])
fails += sitecheck.compare(got, truth)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
