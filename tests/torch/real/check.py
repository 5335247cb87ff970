# SPDX-License-Identifier: MIT
# Compares tlm's report and trace of workload.py with torch's own figures:
#   check.py CASE DIR WORKLOAD_PY
# DIR holds torch.json (workload.py's output), report.json (tlm report -f
# json), events.txt (trace_events) and, for the caching-allocator cases,
# history.pickle (torch.cuda.memory._dump_snapshot). Prints one line per
# check; exit 1 when any fails.
import json
import os
import pickle
import re
import sys

case, d, workload = sys.argv[1], sys.argv[2], sys.argv[3]
torch_figs = json.load(open(os.path.join(d, "torch.json")))
rep = json.load(open(os.path.join(d, "report.json")))
events = [ln.split() for ln in open(os.path.join(d, "events.txt"))]
failed = 0


def check(ok, what):
    global failed
    print("%s %s: %s" % ("ok  " if ok else "FAIL", case, what))
    if not ok:
        failed += 1


def marked(name):
    for i, ln in enumerate(open(workload), 1):
        if "# tlm-test: " + name in ln:
            return i
    raise SystemExit("no '# tlm-test: %s' line in %s" % (name, workload))


def at_line(stack, line):
    return any(f["kind"] == "python" and f["file"] and f["file"].endswith("workload.py")
               and f["line"] == line for f in stack)


is_async = torch_figs["backend"] == "cudaMallocAsync"


def pool_used_peak(dev):
    """cudaMallocAsync backend: torch's memory_allocated() is the driver
    pool's used memory, which the simulated driver counts in whole 2 MiB
    pages per allocation: replay tlm's trace in those units (peak, at end)."""
    live, used, peak = {}, 0, 0
    for e in events:
        if e[1] != "device" or int(e[2]) != dev or e[5] != "0" or int(e[8]) & 0x20:
            continue
        if e[0] == "alloc" and e[9].startswith("cudaMallocAsync"):
            pages = -(-int(e[4]) // (2 << 20)) * (2 << 20)
            live[int(e[3])] = pages
            used += pages
            peak = max(peak, used)
        elif e[0] == "free" and e[9].startswith("cudaFreeAsync"):
            used -= live.pop(int(e[3]), 0)
    return peak, used


for t in torch_figs["devices"]:
    dev = t["device"]
    r = [x for x in rep["devices"] if x["device"] == dev and x["kind"] == "device"]
    if not r:
        check(False, "dev %d: no device entry in tlm's report" % dev)
        continue
    r = r[0]
    # the owners (report.md, OWNERS): tlm's own split of the driver's memory,
    # each allocation by its native stack; every reserved byte has exactly one
    for key, whole in (("bytes_at_reserved_peak", "peak_reserved_bytes"), ("live_bytes_at_end",
                                                                          "reserved_bytes_at_end")):
        parts = sum(o[key] for o in r["owners"])
        check(parts == r[whole], "dev %d: the owners' %s add up to %s: %d B = %d B (%s)"
              % (dev, key, whole, parts, r[whole], ", ".join("%s %d" % (o["owner"], o[key])
                                                          for o in r["owners"])))
    if is_async:
        peak, end = pool_used_peak(dev)
        check(peak == t["max_memory_allocated"] and end == t["memory_allocated"],
              "dev %d: tlm's cudaMallocAsync/cudaFreeAsync events in 2 MiB pages: peak %d, at end %d; "
              "torch (the pool's used memory) %d, %d" % (dev, peak, end, t["max_memory_allocated"],
                                                          t["memory_allocated"]))
        check(r["live_allocations_at_end"] > 0, "dev %d: tlm: %d B asked for at the peak, %d live at end"
              % (dev, r["peak_allocated_bytes"], r["live_bytes_at_end"]))
        continue
    check(r["peak_allocated_bytes"] == t["max_memory_allocated"],
          "dev %d peak allocated: tlm %d, torch max_memory_allocated %d"
          % (dev, r["peak_allocated_bytes"], t["max_memory_allocated"]))
    check(r["live_bytes_at_end"] == t["memory_allocated"],
          "dev %d live at end: tlm %d, torch memory_allocated %d"
          % (dev, r["live_bytes_at_end"], t["memory_allocated"]))
    # PyTorch's part of the owners against torch's own figures: its segments
    # as tlm's own driver events give them, not the tap's totals
    own = {o["owner"]: o for o in r["owners"]}
    pt = own.get("pytorch", {})
    check(pt.get("peak_bytes") == t["max_memory_reserved"],
          "dev %d: tlm's pytorch owner (its segments, from tlm's own driver events) peaks at %s B, torch "
          "max_memory_reserved %d B" % (dev, pt.get("peak_bytes"), t["max_memory_reserved"]))
    check(pt.get("live_bytes_at_end") == t["memory_reserved"],
          "dev %d: tlm's pytorch owner at the end %s B, torch memory_reserved %d B"
          % (dev, pt.get("live_bytes_at_end"), t["memory_reserved"]))
    for lib in ("cublas", "cudnn"):  # a GEMM's handle and workspace; the convolution's
        check(own.get(lib, {}).get("peak_bytes", 0) > 0, "dev %d: %s is an owner: %s B at its peak"
              % (dev, lib, own.get(lib, {}).get("peak_bytes")))

# OOMs: each of torch's OutOfMemoryErrors against tlm's entries, in bytes:
# torch's OOM observer (the allocation size it asked for, the device's free
# memory) and memory_stats() at the error (workload.py's oom_figures)
msgs = [m for m in torch_figs["ooms"] if m]
tlm_ooms = [o for o in rep["ooms"] if o["source"] == "allocator"] if not is_async else rep["ooms"]
check(len(tlm_ooms) == len(msgs), "OOMs: tlm %d, torch %d" % (len(tlm_ooms), len(msgs)))
for o in rep["ooms"]:  # the owners at each OOM: the device's reserved bytes then, split
    parts = sum(x["bytes"] for x in o["owners"] or [])
    check(o["owners"] is not None and parts == o["reserved_bytes"],
          "OOM dev %d at %d ns: the owners add up to the reserved bytes then: %d B = %d B"
          % (o["device"], o["time_ns"], parts, o["reserved_bytes"]))
for m, o in zip(msgs, tlm_ooms):
    dev = o["device"]
    check(m["device"] == dev and o["device_free_bytes"] == m["device_free_bytes"],
          "OOM dev %d: device free tlm %d B, torch's observer (dev %s) %s B"
          % (dev, o["device_free_bytes"], m["device"], m["device_free_bytes"]))
    if is_async:
        continue
    # torch's allocation size ("Tried to allocate") is the segment it asked the
    # driver for; with expandable segments the driver was asked only for the
    # pages it lacked, and torch's figure is the block's allocation size: the
    # request itself here (24 MiB, above 10 MiB, a whole number of 2 MiB)
    dreq = o["driver_request_bytes"] or 0
    if case == "expandable" and dreq != m["alloc_bytes"]:
        check(o["requested_bytes"] == m["alloc_bytes"] and dreq < o["requested_bytes"],
              "OOM dev %d: requested tlm %d B, torch's allocation size %s B (the driver was asked for the "
              "%d B missing)" % (dev, o["requested_bytes"], m["alloc_bytes"], dreq))
    else:
        check(dreq == m["alloc_bytes"], "OOM dev %d: driver request tlm %d B, torch's allocation size %s B"
              % (dev, dreq, m["alloc_bytes"]))
    check(o["allocated_bytes"] == m["allocated_bytes"], "OOM dev %d: allocated tlm %d B, torch %d B"
          % (dev, o["allocated_bytes"], m["allocated_bytes"]))
    check(o["reserved_free_bytes"] == m["reserved_free_bytes"],
          "OOM dev %d: reserved but free tlm %d B, torch %d B" % (dev, o["reserved_free_bytes"],
                                                                  m["reserved_free_bytes"]))

# the leak and the cycle, at their Python lines
leak, cyc = marked("leak"), marked("cycle")
# the leak: its survivors are named at the loop's line, one per step and
# device; whether tlm calls them a leak follows report.md's rule from the
# run's own times (at least 3 survivors, spanning >= 25% of the run, the last
# in its second half), so the verdict is checked against that rule
steps = torch_figs["steps"]
grp = [s for s in rep["live_at_end"] if at_line(s["stack"], leak) and s["count"] == steps]
check(sorted(s["device"] for s in grp) == list(range(len(torch_figs["devices"]))),
      "the leak (%d survivors per device, one per step) is named at workload.py:%d" % (steps, leak))
run0, run1 = rep["run"]["first_event_ns"], rep["run"]["end_ns"]
for s in grp:
    rule = (s["count"] >= 3 and (s["last_ns"] - s["first_ns"]) * 4 >= run1 - run0
            and (s["last_ns"] - run0) * 2 >= run1 - run0)
    listed = [x for x in rep["leaks"] if at_line(x["stack"], leak) and x["device"] == s["device"]]
    # with the training steps found (report.md, STEPS), one survivor per step is
    # a leak whatever the run does after the loop (the OOM test here)
    st = rep.get("steps") or {}
    by_steps = bool(st.get("found")) and st.get("count") == steps
    check(bool(listed) == (rule or by_steps), "dev %d: leak verdict %s, as the rule gives for survivors from "
          "%.2fs to %.2fs of a %.2fs run (steps found: %s)" % (s["device"], "listed" if listed else "not listed",
                                                             (s["first_ns"] - run0) / 1e9, (s["last_ns"] - run0) / 1e9,
                                                             (run1 - run0) / 1e9, st.get("count")))
    if by_steps and listed:
        x = listed[0]
        check(x.get("bytes_per_step") and x["steps_with_survivors"] == x["steps_measured"],
              "dev %d: the leak per step (%s B in %s of %s steps)" % (s["device"], x.get("bytes_per_step"),
                                                                      x.get("steps_with_survivors"),
                                                                      x.get("steps_measured")))
ndev = len(torch_figs["devices"])
g = [s for s in rep["gc_freed"] if at_line(s["stack"], cyc)]
check(sum(s["bytes"] for s in g) == ndev * 3 << 20,
      "gc-freed at workload.py:%d: %d B (expected %d)" % (cyc, sum(s["bytes"] for s in g), ndev * 3 << 20))

# autograd's backward threads: their blocks carry the backward node's name
# (checked where the allocated peak is the training step's, not the OOM test's)
if not msgs:
    names = set()
    for site in rep["at_peak"]:
        for f in site["stack"]:
            g = re.search(r"(\w+Backward\d*)", f.get("function") or "")
            if g:
                names.add(g.group(1))
    check(bool(names), "backward allocations at the peak named by their node: %s"
          % (", ".join(sorted(names)) or "none"))

# torch's own recorder: the same blocks (address, size, order) per device
hist = os.path.join(d, "history.pickle")
if os.path.exists(hist):
    snap = pickle.load(open(hist, "rb"))
    for dev, tr in enumerate(snap["device_traces"]):
        if dev >= ndev:
            break
        # the recorder's alloc entries carry the size asked for, its frees the block's
        h_alloc = [e["addr"] for e in tr if e["action"] == "alloc"]
        h_free = [e["addr"] for e in tr if e["action"] == "free_requested"]
        t_alloc = [(int(e[3]), int(e[4])) for e in events
                   if e[0] == "alloc" and e[1] == "block" and int(e[2]) == dev and e[5] == "0"]
        # frees after Python's finalization began are after the end of the run (and the dump)
        t_free = [int(e[3]) for e in events if e[0] == "free" and e[1] == "block"
                  and int(e[2]) == dev and not int(e[8]) & 0x20]
        check(h_alloc == [a for a, _ in t_alloc], "dev %d: %d block allocations in torch's recorder, %d in "
              "tlm's trace, same addresses in the same order" % (dev, len(h_alloc), len(t_alloc)))
        check(h_free == t_free, "dev %d: %d block frees in torch's recorder, %d in tlm's trace, same "
              "addresses and block sizes in the same order" % (dev, len(h_free), len(t_free)))
        # replay tlm's block events in order: every free matches a live block of
        # that address, its size is a whole number of 512-byte units at least
        # the size the recorder says was asked for, and what stays live at the
        # end is exactly the snapshot's active blocks (addresses and sizes)
        live, ok, i = {}, True, 0
        h_req = [(e["addr"], e["size"]) for e in tr if e["action"] == "alloc"]
        for e in events:
            if e[1] != "block" or int(e[2]) != dev or e[5] != "0" or int(e[8]) & 0x20:
                continue
            a, sz = int(e[3]), int(e[4])
            if e[0] == "alloc":
                if i < len(h_req) and (h_req[i][0] != a or sz < h_req[i][1] or sz % 512):
                    ok = False
                i += 1
                live[a] = sz
            elif live.pop(a, None) != sz:
                ok = False
        check(ok, "dev %d: each block's size in tlm's trace is the recorder's request rounded up to "
              "its 512-byte block, and each free matches its allocation" % dev)
        s_live = {b["address"]: b["size"] for seg in snap["segments"] if seg["device"] == dev
                  for b in seg["blocks"] if b["state"] == "active_allocated"}
        check(live == s_live, "dev %d: the %d blocks live at the end: same addresses and sizes as the "
              "%d active blocks of torch's snapshot" % (dev, len(live), len(s_live)))
        h_seg = sorted((e["addr"], e["size"]) for e in tr if e["action"] == "segment_alloc")
        t_seg = sorted((int(e[3]), int(e[4])) for e in events
                       if e[0] == "alloc" and e[1] == "device" and int(e[2]) == dev and e[5] == "0")
        check(set(h_seg) <= set(t_seg), "dev %d: torch's %d segments are among tlm's %d device allocations"
              % (dev, len(h_seg), len(t_seg)))
        h_oom = [(e["size"], e["device_free"]) for e in tr if e["action"] == "oom"]
        t_oom = [(o["requested_bytes"], o["device_free_bytes"]) for o in tlm_ooms if o["device"] == dev]
        check(h_oom == t_oom, "dev %d OOMs (requested, device free) to the byte: torch's recorder %s, tlm %s"
              % (dev, h_oom, t_oom))
sys.exit(1 if failed else 0)
