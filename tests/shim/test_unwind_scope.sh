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
echo "2 passed, 0 failed"
