#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of the real-torchrun job of tests/job/real (run.sh).

check.py MODE DIR RANKS_PY RC
  MODE      ok | fail (TLM_TEST_FAIL=1: rank 1 exits 3, torchrun SIGTERMs rank 0)
            | term (SIGTERM to tlm run: torchrun SIGTERMs both ranks)
  DIR       t/ (the traces), out/ (what each rank and the child said),
            job.json (tlm report --format json DIR/t), run.log (tlm run's stderr)
  RC        tlm run's exit status

The truth is computed from ranks.py's construction and PyTorch's caching
allocator rules (c10/cuda/CUDACachingAllocator.cpp), and cross-checked
against torch.cuda.max_memory_allocated()/max_memory_reserved() of each
process: tlm's peaks must equal both.
"""
import glob
import json
import os
import re
import sys

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def fail(msg):
    print("check.py:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail("%s: got %.400r, want %.400r" % (what, got, want))


def block(n):
    """A request's block: rounded up to 512 bytes (kMinBlockSize)."""
    return (n + 511) // 512 * 512


def segment(n):
    """The segment cudaMalloc'ed for a block that no cached one can take:
    2 MiB for the small pool (<= 1 MiB), 20 MiB up to 10 MiB, else the
    block rounded up to 2 MiB (kSmallBuffer, kLargeBuffer, kRoundLarge)."""
    b = block(n)
    if b <= MIB:
        return 2 * MIB
    if b < 10 * MIB:
        return 20 * MIB
    return (b + 2 * MIB - 1) // (2 * MIB) * (2 * MIB)


def human(b):
    """tlm's byte format (src/render/fmt.c)."""
    v, u = float(b), 0
    while v >= 1023.95 and u < 6:
        v, u = v / 1024, u + 1
    return "%d B" % b if u == 0 else "%.1f %s" % (v, ["B", "KiB", "MiB", "GiB", "TiB"][u])


def lines_of(path):
    """Marker comment -> line number in ranks.py."""
    out = {}
    for i, line in enumerate(open(path), 1):
        m = re.search(r"# ([A-Z]+_(?:LINE|CALL))$", line.rstrip())
        if m:
            out[m.group(1)] = i
    return out


def main():
    mode, d, src, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    L = lines_of(src)
    eq("tlm run's exit status (torchrun's)", rc, 0 if mode == "ok" else 1)
    said = {}
    for f in glob.glob(os.path.join(d, "out", "rank-*.json")):
        r = json.load(open(f))
        said[r["rank"]] = r
    eq("ranks that wrote their figures", sorted(said), [0, 1])
    kids = [json.load(open(f)) for f in glob.glob(os.path.join(d, "out", "child-*.json"))]
    eq("children", len(kids), 1)
    kid = kids[0]
    workers = {}
    for f in glob.glob(os.path.join(d, "out", "worker-*")):
        r, pid = os.path.basename(f).split("-")[1:]
        workers.setdefault(int(r), []).append(int(pid))
    eq("DataLoader workers per rank", {r: len(w) for r, w in workers.items()}, {0: 2, 1: 2})
    for r in (0, 1):
        eq("rank %d: the workers' batches" % r, said[r]["loaded"], float(sum(range(64))))
        eq("rank %d: all_reduce over gloo" % r, said[r]["all_reduce"], 1.0)
    eq("the child's exit", said[1]["child"], 0)
    eq("the child's parent", kid["ppid"], said[1]["pid"])
    agent = said[0]["ppid"]
    eq("both ranks are torchrun's children", said[1]["ppid"], agent)

    # the truth, from the construction and the allocator's rules
    leak_each = 512 * KIB
    truth = {}
    for r in (0, 1):
        x = (r + 1) * 12 * MIB
        alloc = block(x) + (block(leak_each) if r == 1 else 0)  # at the peak, x and the first leak
        res = segment(x) + (segment(leak_each) if r == 1 else 0)  # 3 leaks fit one small segment
        truth[r] = (res, alloc)
        eq("rank %d: torch's max_memory_reserved" % r, said[r]["max_memory_reserved"], res)
        eq("rank %d: torch's max_memory_allocated" % r, said[r]["max_memory_allocated"], alloc)
        eq("rank %d: torch's num_ooms" % r, said[r]["num_ooms"], 1 if r == 0 else 0)
    child_truth = (segment(4 * MIB), block(4 * MIB))
    eq("the child: torch's peaks", (kid["max_memory_reserved"], kid["max_memory_allocated"]), child_truth)
    eq("truth", (truth, child_truth), ({0: (12 * MIB, 12 * MIB), 1: (26 * MIB, 24 * MIB + 512 * KIB)},
                                       (20 * MIB, 4 * MIB)))
    rank_site = "phase (ranks.py:%d) < work (ranks.py:%d)" % (L["RANK_LINE"], L["PHASE_CALL"])
    leak_site = "work (ranks.py:%d) < main (ranks.py:%d)" % (L["LEAK_LINE"], L["WORK_CALL"])
    child_site = "child (ranks.py:%d) < <module> (ranks.py:%d)" % (L["CHILD_LINE"], L["CHILD_CALL"])

    j = json.load(open(os.path.join(d, "job.json")))
    eq("schema", j["schema"], "tlm-job/1")
    eq("inputs", (j["inputs"], j["unreadable"], j["hosts"], j["ranks"]), (3, 0, 1, 2))
    ps = j["processes"]
    eq("order and roles", [(p["rank"], p["role"]) for p in ps], [(0, "rank"), (1, "rank"), (1, "child")])
    pids = [p["pid"] for p in ps]
    eq("pids", pids, [said[0]["pid"], said[1]["pid"], kid["pid"]])
    for w in workers.values():
        for pid in w:
            if pid in pids:
                fail("DataLoader worker %d (no CUDA call) left a trace" % pid)
    if agent in pids:
        fail("torchrun's agent (pid %d, no CUDA call) left a trace" % agent)
    eq("no other trace", sorted(os.listdir(os.path.join(d, "t"))),
       sorted("%s-%d-%d.trace" % (p["host"], p["rank"], p["pid"]) for p in ps))
    for i, p in enumerate(ps):
        name = "process %d (%s %d)" % (i, p["role"], p["rank"])
        eq(name + " ppid", p["ppid"], agent if p["role"] == "rank" else said[1]["pid"])
        eq(name + " local_rank, world_size", (p["local_rank"], p["world_size"]), (p["rank"], 2))
        eq(name + " origin", p["origin"], "")
        killed = (mode == "fail" and i == 0) or (mode == "term" and p["role"] == "rank")
        want_exit = "signal" if killed else "clean"
        eq(name + " exit", p["exit"], want_exit)
        eq(name + " integrity", (p["lost_events"], p["integrity_errors"]), (0, 0))
        if p["role"] == "child":
            eq(name + " device", (p["device"], p["devices"]), (0, 1))
            eq(name + " peaks", (p["peak_reserved_bytes"], p["peak_allocated_bytes"]), child_truth)
            eq(name + " sites", p["sites"], [{"site": child_site, "bytes": 4 * MIB}])
            eq(name + " leaks, ooms", (p["leak_sites"], p["ooms"]), (0, 0))
            continue
        r = p["rank"]
        eq(name + " device", (p["device"], p["devices"]), (r, 1))
        eq(name + " peaks", (p["peak_reserved_bytes"], p["peak_allocated_bytes"]), truth[r])
        want_sites = [{"site": rank_site, "bytes": block((r + 1) * 12 * MIB)}]
        if r == 1:
            want_sites.append({"site": leak_site, "bytes": block(leak_each)})
        eq(name + " sites", p["sites"], want_sites)
        eq(name + " leaks", (p["leak_sites"], p["leak_bytes"]), (1, 3 * block(leak_each)) if r == 1 else (0, 0))
        eq(name + " ooms", p["ooms"], 1 if r == 0 else 0)
        if r == 0:
            o = p["first_oom"]
            eq(name + " first_oom", (o["device"], o["requested_bytes"]), (0, 2 * GIB))
    c = j["comparison"]
    eq("across", (c["across"], c["count"]), ("ranks", 2))
    for k, (lo, hi) in (("peak_reserved", (12 * MIB, 26 * MIB)), ("peak_allocated", (12 * MIB, 24 * MIB + 512 * KIB))):
        s = c[k]
        eq(k, (s["min_bytes"], s["min_process"]["name"], s["max_bytes"], s["max_process"]["name"], s["spread_bytes"]),
           (lo, "rank 0", hi, "rank 1", hi - lo))
    eq("differing sites", [(s["site"], s["spread_bytes"], s["min_bytes"], s["min_process"]["name"], s["max_bytes"],
                            s["max_process"]["name"]) for s in c["sites"]],
       [(rank_site, 12 * MIB, 12 * MIB, "rank 0", 24 * MIB, "rank 1"),
        (leak_site, 512 * KIB, 0, "rank 0", 512 * KIB, "rank 1")])
    eq("oom_processes", j["oom_processes"], 1)
    eq("first_ooms", [(o["process"]["index"], o["process"]["name"], o["device"], o["requested_bytes"])
                      for o in j["first_ooms"]], [(0, "rank 0", 0, 2 * GIB)])

    # what tlm run printed at the end
    log = open(os.path.join(d, "run.log")).read().splitlines()
    host = ps[0]["host"]
    want = [
        "tlm run: 3 traces from this run:",
        "tlm job report: 3 processes (2 ranks, 0 workers, 1 child) on 1 host",
        "  peak reserved   min   12.0 MiB (rank 0)  max   26.0 MiB (rank 1)  spread 14.0 MiB",
        "  peak allocated  min   12.0 MiB (rank 0)  max   24.5 MiB (rank 1)  spread 12.5 MiB",
        "  " + rank_site,
        "      spread 12.0 MiB: 12.0 MiB (rank 0) to 24.0 MiB (rank 1)",
        "  " + leak_site,
        "      spread 512.0 KiB: 0 B (rank 0) to 512.0 KiB (rank 1)",
        "OUT OF MEMORY: 1 process hit an OOM; in job time order:",
    ]
    for w in want:
        if w not in log:
            fail("not in tlm run's output: %r" % w)
    for i, p in enumerate(ps):
        # src/job/job_render.c's row, its start time (+S.SSS s) aside
        row = "%6d %5d %-6s %-14.14s %8d %4d %11s %11s %5d %4d " % (
            p["rank"], p["local_rank"], p["role"], host, p["pid"], p["device"], human(p["peak_reserved_bytes"]),
            human(p["peak_allocated_bytes"]), p["leak_sites"], p["ooms"])
        row = "^" + re.escape(row) + r" *\+[0-9.]+ s" + (" signal" if p["exit"] == "signal" else "") + "$"
        if not any(re.match(row, line) for line in log):
            fail("no row for process %d in tlm run's job report (want /%s/)" % (i, row))
    first = r"^  first: rank 0 \(%s, pid %d\) at \+[0-9.]+ s: 2\.0 GiB requested on device 0, 1 OOM$" % (
        re.escape(host), ps[0]["pid"])
    if not any(re.match(first, line) for line in log):
        fail("no first-OOM line in tlm run's job report (want /%s/)" % first)
    print("ok: %s: 2 ranks (%s) and rank 1's child; no trace from torchrun's agent or the 4 DataLoader workers"
          % (mode, ", ".join("rank %d %s/%s" % (r, human(truth[r][0]), human(truth[r][1])) for r in (0, 1))))


if __name__ == "__main__":
    main()
