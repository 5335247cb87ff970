#!/bin/sh
# libtlm opens libunwind privately (src/recording/stack/unwind_dl.c): the preloaded
# program sees none of its symbols. usage: test_unwind_scope.sh LIBTLM PROG
set -eu
lib=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pre="$lib"
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && pre="$TLM_TEST_PRELOAD_FIRST $lib"
TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 LD_PRELOAD="$pre" "$prog" && echo "1 passed, 0 failed"
