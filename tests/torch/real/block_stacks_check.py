# SPDX-License-Identifier: MIT
"""Checks block_stacks.py's two traces with the tlm reader (block_stacks.sh).
    block_stacks_check.py DEFAULT_TRACE NATIVE_TRACE LINE_FILE
DEFAULT_TRACE: recorded as is; NATIVE_TRACE: with TLM_BLOCK_NATIVE_STACKS=1;
each with TRACE.json beside it, its `tlm report --full-stacks -f json` (the
reader, like the report, leaves out native frames under Python ones).
The truth: the program's source (the marked line) and which thread ran what
(the 4 MiB block is the main thread's; the backward's blocks are made on
PyTorch's autograd thread, which has no Python frames)."""
import json
import sys

import tlm

MIB = 1 << 20
fails = []


def check(what, ok, got):
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, got))
    if not ok:
        fails.append(what)


def blocks(path):
    """The trace, and its block allocations as rows (size, thread, stack id)."""
    t = tlm.load(path)
    e = t.events
    block, alloc = tlm.KINDS.index("block"), tlm.OPS.index("alloc")
    rows = [(int(s), int(th), int(sid)) for k, o, s, th, sid in
            zip(e["kind"], e["op"], e["size"], e["thread"], e["stack_id"]) if k == block and o == alloc]
    return t, rows


line = int(open(sys.argv[3]).read())
for name, path, native_wanted in (("default", sys.argv[1], False), ("TLM_BLOCK_NATIVE_STACKS=1", sys.argv[2], True)):
    t, b = blocks(path)
    def at_mark(sid):
        py = [f for f in t.stacks[sid].frames if f.kind == "python"] if sid in t.stacks else []
        return bool(py) and (py[0].function, py[0].file.endswith("block_stacks.py"), py[0].line) == ("make", True, line)

    fours = [r for r in b if r[0] == 4 * MIB]
    mine = [r for r in fours if at_mark(r[2])]
    check(name + ": two 4 MiB blocks, one made at the marked line", (len(fours), len(mine)) == (2, 1),
          (len(fours), len(mine)))
    if len(mine) != 1:
        continue
    _, thread, sid = mine[0]
    # the same block in the full-stacks report: it is live at the end
    sites = [x for x in json.load(open(path + ".json"))["live_at_end"]
             if x["bytes"] == 4 * MIB and x["stack"] and x["stack"][0].get("line") == line]
    check(name + ": its site live at the end", len(sites) == 1, len(sites))
    full = sites[0]["stack"] if sites else []
    nat = [f for f in full if f["kind"] == "native"]
    npy = len([f for f in full if f["kind"] == "python"])
    if native_wanted:
        check(name + ": native frames under the Python ones, through the caching allocator",
              bool(nat) and any("CUDACachingAllocator" in (f.get("function") or "") for f in nat)
              and full.index(nat[0]) >= npy, "%d native frames under %d Python ones" % (len(nat), npy))
    else:
        check(name + ": no native frames", npy > 0 and not nat, "%d native frames under %d Python ones" % (len(nat), npy))
    # the autograd thread's blocks: no Python frames there, so native ones
    other = sorted(set(r[2] for r in b if r[1] != thread))
    check(name + ": blocks made on another thread (the autograd thread)", len(other) > 0, len(other))
    for s in other:
        kinds = sorted(set(f.kind for f in t.stacks[s].frames)) if s in t.stacks else []
        check(name + ": autograd-thread stack %d has native frames only" % s, kinds == ["native"], kinds)
sys.exit(1 if fails else 0)
