# SPDX-License-Identifier: MIT
"""The Python reader (tlm.load) against known truth: the events gen_events
wrote (every column, every event), `tlm info`'s counts on intact, cut and
damaged traces, `tlm report --format json` for .report(), the stacks of a
real run at the lines that allocated, pandas, Parquet (read back by pyarrow
and DuckDB) and the HTML view of a hostile trace.

  test_reader.py GEN_EVENTS TLM JOB_GEN LIBTLM WORKLOAD WORKLOAD_SRC SIMDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import tlm

gen, tlm_exe, job_gen, libtlm, workload, workload_src, simdir = sys.argv[1:8]
tmp = tempfile.mkdtemp(prefix="tlm-pip-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


def info_events(path):
    out = subprocess.run([tlm_exe, "info", path], capture_output=True, text=True).stdout
    m = re.search(r"^events:\s+(\d+)", out, re.M)
    return int(m.group(1)), out


# 1. every column of every event equals what was written
N = 200_000
trace, truth = os.path.join(tmp, "g.trace"), os.path.join(tmp, "g.truth")
subprocess.run([gen, trace, str(N), truth], check=True)
want = np.fromfile(truth, dtype="<i8").reshape(N, 13)
tr = tlm.load(trace)
check(len(tr.events) == N, f"{len(tr.events)} events, want {N}")
check(len(tr.events) == info_events(trace)[0], "len(events) != tlm info's events")
for i, name in enumerate(tlm.Events.columns):
    col = tr.events[name]
    check(np.array_equal(col.astype(np.int64) if col.dtype != np.uint64 else col.view(np.int64), want[:, i]),
          f"column {name} differs from what was written")
check(tr.events.time.dtype == np.int64 and tr.events.address.dtype == np.uint64
      and tr.events.device.dtype == np.int16 and tr.events.stack_id.dtype == np.uint32, "column types")
check(tr.meta["state"] == "clean" and tr.meta["end"]["events"] == N, "clean end with its END count")
check([t["name"] for t in tr.meta["threads"]] == [f"worker{i}" for i in range(4)], "thread records")
check(tr.meta["argv"] == ["gen_events", str(N)] and tr.meta["host"] == "gen" and tr.meta["pid"] == 4242, "header")
sub = tr.events[tr.events.op == tlm.OPS.index("free")]
check(len(sub) == int((want[:, 1] == 2).sum()) and np.all(sub.op == 2), "a boolean mask selects rows of each column")

# pandas: the same values, op/kind/api by name
df = tr.to_pandas()
check(df.shape == (N, 13), f"DataFrame shape {df.shape}")
check(list(df["op"].iloc[:3]) == [tlm.OPS[c] for c in want[:3, 1]], "op names")
check(set(df["kind"].cat.categories) >= {"device", "host_pinned", "managed"}, "kind names")
check(np.array_equal(df["size"].to_numpy().view(np.int64), want[:, 5]), "pandas size column")

# Parquet: read back by pyarrow and DuckDB
import duckdb  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

db = duckdb.connect()


def sql(q):
    return db.execute(q).fetchall()


pqf = os.path.join(tmp, "g.parquet")
tr.to_parquet(pqf)
t = pq.read_table(pqf)
check(t.num_rows == N, "Parquet rows")
check(np.array_equal(t.column("address").to_numpy(), want[:, 4]), "Parquet address (int64 of the same bits)")
check(np.array_equal(t.column("time").to_numpy(), want[:, 0]), "Parquet time")
check(json.loads(t.schema.metadata[b"tlm.meta"])["pid"] == 4242, "Parquet key tlm.meta")
# the package's own writer (no pyarrow needed): the same file's contents
from tlm import _parquet  # noqa: E402

own = os.path.join(tmp, "own.parquet")
_parquet.write(tr, own)
o = pq.read_table(own)
check(o.column_names == t.column_names and all(o.schema.field(c).type == t.schema.field(c).type
                                                for c in t.column_names if c not in ("op", "kind", "api")),
      "own writer: the same columns and types (op, kind, api: strings, not dictionaries)")
check(all(o.column(c).to_pylist() == t.column(c).to_pylist() for c in ("op", "kind", "api"))
      and all(np.array_equal(o.column(c).to_numpy(), t.column(c).to_numpy()) for c in t.column_names if c not in ("op", "kind", "api")),
      "own writer: the same values as pyarrow's")
check(json.loads(o.schema.metadata[b"tlm.meta"]) == tr.meta, "own writer: key tlm.meta")
check(sql(f"SELECT count(*), sum(size) FROM read_parquet('{own}')") == sql(f"SELECT count(*), sum(size) FROM read_parquet('{pqf}')"),
      "own writer: DuckDB reads the same")
frees = sql(f"SELECT count(*) FROM read_parquet('{pqf}') WHERE op = 'free'")[0][0]
check(frees == int((want[:, 1] == 2).sum()), f"DuckDB frees {frees}")
failed = sql(f"SELECT count(*) FROM read_parquet('{pqf}') WHERE result <> 0")[0][0]
check(failed == int((want[:, 10] != 0).sum()) and failed > 0, "DuckDB failed allocations")

# 2. a cut trace and a damaged one: what tlm info reads, no more, no less
data = open(trace, "rb").read()
cut = os.path.join(tmp, "cut.trace")
open(cut, "wb").write(data[: len(data) // 2 + 77])
c = tlm.load(cut)
n, out = info_events(cut)
check(len(c.events) == n and 0 < n < N, f"cut: {len(c.events)} events, tlm info {n}")
check(c.meta["state"] == "truncated" and c.meta["truncation"], "cut: truncated, with the reader's message")
check(np.array_equal(c.events.size.view(np.int64), want[:n, 5]), "cut: a prefix of the events")
bad = bytearray(data)
for off in (len(data) // 3, 2 * len(data) // 3):
    bad[off:off + 16] = b"\xff" * 16
dmg = os.path.join(tmp, "dmg.trace")
open(dmg, "wb").write(bytes(bad))
d = tlm.load(dmg)
n, out = info_events(dmg)
m = re.search(r"^integrity:\s+(\d+) errors?", out, re.M)
errs = int(m.group(1)) if m else -1
check(len(d.events) == n and n < N, f"damaged: {len(d.events)} events, tlm info {n}")
check(len(d.meta["integrity_errors"]) == errs and errs > 0, f"damaged: {len(d.meta['integrity_errors'])} errors, tlm info {errs}")
try:
    tlm.load(os.path.join(tmp, "absent.trace"))
    check(False, "an absent trace raises")
except OSError as e:
    check("absent.trace" in str(e), "the error names the file")

# 3. a real run: stacks at the lines that allocated, the report as tlm report's
env = dict(os.environ, LD_LIBRARY_PATH=simdir, TLM_SUMMARY="0", RANK="3",
           LD_PRELOAD=":".join(p for p in (os.environ.get("TLM_TEST_PRELOAD_FIRST"), libtlm) if p),
           TLM_OUTPUT=os.path.join(tmp, "real.trace"))
subprocess.run([workload], env=env, check=True)
real = os.path.join(tmp, "real.trace")
r = tlm.load(real)
src = open(workload_src).read().splitlines()
line = {m: i + 1 for i, s in enumerate(src) for m in ("BASE_LINE", "RANK_LINE") if f"/* {m} */" in s}
sites = {s.site for s in r.stacks.values()}
for m in ("BASE_LINE", "RANK_LINE"):
    check(any(f"main (job_workload.c:{line[m]})" in s for s in sites), f"a site at {m} (line {line[m]}): {sites}")
ev = r.events
for m, size in (("BASE_LINE", 8 << 20), ("RANK_LINE", 4 << 20)):
    ids = [i for i, s in r.stacks.items() if f"main (job_workload.c:{line[m]})" in s.site]
    hit = ev[(ev.op == 1) & np.isin(ev.stack_id, ids)]
    check(len(hit) == 1 and int(hit.size[0]) == size, f"one allocation of {size} at {m}")
    frames = r.stacks[ids[0]].frames
    check(any(f.function == "main" and f.line == line[m] for f in frames), f"the frame main:{line[m]}")
check(r.rank == 3, "rank from env.RANK")
cmd = subprocess.run([tlm_exe, "report", "--format", "json", real], capture_output=True, check=True).stdout
check(r.report() == json.loads(cmd), ".report() is tlm report --format json")
check(r.report()["devices"][0]["peak_allocated_bytes"] == (8 + 4) << 20, "the peak: 8 + (3 + 1) MiB")
pqs = os.path.join(tmp, "real.parquet")
r.to_parquet(pqs, sites=True)
q = sql(f"SELECT site, sum(size) FROM read_parquet('{pqs}') WHERE op = 'alloc' GROUP BY site")
check(any(f"main (job_workload.c:{line['RANK_LINE']})" in s and b == 4 << 20 for s, b in q), f"sites in Parquet: {q}")

# 4. the notebook view of a hostile trace: every string escaped
hdir = os.path.join(tmp, "h")
os.mkdir(hdir)
subprocess.run([job_gen, hdir, "1", "64", "<script>&'\""], check=True, capture_output=True)
h = tlm.load(os.path.join(hdir, "r0.trace"))
page = h._repr_html_()
check("<script>" not in page and "&lt;script&gt;&amp;" in page, "HTML view escapes the host")
h.report()
check("peak allocated" in h._repr_html_(), "HTML view shows the report's peaks once computed")

shutil.rmtree(tmp)
print(f"{'FAIL' if failures else 'ok'}: {len(failures)} failed checks")
sys.exit(1 if failures else 0)
