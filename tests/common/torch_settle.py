# SPDX-License-Identifier: MIT
"""torch_settle: a PyTorch test program ends without PyTorch's exit abort.

PyTorch (2.15) runs a CUDA backward on its autograd thread for the device,
and every backward from Python stashes a contextvars.Context in the graph
task's thread-local state (torch/autograd/graph.py, _engine_run_backward).
The thread wakes the caller, then drops its own reference to the task; when
that drop is the last one, it must take the GIL to release the Context. If
the interpreter is finalizing by then, CPython ends the thread with
pthread_exit, whose forced unwind crosses a noexcept destructor: "terminate
called without an active exception", SIGABRT (docs/simulate.md). No kernel
takes time on the simulated device, so a program that ends right after its
last backward meets it in a few runs in a hundred.

Importing this module closes the race instead of leaving it to luck: at exit
(atexit runs before the interpreter finalizes, after an uncaught exception
too) settle_autograd() runs one more backward on every device that has a
context, from TorchScript, which stashes no Python object and gives no
tensor a Python object. A device's autograd thread takes its tasks in order
and drops each before it takes the next, so once that backward has returned,
every earlier task is released (a drop that needs the GIL gets it: the call
waits with the GIL released), and the task still held holds nothing of
Python's. Its tensors have no elements: it allocates nothing, so it adds no
event to a trace and changes no figure of torch's.
"""
import atexit
import sys
import warnings

import torch

_empty_backward = None


def _compile():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.script's deprecation notice

        @torch.jit.script
        def empty_backward(device: torch.device):
            x = torch.zeros([0], device=device).requires_grad_()
            y = x * 2.0
            y.backward(torch.zeros_like(y))

    return empty_backward


def settle_autograd():
    """Runs after the program's last backward; importing this module makes
    it run at exit (atexit runs before the interpreter finalizes, also after
    an uncaught exception)."""
    global _empty_backward
    if not torch.cuda.is_initialized():
        return
    try:
        if _empty_backward is None:
            _empty_backward = _compile()
        for i in range(torch.cuda.device_count()):
            # a device without a context had no backward (and gets no context)
            if torch._C._cuda_hasPrimaryContext(i):
                _empty_backward(torch.device("cuda", i))
    except Exception as e:  # say it, and leave the exit status alone
        print("torch_settle: could not settle autograd: %s" % e, file=sys.stderr)


atexit.register(settle_autograd)
