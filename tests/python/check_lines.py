# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of lines.py: python3 check_lines.py REPORT.json LINES.py
# Each of three's lines holds the 10 allocations made there, their bytes
# worked out here from lines.py's own loop, not from tlm.
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
got, fails = sitecheck.live_sites(report, "lines.py")
fails += sitecheck.compare(got, truth)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
