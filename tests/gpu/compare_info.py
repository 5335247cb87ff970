# SPDX-License-Identifier: MIT
# compare_info.py NAME A.info B.info - compares the kind tables of two
# `tlm info` outputs (allocations, frees, failures and bytes per driver memory kind):
# the same program recorded by interposition with CUPTI (A) and by CUPTI alone
# (B, CUDA_INJECTION64_PATH) must hold the same operations, and both traces
# must say CUPTI was attached (the "cupti:" line; B's ends in ", injected)").
# Prints both "sources:" and "cupti:" lines and one PASS/FAIL line.
import re
import sys


def table(path):
    rows, sources, cupti = {}, "?", "?"
    for line in open(path):
        if line.startswith("sources:"):
            sources = line.split(":", 1)[1].strip()
        if line.startswith("cupti:"):
            cupti = line.split(":", 1)[1].strip()
        m = re.match(r"^(\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) \(", line)
        if m:
            rows[m.group(1)] = tuple(int(v) for v in m.group(2, 3, 4, 5))
    return rows, sources, cupti


name, a, b = sys.argv[1:4]
ta, sa, ca = table(a)
tb, sb, cb = table(b)
print("  interposition+CUPTI sources: %s" % sa)
print("  interposition+CUPTI cupti: %s" % ca)
print("  CUPTI alone (injection) sources: %s" % sb)
print("  CUPTI alone (injection) cupti: %s" % cb)
# "block": PyTorch's allocator tap (libtlm.so preloaded: the interposition run
# alone); the driver's operations are what both sources see
for k in ("block",):
    if k in ta or k in tb:
        print("  %-12s interposition+CUPTI %s, CUPTI alone %s: the allocator tap, not compared"
              % (k, ta.pop(k, None), tb.pop(k, None)))
diff = [(k, ta.get(k), tb.get(k)) for k in sorted(set(ta) | set(tb)) if ta.get(k) != tb.get(k)]
for k, x, y in diff:
    print("  %-12s interposition+CUPTI %s, CUPTI alone %s (allocs, frees, failed, bytes)" % (k, x, y))
if not ca.startswith("CUPTI attached ("):
    diff.append(("cupti", ca, None))
    print("  the interposition+CUPTI run did not attach CUPTI")
if not (cb.startswith("CUPTI attached (") and cb.endswith(", injected)")):
    diff.append(("cupti", cb, None))
    print("  the injection run did not attach CUPTI")
print("%s %s: both sources saw the same operations%s" % ("FAIL" if diff else "PASS", name,
      "" if not diff else " - they differ, see above"))
sys.exit(1 if diff else 0)
