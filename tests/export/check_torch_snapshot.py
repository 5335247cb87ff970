# SPDX-License-Identifier: MIT
"""Checks a `tlm report --format torch-snapshot` file (tests/export/torch_snapshot.sh).

usage: check_torch_snapshot.py SNAPSHOT REPORT_JSON [TRUTH] [--viz]

Without --viz (any python3, stdlib only): the schema of
torch.cuda.memory._snapshot(); every segment tiled exactly by its blocks;
the device traces replayed from the start give exactly the active blocks
and segments of the snapshot; totals equal tlm's JSON report of the same
trace (reserved and allocated at the end, per device) and, for the
caching-allocator double, its own accounting (TRUTH: allocated and
reserved at the end, live blocks, each OOM's request and device free
memory).

With --viz (a python that imports torch): PyTorch's own
torch.cuda._memory_viz reads it: segsum (the `stats` command), trace,
segments, memory, compare, trace_plot, segment_plot, and `python -m
torch.cuda._memory_viz stats FILE`; their figures must be the same.
"""
import json
import pickle
import subprocess
import sys

fails = 0


def check(what, ok, detail=""):
    global fails
    if ok:
        print(f"ok: {what}")
    else:
        fails += 1
        print(f"FAIL: {what} {detail}")


SEG_KEYS = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
            "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "oom", "snapshot"}


def frames_ok(fr):
    return isinstance(fr, list) and all(
        isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("filename"), str)
        and isinstance(f.get("line"), int) for f in fr)


def structure(snap):
    check("top-level keys", {"segments", "device_traces", "allocator_settings"} <= set(snap), sorted(snap))
    bad = []
    for s in snap["segments"]:
        if not SEG_KEYS <= set(s):
            bad.append(("keys", sorted(SEG_KEYS - set(s))))
            continue
        at = s["address"]
        for b in s["blocks"]:
            if not BLOCK_KEYS <= set(b) or b["address"] != at or not frames_ok(b["frames"]):
                bad.append(("block", s["address"], b))
            if b["state"] not in ("active_allocated", "active_pending_free", "inactive"):
                bad.append(("state", b["state"]))
            at += b["size"]
        if at != s["address"] + s["total_size"]:
            bad.append(("tiling", s["address"], at - s["address"], s["total_size"]))
        act = sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated")
        if act != s["allocated_size"] or s["segment_type"] not in ("small", "large") or not frames_ok(s["frames"]):
            bad.append(("sizes", s["address"], act, s["allocated_size"]))
        if not (isinstance(s["segment_pool_id"], tuple) and len(s["segment_pool_id"]) == 2):
            bad.append(("pool id", s["segment_pool_id"]))
    check("segments: schema, blocks tile each segment exactly", not bad, bad[:3])
    bad = []
    for trace in snap["device_traces"]:
        last = None
        for e in trace:
            key = "device_free" if e.get("action") == "oom" else "addr"
            if e.get("action") not in ACTIONS or not {key, "size", "stream", "time_us", "frames"} <= set(e) \
                    or not frames_ok(e["frames"]):
                bad.append(e)
            elif last is not None and e["time_us"] < last:
                bad.append(("time order", e))
            else:
                last = e["time_us"]
    check("device_traces: schema, time order", not bad, bad[:3])


def replay(snap):
    """The traces from an empty device must end in the snapshot's state."""
    bad = []
    for dev, trace in enumerate(snap["device_traces"]):
        blocks, segs, mapped = {}, {}, []
        for e in trace:
            a = e["action"]
            if a == "alloc":
                if e["addr"] in blocks:
                    bad.append(("double alloc", e["addr"]))
                blocks[e["addr"]] = e["size"]
            elif a == "free_completed":
                if blocks.pop(e["addr"], None) is None:
                    bad.append(("free of unknown", e["addr"]))
            elif a == "segment_alloc":
                segs[e["addr"]] = e["size"]
            elif a == "segment_free":
                if segs.pop(e["addr"], None) is None:
                    bad.append(("segment free of unknown", e["addr"]))
            elif a == "segment_map":  # ranges of an expandable segment: mapped and unmapped by pages
                mapped.append((e["addr"], e["addr"] + e["size"]))
            elif a == "segment_unmap":
                lo, hi, rest = e["addr"], e["addr"] + e["size"], []
                for s0, s1 in mapped:
                    rest += [(s0, min(s1, lo))] if s0 < lo else []
                    rest += [(max(s0, hi), s1)] if s1 > hi else []
                gone = sum(s1 - s0 for s0, s1 in mapped) - sum(s1 - s0 for s0, s1 in rest)
                if gone != e["size"]:
                    bad.append(("unmap of unmapped memory", e["addr"], e["size"], gone))
                mapped = rest
        want_b = {b["address"]: b["size"] for s in snap["segments"] if s["device"] == dev for b in s["blocks"]
                  if b["state"] == "active_allocated"}
        want_r = sum(s["total_size"] for s in snap["segments"] if s["device"] == dev)
        if blocks != want_b:
            bad.append(("dev", dev, "blocks", len(blocks), len(want_b)))
        got_r = sum(segs.values()) + sum(s1 - s0 for s0, s1 in mapped)
        if got_r != want_r:
            bad.append(("dev", dev, "reserved", got_r, want_r))
    check("the traces replayed give the snapshot's blocks and segments", not bad, bad[:5])


def against_report(snap, rep):
    for d in rep["devices"]:
        if d["kind"] != "device" or d["device"] < 0:
            continue
        segs = [s for s in snap["segments"] if s["device"] == d["device"]]
        res = sum(s["total_size"] for s in segs)
        # with the allocator tap, the report's allocated layer is its blocks only:
        # memory outside the allocator (tlm_api) is reserved, not allocated, there
        tap = d.get("allocator_reported") is not None
        alloc = sum(s["allocated_size"] for s in segs if not (tap and "tlm_api" in s))
        check(f"device {d['device']}: reserved at end = the report's ({d['reserved_bytes_at_end']})",
              res == d["reserved_bytes_at_end"], res)
        check(f"device {d['device']}: allocated at end = the report's live bytes ({d['live_bytes_at_end']})",
              alloc == d["live_bytes_at_end"], alloc)


def against_truth(snap, truth):
    t = {}
    for line in open(truth):
        p = line.split()
        if len(p) == 3 and p[0] == "N":
            t[p[1]] = float(p[2])
    segs = snap["segments"]
    check("allocated at end = the double's", sum(s["allocated_size"] for s in segs) == t["allocated_end"])
    check("reserved at end = the double's", sum(s["total_size"] for s in segs) == t["reserved_end"])
    nb = sum(1 for s in segs for b in s["blocks"] if b["state"] == "active_allocated")
    check(f"live blocks = the double's ({int(t['live_blocks'])})", nb == t["live_blocks"], nb)
    ooms = [e for tr in snap["device_traces"] for e in tr if e["action"] == "oom"]
    check(f"one oom entry per allocator OOM ({int(t['nooms'])})", len(ooms) == t["nooms"], len(ooms))
    for i, o in enumerate(ooms[:int(t["nooms"])]):
        check(f"oom {i}: requested and device free", o["size"] == t[f"oom{i}_requested"]
              and o["device_free"] == t[f"oom{i}_device_free"], o)
    check("no segment outside the allocator on the double's run", not any("tlm_api" in s for s in segs))


def viz(path, snap):
    import torch.cuda._memory_viz as mv
    same = lambda s: s  # noqa: E731 - the folded lines, without flamegraph.pl
    total = sum(s["total_size"] for s in snap["segments"])
    active = sum(s["allocated_size"] for s in snap["segments"])
    st = mv.segsum(snap)
    check("memory_viz stats: total_reserved", f"total_reserved: {mv._format_size(total)}" in st)
    check("memory_viz stats: total_allocated", f"total_allocated: {mv._format_size(active)}" in st)
    tr = mv.trace(snap)
    n = sum(len(t) for t in snap["device_traces"])
    check("memory_viz trace: every entry", sum(int(l.split()[0]) for l in tr.splitlines() if l.endswith(" entries")) == n)
    for name in ("segments", "memory"):
        lines = getattr(mv, name)(snap, format_flamegraph=same).splitlines()
        got = sum(int(l.rsplit(" ", 1)[1]) for l in lines if ";active_allocated;" in l)
        check(f"memory_viz {name}: the active bytes add up ({active})", got == active, got)
    cmp = mv.compare(snap["segments"], [], format_flamegraph=same).splitlines()
    check("memory_viz compare: every segment only before",
          sum(int(l.rsplit(" ", 1)[1]) for l in cmp if l.startswith("only_before;")) == total)
    for name in ("trace_plot", "segment_plot"):
        html = getattr(mv, name)(snap)
        check(f"memory_viz {name}: a page", "snapshot.pickle" in html and len(html) > 1000)
    r = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", "stats", path], capture_output=True,
                       text=True, timeout=300)
    check("python -m torch.cuda._memory_viz stats", r.returncode == 0 and "total_reserved" in r.stdout, r.stderr[-500:])


def main():
    args = [a for a in sys.argv[1:] if a != "--viz"]
    with open(args[0], "rb") as f:
        snap = pickle.load(f)
    if "--viz" in sys.argv:
        viz(args[0], snap)
    else:
        structure(snap)
        replay(snap)
        with open(args[1]) as f:
            against_report(snap, json.load(f))
        if len(args) > 2:
            against_truth(snap, args[2])
    print(f"{'FAILED' if fails else 'all ok'}: {fails} failed")
    return 1 if fails else 0


sys.exit(main())
