#!/bin/sh
# The job report (docs/job.md) on a job whose ranks differ by construction
# (job_workload.c): 64 ranks as 64 traces; the same figures from a glob, from
# per-rank JSON reports and from merged per-node job reports; a bad input;
# and `tlm run` over a torchrun-like launcher (ranks, forked workers, exec'd
# images). job_check.py asserts the exact per-rank figures and differences.
# The merged timeline (HTML, Chrome JSON) is checked by timeline_check.py.
# usage: test_job.sh TLM LIBTLM WORKLOAD LAUNCHER SIMDIR WORKLOAD_SOURCE JOB_GEN
set -eu
tlm=$1 lib=$2 wl=$3 launcher=$4 sim=$5 src=$6 gen=$7
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null 2>&1 || tlm_skip python3 "python3 not found: the job report's figures were not tested"
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LD_LIBRARY_PATH="$sim" TLM_SUMMARY=0
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }
line() { grep -n "/\* $1 \*/" "$src" | cut -d: -f1; }

# 64 ranks; rank 40 runs first, so its OOM precedes rank 7's on the job clock
mkdir "$dir/t"
run_rank() {
	RANK=$1 LOCAL_RANK=$(($1 % 8)) WORLD_SIZE=64 JOB_LEAK_RANK=5 JOB_OOM_RANK=7,40 \
		LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST:}$lib" TLM_OUTPUT="$dir/t/r%r.trace" "$wl"
}
run_rank 40
for r in $(seq 0 63); do [ "$r" = 40 ] || run_rank "$r"; done
check "[ \$(ls '$dir/t' | wc -l) -eq 64 ]"

"$tlm" report --format json "$dir/t" > "$dir/job.json"
check "python3 '$here/job_check.py' ranks '$dir/job.json' $(line RANK_LINE) $(line LEAK_LINE) $(line BASE_LINE)"
# text: the header, the spread, the first OOM
"$tlm" report "$dir/t" > "$dir/job.txt"
check "grep -q '^tlm job report: 64 processes (64 ranks, 0 workers, 0 children) on 1 host$' '$dir/job.txt'"
check "grep -q '^  peak reserved   min    9.0 MiB (rank 0)  max   72.0 MiB (rank 63)  spread 63.0 MiB$' '$dir/job.txt'"
check "grep -q '^  first: rank 40 (.*) at +[0-9.]* s: 1.0 TiB requested on device 0, 1 OOM$' '$dir/job.txt'"
check "[ \$(awk 'length > 100' '$dir/job.txt' | wc -l) -eq 0 ]"
# a glob tlm expands itself, and one thread: the same report
"$tlm" report --format json --threads 1 "$dir/t/r*.trace" > "$dir/glob.json"
check "cmp -s '$dir/job.json' '$dir/glob.json'"

# the merged timeline: Chrome/Perfetto JSON and the HTML page, exact against
# the job report and against each trace's own Chrome export
tl() { timeline_check=$here/timeline_check.py; check "python3 '$timeline_check' $*"; }
"$tlm" report --format chrome -o "$dir/job.chrome.json" "$dir/t"
"$tlm" report --format html -o "$dir/job.html" "$dir/t"
mkdir "$dir/c"
for r in 0 1 5 7 8 40 49 63; do "$tlm" report --format chrome -o "$dir/c/c$r.json" "$dir/t/r$r.trace"; done
tl ranks "'$dir/job.json' '$dir/job.chrome.json' '$dir/job.html' '$dir/c'"
# a synthetic job whose every track is reduced (to at most 1280 points)
# on 2 hosts whose pids repeat: exact peaks, starts, OOM, ids
mkdir "$dir/g"
"$gen" "$dir/g" 16 4000 > "$dir/g.truth"
"$tlm" report --format json "$dir/g" > "$dir/g.json"
"$tlm" report --format chrome -o "$dir/g.chrome.json" "$dir/g"
"$tlm" report --format html -o "$dir/g.html" "$dir/g"
tl gen "'$dir/g.truth' '$dir/g.json' '$dir/g.chrome.json' '$dir/g.html'"
tl pids "'$dir/g.json' '$dir/g.chrome.json'"
# hosts with hostile names: escaped in the page, intact in its data and the Chrome file
mkdir "$dir/h"
evil='</script><script>alert(1)</script>&"x'"'"
"$gen" "$dir/h" 9 100 "$evil" > /dev/null
"$tlm" report --format html -o "$dir/h.html" "$dir/h"
"$tlm" report --format chrome -o "$dir/h.chrome.json" "$dir/h"
check "python3 '$here/timeline_check.py' hostile '$dir/h.html' '$dir/h.chrome.json' \"\$evil\""

# per-node reduction: node A = ranks 0..31 from their traces, node B = ranks
# 32..63 from per-rank JSON reports; the merge equals the direct report
mkdir "$dir/b"
for r in $(seq 32 63); do "$tlm" report --format json "$dir/t/r$r.trace" > "$dir/b/r$r.json"; done
"$tlm" report --format json $(for r in $(seq 0 31); do echo "$dir/t/r$r.trace"; done) > "$dir/nodeA.json"
"$tlm" report --format json "$dir/b" > "$dir/nodeB.json"
"$tlm" report --format json "$dir/nodeA.json" "$dir/nodeB.json" > "$dir/merged.json"
check "python3 '$here/job_check.py' same '$dir/job.json' '$dir/merged.json'"
check "python3 '$here/job_check.py' ranks '$dir/merged.json' $(line RANK_LINE) $(line LEAK_LINE) $(line BASE_LINE)"
# traces and JSON reports together: the JSON ones are rows without a track
nodeA=$(for r in $(seq 0 31); do echo "$dir/t/r$r.trace"; done)
"$tlm" report --format json $nodeA "$dir/nodeB.json" > "$dir/mixed.json"
"$tlm" report --format chrome -o "$dir/mixed.chrome.json" $nodeA "$dir/nodeB.json"
"$tlm" report --format html -o "$dir/mixed.html" $nodeA "$dir/nodeB.json"
tl mixed "'$dir/mixed.json' '$dir/mixed.chrome.json' '$dir/mixed.html' 32"

# roles from a hand-made tlm-job/1 input (a traced launcher, a subprocess
# and an exec'd image of a rank, a worker, another host)
python3 "$here/job_check.py" make-roles "$dir/roles-in.json"
"$tlm" report --format json "$dir/roles-in.json" > "$dir/roles.json"
check "python3 '$here/job_check.py' roles '$dir/roles.json'"

# bad inputs: one line each, the rest still reported, exit 2
printf 'not a trace' > "$dir/junk"
echo '{"schema":"other/1"}' > "$dir/other.json"
set +e
"$tlm" report "$dir/t/r0.trace" "$dir/junk" "$dir/other.json" > "$dir/bad.txt" 2> "$dir/bad.err"
sb=$?
"$tlm" report "$dir/nothing-*.trace" 2> "$dir/none.err"
sn=$?
"$tlm" report --format collapsed "$dir/t" > /dev/null 2> "$dir/html.err"
sh=$?
set -e
check "[ $sb -eq 2 ]"
check "grep -q '^tlm job report: 1 process (1 rank, 0 workers, 0 children) on 1 host$' '$dir/bad.txt'"
check "grep -q '^  $dir/junk: ' '$dir/bad.txt'"
check "grep -q \"^  $dir/other.json: not a tlm report (JSON schema 'other/1'\" '$dir/bad.txt'"
check "[ \$(wc -l < '$dir/bad.err') -eq 1 ]"
check "[ $sn -eq 2 ] && grep -q 'nothing-\*.trace: no file matches' '$dir/none.err'"
check "[ $sh -eq 64 ]"

# tlm run over a launcher like torchrun: 4 ranks, each forks 2 workers and
# then execs the workload again (an image of the same rank: a child)
case "${TLM_TEST_PRELOAD_FIRST:-}" in *tsan*) ;; *)
mkdir "$dir/l"
# (a sanitized libtlm.so needs its runtime first; tlm run keeps it first)
LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" JOB_EXEC="$wl" "$tlm" run --output "$dir/l/%r-%p.trace" -- "$launcher" 4 "$wl" 2 > /dev/null 2> "$dir/run.err"
check "grep -q '^tlm run: 16 traces from this run:$' '$dir/run.err'"
check "grep -q '^tlm job report: 16 processes (4 ranks, 8 workers, 4 children) on 1 host$' '$dir/run.err'"
check "grep -q '^  peak reserved   min    9.0 MiB (rank 0)  max   12.0 MiB (rank 3)  spread 3.0 MiB$' '$dir/run.err'"
"$tlm" report --format json "$dir/l" > "$dir/l.json"
check "python3 '$here/job_check.py' launcher '$dir/l.json' $(line WORKER_LINE)"
# exec'd images keep their pid: ids that stay unique
"$tlm" report --format chrome -o "$dir/l.chrome.json" "$dir/l"
tl pids "'$dir/l.json' '$dir/l.chrome.json'"
;; esac
exit $fail
