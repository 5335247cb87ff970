#!/bin/sh
# Installs what tlm needs to build and test on Debian 12 (run as root).
# Only missing packages are installed, so a second run costs nothing.
set -eu
# clang + libclang-rt-14-dev: the fuzzing stage (libFuzzer) of tools/test.sh
# chromium: the HTML report test draws the page in headless Chromium
# valgrind: the instruction-count guard of the recording path (tests/bench/icount.sh)
# g++: the C++ doubles of PyTorch's libc10 (tests/torch) and C++ symbols (tests/analysis)
# binutils (objcopy), libc6-dbg: stripped and separate-debug modules (tests/analysis)
# python3, python3-venv, python3-pip: the checkers, the venvs, the CUDA wheels
# libncurses-dev: tlm top's screen; tmux: its tests in a real terminal (tests/live)
# Under CI=true a test whose prerequisite is missing fails (tests/common/skip.sh).
PKGS="gcc g++ libc6-dev libc6-dbg binutils meson ninja-build pkg-config libunwind-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev libcmocka-dev clang libclang-rt-14-dev chromium valgrind python3 python3-venv python3-pip libncurses-dev tmux"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "tlm: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# The CUDA runtimes of the real-runtime tests (tests/realcuda), when a toolkit is there.
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	sh "$(dirname "$0")/fetch-cuda-wheels.sh"
fi
# the real PyTorch CUDA wheel, in a venv outside the tree (tests/torch, docs/simulate.md)
sh "$(dirname "$0")/torch-venv.sh"
# the Python package's test venv and wheelhouse (tests/pip, docs/python.md)
sh "$(dirname "$0")/py-venv.sh"
# playwright (browser automation for the HTML report's interactive test) in a
# venv outside the tree; its tests skip when this fails (no network), or fail under CI=true
sh "$(dirname "$0")/viz-venv.sh" >/dev/null || echo "tlm: no playwright venv: the interactive HTML test will be skipped"
