# SPDX-License-Identifier: MIT
"""The call-path harness of the Python benchmarks (bench_paths.py,
tests/bench/bench_tap.py): OP reached through one of NPATHS distinct
functions (their own code objects and lines, compiled as "paths.py"), each
going DEPTH calls deeper, timed over ITERATIONS."""
import time


def paths_to(op, npaths):
    def nest(k):
        if k > 0:
            nest(k - 1)
        else:
            op()

    src = "".join("def path_%d(d):\n    nest(d)\n" % i for i in range(npaths))
    ns = {"nest": nest}
    exec(compile(src, "paths.py", "exec"), ns)
    return [ns["path_%d" % i] for i in range(npaths)]


def best_ns(op, npaths, depth, iters, spread=1):
    """(wall ns, process CPU ns) per iteration: the best of 3 runs after a
    warm-up of 1000 that fills the caches. SPREAD > 1: the depth of
    iteration i is DEPTH + (i * 3) % SPREAD, so that one event's stack is
    a few calls deeper or shallower than the last one's, under the same
    outer frames (a layer's block under one more or one less module call)."""
    paths = paths_to(op, npaths)

    def run(n):
        t, c = time.perf_counter_ns(), time.process_time_ns()
        for i in range(n):
            paths[i % npaths](depth + (i * 3) % spread)
        return (time.perf_counter_ns() - t) / n, (time.process_time_ns() - c) / n

    run(1000)
    return min(run(iters) for _ in range(3))
