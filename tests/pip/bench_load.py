# SPDX-License-Identifier: MIT
"""The Python reader's loading speed (docs/python.md). Not a test:
    build/tests/pip/gen_events /tmp/t.trace 10000000
    python tests/pip/bench_load.py /tmp/t.trace [RUNS]
loads the trace RUNS times (default 5) with tlm.load() and prints, per run,
the events per second of wall-clock and of CPU time (user + system: on a
loaded machine the wall figure counts other processes' time), then the best
of each. Run with the installed package, or from a checkout with
PYTHONPATH=python TLM_PYLIB=build/src/python/libtlmpy.so."""
import resource
import sys
import time

import tlm


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


path = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
best_wall = best_cpu = 0.0
for i in range(runs):
    t0, c0 = time.perf_counter(), cpu()
    tr = tlm.load(path)
    t1, c1 = time.perf_counter(), cpu()
    n = len(tr.events)
    del tr
    w, c = n / (t1 - t0) / 1e6, n / (c1 - c0) / 1e6
    best_wall, best_cpu = max(best_wall, w), max(best_cpu, c)
    print(f"run {i + 1}: {n} events in {t1 - t0:.3f} s ({w:.1f} M events/s), CPU {c1 - c0:.3f} s ({c:.1f} M events/s)")
print(f"best: {best_wall:.1f} M events/s wall, {best_cpu:.1f} M events/s CPU")
