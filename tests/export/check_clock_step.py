# SPDX-License-Identifier: MIT
"""The wall clock set during a run (test export_clock_step): the
torch-snapshot export's times are the wall clock's at each event, as the
program itself read it (PyTorch reads it at each event), to 1 ms.

A Python program reports four blocks through the allocator tap
(c10::reportMemoryUsageToProfiler, libtlm.so's) under clockstep.c's preload:
one, then the wall clock set an hour ahead, a second 100 ms later, then the
clock set back by an hour and a half, a third 100 ms later, a fourth 100 ms
after that, reading time.time_ns() after each. Without CLOCK records the
export would extrapolate every time from the trace's start.
usage: check_clock_step.py TLM CLOCKSTEP_SO LIBTLM_SO"""
import os
import pickle
import subprocess
import sys
import tempfile

tlm, clockstep, libtlm = sys.argv[1:4]
WORKLOAD = r"""
import ctypes, sys, time
lib = ctypes.CDLL(None)
tap = getattr(lib, "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE")
tap.restype = None
tap.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint64]
lib.tlm_test_clock_step.argtypes = [ctypes.c_int64]
seen = []
def block(k):
    tap(0x7f0000000000 + k * 4096, 512, 512 * (k + 1), 2 << 20, 1)
    seen.append(time.time_ns())
block(0)
lib.tlm_test_clock_step(3600 * 10**9)
time.sleep(0.1)
block(1)
lib.tlm_test_clock_step(-5400 * 10**9)
time.sleep(0.1)
block(2)
time.sleep(0.1)
block(3)
print(" ".join(map(str, seen)))
"""
fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" {detail!r:.600}"))
    fails += not ok


with tempfile.TemporaryDirectory() as d:
    trace, snap = os.path.join(d, "t.trace"), os.path.join(d, "s.pickle")
    first = os.environ.get("TLM_TEST_PRELOAD_FIRST", "")
    env = dict(os.environ, LD_PRELOAD=" ".join(p for p in (first, clockstep, libtlm) if p),
               TLM_OUTPUT=trace, TLM_SUMMARY="0")
    run = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True, text=True)
    if run.returncode:
        print(run.stdout, run.stderr)
        sys.exit(1)
    seen = [int(x) // 1000 for x in run.stdout.split()]
    subprocess.run([tlm, "report", "--format", "torch-snapshot", "-o", snap, trace], check=True)
    s = pickle.load(open(snap, "rb"))
    info = subprocess.run([tlm, "info", trace], capture_output=True, text=True).stdout
check("tlm info: the wall clock set twice", "wall clock:   set 2 times during the recording\n" in info, info)
got = [e["time_us"] for e in s["device_traces"][0] if e["action"] == "alloc"]
check("four allocations", len(got) == 4 and len(seen) == 4, (got, seen))
if len(got) == 4 and len(seen) == 4:
    diff = [g - w for g, w in zip(got, seen)]
    check("each time is the wall clock the program read at it, to 1 ms (set 1 h ahead, then 1.5 h back)",
          all(-1000 <= x <= 1000 for x in diff), diff)
print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
sys.exit(1 if fails else 0)
