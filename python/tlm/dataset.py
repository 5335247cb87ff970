# SPDX-License-Identifier: MIT
"""The traces of a job as one Parquet dataset, partitioned by host and rank
(hive-style directories: TABLE/host=H/rank=R/PID-START.parquet), which
DuckDB, Spark and pyarrow read as it is. docs/python.md shows the layout and
queries.

    python -m tlm.dataset OUT TRACE_OR_DIR...   # or tlm.write_dataset(inputs, out)

Tables: events (every event, with pid), stacks (each stack's site and
frames), at_peak (what held each device's peak, by site: the report's) and
processes (one row per trace). Each trace's files are written on their own,
so nodes can convert their own traces into one shared directory: no file is
written by two traces. A process without RANK is rank -1.
"""
import argparse
import concurrent.futures
import glob
import os
import sys
import urllib.parse

from . import _arrow, _trace

TABLES = ("events", "stacks", "at_peak", "processes")


def _inputs(inputs):
    out = []
    for i in inputs:
        i = os.fspath(i)
        if os.path.isdir(i):
            out += sorted(glob.glob(os.path.join(i, "**", "*.trace"), recursive=True))
        elif not os.path.exists(i) and glob.has_magic(i):
            out += sorted(glob.glob(i))
        else:
            out.append(i)
    return out


def partition(tr):
    """The partition directory of a trace: host=H/rank=R, H percent-encoded
    as Hive, Spark and DuckDB decode it."""
    rank = tr.rank if tr.rank is not None else -1
    return f"host={urllib.parse.quote(tr.meta['host'], safe='')}/rank={rank}"


def write_trace(tr, out):
    """Writes one trace's files into the dataset at out; returns their paths."""
    import pyarrow.parquet as pq

    name = f"{tr.meta['pid']}-{tr.meta['start_realtime_ns']}.parquet"
    part = partition(tr)
    tables = {
        "events": lambda: _arrow.events_table(tr, pid=True),
        "stacks": lambda: _arrow.stacks_table(tr),
        "at_peak": lambda: _arrow.at_peak_table(tr),
        "processes": lambda: _arrow.process_table(tr),
    }
    paths = []
    for t, make in tables.items():
        d = os.path.join(out, t, part)
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, name)
        tmp = os.path.join(d, "." + name + ".tmp")  # readers skip dot files
        pq.write_table(make(), tmp)
        os.replace(tmp, p)
        paths.append(p)
    return paths


def write_dataset(inputs, out, threads=None, on_error=None):
    """Converts the traces (files, directories of *.trace, globs) into the
    dataset at out, threads at a time (the C load and the Parquet writer run
    without the GIL). A trace that cannot be read is reported to on_error(path,
    exception) (default: raised) and skipped. Returns the number written."""
    paths = _inputs(inputs)
    os.makedirs(out, exist_ok=True)

    def one(p):
        try:
            write_trace(_trace.load(p), out)
            return 1
        except (OSError, ValueError) as e:
            if on_error is None:
                raise
            on_error(p, e)
            return 0

    with concurrent.futures.ThreadPoolExecutor(threads or os.cpu_count() or 1) as ex:
        return sum(ex.map(one, paths))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tlm.dataset",
                                 description="Traces into one Parquet dataset partitioned by host and rank.")
    ap.add_argument("out", help="the dataset's directory")
    ap.add_argument("inputs", nargs="+", help="traces, directories of *.trace, globs")
    ap.add_argument("--threads", type=int, default=None, help="traces converted at once (default: the CPUs)")
    a = ap.parse_args(argv)
    bad = []

    def err(p, e):
        bad.append(p)
        print(f"tlm.dataset: {e}", file=sys.stderr)

    n = write_dataset(a.inputs, a.out, a.threads, on_error=err)
    print(f"tlm.dataset: {n} traces into {a.out}" + (f", {len(bad)} unreadable" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
