#!/bin/sh
# SPDX-License-Identifier: MIT
# Training steps of a Python loop (steps_workload.py) on the oldest and the
# newest CPython 3.8-3.13 under pyenv: test_steps_py.sh LIBTLM TLM SIMDIR DOUBLEDIR SRCDIR
# With none installed the test is skipped (exit 77).
set -u
libtlm=$1 tlm=$2 sim=$3 dbl=$4 src=$5
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
pyenv=${TLM_TEST_PYENV:-/root/.pyenv/versions}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pys=""
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$pyenv/$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
	[ -n "$py" ] && [ -x "$py" ] && pys="$pys $py"
done
[ -n "$pys" ] || tlm_skip pyenv "no CPython 3.8-3.13 under $pyenv: Python training steps not tested"
set -- $pys
first=$1
eval "last=\${$#}"
failed=0
# the oldest and the newest supported: a missing end is a skipped part
for v in 3.8 3.13; do
	case "$first $last" in */"$v".*) ;; *) tlm_skip_case pyenv "python $v: not installed under $pyenv: its training steps not tested" || failed=1 ;; esac
done
for py in $(echo "$first $last" | tr ' ' '\n' | sort -u); do
	for mode in train eval warmup; do
		tag=$(basename "$(dirname "$(dirname "$py")")")-$mode
		if env TLM_SIM_MEMORY=1G TLM_SIM_DEVICES=1 TLM_TEST_CUDART="$dbl/libcudart.so.13" LD_LIBRARY_PATH="$sim" \
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
# The issue's case: a loop that leaks 8x more per step, then an evaluation
# phase: the gate fails and names train_step; the time rule alone would pass.
run_issue() { # tag steps leak eval
	env TLM_SIM_MEMORY=1G TLM_SIM_DEVICES=1 TLM_TEST_CUDART="$dbl/libcudart.so.13" LD_LIBRARY_PATH="$sim" \
		LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$libtlm" \
		TLM_OUTPUT="$tmp/$1.trace" TLM_SUMMARY=0 "$last" "$src/issue_loop.py" "$2" "$3" "$4"
}
if run_issue base 10 1024 0 && run_issue new 10 8192 30; then
	"$tlm" diff --fail-on-growth 0 "$tmp/base.trace" "$tmp/new.trace" >"$tmp/diff.out" 2>"$tmp/diff.err"
	rc=$?
	"$tlm" report -f json -o "$tmp/new.json" "$tmp/new.trace"
	if [ "$rc" = 1 ] && grep -q "leaks per step grew by 7168 B" "$tmp/diff.err" &&
		grep -q "from train_step (issue_loop.py:" "$tmp/diff.err" &&
		grep -q '"steps":{"found":true,"count":10,' "$tmp/new.json" &&
		grep -q '"bytes_per_step":8192,"tensors_per_step":1.000,"steps_with_survivors":9,' "$tmp/new.json"; then
		echo "issue case: ok"
	else
		echo "issue case: FAILED (diff exit $rc)"
		cat "$tmp/diff.out" "$tmp/diff.err"
		failed=$((failed + 1))
	fi
else
	echo "issue case: the workload failed"
	failed=$((failed + 1))
fi
[ "$failed" = 0 ]
