#!/bin/sh
# SPDX-License-Identifier: MIT
# The command's option table (src/command/cmd_args.c) at its edges, for
# tlm report, diff and whatif: a value missing at the end, an unknown
# option, --opt=VALUE where the option takes one (and not where it does
# not), "--", too many inputs, -h. Each case: the exit code, and a line of
# stderr (or stdout) that must be there. Inputs that do not exist show that
# the options were taken (exit 2: the input cannot be read), not refused (64).
# usage: test_args.sh TLM
set -u
tlm=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
no=$dir/none.trace
fails=0
# expect RC TEXT ARGS...: the exit code, and TEXT in what it printed
expect() {
	rc=$1 text=$2
	shift 2
	"$tlm" "$@" >"$dir/out" 2>&1 </dev/null
	got=$?
	if [ "$got" != "$rc" ] || ! grep -qF -- "$text" "$dir/out"; then
		echo "FAIL: tlm $*: exit $got (want $rc), wanted '$text' in:"
		head -5 "$dir/out"
		fails=$((fails + 1))
	fi
}
# report
expect 64 "tlm report: -f needs a value (text, json, html, chrome, collapsed or torch-snapshot)" report -f
expect 64 "tlm report: --metric needs a value (live or peak)" report --metric
expect 64 "tlm report: --output needs a file name" report --output
expect 64 "tlm report: --threads needs a number of threads, 1 to 256" report --threads
expect 64 "tlm report: --threads needs a number of threads, 1 to 256" report --threads 0 "$no"
expect 64 "tlm report: unknown option '--bogus'" report --bogus "$no"
expect 64 "tlm report: unknown option '-f=json'" report -f=json "$no"
expect 64 "tlm report: unknown option '--threads=2'" report --threads=2 "$no"
expect 64 "tlm report: unknown option '--summary=1'" report --summary=1 "$no"
expect 64 "tlm report: unknown format 'xml'" report --format=xml "$no"
expect 64 "tlm report: unknown format ''" report --format= "$no"
expect 64 "tlm report: missing TRACE" report --format=json
expect 2 "none.trace" report --format=json --output="$dir/o.json" "$no"
expect 2 "none.trace" report -f collapsed --metric=peak "$no"
expect 2 "-x" report -- -x
expect 0 "usage: tlm report" report -h
# whatif: every option's value may be missing at the end
for o in --device --setting --recorded --memory --format -f --output -o; do
	expect 64 "tlm whatif: $o needs a value" whatif "$o"
done
expect 64 "tlm whatif: --device: bad device number ''" whatif --device= "$no"
expect 64 "tlm whatif: --format: expected text or json, got 'xml'" whatif --format=xml "$no"
expect 64 "tlm whatif: unknown option '--'" whatif -- "$no"
expect 64 "tlm whatif: unknown option '--devicex'" whatif --devicex 1 "$no"
expect 64 "tlm whatif: one trace only (got '$no' too)" whatif "$no" "$no"
expect 64 "tlm whatif: missing TRACE" whatif --device=0
expect 2 "none.trace" whatif --device=0 --memory=1G --format=json --output="$dir/w.json" "$no"
expect 0 "usage: tlm whatif" whatif --help
# diff
expect 64 "tlm diff: --old needs an input" diff --old
expect 64 "tlm diff: --base needs an input" diff --base= "$no"
expect 64 "tlm diff: --new needs an input" diff --new
expect 64 "tlm diff: --fail-on-growth needs a number of bytes" diff --fail-on-growth
expect 64 "tlm diff: --fail-on-peak-growth: bad size '1Q' (bytes, or with K, M, G)" diff --fail-on-peak-growth=1Q "$no" "$no"
expect 64 "tlm diff: -f needs a value (text or json)" diff -f
expect 64 "tlm diff: too many arguments ('c')" diff a b c
expect 64 "tlm diff: unknown option '--fail-on-growthx'" diff --fail-on-growthx 1 "$no" "$no"
expect 64 "tlm diff: give BASE and NEW either as two arguments or with --base and --new" diff --base="$no" "$no" "$no"
expect 64 "tlm diff: missing NEW" diff --old="$no"
expect 2 "none.trace" diff --format=json --fail-on-growth=1K --output="$dir/d.json" "$no" "$no"
expect 2 "none.trace" diff --base "$no" --new="$no"
expect 2 "-x" diff -- -x "$no"
expect 0 "usage: tlm diff" diff -h
[ "$fails" = 0 ] || exit 1
echo "ok: the option edges of tlm report, whatif and diff"
