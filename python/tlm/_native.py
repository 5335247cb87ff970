# SPDX-License-Identifier: MIT
"""ctypes over libtlmpy.so (src/python/tlmpy.h): the C side of the package.

The library sits in the package directory once installed; TLM_PYLIB names
another one (the build tree's, for the suite's tests from a checkout).
"""
import ctypes
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _open():
    path = os.environ.get("TLM_PYLIB") or os.path.join(_here, "libtlmpy.so")
    lib = ctypes.CDLL(path)
    c = ctypes
    sigs = {
        "tlm_py_load": (c.c_void_p, [c.c_char_p, c.c_char_p, c.c_size_t]),
        "tlm_py_events": (c.c_uint64, [c.c_void_p]),
        "tlm_py_take": (c.c_void_p, [c.c_void_p, c.c_int]),
        "tlm_py_meta": (c.c_void_p, [c.c_void_p, c.POINTER(c.c_size_t)]),
        "tlm_py_close": (None, [c.c_void_p]),
        "tlm_py_free": (None, [c.c_void_p]),
        "tlm_py_name": (c.c_char_p, [c.c_int, c.c_uint]),
        "tlm_py_version": (c.c_char_p, []),
        "tlm_py_report": (c.c_void_p, [c.c_char_p, c.c_char_p, c.c_size_t]),
        "tlm_py_report_json": (c.c_void_p, [c.c_void_p, c.POINTER(c.c_size_t)]),
        "tlm_py_stacks_json": (c.c_void_p, [c.c_void_p, c.POINTER(c.c_uint32), c.c_size_t,
                                            c.POINTER(c.c_size_t)]),
        "tlm_py_report_free": (None, [c.c_void_p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


lib = _open()

# The column order of enum tlm_py_col and each column's numpy type.
COLUMNS = (
    ("time", "<i8"), ("op", "u1"), ("kind", "u1"), ("device", "<i2"),
    ("address", "<u8"), ("size", "<u8"), ("stream", "<u8"), ("aux", "<u8"),
    ("thread", "<u4"), ("stack_id", "<u4"), ("result", "<i4"), ("flags", "<u2"),
    ("api", "<u2"),
)


def names(which):
    """The names of the codes of column op (0), kind (1) or api (2)."""
    out = []
    while True:
        s = lib.tlm_py_name(which, len(out))
        if s is None:
            return tuple(out)
        out.append(s.decode())


def _path(p):
    return os.fsencode(os.fspath(p))


def take_string(ptr, n):
    """A malloc'd C string as bytes, freed."""
    try:
        return ctypes.string_at(ptr, n)
    finally:
        lib.tlm_py_free(ptr)


def load(path):
    """(number of events, {column: (address, type)}, meta JSON bytes); the
    caller owns each address (tlm_py_free)."""
    err = ctypes.create_string_buffer(512)
    t = lib.tlm_py_load(_path(path), err, len(err))
    if not t:
        raise OSError(f"{os.fspath(path)}: {err.value.decode(errors='replace')}")
    try:
        n = lib.tlm_py_events(t)
        cols = {name: (lib.tlm_py_take(t, i), dt) for i, (name, dt) in enumerate(COLUMNS)}
        ln = ctypes.c_size_t()
        meta = ctypes.string_at(lib.tlm_py_meta(t, ctypes.byref(ln)), ln.value)
    finally:
        lib.tlm_py_close(t)
    return n, cols, meta


class Report:
    """A built C report (struct tlm_report), freed with the object."""

    def __init__(self, path):
        err = ctypes.create_string_buffer(512)
        self._r = lib.tlm_py_report(_path(path), err, len(err))
        if not self._r:
            raise OSError(f"{os.fspath(path)}: {err.value.decode(errors='replace')}")

    def json(self):
        n = ctypes.c_size_t()
        p = lib.tlm_py_report_json(self._r, ctypes.byref(n))
        if not p:
            raise MemoryError("tlm: the report could not be rendered")
        return take_string(p, n.value)

    def stacks_json(self, ids):
        arr = (ctypes.c_uint32 * len(ids))(*ids)
        n = ctypes.c_size_t()
        p = lib.tlm_py_stacks_json(self._r, arr, len(ids), ctypes.byref(n))
        if not p:
            raise MemoryError("tlm: the stacks could not be rendered")
        return take_string(p, n.value)

    def __del__(self):
        if getattr(self, "_r", None):
            lib.tlm_py_report_free(self._r)
            self._r = None
