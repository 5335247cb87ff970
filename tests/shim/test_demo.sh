#!/bin/sh
# The quick start's demo under LD_PRELOAD gives a trace that `tlm info`
# describes exactly: 4 weights + optimizer state + 50 steps x (3 activations,
# 1 gradient, 1 leaked loss) = 255 device allocations, 200 frees, 1 failed
# (the oversized request); 4452 MiB allocated in all; one pinned buffer.
# usage: test_demo.sh LIBTLM DEMO TLM SIMDIR
set -eu
lib=$1 demo=$2 tlm=$3 sim=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$lib" LD_LIBRARY_PATH="$sim" \
	TLM_OUTPUT="$dir/demo.trace" "$demo" > "$dir/out"
"$tlm" info "$dir/demo.trace" > "$dir/info"
fail=0
expect() {
	if ! grep -qx -- "$1" "$dir/info"; then
		echo "missing line: '$1'"
		fail=1
	fi
}
expect "state:        clean"
expect "events:       458" # 255 + 1 failed + 200 frees + 2 pinned
expect "lost:         0"
expect "threads:      1"
expect "device              255        200        1           4668260352 (4.3 GiB)"
expect "host_pinned           1          1        0             16777216 (16.0 MiB)"
expect "integrity:    ok"
grep -q "oversized request failed with out of memory, as intended" "$dir/out" || { echo "demo output"; fail=1; }
if [ $fail -ne 0 ]; then
	cat "$dir/info"
	exit 1
fi
echo "1 passed, 0 failed"
