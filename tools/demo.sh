#!/bin/sh
# Runs tlm-demo under tlm (tlm run prints the end-of-run report), then shows
# what the trace holds. The trace is the demo's own: each run replaces it.
# usage: tools/demo.sh [BUILD_DIR]
set -eu
b=${1:-build}
out=${TMPDIR:-/tmp}/tlm-demo.trace
# the simulated driver stands in for libcuda.so.1 unless a real one is present
if ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
	sim=""
else
	sim="$b/src/sim"
	echo "tlm: no NVIDIA driver found; running the demo on the simulated device"
fi
LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$b/src/command/tlm" run --force --output "$out" -- "$b/tools/demo/tlm-demo"
echo
"$b/src/command/tlm" info "$out"
echo
echo "the whole story: $b/src/command/tlm report $out"
