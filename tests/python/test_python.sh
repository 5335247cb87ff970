#!/bin/sh
# SPDX-License-Identifier: MIT
# Python stacks, reference cycles, leaks, classes built again and again
# (classes.py), call depths that change between events (depths.py), lines
# one function comes back to (lines.py), code
# compiled again and again (regen.py), one Python line allocating through
# two native paths (nativepaths.py, twopaths.c) and where native frames under
# Python ones end (check_native.py) on every CPython under pyenv:
# test_python.sh LIBTLM TLM SIMDIR DOUBLEDIR SRCDIR TWOPATHS.so TRACE_DUMP
# Each version absent from $TLM_TEST_PYENV (default /root/.pyenv/versions)
# is a skipped part (tlm_skip_case: a failure under CI=true); with none
# present the test is skipped.
set -u
libtlm=$1 tlm=$2 sim=$3 dbl=$4 src=$5
export TLM_TEST_TWOPATHS=$6
dump=$7
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
pyenv=${TLM_TEST_PYENV:-/root/.pyenv/versions}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran=0 failed=0 missing=""
run_one() { # python tag [env...]; WORKLOAD (default workload.py) and ARGS from the environment
	py=$1 tag=$2
	shift 2
	wl=${WORKLOAD:-workload.py}
	# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
	env "$@" TLM_TEST_CUDART="$dbl/libcudart.so.13" LD_LIBRARY_PATH="$sim" \
		LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST }$libtlm" \
		TLM_OUTPUT="$tmp/$tag.trace" TLM_SUMMARY=0 "$py" "$src/$wl" ${ARGS-10} || return 1
	"$tlm" report -f json -o "$tmp/$tag.json" "$tmp/$tag.trace" || return 1
}
workload_case() { # NAME: NAME.py under $py, its report checked by check_NAME.py
	if WORKLOAD=$1.py ARGS= run_one "$py" "$v-$1" &&
		"$py" "$src/check_$1.py" "$tmp/$v-$1.json" "$src/$1.py"; then
		echo "python $v $1: ok"
	else
		echo "python $v $1: FAILED"
		failed=$((failed + 1))
	fi
}
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$pyenv/$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$py" ] || [ ! -x "$py" ]; then
		missing="$missing $v"
		continue
	fi
	ran=$((ran + 1))
	if run_one "$py" "$v" && "$py" "$src/check.py" "$tmp/$v.json" "$src/workload.py"; then
		echo "python $v ($py): ok"
	else
		echo "python $v ($py): FAILED"
		failed=$((failed + 1))
	fi
	# classes built again and again (3.13 runs __init__ under a shim frame from the second call)
	workload_case classes
	# call depths that change between events, under the same outer frames
	workload_case depths
	# code compiled again and again, each new code object at the freed one's address
	workload_case regen
	# one frame back at a line it left two events before
	workload_case lines
	# one Python line, two native paths in turn: each event its own native part
	if WORKLOAD=nativepaths.py ARGS= run_one "$py" "$v-np" && "$dump" "$tmp/$v-np.trace" >"$tmp/$v-np.dump" &&
		"$py" "$src/check_nativepaths.py" "$tmp/$v-np.dump"; then
		echo "python $v nativepaths: ok"
	else
		echo "python $v nativepaths: FAILED"
		failed=$((failed + 1))
	fi
	# native frames under Python ones end at the interpreter's first frame
	if "$tlm" report --full-stacks -f json -o "$tmp/$v-full.json" "$tmp/$v.trace" &&
		"$py" "$src/check_native.py" "$tmp/$v-full.json" cut; then
		echo "python $v native frames end at the interpreter: ok"
	else
		echo "python $v native frames end at the interpreter: FAILED"
		failed=$((failed + 1))
	fi
	if [ "$v" = 3.12 ]; then # ... unless TLM_STACK_PAST_PYTHON=1
		if run_one "$py" past TLM_STACK_PAST_PYTHON=1 &&
			"$tlm" report --full-stacks -f json -o "$tmp/past-full.json" "$tmp/past.trace" &&
			"$py" "$src/check_native.py" "$tmp/past-full.json" past; then
			echo "python $v TLM_STACK_PAST_PYTHON=1: ok"
		else
			echo "python $v TLM_STACK_PAST_PYTHON=1: FAILED"
			failed=$((failed + 1))
		fi
	fi
	if [ "$v" = 3.12 ]; then # the switch: no Python stacks, no GC flags
		if run_one "$py" off TLM_PYTHON=off && "$py" "$src/check.py" "$tmp/off.json" "$src/workload.py" off; then
			echo "python $v TLM_PYTHON=off: ok"
		else
			echo "python $v TLM_PYTHON=off: FAILED"
			failed=$((failed + 1))
		fi
	fi
done
[ "$ran" != 0 ] || tlm_skip pyenv "no CPython 3.8-3.13 under $pyenv: Python stacks not tested"
for v in $missing; do
	tlm_skip_case pyenv "python $v: not installed under $pyenv: not tested" || failed=$((failed + 1))
done
[ "$failed" = 0 ]
