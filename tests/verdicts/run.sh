#!/bin/sh
# SPDX-License-Identifier: MIT
# One group of tests/verdicts: run.sh GROUP TLM PHASES SRCDIR. Runs the
# group's programs under `tlm run --simulate`, reports each (JSON, text,
# summary, HTML where checked), then check.py compares with the truth files
# the programs wrote (torch's own figures, real outcomes). The real-PyTorch
# groups need the venv of tools/torch-venv.sh (torch, torchvision,
# transformers); without it they are skipped (77), and fail under CI=true.
set -u
group=$1 tlm=$2 phases=$3 src=$4
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
if [ "$group" != native ]; then
	if ! tlm_has_modules "$py" torch torchvision transformers; then
		tlm_skip torch-venv "no PyTorch venv with torchvision and transformers at $venv (tools/torch-venv.sh): verdicts '$group' not run"
	fi
else
	py=python3
fi
tmp=$(mktemp -d)
[ -n "${TLM_TEST_KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
# run NAME SIZE -- CMD...: the trace and its reports; the exit status in NAME.rc
run() {
	name=$1 size=$2
	shift 3
	env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} TLM_SUMMARY=0 \
		"$tlm" run --no-summary --simulate "$size" -o "$tmp/$name.trace" -- "$@" >"$tmp/$name.log" 2>&1
	echo $? >"$tmp/$name.rc"
	"$tlm" report -f json -o "$tmp/$name.json" "$tmp/$name.trace" &&
		"$tlm" report -o "$tmp/$name.txt" "$tmp/$name.trace" &&
		"$tlm" report --summary -o "$tmp/$name.sum" "$tmp/$name.trace" || { cat "$tmp/$name.log"; exit 1; }
}
torch() { # NAME SIZE SHAPE ARGS...
	name=$1 size=$2
	shift 2
	run "$name" "$size" -- "$py" "$src/prog.py" "$1" "$tmp/$name.truth" $(shift; echo "$@")
}
case $group in
native)
	run train_eval 1G -- "$phases" train_eval 20 50 65536
	run base8k 1G -- "$phases" train_eval 20 50 8192
	run train_eval0 1G -- "$phases" train_eval 20 50 0
	run train_free 1G -- "$phases" train_free_eval 20 50 65536
	run train_free_fast 1G -- "$phases" train_free_fastlast 20 50 65536
	run epochs 1G -- "$phases" epochs 3 6 9 32768
	run accum 1G -- "$phases" accum 8 4
	run steps3 1G -- "$phases" steps 3
	"$tlm" diff --fail-on-growth 0 "$tmp/base8k.trace" "$tmp/train_eval.trace" >"$tmp/gate.out" 2>&1
	echo $? >"$tmp/gate.rc"
	"$tlm" diff --fail-on-growth 0 "$tmp/base8k.trace" "$tmp/train_free.trace" >"$tmp/gate_free.out" 2>&1
	echo $? >"$tmp/gate_free.rc"
	;;
phases)
	torch train_eval 4G train_eval 12 40 0
	torch epochs 4G epochs 3 5 8
	torch accum 4G accum 6 4
	torch steps3 4G steps 3
	torch steps4 4G steps 4
	;;
modules)
	torch resnet0 4G resnet 4 0
	torch resnet1 4G resnet 4 1
	torch resnet2 4G resnet 4 2
	torch gpt20 4G gpt2 6 0
	torch gpt21 4G gpt2 6 1
	torch tr0 4G transformer 6 0
	torch tr1 4G transformer 6 1
	torch tr2 4G transformer 6 2
	"$tlm" report -f html -o "$tmp/resnet0.html" "$tmp/resnet0.trace" || exit 1
	;;
leaks)
	torch leak_eval 4G train_eval 12 40 1048576
	torch leak_base 4G train_eval 12 40 0
	"$tlm" diff --fail-on-growth 0 "$tmp/leak_base.trace" "$tmp/leak_eval.trace" >"$tmp/gate.out" 2>&1
	echo $? >"$tmp/gate.rc"
	torch leak_dies 1G leak_dies 33554432 0
	torch leak_ok 1G leak_dies 33554432 6
	;;
oom)
	torch oom_recovered 4G oom_recovered
	torch oom_raised 4G oom_raised
	torch oom_fatal 4G oom_fatal
	;;
ckpt)
	torch ck0 4G ckpt 8 0
	torch ck1 4G ckpt 8 1
	torch ck2 4G ckpt 8 2
	torch ck3 4G ckpt 8 3
	;;
*)
	echo "run.sh: unknown group $group"
	exit 2
	;;
esac
"$py" "$src/check.py" "$group" "$tmp"
