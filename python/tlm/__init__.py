# SPDX-License-Identifier: MIT
"""tlm: GPU memory lifecycle profiler. This package is the `tlm` command
(python -m tlm), and the reader of its traces:

    import tlm
    tr = tlm.load("tlm-1234.trace")
    tr.events            # numpy columns: time, op, kind, device, address, size, ...
    tr.stacks            # {stack id: tlm.Stack}
    tr.report()          # the JSON report (docs/report-json.md), from tlm's C report
    tr.to_pandas(); tr.to_parquet("t.parquet")
    tlm.write_dataset(["run/"], "ds")   # a job's traces as one Parquet dataset

docs/python.md is the guide. Nothing heavy is imported until it is used, so
that `tlm` (the command) starts fast.
"""

__all__ = ["load", "Trace", "Events", "Stack", "Frame", "OPS", "KINDS", "APIS",
           "write_dataset", "__version__"]


def __getattr__(name):
    if name == "__version__":
        from . import _native

        return _native.lib.tlm_py_version().decode()
    if name in ("load", "Trace", "Events", "Stack", "Frame", "OPS", "KINDS", "APIS"):
        from . import _trace

        return getattr(_trace, name)
    if name == "write_dataset":
        from . import dataset

        return dataset.write_dataset
    raise AttributeError(f"module 'tlm' has no attribute {name!r}")
