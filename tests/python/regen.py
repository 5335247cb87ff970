# SPDX-License-Identifier: MIT
# Code compiled again and again (tests/python/test_python.sh): each round
# compiles a new module, whose one line allocates, runs it and drops it. The
# interpreter puts each new code object at the freed one's address and runs
# it in a frame at the same address, so the hook's Python walk meets a frame
# it read before holding a code object that is not the one it read
# (pystack.c: the code signature and struct hop). In the first loop each
# round has a file name of its own and two rounds in a row share their line
# (so only the file name tells them apart); in the second every round has
# the same file name and its own line (only the line table does). Every
# allocation must name its own round's file and line; check_regen.py works
# the truth out from these loops. Fails unless most rounds reused an address
# (else the case would test nothing).
import ctypes
import os

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
KiB = 1 << 10
ROUNDS = 40
kept = []


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0  # LINE_MALLOC
    return p.value


ns = {"malloc": malloc, "kept": kept}
ids = []
for i in range(ROUNDS):
    src = "\n" * ((i // 2) % 7) + "kept.append(malloc(%d))\n" % ((i + 1) * KiB)
    code = compile(src, "gen%d.py" % i, "exec")
    ids.append(id(code))
    exec(code, ns)  # LINE_EXEC
    del code
for i in range(ROUNDS):
    src = "\n" * (i % 7) + "kept.append(malloc(%d))\n" % ((100 + i) * KiB)
    code = compile(src, "same.py", "exec")
    ids.append(id(code))
    exec(code, ns)  # LINE_EXEC2
    del code
reused = 2 * ROUNDS - len(set(ids))
assert reused >= ROUNDS, "only %d of %d rounds put their code at a freed one's address" % (reused, 2 * ROUNDS)
