# SPDX-License-Identifier: MIT
"""Loads pickle_check's output with Python's pickle and compares it exactly.
usage: check_pickle.py PICKLE_CHECK_BINARY"""
import os
import pickle
import subprocess
import sys
import tempfile

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.pickle")
    subprocess.run([sys.argv[1], path], check=True)
    data = open(path, "rb").read()
    got = pickle.loads(data)
I32 = 2**31
want = {
    "ints": [0, 1, 255, 256, 65535, 65536, -1, -128, -129, -32768, I32 - 1, I32, -I32, -I32 - 1, 2**63 - 1, -2**63,
             0x7fffffffff, -0x800000000],
    "uints": [0, 0x7fffffff, 0x80000000, 0xffffffff, 0x7f0012345678, 2**63, 2**64 - 1],
    "strs": ["", "plain", "caf\u00e9 \u2190 \U0001F600", "bad\ufffd byte", "cut \ufffd\ufffd",
             "surrogate \ufffd\ufffd\ufffd", "overlong \ufffd\ufffd", "plain"],
    "many": list(range(2500)),
    "shared": [[7]] * 1201,
    "misc": (True, False, None, 0.1, ()),
}
fails = 0
for k in want:
    if got.get(k) != want[k]:
        fails += 1
        print(f"FAIL: {k}: {got.get(k)!r:.300} != {want[k]!r:.300}")
    else:
        print(f"ok: {k}")
shared = got["shared"]
if not all(x is shared[0] for x in shared):
    fails += 1
    print("FAIL: the memo did not share the list")
if data[:2] != b"\x80\x02" or data[-1:] != b".":
    fails += 1
    print("FAIL: not protocol 2")
print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
sys.exit(1 if fails else 0)
