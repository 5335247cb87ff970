# SPDX-License-Identifier: MIT
# Checks the trace of nativepaths.py, as trace_dump prints it (one line per
# event with the native part of its stack): python3 check_nativepaths.py DUMP
# The truth, from the workload's own loop: allocation i, (i + 1) KiB, went
# through tlm_test_via_a alone for even i (one frame of twopaths.c's library
# on its stack), through tlm_test_via_b and tlm_test_deeper for odd i (two),
# under the same Python frames each time.
import sys

KiB = 1 << 10
want = {(i + 1) * KiB: 1 if i % 2 == 0 else 2 for i in range(40)}
got, fails = {}, []
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0] != "E" or f[3] != "cudaMalloc":
        continue
    frames = f[f.index("|") + 1:] if "|" in f else []
    n = sum(1 for fr in frames if fr.split("+")[0].endswith("libtlm_test_twopaths.so"))
    size = int(f[5])
    if size in got:
        fails.append("two allocations of %d bytes" % size)
    got[size] = n
for size, n in sorted(want.items()):
    if got.get(size) != n:
        fails.append("allocation of %d bytes: %s frames of the test library on its stack, expected %d"
                     % (size, got.get(size), n))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
