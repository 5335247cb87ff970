#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of a tests/nccl run (run.sh): DDP or FSDP over NCCL under
torchrun on the simulated device.

check.py MODE N DIR RC
  DIR  out/rank-R.json (PyTorch's figures per rank), out/nccl.HOST.PID (NCCL's
       own log: NCCL_DEBUG=INFO, ALLOC and P2P), t/*.trace with, per trace,
       its report (.json) and event dump (.dump), job.json (tlm report DIR),
       run.log (tlm run's stderr)
  RC   tlm run's exit status (torchrun's)

The oracles are not tlm's: each rank's torch.cuda.max_memory_allocated() and
max_memory_reserved() (also against the rank's owner `pytorch`), and NCCL's log of every device buffer it allocates
(its address and size) and imports from a peer (P2P over cuMem, which the
simulated driver shares between the processes).
"""
import glob
import json
import os
import re
import sys

MIB = 1 << 20
GRAN = 2 * MIB  # the simulated device's VMM granularity (cuMemGetAllocationGranularity)


def fail(msg):
    print("check.py:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail("%s: got %.400r, want %.400r" % (what, got, want))


def nccl_log(path):
    """NCCL's own account: buffers it allocated (address -> bytes asked) and
    ones it imported from a peer (address -> bytes)."""
    own, imported = {}, {}
    for ln in open(path, errors="replace"):
        m = re.search(r"Cuda CallocAsync Size (\d+) pointer 0x([0-9a-f]+)", ln)
        if m:
            own[int(m.group(2), 16)] = int(m.group(1))
        m = re.search(r"Allocated shareable buffer 0x([0-9a-f]+) size (\d+)", ln)
        if m:
            own[int(m.group(1), 16)] = int(m.group(2))
        m = re.search(r"Imported shareable buffer device \d+ size (\d+) ptr 0x([0-9a-f]+)", ln)
        if m:
            imported[int(m.group(2), 16)] = int(m.group(1))
    return own, imported


def dump_events(path):
    """The trace's VMM events: cuMemCreate handle -> (bytes, device, frames);
    cuMemMap address -> (bytes, handle)."""
    creates, maps, state = {}, {}, None
    for ln in open(path):
        if ln.startswith("E "):
            head, _, frames = ln.partition("|")
            f = head.split()
            op, kind, api, addr, size, result, dev = int(f[1]), int(f[2]), f[3], int(f[4], 16), int(f[5]), \
                int(f[6]), int(f[7])
            aux = int(f[9], 16)
            if result != 0 or op != 1:
                continue
            if api == "cuMemCreate":
                creates[addr] = (size, dev, frames.split())
            elif api == "cuMemMap":
                maps[addr] = (size, aux)
        elif ln.startswith("S "):
            state = ln.split()[1:]
    eq("%s: reader state, integrity errors" % path, state, ["0", "0"])
    return creates, maps


def from_nccl(frames):
    return any(os.path.basename(fr.rpartition("+")[0]).startswith("libnccl.so") for fr in frames)


def main():
    mode, n, d, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    eq("tlm run's exit status (torchrun's)", rc, 0)
    said = {}
    for f in glob.glob(os.path.join(d, "out", "rank-*.json")):
        r = json.load(open(f))
        said[r["rank"]] = r
    eq("ranks that wrote their figures", sorted(said), list(range(n)))
    for r, s in said.items():
        eq("rank %d: its device, world" % r, (s["device"], s["world"]), (r, n))
        eq("rank %d: all_reduce(SUM) of rank + 1 read back (the banner: NCCL moves no data between ranks, "
           "so this rank's own input)" % r, s["all_reduce"], [r + 1.0] * 4)

    # the job report: one process per rank, each rank's allocated peak torch's
    j = json.load(open(os.path.join(d, "job.json")))
    eq("schema", j["schema"], "tlm-job/1")
    eq("inputs, ranks", (j["inputs"], j["unreadable"], j["ranks"]), (n, 0, n))
    ps = j["processes"]
    jobp = {p["rank"]: p for p in ps}
    eq("processes: ranks and roles", [(p["rank"], p["role"]) for p in ps], [(r, "rank") for r in range(n)])
    for p in ps:
        r, s = p["rank"], said[p["rank"]]
        name = "job report, rank %d" % r
        eq(name + ": pid", p["pid"], s["pid"])
        eq(name + ": device", (p["device"], p["devices"]), (r, 1))
        eq(name + ": exit, lost events, integrity", (p["exit"], p["lost_events"], p["integrity_errors"]),
           ("clean", 0, 0))
        eq(name + ": peak allocated = torch.cuda.max_memory_allocated()", p["peak_allocated_bytes"],
           s["max_memory_allocated"])
    log = open(os.path.join(d, "run.log")).read()
    if "is not one this simulated driver was checked with" in log:  # NCCL's static runtime is 13.3
        fail("a runtime is unknown to the simulated driver: " +
             [ln for ln in log.splitlines() if "checked with" in ln][0])
    if "tlm job report: %d processes (%d ranks, 0 workers, 0 children) on 1 host" % (n, n) not in log:
        fail("tlm run's job report does not name the %d ranks" % n)

    for r in range(n):
        s = said[r]
        traces = glob.glob(os.path.join(d, "t", "*-%d-%d.trace" % (r, s["pid"])))
        eq("rank %d: traces" % r, len(traces), 1)
        base = traces[0][:-len(".trace")]
        rep = json.load(open(base + ".json"))
        dev = [x for x in rep["devices"] if x["kind"] == "device"]
        eq("rank %d: devices with device memory" % r, [x["device"] for x in dev], [r])
        dev = dev[0]
        eq("rank %d: peak allocated = max_memory_allocated()" % r, dev["peak_allocated_bytes"],
           s["max_memory_allocated"])
        ar = dev["allocator_reported"]
        eq("rank %d: PyTorch's reported peaks (allocated, reserved) = max_memory_allocated/reserved()" % r,
           (ar["peak_allocated_bytes"], ar["peak_reserved_bytes"]),
           (s["max_memory_allocated"], s["max_memory_reserved"]))
        eq("rank %d: unmatched frees, inconsistencies" % r, (rep["unmatched_frees"], rep["inconsistencies"]),
           (0, 0))

        # NCCL's device memory, as NCCL itself logged it
        logs = glob.glob(os.path.join(d, "out", "nccl.*.%d" % s["pid"]))
        eq("rank %d: NCCL logs" % r, len(logs), 1)
        own, imported = nccl_log(logs[0])
        if not own or not imported:
            fail("rank %d: NCCL logged %d buffers and %d imports (NCCL_DEBUG_SUBSYS=ALLOC,P2P)" %
                 (r, len(own), len(imported)))
        creates, maps = dump_events(base + ".dump")
        for addr, want in sorted(own.items()):
            what = "rank %d: NCCL's buffer at 0x%x (%d bytes)" % (r, addr, want)
            if addr not in maps:
                fail(what + ": no cuMemMap there in the trace")
            size, h = maps[addr]
            if h not in creates:
                fail(what + ": the mapped handle 0x%x has no cuMemCreate in the trace" % h)
            csize, cdev, frames = creates[h]
            eq(what + ": physical bytes, mapped bytes, device", (csize, size, cdev),
               ((want + GRAN - 1) // GRAN * GRAN,) * 2 + (r,))
            if not from_nccl(frames):
                fail(what + ": cuMemCreate's native stack names no libnccl.so frame: %s" % frames[:8])
        for addr, want in sorted(imported.items()):
            what = "rank %d: the peer's buffer NCCL imported at 0x%x" % (r, addr)
            if addr not in maps:
                fail(what + ": no cuMemMap there in the trace")
            size, h = maps[addr]
            eq(what + ": mapped bytes", size, want)
            if h in creates:
                fail(what + ": counted as this process's memory (a cuMemCreate of handle 0x%x)" % h)
        nccl_made = sorted(h for h, (_, _, fr) in creates.items() if from_nccl(fr))
        eq("rank %d: cuMemCreate calls from libnccl: NCCL's logged buffers" % r, len(nccl_made), len(own))

        # the owners of the rank's reserved memory, in its report and in the job
        # report: PyTorch's part is max_memory_reserved(), NCCL's the buffers NCCL
        # logged (each a whole number of granules; all live until
        # destroy_process_group frees them)
        nccl_bytes = sum((b + GRAN - 1) // GRAN * GRAN for b in own.values())
        for where, owners, reserved in (("report", dev.get("owners"), dev["peak_reserved_bytes"]),
                                        ("job report", jobp[r].get("owners"), jobp[r]["peak_reserved_bytes"])):
            what = "rank %d, %s: owners" % (r, where)
            if not owners:
                fail(what + ": none")
            by = {o["owner"]: o for o in owners}
            if "pytorch" not in by or "nccl" not in by:
                fail(what + ": %s, want pytorch and nccl among them" % sorted(by))
            eq(what + ": pytorch's peak = torch.cuda.max_memory_reserved()", by["pytorch"]["peak_bytes"],
               s["max_memory_reserved"])
            eq(what + ": nccl's peak = the buffers NCCL logged (%d)" % len(own), by["nccl"]["peak_bytes"], nccl_bytes)
            eq(what + ": nccl's live bytes at the end (destroy_process_group)", by["nccl"]["live_bytes_at_end"], 0)
            eq(what + ": the parts at the reserved peak add up to it", sum(o["bytes_at_reserved_peak"] for o in owners),
               reserved)
    print("ok: %s over NCCL on %d simulated devices: each rank's peaks are PyTorch's, NCCL's %d buffers "
          "per rank (and the peers' it imported) are in its trace at NCCL's addresses, and each rank's owners "
          "(report and job report) give pytorch max_memory_reserved() and nccl those buffers' %d bytes" %
          (mode, n, len(own), nccl_bytes))


if __name__ == "__main__":
    main()
