# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of classes.py: python3 check_classes.py REPORT.json CLASSES.py
# Every site must be one allocation line with all of its Python calls and no
# frame of the interpreter's own (3.12-3.13 entry frames, the 3.13 __init__ shim).
import json
import os
import sys

import markers

report, workload = sys.argv[1], sys.argv[2]
L = markers.lines_of(workload)
r = json.load(open(report))
MiB = 1 << 20
with open(workload) as f:
    src = list(enumerate(f, 1))
mod = [("<module>", n) for n, t in src if t.startswith("kept = build()")][0]
malloc = [("malloc", n) for n, t in src if "assert rt.cudaMalloc" in t][0]
truth = {  # python frames innermost first (last part of each name) -> (bytes, count)
    (malloc, ("__init__", L["LAYER"]), ("build", L["BUILD"]), mod): (5 * MiB, 5),
    (malloc, ("__init__", L["BASE"]), ("__init__", L["SUPER"]), ("build", L["DERIVED_CALL"]), mod):
        (8 * MiB, 4),
    (malloc, ("__init__", L["DERIVED"]), ("build", L["DERIVED_CALL"]), mod): (4 * MiB, 4),
    (malloc, ("__init__", L["LAYER"]), ("__init__", L["BLOCK"]), ("build", L["BLOCK_CALL"]), mod):
        (6 * MiB, 6),
}
fails = []


def frames(site):
    out = []
    for fr in site["stack"]:
        if fr["kind"] != "python":
            continue
        if fr["file"] is None or fr["line"] is None or not fr["file"].endswith("classes.py"):
            fails.append("a frame not of classes.py or without a line: %s" % fr)
        # before 3.12 a comprehension is a frame of its own: not the interpreter's, keep it out of the truth
        if fr["function"].endswith("<listcomp>"):
            continue
        # 3.8-3.10 name a frame by co_name: compare the last part of the name (the lines tell them apart)
        out.append((fr["function"].rsplit(".", 1)[-1], fr["line"]))
    return tuple(out)


for sec in ("live_at_end", "at_peak", "leaks"):
    got = {}
    for s in r[sec]:
        py = [fr for fr in s["stack"] if fr["kind"] == "python"]
        if any(fr["line"] == L["DEEP"] for fr in py):
            # 84 frames (malloc, deep at LINE_DEEP, 80 x LINE_RECURSE, build, <module>):
            # the innermost 63 kept, the cut said
            want = [malloc, ("deep", L["DEEP"])] + [("deep", L["RECURSE"])] * 61
            if [(fr["function"].rsplit(".", 1)[-1], fr["line"]) for fr in py] != want:
                fails.append("%s: the deep stack: %s" % (sec, [(fr["function"], fr["line"]) for fr in py]))
            if s.get("python_stack_cut") is not True:
                fails.append("%s: the deep stack carries no python_stack_cut flag" % sec)
            if (s["bytes"], s["count"]) != (MiB, 1):
                fails.append("%s: the deep stack: %d bytes in %d" % (sec, s["bytes"], s["count"]))
            continue
        if "python_stack_cut" in s:
            fails.append("%s: a stack of %d frames flagged as cut" % (sec, len(py)))
        k = frames(s)
        if k in got:
            fails.append("%s: two sites with the same frames %s" % (sec, k))
        got[k] = (s["bytes"], s["count"])
    if sec == "leaks":  # the program ends with all of it live: whichever are called leaks add up
        continue
    if got != truth:
        fails.append("%s: sites %s, expected %s" % (sec, sorted(got.items()), sorted(truth.items())))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
