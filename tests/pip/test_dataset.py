# SPDX-License-Identifier: MIT
"""A job's traces as one Parquet dataset (tlm.dataset), read by DuckDB and
pyarrow as it is, against known truth:
  - 1024 ranks of job_gen's synthetic job (128 hosts with hostile names):
    every rank and host in its hive partition, each rank's event count and
    peak as the generator made them;
  - 8 real ranks of job_workload.c (rank r allocates 8 MiB at BASE_LINE and
    r + 1 MiB at RANK_LINE): docs/python.md's DuckDB queries of the top sites
    across ranks, run as the page prints them, give 64 MiB and 36 MiB.

  test_dataset.py JOB_GEN TLM LIBTLM WORKLOAD WORKLOAD_SRC SIMDIR DOCS_PYTHON_MD
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import duckdb
import pyarrow.dataset as pds

import tlm

job_gen, tlm_exe, libtlm, workload, workload_src, simdir, doc = sys.argv[1:8]
tmp = tempfile.mkdtemp(prefix="tlm-pipds-")
failures = []
MiB = 1 << 20


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


db = duckdb.connect()


def sql(q):
    return db.execute(q).fetchall()


# 1. 1024 synthetic ranks, 8 per host, hosts named "h o%st=/NN"
N, HOST = 1024, "h o%st="
tdir = os.path.join(tmp, "t")
os.mkdir(tdir)
gen = subprocess.run([job_gen, tdir, str(N), "64", HOST], check=True, capture_output=True, text=True).stdout
peak = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^rank (\d+) peak (\d+)", gen, re.M)}
ds = os.path.join(tmp, "ds")
t0 = time.perf_counter()
n = tlm.write_dataset([tdir], ds)
print(f"{n} traces into the dataset in {time.perf_counter() - t0:.1f} s")
check(n == N, f"{n} traces written, want {N}")
ev = f"read_parquet('{ds}/events/*/*/*.parquet', hive_partitioning = true)"
pr = f"read_parquet('{ds}/processes/*/*/*.parquet', hive_partitioning = true)"
rows = sql(f"SELECT host, rank, count(*) FROM {ev} GROUP BY host, rank ORDER BY rank")
check(len(rows) == N, f"{len(rows)} (host, rank) partitions")
# job_gen: weights, one step of 32 allocations and 32 frees, the spike and
# its free, and the last rank's failed allocation
check(all(h == f"{HOST}{r // 8:02d}" and c == 67 + (r == N - 1) for (h, r, c) in rows)
      and [r for _, r, _ in rows] == list(range(N)), "each rank's events in host=H/rank=R, H decoded")
for r in (0, 517, N - 1):
    info = subprocess.run([tlm_exe, "info", os.path.join(tdir, f"r{r}.trace")], capture_output=True, text=True).stdout
    want = int(re.search(r"^events:\s+(\d+)", info, re.M).group(1))
    check(rows[r][2] == want, f"rank {r}: {rows[r][2]} events, tlm info {want}")
got = dict(sql(f"SELECT rank, peak_allocated_bytes FROM {pr}"))
check(got == peak, "each rank's peak as job_gen made it")
check(sql(f"SELECT rank, ooms FROM {pr} WHERE ooms > 0") == [(N - 1, 1)], "the last rank's OOM")
# pyarrow reads the same directories as they are
t = pds.dataset(os.path.join(ds, "events"), format="parquet", partitioning="hive").to_table(columns=["rank"])
check(t.num_rows == sum(c for _, _, c in rows), "pyarrow: the same rows")

# 2. 8 real ranks: the top sites across ranks, with the page's own queries
rdir = os.path.join(tmp, "real")
os.mkdir(rdir)
pre = ":".join(p for p in (os.environ.get("TLM_TEST_PRELOAD_FIRST"), libtlm) if p)
for r in range(8):
    env = dict(os.environ, LD_LIBRARY_PATH=simdir, TLM_SUMMARY="0", RANK=str(r), LOCAL_RANK=str(r),
               WORLD_SIZE="8", LD_PRELOAD=pre, TLM_OUTPUT=os.path.join(rdir, "r%r.trace"))
    subprocess.run([workload], env=env, check=True)
rds = os.path.join(tmp, "rds")
check(tlm.write_dataset([rdir], rds) == 8, "8 real traces")
src = open(workload_src).read().splitlines()
line = {m: i + 1 for i, s in enumerate(src) for m in ("BASE_LINE", "RANK_LINE") if f"/* {m} */" in s}
queries = re.findall(r"```sql\n(.*?)```", open(doc).read(), re.S)
check(len(queries) >= 2, "docs/python.md's queries")
for q in queries[:2]:
    res = sql(q.replace("'ds/", f"'{rds}/"))
    print(res)
    top = [(s, rk, b) for s, rk, b, *_ in res[:2]]
    want = [(f"alloc (job_workload.c:36) < main (job_workload.c:{line['BASE_LINE']})", 8, 64 * MiB),
            (f"alloc (job_workload.c:36) < main (job_workload.c:{line['RANK_LINE']})", 8, 36 * MiB)]
    check([(rk, b) for _, rk, b in top] == [(8, 64 * MiB), (8, 36 * MiB)]
          and all(f"main (job_workload.c:{line[m]})" in s for (s, _, _), m in zip(top, ("BASE_LINE", "RANK_LINE"))),
          f"top sites across ranks: {top}, want {want}")

shutil.rmtree(tmp)
print(f"{'FAIL' if failures else 'ok'}: {len(failures)} failed checks")
sys.exit(1 if failures else 0)
