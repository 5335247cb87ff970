# SPDX-License-Identifier: MIT
"""`tlm` and `python -m tlm`: the tlm command installed inside this package
(_prefix/bin/tlm, next to its libtlm.so and simulated device), exec'd in
place of this interpreter, so its exit status and signals are the
command's own."""
import os
import signal
import sys


def command():
    """The path of the installed tlm command."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix", "bin", "tlm")


def main():
    exe = command()
    # Python ignores SIGPIPE and SIGXFSZ at start and exec keeps ignored
    # signals ignored: give the command, and what it runs, the defaults.
    for s in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, s):
            signal.signal(getattr(signal, s), signal.SIG_DFL)
    try:
        os.execv(exe, ["tlm"] + sys.argv[1:])
    except OSError as e:
        print(f"tlm: cannot run {exe}: {e.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
