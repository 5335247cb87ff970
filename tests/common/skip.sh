#!/bin/sh
# SPDX-License-Identifier: MIT
# skip.sh - the one rule for a test that cannot run. Every skip of the suite
# goes through it: shell tests source this file and call tlm_skip; C tests
# call tlm_test_skip (tests/common/tlm_test.h), which runs it as a command, as
# a Python test would (sys.exit(subprocess.call(["sh", SKIP_SH, WHAT, REASON]))):
#
#   . tests/common/skip.sh; tlm_skip WHAT REASON...   (exits the script)
#   tlm_skip_case WHAT REASON...                      (one part; returns 0 or 1)
#   sh tests/common/skip.sh WHAT REASON...            (exit status 77 or 1)
#
# It prints one line, "tlm-skip: WHAT: REASON", which tools/test.sh shows on
# the console and counts. WHAT names what is missing. The exit status is 77
# (meson: skipped), except under CI=true, where a skip fails (exit 1) unless
# WHAT is one of the few things no bootstrap can provide on a CI machine:
#   gpu      a real NVIDIA GPU and its driver
#   privilege  a privilege the machine withholds (root, a mount in a container,
#            a setuid bit on a file system mounted nosuid)
#   build    this build cannot measure it (under a sanitizer the figure or the
#            moment the test asserts would be the sanitizer's); another stage
#            of tools/test.sh runs it
# Everything else (a package of tools/deps.sh, the torch venv, the CUDA
# wheels, the toolkit and the pyenv CPythons of the machine, Chromium,
# playwright, valgrind, clang ...) is what tools/bootstrap.sh installs or the
# CI machine has, so in CI its absence is a failure, not a skip: a new
# prerequisite fails by default until someone makes the bootstrap provide it.
# tlm_skip_case WHAT REASON...: one part of a test cannot run; the test goes
# on. Returns 0 when the part may be skipped, 1 when its absence is a failure.
tlm_skip_case() {
	_what=$1
	shift
	case $_what in
	gpu | privilege | build) ;;
	*)
		if [ "${CI:-}" = true ]; then
			echo "tlm-skip: $_what: $*: FAILED (CI=true: tools/bootstrap.sh provides it, so it must run)"
			return 1
		fi
		;;
	esac
	echo "tlm-skip: $_what: $*"
}
# tlm_skip WHAT REASON...: the whole test cannot run (exit 77, or 1).
tlm_skip() {
	tlm_skip_case "$@" || exit 1
	exit 77
}
# tlm_has_modules PYTHON MODULE...: PYTHON exists and finds each top-level
# MODULE (importlib.util.find_spec: where it would load from, 20 ms), so a
# test may use them. It does not import them: `import torch` alone costs 3 s
# (torch, torchvision and transformers 5 s), and some twenty tests in each
# stage checked that way before they ran it anyway. A venv that has torch but
# cannot import it fails the test that uses it, rather than skipping.
tlm_has_modules() {
	_py=$1
	shift
	[ -x "$_py" ] || return 1
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "$_py" -c '
import importlib.util, sys
sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))' "$@" >/dev/null 2>&1
}
# run as a command (C and Python tests); sourced, it only defines the functions
case ${0##*/} in skip.sh) [ $# -ge 2 ] && tlm_skip "$@" ;; esac
