# SPDX-License-Identifier: MIT
# edges_py.py - a Python program ended by KeyboardInterrupt (ki), or whose
# fork child leaves by os._exit (fork); run by test_edges_py.sh.
import ctypes, os, signal, sys
rt = ctypes.CDLL("libcudart.so.13")
print("sigterm", signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, file=sys.stderr)
p = ctypes.c_void_p()
for i in range(3):
    rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1000 + i))
if sys.argv[1] == "ki":
    raise KeyboardInterrupt
pid = os.fork()
if pid == 0:
    rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(5))
    os._exit(0)
os.waitpid(pid, 0)
