#!/bin/sh
# SPDX-License-Identifier: MIT
# The quick start's demo (tools/demo.sh, the last step of tools/bootstrap.sh)
# run twice in the same place: both runs succeed and the second trace is the
# second run's (it used to refuse to replace the first one's).
# usage: test_demo_twice.sh SRCDIR BUILD_DIR
set -eu
src=$1 build=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in 1 2; do
	TMPDIR=$dir sh "$src/tools/demo.sh" "$build" >"$dir/out$i" 2>&1 || {
		echo "FAIL: run $i of tools/demo.sh:"
		cat "$dir/out$i"
		exit 1
	}
	grep '^pid:' "$dir/out$i" >"$dir/pid$i" || { echo "FAIL: run $i: no pid in tlm info:"; cat "$dir/out$i"; exit 1; }
done
if cmp -s "$dir/pid1" "$dir/pid2"; then
	echo "FAIL: the second run's trace is the first one's ($(cat "$dir/pid1"))"
	exit 1
fi
echo "ok: tools/demo.sh twice, the trace of each run ($(cat "$dir/pid1") then $(cat "$dir/pid2"))"
