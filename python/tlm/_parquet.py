# SPDX-License-Identifier: MIT
"""Trace.to_parquet() without pyarrow: the events as one Parquet file, the
same columns and types as with pyarrow (docs/python.md), written plainly
(PLAIN encoding, uncompressed, every column REQUIRED, one row group), with
the file's key "tlm.meta". Parquet's layout: "PAR1", the column chunks, the
file metadata in Thrift's compact protocol, its length, "PAR1"."""
import json
import struct

import numpy as np

# Thrift compact protocol field types
_I32, _I64, _BIN, _LIST, _STRUCT = 5, 6, 8, 9, 12
# Parquet enums
_INT32, _INT64, _BYTE_ARRAY = 1, 2, 6
_PLAIN, _RLE = 0, 3
_UTF8, _INT_16 = 0, 16
_PAGE = 1 << 30  # values of one data page stay under 1 GiB


def _uv(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _zz(v):
    return _uv((v << 1) ^ (v >> 63))


def _struct(fields):
    """fields: [(id, type, value)] in id order; value: int, bytes/str,
    a list (type _LIST: (elem_type, [values])) or a nested field list."""
    out, last = bytearray(), 0
    for fid, t, v in fields:
        if v is None:
            continue
        d = fid - last
        out += bytes([d << 4 | t]) if 0 < d <= 15 else bytes([t]) + _zz(fid)
        last = fid
        out += _value(t, v)
    out.append(0)
    return bytes(out)


def _value(t, v):
    if t in (_I32, _I64):
        return _zz(v)
    if t == _BIN:
        b = v.encode() if isinstance(v, str) else v
        return _uv(len(b)) + b
    if t == _STRUCT:
        return _struct(v)
    et, items = v
    head = bytes([len(items) << 4 | et]) if len(items) < 15 else bytes([0xF0 | et]) + _uv(len(items))
    return head + b"".join(_value(et, i) for i in items)


def _strings(codes, names):
    """PLAIN BYTE_ARRAY values: each code's name, as u32 length + bytes."""
    recs = [struct.pack("<I", len(n.encode())) + n.encode() for n in names]
    width = max(len(r) for r in recs)
    table = np.zeros((len(recs), width), np.uint8)
    for i, r in enumerate(recs):
        table[i, : len(r)] = np.frombuffer(r, np.uint8)
    lens = np.array([len(r) for r in recs])
    c = codes.astype(np.intp)
    return table[c][np.arange(width) < lens[c][:, None]].tobytes()


def write(tr, path):
    from . import _arrow, _trace

    ev = tr.events
    n = len(ev)
    tables = {"op": _trace.OPS, "kind": _trace.KINDS, "api": _trace.APIS}
    schema = [(1, _STRUCT, None)]  # placeholder, built below
    leaves, chunks = [], []
    with open(path, "wb") as f:
        f.write(b"PAR1")
        for name, t in _arrow.EVENT_FIELDS:
            col = ev[name]
            if t == "dict":
                names = list(tables[name])
                if n and int(col.max()) >= len(names):
                    names += [f"{name}{c}" for c in range(len(names), int(col.max()) + 1)]
                ptype, conv, step = _BYTE_ARRAY, _UTF8, max(1, _PAGE // 64)
                pages = [_strings(col[i:i + step], names) for i in range(0, n, step)] or [b""]
                counts = [min(step, n - i) for i in range(0, n, step)] or [0]
            else:
                ptype = _INT64 if t == "int64" else _INT32
                conv = _INT_16 if t == "int16" else None
                dt = np.dtype("<i8" if ptype == _INT64 else "<i4")
                vals = col.view(np.int64) if col.dtype == np.uint64 else col.astype(dt, copy=False)
                step = _PAGE // dt.itemsize
                pages = [vals[i:i + step].astype(dt, copy=False).tobytes() for i in range(0, n, step)] or [b""]
                counts = [min(step, n - i) for i in range(0, n, step)] or [0]
            start, size = f.tell(), 0
            for data, cnt in zip(pages, counts):
                dph = [(1, _I32, cnt), (2, _I32, _PLAIN), (3, _I32, _RLE), (4, _I32, _RLE)]
                head = _struct([(1, _I32, 0), (2, _I32, len(data)), (3, _I32, len(data)), (5, _STRUCT, dph)])
                f.write(head)
                f.write(data)
                size += len(head) + len(data)
            leaves.append([(1, _I32, ptype), (3, _I32, 0), (4, _BIN, name), (6, _I32, conv)])
            meta = [(1, _I32, ptype), (2, _LIST, (_I32, [_PLAIN, _RLE])), (3, _LIST, (_BIN, [name])),
                    (4, _I32, 0), (5, _I64, n), (6, _I64, size), (7, _I64, size), (9, _I64, start)]
            chunks.append([(2, _I64, start), (3, _STRUCT, meta)])
        schema = [[(4, _BIN, "schema"), (5, _I32, len(leaves))]] + leaves
        total = sum(c[1][2][6][2] for c in chunks)
        rg = [(1, _LIST, (_STRUCT, chunks)), (2, _I64, total), (3, _I64, n)]
        kv = [[(1, _BIN, "tlm.meta"), (2, _BIN, json.dumps(tr.meta))]]
        fmd = _struct([(1, _I32, 1), (2, _LIST, (_STRUCT, schema)), (3, _I64, n),
                       (4, _LIST, (_STRUCT, [rg])), (5, _LIST, (_STRUCT, kv)), (6, _BIN, "tlm")])
        f.write(fmd)
        f.write(struct.pack("<I", len(fmd)))
        f.write(b"PAR1")
