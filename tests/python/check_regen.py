# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of regen.py: python3 check_regen.py REPORT.json REGEN.py
# Each round's allocation must be at its own frames: malloc's line in
# regen.py, then its round's module (first loop: gen<i>.py at line
# (i // 2) % 7 + 1, (i + 1) KiB; second: same.py at line i % 7 + 1,
# (100 + i) KiB), then the loop's exec line of regen.py; worked out from
# regen.py's loops, not from tlm.
import json
import os
import sys

import markers
import sitecheck

report, workload = sys.argv[1], sys.argv[2]
L = markers.lines_of(workload)
name = os.path.basename(workload)
KiB = 1 << 10
rounds = [("gen%d.py" % i, (i // 2) % 7 + 1, (i + 1) * KiB, L["EXEC"]) for i in range(40)]
rounds += [("same.py", i % 7 + 1, (100 + i) * KiB, L["EXEC2"]) for i in range(40)]
truth = sitecheck.tally((((name, "malloc", L["MALLOC"]), (f, "<module>", line), (name, "<module>", at)), size)
                        for f, line, size, at in rounds)

r = json.load(open(report))
got = {}
for s in r["live_at_end"]:
    py = [fr for fr in s["stack"] if fr["kind"] == "python"]
    k = tuple((os.path.basename(fr["file"] or "?"), fr["function"], fr["line"]) for fr in py)
    b, c = got.get(k, (0, 0))
    got[k] = (b + s["bytes"], c + s["count"])
fails = sitecheck.compare(got, truth)
for f in fails[:10]:
    print("FAIL:", f)
if len(fails) > 10:
    print("FAIL: and %d more sites" % (len(fails) - 10))
sys.exit(1 if fails else 0)
