#!/bin/sh
# SPDX-License-Identifier: MIT
# The report reads its trace once (issue 25, docs/architecture.md): under
# strace, `tlm report` opens the trace exactly one time for every output
# (text, summary, json, html, chrome, collapsed live and peak,
# torch-snapshot), on a trace with an OOM (the text's what-if hint once read
# the trace again, the html's segment map and timeline twice more); and on a
# trace of a PyTorch-like caching allocator with a fragmentation OOM
# (PT_WORKLOAD frag: the what-if hint's replays and the steps' forecast take
# the allocator's requests from the same read), whose text still names the
# setting that avoids it. A JSON report given as the input is still the job
# report.
# usage: test_pipeline.sh TLM WORKLOAD PT_WORKLOAD   (the e2e environment: libtlm, the simulated driver)
set -eu
tlm=$1 wl=$2 ptwl=$3
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v strace >/dev/null 2>&1 ||
	tlm_skip strace "strace not found (tools/deps.sh installs it): the report's one read of the trace was not tested"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pre="${TLM_TEST_PRELOAD_FIRST:-}"
[ -n "$pre" ] && pre="$pre:"
TLM_SIM_MEMORY=256M TLM_SIM_DEVICES=1 LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" LD_PRELOAD="$pre$TLM_TEST_LIBTLM" TLM_OUTPUT="$dir/t.trace" TLM_SUMMARY=0 \
	"$wl" >/dev/null 2>&1 || true
[ -s "$dir/t.trace" ] || { echo "FAIL: the workload wrote no trace"; exit 1; }
strace -f -o "$dir/probe" -e trace=openat,open true 2>/dev/null ||
	tlm_skip privilege "strace cannot trace here (ptrace refused): the report's one read of the trace was not tested"
TLM_SIM_MEMORY=64M TLM_SIM_CONTEXT_MEMORY=0 LD_LIBRARY_PATH="$TLM_TEST_SIMDIR" LD_PRELOAD="$pre$TLM_TEST_LIBTLM" \
	TLM_OUTPUT="$dir/pt.trace" TLM_SUMMARY=0 "$ptwl" frag >/dev/null 2>&1 || true
[ -s "$dir/pt.trace" ] || { echo "FAIL: the allocator workload wrote no trace"; exit 1; }
fail=0
opens() { # TRACE ARGS...: how many times `tlm report ARGS TRACE` opened the trace
	t=$1
	shift
	strace -f -o "$dir/strace" -e trace=openat,open "$tlm" report "$@" -o "$dir/out" "$t" >/dev/null 2>&1 || true
	grep -c "\"$t\"" "$dir/strace" || true
}
for trace in "$dir/t.trace" "$dir/pt.trace"; do
	for args in "" "--summary" "--format json" "--format html" "--format chrome" "--format collapsed" \
		    "--format collapsed --metric peak" "--format torch-snapshot"; do
		# shellcheck disable=SC2086
		n=$(opens "$trace" $args)
		# (the allocator workload frees all: its live folded stacks are empty)
		[ -s "$dir/out" ] || [ "$trace" != "$dir/t.trace" ] || { echo "FAIL: tlm report $args wrote nothing"; fail=1; }
		if [ "$n" != 1 ]; then
			echo "FAIL: tlm report $args ${trace##*/} opened the trace $n times"
			fail=1
		else
			echo "ok: tlm report $args ${trace##*/}: 1 open"
		fi
	done
done
for mode in "" --summary; do
	"$tlm" report $mode "$dir/pt.trace" | grep -q "^ *what-if: .* avoids it (peak reserved .*; tlm whatif)$" ||
		{ echo "FAIL: tlm report $mode: no what-if line under the fragmentation OOM"; fail=1; }
done
"$tlm" report "$dir/t.trace" | grep -q "^OUT OF MEMORY: 1 " ||
	{ echo "FAIL: the trace has no OOM (the what-if path was not exercised)"; fail=1; }
# a JSON report is still recognised as the job report's input
"$tlm" report --format json -o "$dir/r.json" "$dir/t.trace"
"$tlm" report "$dir/r.json" >"$dir/job.txt" 2>&1 || true
grep -q "^tlm job report: 1 process" "$dir/job.txt" || { cat "$dir/job.txt"; echo "FAIL: a JSON input did not give the job report"; fail=1; }
exit $fail
