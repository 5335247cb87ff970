#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact checks of the job's merged timeline (docs/job.md) for
tests/job/test_job.sh: the Chrome/Perfetto JSON and the HTML page's data.

ranks JOB CHROME PAGE DIR    the 64 ranks of job_workload.c; DIR holds
                             per-trace Chrome exports cR.json of some ranks
mixed JOB CHROME PAGE N      N processes from JSON reports: rows, no track
pids JOB CHROME              ids: the pid, else 4194304 + index when repeated
gen TRUTH JOB CHROME PAGE    job_gen's synthetic job: exact peaks, starts, OOM
hostile PAGE CHROME HOST     hosts named HOST00...: escaped, names intact
"""
import base64
import decimal
import json
import os
import re
import sys

MIB = 1 << 20
PID_BASE = 4194304
MAX_POINTS = 5 * 256  # TLM_JOB_MAX_POINTS


def fail(msg):
    print("timeline_check:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail("%s: got %.300r, want %.300r" % (what, got, want))


def ns(ts):
    """A Chrome timestamp (microseconds, 3 decimals) as exact nanoseconds."""
    v = ts * 1000
    if v != int(v):
        fail("timestamp %s is not whole nanoseconds" % ts)
    return int(v)


def chrome(path):
    """pid -> {name, sort, counters: [(ns, allocated, reserved, track)], ooms: [(ns, args)]}"""
    d = json.load(open(path), parse_float=decimal.Decimal)
    eq("chrome keys", sorted(d), ["displayTimeUnit", "otherData", "traceEvents"])
    procs = {}
    for e in d["traceEvents"]:
        p = procs.setdefault(e["pid"], {"name": None, "sort": None, "counters": [], "ooms": []})
        eq("tid", e["tid"], 0)
        if e["ph"] == "M":
            if e["name"] == "process_name":
                p["name"] = e["args"]["name"]
            elif e["name"] == "process_sort_index":
                p["sort"] = e["args"]["sort_index"]
            else:
                fail("metadata %r" % e["name"])
        elif e["ph"] == "C":
            eq("counter args", sorted(e["args"]), ["allocated", "reserved"])
            p["counters"].append((ns(e["ts"]), e["args"]["allocated"], e["args"]["reserved"], e["name"]))
        elif e["ph"] == "i":
            eq("instant", (e["cat"], e["s"]), ("oom", "p"))
            p["ooms"].append((ns(e["ts"]), e["args"]))
        else:
            fail("event phase %r" % e["ph"])
    for pid, p in procs.items():
        if p["name"] is None:
            fail("pid %d has no process_name" % pid)
        ts = [c[0] for c in p["counters"]]
        if ts != sorted(ts):
            fail("pid %d: counters out of time order" % pid)
    return d["otherData"], procs


def page(path):
    """The page's text and its decoded tracks: [{..., points: [(job ns, reserved, allocated)]}]"""
    s = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="tlm-job-data">(.*?)</script>', s, re.S)
    if re.search(r"https?:", s) or re.search(r"\ssrc=", s):
        fail("the page names a network address or loads a resource")
    if not m:
        return s, []
    d = json.loads(m.group(1))
    for tr in d["tracks"]:
        b = base64.b64decode(tr["d"])
        pos, vals = 0, []
        while pos < len(b):
            v, sh = 0, 0
            while True:
                c = b[pos]
                pos += 1
                v |= (c & 127) << sh
                sh += 7
                if not c & 128:
                    break
            vals.append(-(v + 1) // 2 if v & 1 else v // 2)
        eq("values of %s" % tr["name"], len(vals), 3 * tr["n"])
        t, r, a, pts = tr["start"], 0, 0, []
        for k in range(tr["n"]):
            t += vals[3 * k]
            r += vals[3 * k + 1]
            a += vals[3 * k + 1] + vals[3 * k + 2]
            pts.append((t, r, a))
        tr["points"] = pts
    return s, d["tracks"]


def host_name(p):
    return "rank %d (%s)" % (p["rank"], p["host"])


def series_of(p, counters):
    """The counters without the repeat of the last level at the process's end."""
    end = p["start_ns"] + p["end_ns"]
    c = list(counters)
    if len(c) >= 2 and c[-1][0] == end and c[-1][1:3] == c[-2][1:3]:
        c.pop()
    return c


def points_of(p, counters):
    """The counters as the page's points: without the repeat at the end, nor
    the 0 at the start of the run that comes before a later first point."""
    c = series_of(p, counters)
    if len(c) >= 2 and c[0][0] == p["start_ns"] + p["first_event_ns"] and c[0][1:3] == (0, 0):
        c = c[1:]
    return [(t, res, al) for t, al, res, _ in c]


def ranks(job, chrome_path, page_path, per_trace):
    j = json.load(open(job))
    ps = j["processes"]
    other, procs = chrome(chrome_path)
    eq("chrome processes", len(procs), 64)
    eq("otherData", (other["processes"], other["tracks"], other["processes_without_track"], other["ooms"]),
       (64, 64, 0, 2))
    eq("job start", other["job_start_realtime_ns"], j["start_realtime_ns"])
    for i, p in enumerate(ps):
        r = p["rank"]
        c = procs.get(p["pid"])
        if c is None:
            fail("rank %d (pid %d) has no process in the Chrome JSON" % (r, p["pid"]))
        eq("name of rank %d" % r, c["name"], host_name(p))
        eq("sort index of rank %d" % r, c["sort"], i)
        s = series_of(p, c["counters"])
        # levels the rank went through (the report's points may merge changes
        # closer than its bucket, a thousandth of the run), its peak and end
        levels = {0, 8, 9 + r} if r != 5 else {0, 8, 14, 15, 16, 17, 11, 3}
        if not {x[2] / MIB for x in s} <= levels:
            fail("rank %d: levels %r, not among %r MiB" % (r, [x[2] for x in s], sorted(levels)))
        eq("last level of rank %d (MiB)" % r, s[-1][2] / MIB, 3 if r == 5 else 0)
        eq("allocated of rank %d" % r, [x[1] for x in s], [x[2] for x in s])
        eq("track of rank %d" % r, {x[3] for x in s}, {"device 0"})
        eq("first counter of rank %d" % r, s[0][0], p["start_ns"] + p["first_event_ns"])
        eq("peak of rank %d" % r, max(x[2] for x in c["counters"]), p["peak_reserved_bytes"])
        if p["end_ns"] > 0 and c["counters"][-1][0] != p["start_ns"] + p["end_ns"]:
            fail("rank %d: the last counter is not at the process's end" % r)
        # the same points as the trace's own export, moved by its start on the job clock
        own = os.path.join(per_trace, "c%d.json" % r)
        if os.path.exists(own):
            _, one = chrome(own)
            eq("per-trace export of rank %d" % r, len(one), 1)
            mine = list(one.values())[0]["counters"]
            eq("rank %d on the job clock" % r, [(m[0] + p["start_ns"],) + tuple(m[1:]) for m in mine],
               c["counters"])
    ooms = sorted((t, pid, a) for pid, c in procs.items() for t, a in c["ooms"])
    by_pid = {p["pid"]: p for p in ps}
    eq("OOM order", [by_pid[o[1]]["rank"] for o in ooms], [40, 7])
    for t, pid, a in ooms:
        p = by_pid[pid]
        eq("OOM time of rank %d" % p["rank"], t, p["first_oom"]["job_time_ns"])
        eq("OOM request of rank %d" % p["rank"], a["requested_bytes"], 1 << 40)
    # the page: the same tracks, points and OOMs
    s, tracks = page(page_path)
    eq("tracks", len(tracks), 64)
    eq("process rows", s.count('<tr class="proc"'), 64)
    eq("rows without track", s.count('<tr class="proc notrack"'), 0)
    for i, (p, tr) in enumerate(zip(ps, tracks)):
        r = p["rank"]
        eq("track %d process" % i, tr["proc"], i)
        eq("track %d name" % i, tr["name"], host_name(p))
        eq("track %d start (job clock)" % i, tr["start"], p["start_ns"])
        eq("track %d peak" % i, max(x[1] for x in tr["points"]), p["peak_reserved_bytes"])
        eq("track %d points" % i, points_of(p, procs[p["pid"]]["counters"]), tr["points"])
        if r in (7, 40):
            eq("OOM markers of rank %d" % r, [tr["start"] + o[0] for o in tr["ooms"]], [p["first_oom"]["job_time_ns"]])
            eq("OOM request of rank %d" % r, tr["ooms"][0][1], 1 << 40)
        else:
            eq("OOM markers of rank %d" % r, tr["ooms"], [])
    marks = sorted((tr["start"] + o[0], tr["name"]) for tr in tracks for o in tr["ooms"])
    eq("OOM markers in job time", [m[1].split(" (")[0] for m in marks], ["rank 40", "rank 7"])
    rows = re.findall(r'<tr class="oom-row"><td class="num">(\d+)</td><td>([^<]*)</td>', s)
    eq("OOM table", rows, [("1", "rank 40"), ("2", "rank 7")])


def mixed(job, chrome_path, page_path, njson):
    j = json.load(open(job))
    other, procs = chrome(chrome_path)
    n = len(j["processes"])
    eq("otherData", (other["processes"], other["tracks"], other["processes_without_track"]), (n, n - njson, njson))
    eq("chrome processes", len(procs), n - njson)
    s, tracks = page(page_path)
    eq("tracks", len(tracks), n - njson)
    eq("rows without track", s.count('<tr class="proc notrack"'), njson)
    eq("rows", s.count('<tr class="proc'), n)
    if ("%d processes came from JSON reports, which hold no memory over time" % njson) not in s:
        fail("the page does not say which processes have no track")


def pids(job, chrome_path):
    j = json.load(open(job))
    _, procs = chrome(chrome_path)
    seen, want = set(), {}
    for i, p in enumerate(j["processes"]):
        want[p["pid"] if p["pid"] not in seen else PID_BASE + i] = i
        seen.add(p["pid"])
    eq("ids", sorted(procs), sorted(want))
    if len(want) == len(seen):
        fail("no pid repeats in this job: the rule was not exercised")
    for pid, i in want.items():
        eq("sort index of id %d" % pid, procs[pid]["sort"], i)


def gen(truth, job, chrome_path, page_path):
    t = {}
    for line in open(truth):
        w = line.split()
        t[int(w[1])] = (int(w[3]), int(w[5]), int(w[7]))
    j = json.load(open(job))
    ps = j["processes"]
    eq("processes", len(ps), len(t))
    other, procs = chrome(chrome_path)
    s, tracks = page(page_path)
    eq("tracks", len(tracks), len(t))
    seen = set()
    for i, (p, tr) in enumerate(zip(ps, tracks)):
        r = p["rank"]
        peak, start, oom = t[r]
        eq("rank %d peak" % r, p["peak_reserved_bytes"], peak)
        eq("rank %d start" % r, p["start_ns"], start)
        pid = p["pid"] if p["pid"] not in seen else PID_BASE + i
        seen.add(p["pid"])
        c = procs[pid]["counters"]
        if len(c) > MAX_POINTS + 2:
            fail("rank %d: %d counters, more than %d" % (r, len(c), MAX_POINTS + 2))
        eq("rank %d Chrome peak" % r, max(x[2] for x in c), peak)
        eq("rank %d track peak" % r, max(x[1] for x in tr["points"]), peak)
        eq("rank %d track start" % r, tr["start"], start)
        eq("rank %d track = Chrome" % r, points_of(p, c), tr["points"])
        want = [start + oom] if oom >= 0 else []
        eq("rank %d OOM" % r, [x[0] for x in procs[pid]["ooms"]], want)
        eq("rank %d OOM marker" % r, [tr["start"] + o[0] for o in tr["ooms"]], want)


def hostile(page_path, chrome_path, host):
    s, tracks = page(page_path)
    if host in s:
        fail("the page holds the host name %r unescaped" % host)
    eq("track names", [tr["name"] for tr in tracks], ["rank %d (%s%02d)" % (r, host, r // 8) for r in range(len(tracks))])
    _, procs = chrome(chrome_path)
    eq("process names", sorted(p["name"] for p in procs.values()), sorted(tr["name"] for tr in tracks))


if __name__ == "__main__":
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "ranks":
        ranks(*a)
    elif cmd == "mixed":
        mixed(a[0], a[1], a[2], int(a[3]))
    elif cmd == "pids":
        pids(*a)
    elif cmd == "gen":
        gen(*a)
    elif cmd == "hostile":
        hostile(*a)
    else:
        fail("unknown check " + cmd)
