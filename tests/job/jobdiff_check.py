#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of tlm-job-diff/1 output for tests/job/test_job_diff.sh.

jobs DIFF MODE RANK_LINE LEAK_LINE EXTRA_LINE [new64]: BASE and NEW of
    test_job_diff.sh (MODE: none, sites or summary: how the gates compared)
gates DIFF FAILED_LEAK FAILED_PEAK [new64]: which processes failed which gate
same A B: the same matching and figures (the sources aside)
make-roles BASE NEW: two hand-made tlm-job/1 jobs with workers, children, mains
roles DIFF: their matching
"""
import json
import sys

MIB = 1 << 20


def fail(msg):
    print("jobdiff_check:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail("%s: got %.400r, want %.400r" % (what, got, want))


def peak(side, r):
    """job_workload's peak of rank r in BASE or NEW (test_job_diff.sh)"""
    leak = {"base": {5: 3, 9: 3}, "new": {5: 3, 9: 5}}[side].get(r, 0)
    extra = 4 if side == "new" and r == 63 else 0
    return (9 + r + leak + extra) * MIB


def jobs(path, mode, rank_line, leak_line, extra_line, new64=False):
    d = json.load(open(path))
    eq("schema", d["schema"], "tlm-job-diff/1")
    nranks = 65 if new64 else 64
    eq("base", (d["base"]["processes"], d["base"]["ranks"], d["base"]["across"]), (66, 64, "ranks"))
    eq("new", (d["new"]["processes"], d["new"]["ranks"]), (nranks + 2, nranks))
    eq("counts", (d["matched"], d["only_in_base"], d["only_in_new"], d["unchanged"]),
       (65, 1, 2 if new64 else 1, 61))
    ps = d["processes"]
    names = [p["name"] for p in ps]
    want = []
    for r in range(nranks):
        want.append("rank %d" % r)
        if r == 3:
            want += ["rank 3 worker #1", "rank 3 worker #2"]
    want.append("main #1")
    eq("names", names, want)
    by = {p["name"]: p for p in ps}
    for r in range(nranks):
        p = by["rank %d" % r]
        if r == 64:
            eq("rank 64 status", (p["status"], p["base"], p["changed"]), ("new", None, True))
            eq("rank 64 peak", p["peak_allocated_bytes"], {"before": None, "after": peak("new", 64), "delta": peak("new", 64)})
            continue
        eq("status %d" % r, p["status"], "both")
        eq("role %d" % r, (p["rank"], p["role"], p["ordinal"]), (r, "rank", 1))
        for k in ("peak_reserved_bytes", "peak_allocated_bytes"):
            b, a = peak("base", r), peak("new", r)
            eq("%s %d" % (k, r), p[k], {"before": b, "after": a, "delta": a - b})
        lb = {5: 3, 9: 3}.get(r, 0) * MIB
        la = {5: 3, 9: 5}.get(r, 0) * MIB
        eq("leak_bytes %d" % r, p["leak_bytes"], {"before": lb, "after": la, "delta": la - lb})
        ls = 1 if r in (5, 9) else 0
        eq("leak_sites %d" % r, p["leak_sites"], {"before": ls, "after": ls, "delta": 0})
        ob, oa = int(r in (7, 40)), int(r in (20, 40))
        eq("ooms %d" % r, p["ooms"], {"before": ob, "after": oa, "delta": oa - ob})
        eq("oom %d" % r, p["oom"], {(1, 1): "both", (0, 1): "new", (1, 0): "gone", (0, 0): "none"}[(ob, oa)])
        eq("changed %d" % r, p["changed"], r in (7, 9, 20, 63))
        if mode == "none":
            eq("gate %d" % r, p["gate"], None)
        else:
            eq("compared %d" % r, p["gate"]["compared"], mode)
            eq("leak growth %d" % r, p["gate"]["leak_growth_bytes"], la - lb)
    w1, w2, m = by["rank 3 worker #1"], by["rank 3 worker #2"], by["main #1"]
    eq("worker 1", (w1["status"], w1["role"], w1["rank"], w1["changed"], w1["peak_allocated_bytes"]["after"]),
       ("both", "worker", 3, False, MIB))
    eq("worker 2", (w2["status"], w2["new"]["integrity_errors"], w2["peak_allocated_bytes"]["after"]), ("new", 0, MIB))
    eq("main", (m["status"], m["rank"], m["role"], m["new"], m["peak_allocated_bytes"]["before"]),
       ("base", None, "main", None, 9 * MIB))

    c = d["comparison"]
    top = 64 if new64 else 63
    for k in ("peak_reserved", "peak_allocated"):
        s = c[k]
        eq(k + " base", (s["base"]["max_bytes"], s["base"]["max_process"]["name"], s["base"]["min_bytes"],
                         s["base"]["min_process"]["name"]), (72 * MIB, "rank 63", 9 * MIB, "rank 0"))
        eq(k + " new", (s["new"]["max_bytes"], s["new"]["max_process"]["name"], s["new"]["min_bytes"]),
           (76 * MIB, "rank 63", 9 * MIB))
        eq(k + " deltas", (s["delta_max_bytes"], s["delta_min_bytes"], s["delta_spread_bytes"]), (4 * MIB, 0, 4 * MIB))
        eq(k + " index", ps[s["new"]["max_process"]["index"]]["name"], "rank 63")
    sites = c["sites"]
    got = []
    for s in sites:
        line = int(s["site"].rsplit(":", 1)[1].rstrip(")"))
        side = lambda x: None if x is None else (x["spread_bytes"], x["min_process"]["name"], x["max_process"]["name"])
        got.append((line, side(s["base"]), side(s["new"]), s["delta_spread_bytes"]))
    eq("sites", got, [
        (extra_line, (0, "rank 0", "rank 0"), (4 * MIB, "rank 0", "rank 63"), 4 * MIB),
        (leak_line, (3 * MIB, "rank 0", "rank 5"), (5 * MIB, "rank 0", "rank 9"), 2 * MIB),
        (rank_line, (63 * MIB, "rank 0", "rank 63"), ((top) * MIB, "rank 0", "rank %d" % top), (top - 63) * MIB),
    ] if new64 else [
        (extra_line, (0, "rank 0", "rank 0"), (4 * MIB, "rank 0", "rank 63"), 4 * MIB),
        (leak_line, (3 * MIB, "rank 0", "rank 5"), (5 * MIB, "rank 0", "rank 9"), 2 * MIB),
        (rank_line, (63 * MIB, "rank 0", "rank 63"), (63 * MIB, "rank 0", "rank 63"), 0),
    ])
    o = d["ooms"]
    eq("oom base", (o["base"]["processes"], o["base"]["first"]["process"]["name"], o["base"]["first"]["requested_bytes"]),
       (2, "rank 40", 1 << 40))
    eq("oom new", (o["new"]["processes"], o["new"]["first"]["process"]["name"]), (2, "rank 20"))
    eq("oom new in", [ps[i]["name"] for i in o["new_in"]], ["rank 20"])
    eq("oom gone in", [ps[i]["name"] for i in o["gone_in"]], ["rank 7"])


def gates(path, leak, peak_, new64=False):
    d = json.load(open(path))
    ps = d["processes"]
    g = d["gate"]
    eq("failed processes", [ps[i]["name"] for i in g["failed_processes"]], leak.split(",") if leak else [])
    eq("peak failed processes", [ps[i]["name"] for i in g["peak_failed_processes"]], peak_.split(",") if peak_ else [])
    eq("job leak growth", g["job_leak_growth_bytes"], 2 * MIB)
    eq("job peak growth", g["job_peak_growth_bytes"], 4 * MIB)
    eq("failed", g["failed"], bool(leak or peak_ or g["job_failed"] or g["job_peak_failed"]))
    for p in ps:
        if p["name"] == "rank 9" and leak:
            eq("rank 9 failed_on", p["gate"]["failed_on"][0], "leaks")
        if p["name"] == "rank 63" and peak_:
            eq("rank 63 devices", p["gate"]["grown_peak_devices"],
               [{"device": 0, "kind": "device", "before": 72 * MIB, "after": 76 * MIB, "delta": 4 * MIB}])


def strip(d):
    for p in d["processes"]:
        for k in ("base", "new"):
            if p[k]:
                p[k].pop("source")
        if p["gate"]:
            p["gate"].pop("compared")
    for k in ("base", "new"):
        d[k].pop("inputs")
        d[k].pop("files")
    return d


def same(a, b):
    x, y = strip(json.load(open(a))), strip(json.load(open(b)))
    for k in x:
        eq(k, y[k], x[k])


def make_roles(base_path, new_path):
    """BASE: a launcher (no RANK), ranks 0 and 1, rank 0's worker, an exec'd
    image of rank 0, a subprocess of rank 1, a main on host b. NEW: rank 0
    has two workers (the first 1 MiB more), rank 1's subprocess is gone,
    host b has two mains (the first OOMs), and no launcher."""
    def proc(pid, ppid, host, rank, origin="", end_how="exit", start=0, peak=1, ooms=0):
        return {"source": "p%d@%s" % (pid, host), "error": None, "pid": pid, "ppid": ppid, "host": host,
                "exe": "/x", "command": "x", "rank": rank, "local_rank": rank, "world_size": 2 if rank is not None else None,
                "origin": origin, "end_how": end_how, "exit": "clean", "start_realtime_ns": 1000 + start,
                "first_event_ns": 0, "end_ns": 0, "events": 1, "lost_events": 0, "integrity_errors": 0, "device": 0,
                "devices": 1, "peak_reserved_bytes": MIB * peak, "peak_allocated_bytes": MIB * peak,
                "leak_sites": 0, "leak_bytes": 0, "ooms": ooms,
                "first_oom": {"time_ns": 5, "job_time_ns": 5, "device": 0, "requested_bytes": MIB} if ooms else None,
                "sites": []}
    base = [proc(100, 1, "a", None), proc(101, 100, "a", 0, end_how="exec", start=1), proc(102, 100, "a", 1, start=2),
            proc(103, 102, "a", 1, start=3), proc(104, 101, "a", 0, origin="fork", start=4),
            proc(101, 100, "a", 0, start=5), proc(200, 1, "b", None, start=6)]
    new = [proc(301, 1, "a", 0, end_how="exec", start=1), proc(302, 1, "a", 1, start=2),
           proc(304, 301, "a", 0, origin="fork", start=4, peak=2), proc(305, 301, "a", 0, origin="fork", start=5),
           proc(301, 1, "a", 0, start=6), proc(400, 1, "b", None, start=7, ooms=1), proc(401, 1, "b", None, start=8)]
    json.dump({"schema": "tlm-job/1", "processes": base}, open(base_path, "w"))
    json.dump({"schema": "tlm-job/1", "processes": new}, open(new_path, "w"))


def roles(path):
    d = json.load(open(path))
    got = [(p["name"], p["status"], (p["base"] or {}).get("pid"), (p["new"] or {}).get("pid")) for p in d["processes"]]
    eq("matching", got, [("rank 0", "both", 101, 301), ("rank 0 worker #1", "both", 104, 304),
                         ("rank 0 worker #2", "new", None, 305), ("rank 0 child #1", "both", 101, 301),
                         ("rank 1", "both", 102, 302), ("rank 1 child #1", "base", 103, None),
                         ("main #1", "both", 100, 400), ("main #2", "both", 200, 401)])
    by = {p["name"]: p for p in d["processes"]}
    eq("worker delta", by["rank 0 worker #1"]["peak_allocated_bytes"]["delta"], MIB)
    eq("main oom", (by["main #1"]["oom"], by["main #2"]["oom"]), ("new", "none"))
    eq("counts", (d["matched"], d["only_in_base"], d["only_in_new"]), (6, 1, 1))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "jobs":
        jobs(args[0], args[1], *map(int, args[2:5]), new64=len(args) > 5)
    elif cmd == "gates":
        gates(args[0], args[1], args[2], new64=len(args) > 3)
    elif cmd == "same":
        same(args[0], args[1])
    elif cmd == "make-roles":
        make_roles(args[0], args[1])
    elif cmd == "roles":
        roles(args[0])
    else:
        fail("unknown check " + cmd)
