# SPDX-License-Identifier: MIT
# Where the native frames under Python ones end (docs/recording.md, "Python
# stacks"): python3 check_native.py REPORT.json cut|past
# REPORT.json: `tlm report --full-stacks -f json` of workload.py. Every site
# of the sections below that has Python frames must have native frames after
# them; "cut": they end at their first frame inside the interpreter (its
# libpython, or the python executable when it links the interpreter in);
# "past" (TLM_STACK_PAST_PYTHON=1): they go on past it (the eval loop, main).
import json
import os
import sys

report, mode = sys.argv[1], sys.argv[2]
with open(report) as f:
    r = json.load(f)
exe = os.path.realpath(sys.executable)


def interp(fr):
    m = fr.get("module")
    return bool(m) and (os.path.basename(m).startswith("libpython") or os.path.realpath(m) == exe)


fails, seen = [], 0
for sec in ("live_at_end", "leaks", "gc_freed"):
    for s in r[sec]:
        st = s["stack"]
        if not any(fr["kind"] == "python" for fr in st):
            continue
        native = [fr for fr in st if fr["kind"] != "python"]
        mods = [os.path.basename(fr.get("module") or "?") for fr in native]
        at = [i for i, fr in enumerate(native) if interp(fr)]
        seen += 1
        if not at:
            fails.append("%s: no interpreter frame among the native ones: %s" % (sec, mods))
        elif mode == "cut" and at != [len(native) - 1]:
            fails.append("%s: native frames do not end at the interpreter's first: %s" % (sec, mods))
        elif mode == "past" and at[0] == len(native) - 1:
            fails.append("%s: TLM_STACK_PAST_PYTHON=1, yet the native frames end at the interpreter: %s"
                         % (sec, mods))
if not seen:
    fails.append("no site with Python frames")
for f in fails:
    print("check_native: " + f)
sys.exit(1 if fails else 0)
