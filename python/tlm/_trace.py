# SPDX-License-Identifier: MIT
"""tlm.load(): a trace as numpy columns, its stacks, and the C report."""
import ctypes
import html
import json
import os
import weakref

from . import _native

OPS = _native.names(0)    # index = the op code of column "op" (enum tlm_op)
KINDS = _native.names(1)  # column "kind" (enum tlm_kind)
APIS = _native.names(2)   # column "api" (enum tlm_api)


def _array(addr, dt, n):
    import numpy as np

    dtype = np.dtype(dt)
    if not addr or not n:
        return np.empty(0, dtype)
    # the C buffer is freed when the last array viewing it goes
    buf = (ctypes.c_char * (n * dtype.itemsize)).from_address(addr)
    weakref.finalize(buf, _native.lib.tlm_py_free, addr)
    return np.frombuffer(buf, dtype)


def _names(codes, table, prefix):
    """A pandas Categorical of the codes' names (unknown codes: prefix + code)."""
    import numpy as np
    import pandas as pd

    known = len(table)
    if len(codes) and int(codes.max()) >= known:
        table = tuple(table) + tuple(f"{prefix}{c}" for c in range(known, int(codes.max()) + 1))
    return pd.Categorical.from_codes(codes.astype(np.int16), categories=list(table))


class Events:
    """The events of a trace in file order (their seq), one numpy array per
    column: time (ns since the trace start), op, kind, device, address, size,
    stream, aux, thread, stack_id, result, flags, api. docs/python.md says
    what each holds; tlm.OPS, tlm.KINDS and tlm.APIS name the codes."""

    columns = tuple(name for name, _ in _native.COLUMNS)

    def __init__(self, cols):
        self._cols = cols

    def __len__(self):
        return len(self._cols["time"])

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._cols[key]
        # a slice, an index array or a boolean mask: the same rows of each column
        return Events({k: v[key] for k, v in self._cols.items()})

    def __getattr__(self, name):
        cols = self.__dict__.get("_cols")
        if cols is not None and name in cols:
            return cols[name]
        raise AttributeError(name)

    def __iter__(self):
        return iter(self.columns)

    def __contains__(self, name):
        return name in self._cols

    def keys(self):
        return self.columns

    def items(self):
        return ((k, self._cols[k]) for k in self.columns)

    def __repr__(self):
        return f"<tlm.Events: {len(self)} events, columns {', '.join(self.columns)}>"

    def to_pandas(self, names=True):
        """A DataFrame of the columns; with names, op, kind and api are
        categoricals of their names rather than codes."""
        import pandas as pd

        data = dict(self._cols)
        if names:
            data["op"] = _names(data["op"], OPS, "op")
            data["kind"] = _names(data["kind"], KINDS, "kind")
            data["api"] = _names(data["api"], APIS, "api")
        return pd.DataFrame(data, copy=False)


class Frame:
    """One frame of a stack, as the JSON report gives it (docs/report-json.md)."""

    __slots__ = ("kind", "function", "file", "line", "module", "ip", "offset", "inlined", "stale")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d.get(k))

    def __repr__(self):
        where = f"{self.file}:{self.line}" if self.file else (self.module or "?")
        return f"{self.function or self.ip} ({where})"


class Stack:
    """A stack id's frames, innermost first, and its site: the name that
    matches across a job's processes (docs/job.md)."""

    __slots__ = ("id", "site", "frames", "cut")

    def __init__(self, d):
        self.id = d["id"]
        self.site = d["site"]
        self.frames = [Frame(f) for f in d["stack"]]
        self.cut = bool(d.get("python_stack_cut"))

    def __repr__(self):
        return f"<tlm.Stack {self.id}: {self.site}>"


class Trace:
    """One trace: .events (numpy columns), .stacks, .report(), .to_pandas(),
    .to_parquet(path); the header and what the trace says in .meta."""

    def __init__(self, path):
        self.path = os.fspath(path)
        n, cols, meta = _native.load(path)
        self.events = Events({name: _array(addr, dt, n) for name, (addr, dt) in cols.items()})
        self.meta = json.loads(meta)
        props = {}
        for k, v in self.meta.pop("properties"):
            props[k] = v  # a later value replaces an earlier one
        self.meta["properties"] = props
        self._report = None
        self._report_dict = None
        self._stacks = None

    # what the header and the reader said
    def __getattr__(self, name):
        meta = self.__dict__.get("meta")
        if meta is not None and name in meta:
            return meta[name]
        raise AttributeError(name)

    @property
    def rank(self):
        """RANK of the process (PROP env.RANK), None when unset."""
        v = self.meta["properties"].get("env.RANK")
        return int(v) if v is not None and v.isdigit() else None

    def _c_report(self):
        if self._report is None:
            self._report = _native.Report(self.path)
        return self._report

    def report(self):
        """The report as `tlm report --format json` gives it (schema
        tlm-report/1, docs/report-json.md), computed by tlm's C report."""
        if self._report_dict is None:
            self._report_dict = json.loads(self._c_report().json())
        return self._report_dict

    @property
    def stacks(self):
        """{stack id: tlm.Stack} for every stack the trace defines, symbolized
        by the report (the first access builds it)."""
        if self._stacks is None:
            ids = sorted(set(self.meta["stacks"]) | set(self.meta["python_stacks"]))
            out = json.loads(self._c_report().stacks_json(ids)) if ids else []
            self._stacks = {d["id"]: Stack(d) for d in out}
        return self._stacks

    def to_pandas(self, names=True):
        """The events as a pandas DataFrame (see Events.to_pandas)."""
        return self.events.to_pandas(names)

    def to_arrow(self, sites=False):
        """The events as a pyarrow Table (the Parquet file's columns, below)."""
        from . import _arrow

        return _arrow.events_table(self, sites=sites)

    def to_parquet(self, path, sites=False, **kwargs):
        """Writes the events to a Parquet file: op, kind and api by name,
        unsigned 64-bit columns as int64 of the same bits (for Spark); the
        header and what the trace says are the file's key "tlm.meta"; with
        sites, a column "site" (each event's stack's site). With pyarrow it
        writes (kwargs go to pyarrow.parquet.write_table); without, a small
        writer of this package writes the same columns, uncompressed."""
        try:
            import pyarrow.parquet as pq
        except ImportError:
            if sites or kwargs:
                raise ImportError("tlm: sites and write options need pyarrow (pip install 'tlm[parquet]')")
            from . import _parquet

            return _parquet.write(self, os.fspath(path))
        pq.write_table(self.to_arrow(sites=sites), os.fspath(path), **kwargs)

    def __len__(self):
        return len(self.events)

    def __repr__(self):
        return (f"<tlm.Trace {self.path}: pid {self.meta['pid']} on {self.meta['host']}, "
                f"{len(self.events)} events, {self.meta['state']}>")

    def _repr_html_(self):
        m = self.meta
        e = html.escape
        rows = [
            ("trace", e(self.path)),
            ("command", e(" ".join(m["argv"]))),
            ("process", f"pid {m['pid']} on {e(m['host'])}"
             + (f", rank {self.rank}" if self.rank is not None else "")),
            ("events", f"{len(self.events):,}"),
            ("state", e(m["state"]) + (f" ({e(m['end_how'])})" if m["end_how"] else "")),
            ("stacks", f"{len(m['stacks']) + len(m['python_stacks']):,}"
             + f", {len(m['threads'])} threads"),
        ]
        if len(self.events):
            t = self.events["time"]
            rows.append(("span", f"{t.min() / 1e9:.3f} s to {t.max() / 1e9:.3f} s since the trace start"))
        if m["lost"]:
            rows.append(("lost", f"{m['lost']:,} events"))
        if m["integrity_errors"]:
            rows.append(("damage", f"{len(m['integrity_errors'])} integrity errors: "
                         + e(m["integrity_errors"][0]["what"])))
        if self._report_dict is not None:
            for d in self._report_dict["devices"]:
                rows.append((f"device {d['device']} {e(d['kind'])}",
                             f"peak allocated {d['peak_allocated_bytes']:,} B, "
                             f"peak reserved {d['peak_reserved_bytes']:,} B"))
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                       for k, v in rows)
        return f"<table><caption>tlm trace</caption>{body}</table>"


def load(path):
    """Reads the trace at path (the whole file, in C) into a tlm.Trace."""
    return Trace(path)
