#!/bin/sh
# libtlm opens libunwind privately (src/recording/stack/unwind_dl.c): the preloaded
# program sees none of its symbols, and a copy beside libtlm.so is preferred.
# usage: test_unwind_scope.sh LIBTLM PROG
set -eu
lib=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pre="$lib"
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && pre="$TLM_TEST_PRELOAD_FIRST $lib"
pre0=$pre
TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre" "$prog"
# a libunwind.so.8 beside libtlm.so is the one opened (the wheel's, tests/gpu's):
# copies of both in a directory of their own
u=$(ldconfig -p | awk '$1 == "libunwind.so.8" && /x86-64/ {print $NF; exit}')
mkdir "$dir/lib"
cp "$lib" "$dir/lib/libtlm.so"
cp -L "$u" "$dir/lib/libunwind.so.8"
pre="$dir/lib/libtlm.so"
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && pre="$TLM_TEST_PRELOAD_FIRST $pre"
TLM_OUTPUT="$dir/t2.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre" "$prog" "$dir/lib/libunwind.so.8"
# the trace says whether native stacks were on, and why not (coverage.native_stacks),
# and the report says it, for a CUDA program (tests/shim's workload on the simulated
# driver): libtlm.so as built (on), a library beside it that is no libunwind, and
# stacks off by TLM_STACK_DEPTH=0
tlm=${TLM_TEST_TLM:?} wl=${TLM_TEST_WORKLOAD:?}
TLM_OUTPUT="$dir/w1.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre0" "$wl" driver
cp -L "$(ldconfig -p | awk '$1 == "libz.so.1" && /x86-64/ {print $NF; exit}')" "$dir/lib/libunwind.so.8"
TLM_OUTPUT="$dir/w3.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre" "$wl" driver 2>"$dir/err3"
TLM_OUTPUT="$dir/w4.trace" TLM_SUMMARY=0 TLM_STACK_DEPTH=0 LD_PRELOAD="$pre0" "$wl" driver
for c in "w1.trace on" "w3.trace off: libunwind.so.8 lacks an entry point tlm uses" "w4.trace off: TLM_STACK_DEPTH=0"; do
	t=${c%% *} want=${c#* }
	got=$("$tlm" report -f json "$dir/$t" | python3 -c 'import json, sys; print(json.load(sys.stdin)["coverage"]["native_stacks"])')
	[ "$got" = "$want" ] || { echo "failed: $t: native_stacks '$got', want '$want'"; exit 1; }
done
"$tlm" report "$dir/w3.trace" | grep -qxF "  native stacks off: libunwind.so.8 lacks an entry point tlm uses" ||
	{ echo "failed: the text report does not say why native stacks were off"; exit 1; }
"$tlm" report --summary "$dir/w3.trace" | grep -qxF "note: native stacks off: libunwind.so.8 lacks an entry point tlm uses" ||
	{ echo "failed: the summary does not say why native stacks were off"; exit 1; }
! "$tlm" report --summary "$dir/w4.trace" | grep -q "native stacks" ||
	{ echo "failed: the summary notes stacks turned off on purpose"; exit 1; }
[ "$(grep -c "libunwind.so.8 lacks an entry point tlm uses: native stacks are off" "$dir/err3")" -eq 1 ] ||
	{ echo "failed: not one line said so:"; cat "$dir/err3"; exit 1; }
echo "3 passed, 0 failed"
