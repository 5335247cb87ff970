#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of tlm-job/1 reports for tests/job/test_job.sh.

ranks JOB RANK_LINE LEAK_LINE BASE_LINE: 64 ranks of job_workload.c
same A B: two job reports with the same processes and comparison
launcher JOB WORKER_LINE: 4 ranks x (rank, 2 workers, 1 exec'd child)
"""
import json
import sys

MIB = 1 << 20


def fail(msg):
    print("job_check:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail("%s: got %.300r, want %.300r" % (what, got, want))


def ranks(path, rank_line, leak_line, base_line):
    j = json.load(open(path))
    eq("schema", j["schema"], "tlm-job/1")
    ps = j["processes"]
    eq("processes", len(ps), 64)
    eq("ranks", j["ranks"], 64)
    eq("hosts", j["hosts"], 1)
    for i, p in enumerate(ps):
        r = p["rank"]
        eq("order", r, i)
        eq("role %d" % r, p["role"], "rank")
        eq("local_rank %d" % r, p["local_rank"], r % 8)
        eq("world_size %d" % r, p["world_size"], 64)
        peak = (9 + r) * MIB + (3 * MIB if r == 5 else 0)
        eq("peak_reserved %d" % r, p["peak_reserved_bytes"], peak)
        eq("peak_allocated %d" % r, p["peak_allocated_bytes"], peak)
        eq("device %d" % r, p["device"], 0)
        eq("leak_sites %d" % r, p["leak_sites"], 1 if r == 5 else 0)
        eq("leak_bytes %d" % r, p["leak_bytes"], 3 * MIB if r == 5 else 0)
        eq("ooms %d" % r, p["ooms"], 1 if r in (7, 40) else 0)
        if r in (7, 40):
            eq("oom bytes %d" % r, p["first_oom"]["requested_bytes"], 1 << 40)
        sites = {s["site"]: s["bytes"] for s in p["sites"]}
        got = sorted(sites.values(), reverse=True)
        want = sorted([8 * MIB, (r + 1) * MIB] + ([3 * MIB] if r == 5 else []), reverse=True)
        eq("site bytes %d" % r, got, want)
    c = j["comparison"]
    eq("across", c["across"], "ranks")
    eq("count", c["count"], 64)
    for k in ("peak_reserved", "peak_allocated"):
        s = c[k]
        eq(k + " min", (s["min_bytes"], s["min_process"]["name"]), (9 * MIB, "rank 0"))
        eq(k + " max", (s["max_bytes"], s["max_process"]["name"]), (72 * MIB, "rank 63"))
        eq(k + " spread", s["spread_bytes"], 63 * MIB)
    d = c["sites"]
    eq("differing sites", len(d), 2)
    if ":%d)" % rank_line not in d[0]["site"].split(" < ")[-1] and ":%d)" % rank_line not in d[0]["site"]:
        fail("first differing site %r is not line %d" % (d[0]["site"], rank_line))
    eq("site 0", (d[0]["spread_bytes"], d[0]["min_bytes"], d[0]["min_process"]["name"], d[0]["max_bytes"],
                  d[0]["max_process"]["name"]), (63 * MIB, MIB, "rank 0", 64 * MIB, "rank 63"))
    if ":%d)" % leak_line not in d[1]["site"]:
        fail("second differing site %r is not line %d" % (d[1]["site"], leak_line))
    eq("site 1", (d[1]["spread_bytes"], d[1]["min_bytes"], d[1]["min_process"]["name"], d[1]["max_bytes"],
                  d[1]["max_process"]["name"]), (3 * MIB, 0, "rank 0", 3 * MIB, "rank 5"))
    if any(":%d)" % base_line in x["site"] for x in d):
        fail("the base site (the same on every rank) is listed as differing")
    eq("oom processes", j["oom_processes"], 2)
    o = j["first_ooms"]
    eq("oom order", [x["process"]["name"] for x in o], ["rank 40", "rank 7"])
    if not o[0]["job_time_ns"] < o[1]["job_time_ns"]:
        fail("OOM times out of order")


def same(a, b):
    x, y = json.load(open(a)), json.load(open(b))
    eq("processes", x["processes"], y["processes"])
    eq("comparison", x["comparison"], y["comparison"])
    eq("first_ooms", x["first_ooms"], y["first_ooms"])
    eq("start", x["start_realtime_ns"], y["start_realtime_ns"])


def launcher(path, worker_line):
    j = json.load(open(path))
    ps = j["processes"]
    eq("processes", len(ps), 16)
    for r in range(4):
        mine = [p for p in ps if p["rank"] == r]
        eq("roles of rank %d" % r, sorted(p["role"] for p in mine), ["child", "rank", "worker", "worker"])
        rank = [p for p in mine if p["role"] == "rank"][0]
        child = [p for p in mine if p["role"] == "child"][0]
        eq("rank %d peak" % r, rank["peak_reserved_bytes"], (9 + r) * MIB)
        eq("child %d peak" % r, child["peak_reserved_bytes"], (9 + r) * MIB)
        eq("child %d pid" % r, child["pid"], rank["pid"])
        eq("rank %d world" % r, rank["world_size"], 4)
        for w in mine:
            if w["role"] == "worker":
                eq("worker ppid", w["ppid"], rank["pid"])
                eq("worker peak", w["peak_reserved_bytes"], MIB)
                eq("worker origin", w["origin"], "fork")
                # (the worker's own stack: fork children record none yet,
                # see NOTE; its bytes are still attributed)
                eq("worker site bytes", sum(s["bytes"] for s in w["sites"]), MIB)
    c = j["comparison"]
    eq("count", c["count"], 4)
    eq("spread", c["peak_reserved"]["spread_bytes"], 3 * MIB)


def make_roles(path):
    """A hand-made tlm-job/1 input: a traced launcher (pid 100, no RANK), two
    ranks it started, a subprocess of rank 1 (same RANK), a fork worker of
    rank 0, an exec'd image of rank 0, an unrelated process on another host."""
    def proc(pid, ppid, host, rank, origin="", end_how="exit", start=0):
        return {"source": "p%d@%s" % (pid, host), "error": None, "pid": pid, "ppid": ppid, "host": host,
                "exe": "/x", "command": "x", "rank": rank, "local_rank": rank, "world_size": 2 if rank is not None else None,
                "origin": origin, "end_how": end_how, "exit": "clean", "start_realtime_ns": 1000 + start,
                "first_event_ns": 0, "end_ns": 0, "events": 1, "lost_events": 0, "integrity_errors": 0, "device": 0,
                "devices": 1, "peak_reserved_bytes": MIB * (1 + (rank or 0)), "peak_allocated_bytes": MIB,
                "leak_sites": 0, "leak_bytes": 0, "ooms": 0, "first_oom": None, "sites": []}
    ps = [proc(100, 1, "a", None), proc(101, 100, "a", 0, end_how="exec", start=1), proc(102, 100, "a", 1, start=2),
          proc(103, 102, "a", 1, start=3), proc(104, 101, "a", 0, origin="fork", start=4),
          proc(101, 100, "a", 0, start=5), proc(101, 100, "b", None, start=6)]
    json.dump({"schema": "tlm-job/1", "processes": ps}, open(path, "w"))


def roles(path):
    j = json.load(open(path))
    got = [(p["host"], p["pid"], p["rank"], p["role"]) for p in j["processes"]]
    eq("roles", got, [("a", 101, 0, "rank"), ("a", 101, 0, "child"), ("a", 104, 0, "worker"),
                      ("a", 102, 1, "rank"), ("a", 103, 1, "child"), ("a", 100, None, "main"),
                      ("b", 101, None, "main")])
    eq("ranks", j["ranks"], 2)
    eq("hosts", j["hosts"], 2)
    eq("compared", (j["comparison"]["across"], j["comparison"]["count"]), ("ranks", 2))
    eq("worker name", j["processes"][2]["source"], "p104@a")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "ranks":
        ranks(sys.argv[2], *map(int, sys.argv[3:6]))
    elif cmd == "same":
        same(sys.argv[2], sys.argv[3])
    elif cmd == "make-roles":
        make_roles(sys.argv[2])
    elif cmd == "roles":
        roles(sys.argv[2])
    elif cmd == "launcher":
        launcher(sys.argv[2], int(sys.argv[3]))
    else:
        fail("unknown check " + cmd)
