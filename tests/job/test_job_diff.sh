#!/bin/sh
# `tlm diff` of two jobs (docs/diff.md, "Jobs") that differ by construction
# (job_workload.c). BASE: 64 ranks, ranks 5 and 9 leak 3 MiB, ranks 40 (first)
# and 7 OOM, rank 3 forks 1 worker, plus a process without RANK (main).
# NEW: 64 ranks, rank 9 leaks 5 MiB (+2 MiB, so its peak is +2 MiB too),
# rank 63 holds 4 MiB more at its peak, ranks 20 (first) and 40 OOM, rank 3
# forks 2 workers; new64/ holds a 65th rank. jobdiff_check.py asserts the
# exact matching, deltas, spreads, sites and gates; the same figures from a
# per-node merged tlm-job/1 NEW; bad inputs; a single trace against a job.
# usage: test_job_diff.sh TLM LIBTLM WORKLOAD SIMDIR WORKLOAD_SOURCE
set -eu
tlm=$1 lib=$2 wl=$3 sim=$4 src=$5
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null 2>&1 || tlm_skip python3 "python3 not found: the job diff was not tested"
here=$(dirname "$0")
chk="python3 $here/jobdiff_check.py"
dir=$(mktemp -d)
trap '[ -n "${TLM_KEEP:-}" ] || rm -rf "$dir"' EXIT
export LD_LIBRARY_PATH="$sim" TLM_SUMMARY=0
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
line() { grep -n "/\* $1 \*/" "$src" | cut -d: -f1; }
lines="$(line RANK_LINE) $(line LEAK_LINE) $(line EXTRA_LINE)"
pre="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST:}$lib"

# run_rank OUTDIR RANK [env...]: one rank of job_workload (rank 3 forks $W workers)
run_rank() {
	out=$1 r=$2
	shift 2
	env RANK="$r" LOCAL_RANK=$((r % 8)) WORLD_SIZE=64 "$@" LD_PRELOAD="$pre" \
		TLM_OUTPUT="$dir/$out/r%r-%p.trace" "$wl" $([ "$r" = 3 ] && echo "$W")
}
mkdir "$dir/base" "$dir/new" "$dir/new64"
W=1
benv="JOB_LEAK_RANK=5,9 JOB_OOM_RANK=7,40"
run_rank base 40 $benv
for r in $(seq 0 63); do [ "$r" = 40 ] || run_rank base "$r" $benv; done
LD_PRELOAD="$pre" TLM_OUTPUT="$dir/base/main-%p.trace" "$wl"
W=2
nenv="JOB_LEAK_RANK=5,9:5 JOB_EXTRA_RANK=63:4 JOB_OOM_RANK=20,40"
run_rank new 20 $nenv
for r in $(seq 0 63); do [ "$r" = 20 ] || run_rank new "$r" $nenv; done
run_rank new64 64
check "[ \$(ls '$dir/base' | wc -l) -eq 66 ] && [ \$(ls '$dir/new' | wc -l) -eq 66 ]"

# two directories, no gate: exact figures (JSON), and the text
"$tlm" diff --format json "$dir/base" "$dir/new" > "$dir/d.json"
check "$chk jobs '$dir/d.json' none $lines"

# gates that fail, with several NEW inputs (a directory and a glob) and a
# BASE glob that tlm expands: the leak gate names rank 9 (and the job), the
# peak gate rank 63, the 65th rank (only in NEW: its whole peak) and the job
set +e
"$tlm" diff --format json -o "$dir/g.json" --fail-on-growth 1M --fail-on-peak-growth 3M \
	--base "$dir/base/*.trace" --new "$dir/new" --new "$dir/new64/r*.trace" 2> "$dir/g.err"
sg=$?
set -e
check "[ $sg -eq 1 ]"
check "$chk jobs '$dir/g.json' sites $lines new64"
check "$chk gates '$dir/g.json' 'rank 9' 'rank 63,rank 64' new64"
check "grep -q '^tlm diff: rank 9: leaked bytes grew by 2097152 B (+2.0 MiB), more than --fail-on-growth 1048576$' '$dir/g.err'"
check "grep -q '^tlm diff: rank 63: peak allocated of device 0 (device) grew by 4194304 B (+4.0 MiB), more than --fail-on-peak-growth 3145728$' '$dir/g.err'"
check "grep -q '^        from main (job_workload.c:$(line EXTRA_LINE)) ' '$dir/g.err'"
check "grep -q '^tlm diff: job: leaked bytes grew by +2.0 MiB, ' '$dir/g.err'"
check "grep -q '^tlm diff: job: the highest peak allocated across ranks grew by +4.0 MiB ' '$dir/g.err'"

# NEW as per-node reductions merged into one tlm-job/1 file (node A: traces
# of ranks 0..31 and the workers, node B: per-rank tlm-report/1 files):
# the same figures; its gates read the summaries, with the same verdicts
mkdir "$dir/nb"
for f in "$dir"/new/r*.trace; do
	r=$(basename "$f" | sed 's/^r\([0-9]*\)-.*/\1/')
	if [ "$r" -ge 32 ]; then "$tlm" report --format json "$f" > "$dir/nb/$(basename "$f").json"; fi
done
"$tlm" report --format json $(ls "$dir"/new/r*.trace | awk -F/ '{ split($NF, a, "-"); if (substr(a[1], 2) + 0 < 32) print }') \
	> "$dir/nodeA.json"
"$tlm" report --format json "$dir/nb" > "$dir/nodeB.json"
"$tlm" report --format json "$dir/nodeA.json" "$dir/nodeB.json" > "$dir/merged.json"
"$tlm" diff --format json "$dir/base" "$dir/merged.json" > "$dir/m.json"
check "$chk same '$dir/d.json' '$dir/m.json'"
# the text (from the merged form: the same figures, read faster), gated
set +e
"$tlm" diff --fail-on-growth 1M --fail-on-peak-growth 3M "$dir/base" "$dir/merged.json" > "$dir/d.txt" 2> /dev/null
st=$?
set -e
check "[ $st -eq 1 ] && grep -q '^GATE --fail-on-growth 1048576 B: FAILED$' '$dir/d.txt'"
check "grep -q '^  rank 9            leaked +2.0 MiB, per step 0 B, live at end at leak sites 0 B (summary)$' '$dir/d.txt'"
check "grep -q '^  rank 63           device 0 (device): 72.0 MiB -> 76.0 MiB (+4.0 MiB) (summary)$' '$dir/d.txt'"
check "grep -q '^  job               highest peak allocated 72.0 MiB -> 76.0 MiB (+4.0 MiB): FAILED$' '$dir/d.txt'"
check "grep -q '^processes: 65 matched (61 unchanged), 1 only in BASE, 1 only in NEW$' '$dir/d.txt'"
check "grep -q '^  rank 9              23.0 MiB    +2.0 MiB   23.0 MiB    +2.0 MiB    5.0 MiB    +2.0 MiB    =      0$' '$dir/d.txt'"
check "grep -q '^  rank 20             29.0 MiB           =   29.0 MiB           =        0 B           =    =   0->1$' '$dir/d.txt'"
check "grep -q '^  rank 3 worker #2  ' '$dir/d.txt' && grep -q '^  main #1  ' '$dir/d.txt'"
check "grep -q '^  NEW: 2 processes; first: rank 20 at ' '$dir/d.txt'"
check "grep -q '^  OOMs new in NEW: rank 20$' '$dir/d.txt' && grep -q '^  OOMs gone in NEW: rank 7$' '$dir/d.txt'"
check "[ \$(awk 'length > 100' '$dir/d.txt' | wc -l) -eq 0 ]"

set +e
"$tlm" diff --format json -o "$dir/mg.json" --fail-on-growth 1M --fail-on-peak-growth 3M "$dir/base" "$dir/merged.json" 2> "$dir/mg.err"
smg=$?
# the same limits plus one byte pass on every process and on the job
"$tlm" diff --format json -o "$dir/p.json" --fail-on-growth 2M --fail-on-peak-growth 4M "$dir/base" "$dir/merged.json" \
	2> "$dir/p.err"
sp=$?
# per-rank tlm-report/1 files (ranks 40..49) as a job: read again for the gates (sites)
"$tlm" diff --format json --fail-on-growth 1M --threads 1 --base "$dir/base/r4[0-9]-*.trace" --new "$dir/nb/r4[0-9]-*.json" \
	> "$dir/nb.json"
snb=$?
set -e
check "[ $sp -eq 0 ] && [ ! -s '$dir/p.err' ] && $chk gates '$dir/p.json' '' ''"
check "[ $smg -eq 1 ] && $chk jobs '$dir/mg.json' summary $lines"
check "$chk gates '$dir/mg.json' 'rank 9' 'rank 63'"
check "grep -q '^tlm diff: rank 9: leaked bytes grew by 2097152 B (+2.0 MiB), more than --fail-on-growth 1048576 (from a job summary: no sites)$' '$dir/mg.err'"
check "[ $snb -eq 0 ] && python3 -c \"import json,sys; d=json.load(open('$dir/nb.json')); p=[x for x in d['processes'] if x['name']=='rank 40'][0]; sys.exit(p['gate']['compared']!='sites' or p['new']['source'].endswith('.json'))\""

# hand-made jobs: workers and children by rank and order, mains by order
$chk make-roles "$dir/rb.json" "$dir/rn.json"
"$tlm" diff --format json "$dir/rb.json" "$dir/rn.json" > "$dir/roles.json"
check "$chk roles '$dir/roles.json'"

# a single trace against a job: a job of one process (rank 9 matched)
"$tlm" diff --format json "$(ls "$dir"/base/r9-*.trace)" "$dir/merged.json" > "$dir/one.json"
check "python3 -c \"import json,sys; d=json.load(open('$dir/one.json')); sys.exit((d['matched'], d['only_in_new'], [x['name'] for x in d['processes'] if x['status'] == 'both']) != (1, 65, ['rank 9']))\""
# two traces are still the single-trace diff
"$tlm" diff --format json "$(ls "$dir"/base/r0-*.trace)" "$(ls "$dir"/new/r0-*.trace)" > "$dir/two.json"
check "grep -q '^{\"schema\":\"tlm-diff/1\"' '$dir/two.json'"

# bad inputs: one line, exit 2 (64 for bad usage)
printf 'not a trace' > "$dir/junk"
cp "$dir/two.json" "$dir/other.json"
cp "$dir/d.json" "$dir/base-copy.json"
set +e
"$tlm" diff "$dir/merged.json" "$dir/junk" > /dev/null 2> "$dir/e1"; s1=$?
"$tlm" diff "$dir/other.json" "$dir/new" > /dev/null 2> "$dir/e2"; s2=$?
"$tlm" diff "$dir/nothing-*.trace" "$dir/new" > /dev/null 2> "$dir/e3"; s3=$?
"$tlm" diff --base "$dir/base/r5-*.trace" --new "$dir/new/r5-*.trace" --new "$dir/new/r5-*.trace" > /dev/null 2> "$dir/e4"; s4=$?
"$tlm" diff --base "$dir/base" "$dir/new" > /dev/null 2> "$dir/e5"; s5=$?
"$tlm" diff --base "$dir/base" > /dev/null 2> "$dir/e6"; s6=$?
"$tlm" diff "$dir/base-copy.json" "$dir/new" > /dev/null 2> "$dir/e7"; s7=$?
echo '{"schema":"tlm-job/1","processes":[]}' > "$dir/empty.json"
"$tlm" diff "$dir/empty.json" "$dir/new" > /dev/null 2> "$dir/e8"; s8=$?
set -e
check "[ $s1 -eq 2 ] && [ \$(wc -l < '$dir/e1') -eq 1 ] && grep -q '^tlm diff: NEW: $dir/junk: ' '$dir/e1'"
check "[ $s2 -eq 2 ] && [ \$(wc -l < '$dir/e2') -eq 1 ] && grep -q \"^tlm diff: BASE: $dir/other.json: not a tlm report (JSON schema 'tlm-diff/1'\" '$dir/e2'"
check "[ $s3 -eq 2 ] && [ \$(wc -l < '$dir/e3') -eq 1 ] && grep -q '^tlm diff: BASE: .*nothing-\*.trace: no file matches$' '$dir/e3'"
check "[ $s4 -eq 2 ] && [ \$(wc -l < '$dir/e4') -eq 1 ] && grep -q '^tlm diff: NEW: pid [0-9]*@.* is given twice, in ' '$dir/e4'"
check "[ $s5 -eq 64 ] && grep -q 'either as two arguments or with --base and --new' '$dir/e5'"
check "[ $s6 -eq 64 ] && grep -q '^tlm diff: missing NEW$' '$dir/e6'"
check "[ $s7 -eq 2 ] && [ \$(wc -l < '$dir/e7') -eq 1 ] && grep -q \"^tlm diff: BASE: $dir/base-copy.json: not a tlm report (JSON schema 'tlm-job-diff/1'\" '$dir/e7'"
check "[ $s8 -eq 2 ] && [ \$(wc -l < '$dir/e8') -eq 1 ] && grep -q '^tlm diff: BASE: $dir/empty.json: a tlm-job/1 file without processes$' '$dir/e8'"
exit $fail
