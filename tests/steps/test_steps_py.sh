#!/bin/sh
# SPDX-License-Identifier: MIT
# Training steps of a Python loop (steps_workload.py) on the oldest and the
# newest CPython 3.8-3.13 under pyenv: test_steps_py.sh LIBTLM TLM SIMDIR SRCDIR
# With none installed the test is skipped (exit 77).
set -u
libtlm=$1 tlm=$2 sim=$3 src=$4
pyenv=${TLM_TEST_PYENV:-/root/.pyenv/versions}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pys=""
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$pyenv/$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
	[ -n "$py" ] && [ -x "$py" ] && pys="$pys $py"
done
if [ -z "$pys" ]; then
	echo "no CPython 3.8-3.13 under $pyenv: Python training steps not tested"
	exit 77
fi
set -- $pys
first=$1
eval "last=\${$#}"
failed=0
for py in $(echo "$first $last" | tr ' ' '\n' | sort -u); do
	for mode in train eval warmup; do
		tag=$(basename "$(dirname "$(dirname "$py")")")-$mode
		if env TLM_SIM_MEMORY=1G TLM_SIM_DEVICES=1 TLM_TEST_CUDART="$sim/libcudart.so.13" LD_LIBRARY_PATH="$sim" \
			LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$libtlm" \
			TLM_OUTPUT="$tmp/$tag.trace" TLM_SUMMARY=0 "$py" "$src/steps_workload.py" $mode 10 16384 "$tmp/$tag.truth" &&
			"$tlm" report -f json -o "$tmp/$tag.json" "$tmp/$tag.trace" &&
			"$py" "$src/check_steps.py" "$tmp/$tag.json" "$tmp/$tag.truth" $mode 10 16384; then
			echo "$tag: ok"
		else
			echo "$tag: FAILED"
			failed=$((failed + 1))
		fi
	done
done
[ "$failed" = 0 ]
