# SPDX-License-Identifier: MIT
# Checks tlm's JSON report of workload.py: python3 check.py REPORT.json WORKLOAD.py [off]
# The lines are found by their markers in the workload, so edits cannot skew them.
import json
import os
import sys

import markers

report, workload = sys.argv[1], sys.argv[2]
off = len(sys.argv) > 3 and sys.argv[3] == "off"
lines = markers.lines_of(workload)
with open(report) as f:
    r = json.load(f)
fails = []


def where(site):
    return [(os.path.basename(fr["file"] or ""), fr["function"], fr["line"]) for fr in site["stack"]]


def find(section, line):
    """The sites of a section whose Python frames include workload.py:line."""
    return [s for s in r[section]
            if any(fr["kind"] == "python" and fr["file"] and fr["file"].endswith("workload.py")
                   and fr["line"] == line for fr in s["stack"])]


MiB = 1 << 20
if off:
    for sec in ("live_at_end", "leaks", "gc_freed"):
        for s in r[sec]:
            if any(fr["kind"] == "python" for fr in s["stack"]):
                fails.append("TLM_PYTHON=off: a Python frame in %s" % sec)
    if r["gc_freed"]:
        fails.append("TLM_PYTHON=off: gc_freed not empty")
else:
    expect = [  # (section, marker, bytes, count, first function of the user's code)
        ("leaks", "LEAK", None, None, "train_step"),
        ("live_at_end", "LEAK", None, None, "train_step"),
        ("live_at_end", "STARTUP", 6 * MiB, 2, None),
        ("gc_freed", "CYCLE", 5 * MiB, 1, "__init__"),
        ("live_at_end", "TEARDOWN", 4 * MiB, 1, "__init__"),
        ("live_at_end", "THREAD", 2 * MiB, 1, "worker"),
    ]
    for sec, mark, nbytes, count, fn in expect:
        got = find(sec, lines[mark])
        if len(got) != 1:
            fails.append("%s: expected one site at workload.py:%d, got %d: %s" %
                         (sec, lines[mark], len(got), [where(s) for s in r[sec]]))
            continue
        s = got[0]
        if nbytes is not None and (s["bytes"] != nbytes or s["count"] != count):
            fails.append("%s: workload.py:%d: %d bytes in %d, expected %d in %d" %
                         (sec, lines[mark], s["bytes"], s["count"], nbytes, count))
        top = s["stack"][0]
        if top["kind"] != "python" or top["function"] != "malloc":
            fails.append("%s: the first frame is not the innermost Python line: %s" % (sec, where(s)[:3]))
        if fn and not any(fr["function"] and fr["function"].endswith(fn) for fr in s["stack"][:3]):
            fails.append("%s: %s not among the first frames: %s" % (sec, fn, where(s)[:3]))
    leak = find("leaks", lines["LEAK"])
    if leak and leak[0]["count"] < 8:
        fails.append("leaks: %d allocations, expected the loop's" % leak[0]["count"])
    # nothing else is gc-freed; the cycle is not live at the end, the start-up is no leak
    if len(r["gc_freed"]) != 1:
        fails.append("gc_freed: %d groups, expected 1" % len(r["gc_freed"]))
    if find("live_at_end", lines["CYCLE"]) or find("leaks", lines["STARTUP"]):
        fails.append("a site in the wrong section")
    # at the allocated peak (Teardown's allocation, the last one): everything
    # live then stays live to the end of the run (finalization), the cycle
    # was collected before, the loop's temporary freed at once
    n_loop = leak[0]["count"] if leak else 0
    for mark, nbytes, count in (("STARTUP", 6 * MiB, 2), ("THREAD", 2 * MiB, 1),
                                ("LEAK", 7 * MiB * n_loop, n_loop), ("TEARDOWN", 4 * MiB, 1)):
        got = find("at_peak", lines[mark])
        if len(got) != 1 or (got[0]["bytes"], got[0]["count"], got[0]["persistent_bytes"],
                             got[0]["transient_bytes"]) != (nbytes, count, nbytes, 0):
            fails.append("at_peak: workload.py:%d: %s, expected %d bytes in %d, all persistent" %
                         (lines[mark], [(g["bytes"], g["count"], g["persistent_bytes"]) for g in got],
                          nbytes, count))
    if find("at_peak", lines["CYCLE"]):
        fails.append("at_peak: the cycle's memory, collected before the peak")
    dev = [d for d in r["devices"] if d["device"] == 0 and d["kind"] == "device"]
    if not dev or sum(s["bytes"] for s in r["at_peak"] if s["device"] == 0) != dev[0]["peak_allocated_bytes"]:
        fails.append("at_peak: the sites do not add up to the peak")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
