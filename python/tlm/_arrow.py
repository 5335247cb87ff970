# SPDX-License-Identifier: MIT
"""Arrow tables of a trace (pyarrow, an optional dependency): what
Trace.to_parquet() and tlm.dataset write. Types are those Spark, DuckDB and
pandas all read: op, kind and api as dictionary-encoded names, unsigned
64-bit values as int64 of the same bits, other unsigned ones widened."""
import json

from . import _trace


def _pa():
    try:
        import pyarrow
    except ImportError as e:  # the one optional dependency
        raise ImportError("tlm: Parquet needs pyarrow (pip install 'tlm[parquet]')") from e
    return pyarrow


def _named(pa, codes, table, prefix):
    import numpy as np

    names = list(table)
    if len(codes) and int(codes.max()) >= len(names):
        names += [f"{prefix}{c}" for c in range(len(names), int(codes.max()) + 1)]
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int16)), pa.array(names, pa.string()))


EVENT_FIELDS = (
    ("time", "int64"), ("op", "dict"), ("kind", "dict"), ("device", "int16"),
    ("address", "int64"), ("size", "int64"), ("stream", "int64"), ("aux", "int64"),
    ("thread", "int64"), ("stack_id", "int64"), ("result", "int32"), ("flags", "int32"),
    ("api", "dict"),
)


def _type(pa, t):
    return pa.dictionary(pa.int16(), pa.string()) if t == "dict" else getattr(pa, t)()


def events_schema(pa, pid=False, sites=False):
    fields = [pa.field("pid", pa.int64())] if pid else []
    fields += [pa.field(n, _type(pa, t)) for n, t in EVENT_FIELDS]
    if sites:
        fields.append(pa.field("site", pa.dictionary(pa.int32(), pa.string())))
    return pa.schema(fields)


def events_table(tr, sites=False, pid=False):
    """The events of tr as a table; pid: a first column with the process's
    pid (the dataset's), sites: a last column with each event's site."""
    import numpy as np

    pa = _pa()
    ev = tr.events
    n = len(ev)
    arrays = []
    if pid:
        arrays.append(pa.array(np.full(n, tr.meta["pid"], np.int64)))
    for name, t in EVENT_FIELDS:
        col = ev[name]
        if name == "op":
            arrays.append(_named(pa, col, _trace.OPS, "op"))
        elif name == "kind":
            arrays.append(_named(pa, col, _trace.KINDS, "kind"))
        elif name == "api":
            arrays.append(_named(pa, col, _trace.APIS, "api"))
        elif col.dtype == np.uint64:
            arrays.append(pa.array(col.view(np.int64)))
        else:
            arrays.append(pa.array(col.astype(np.dtype(t), copy=False)))
    if sites:
        stacks = tr.stacks
        ids = np.array(sorted(stacks), np.uint32)
        names = ["(no stack)"] + [stacks[int(i)].site for i in ids]
        sid = ev["stack_id"]
        if len(ids):
            pos = np.minimum(np.searchsorted(ids, sid), len(ids) - 1)
            idx = np.where(ids[pos] == sid, pos + 1, 0)  # 0: no stack, or one the trace lacks
        else:
            idx = np.zeros(n, np.int32)
        arrays.append(pa.DictionaryArray.from_arrays(pa.array(idx.astype(np.int32)), pa.array(names, pa.string())))
    schema = events_schema(pa, pid=pid, sites=sites)
    meta = dict(tr.meta)
    schema = schema.with_metadata({"tlm.meta": json.dumps(meta)})
    return pa.Table.from_arrays(arrays, schema=schema)


FRAME = (("kind", "string"), ("function", "string"), ("file", "string"), ("line", "int32"),
         ("module", "string"), ("offset", "string"))


def stacks_schema(pa):
    frame = pa.struct([pa.field(n, getattr(pa, t)()) for n, t in FRAME])
    return pa.schema([("pid", pa.int64()), ("stack_id", pa.int64()), ("site", pa.string()),
                      ("depth", pa.int32()), ("frames", pa.list_(frame))])


def stacks_table(tr):
    pa = _pa()
    st = tr.stacks
    rows = {"pid": [], "stack_id": [], "site": [], "depth": [], "frames": []}
    for sid in sorted(st):
        s = st[sid]
        rows["pid"].append(tr.meta["pid"])
        rows["stack_id"].append(sid)
        rows["site"].append(s.site)
        rows["depth"].append(len(s.frames))
        rows["frames"].append([{n: getattr(f, n) for n, _ in FRAME} for f in s.frames])
    return pa.Table.from_pydict(rows, schema=stacks_schema(pa))


AT_PEAK = (("pid", "int64"), ("device", "int32"), ("kind", "string"), ("site", "string"),
           ("bytes", "int64"), ("count", "int64"), ("persistent_bytes", "int64"),
           ("persistent_count", "int64"), ("transient_bytes", "int64"), ("transient_count", "int64"))


def at_peak_table(tr):
    """What held each (device, kind)'s allocated peak, by site: the report's
    at_peak (docs/report-json.md)."""
    pa = _pa()
    rows = {n: [] for n, _ in AT_PEAK}
    for s in tr.report()["at_peak"]:
        for n, _ in AT_PEAK:
            rows[n].append(tr.meta["pid"] if n == "pid" else s[n])
    return pa.Table.from_pydict(rows, schema=pa.schema([(n, getattr(pa, t)()) for n, t in AT_PEAK]))


PROCESS = (("pid", "int64"), ("ppid", "int64"), ("local_rank", "int64"), ("world_size", "int64"),
           ("origin", "string"), ("exe", "string"), ("argv", "list"), ("trace", "string"),
           ("start_realtime_ns", "int64"), ("state", "string"), ("events", "int64"),
           ("lost_events", "int64"), ("integrity_errors", "int64"),
           ("peak_allocated_bytes", "int64"), ("peak_reserved_bytes", "int64"),
           ("leaks", "int64"), ("ooms", "int64"), ("tlm_version", "string"))


def process_table(tr):
    """One row: the process (header and reader) and its report's peaks (the
    highest device memory peak, over devices), leak sites and OOMs."""
    pa = _pa()
    m, r = tr.meta, tr.report()
    dev = [d for d in r["devices"] if d["kind"] == "device"]
    row = {
        "pid": m["pid"], "ppid": m["ppid"], "local_rank": r["process"]["local_rank"],
        "world_size": r["process"]["world_size"], "origin": r["process"]["origin"],
        "exe": m["exe"], "argv": m["argv"], "trace": tr.path,
        "start_realtime_ns": m["start_realtime_ns"], "state": m["state"], "events": m["events"],
        "lost_events": m["lost"], "integrity_errors": len(m["integrity_errors"]),
        "peak_allocated_bytes": max((d["peak_allocated_bytes"] for d in dev), default=0),
        "peak_reserved_bytes": max((d["peak_reserved_bytes"] for d in dev), default=0),
        "leaks": len(r["leaks"]), "ooms": r["ooms_total"], "tlm_version": m["tlm_version"],
    }
    schema = pa.schema([(n, pa.list_(pa.string()) if t == "list" else getattr(pa, t)()) for n, t in PROCESS])
    return pa.Table.from_pylist([row], schema=schema)
