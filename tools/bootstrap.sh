#!/bin/sh
# Quick start, step 1: install the dependencies, build tlm, and run the demo
# workload under tlm (on the simulated CUDA device when there is no GPU).
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
sh tools/demo.sh build
