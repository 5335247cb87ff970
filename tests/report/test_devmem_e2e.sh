#!/bin/sh
# The device's own view end to end (docs/report.md, DEVICE MEMORY): under
# `tlm run --simulate 256M` (one shared simulated device, context cost
# TLM_SIM_CONTEXT_MEMORY = 8 MiB, NVML's stand-in), a holder process takes
# 64 MiB and waits; a victim allocates 32 MiB at a time until one fails. By
# construction: the victim has 256 - 72 (holder: 64 + its context) - 8 (its
# own context) = 176 MiB, so 5 allocations succeed (160 MiB tracked) and the
# 6th fails with 16 MiB free; its diagnosis is 160 MiB tracked, 8 MiB context
# and untracked, 72 MiB held by the holder's pid. Checked in the victim's
# text, summary and JSON report, and in the job report of the run; then the
# victim alone without NVML (TLM_NVML=off): one "untracked or other" figure.
# usage: test_devmem_e2e.sh TLM WORKLOAD
set -eu
tlm=$1 wl=$2
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
command -v python3 >/dev/null 2>&1 || tlm_skip python3 "python3 not found: the device memory view was not tested end to end"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if ! eval "$1"; then echo "failed: $1"; fail=1; fi; }

mkdir "$dir/t"
cat > "$dir/job.sh" <<EOS
"$wl" hold 64 "$dir/ready" "$dir/done" &
h=\$!
i=0
while [ ! -e "$dir/ready" ] && [ \$i -lt 3000 ]; do sleep 0.01; i=\$((i + 1)); done
"$wl" fill 32 "$dir/victim" > "$dir/fill.out"
touch "$dir/done"
wait \$h
EOS
TLM_SIM_CONTEXT_MEMORY=8M TLM_SUMMARY=0 LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
	"$tlm" run --simulate 256M --output "$dir/t/%p.trace" -- sh "$dir/job.sh" > "$dir/run.out" 2> "$dir/run.err" ||
	{ echo "tlm run failed:"; cat "$dir/run.err"; exit 1; }
h=$(cat "$dir/ready") v=$(cat "$dir/victim")
check "grep -qx 'allocs 5' '$dir/fill.out'"
vt="$dir/t/$v.trace"
check "[ -s '$vt' ] && [ -s '$dir/t/$h.trace' ]"

diag="160.0 MiB tracked, 8.0 MiB context and untracked, 72.0 MiB held by pid $h"
"$tlm" report "$vt" > "$dir/v.txt"
check "grep -qxF '      device: $diag' '$dir/v.txt'"
check "grep -qxF '        (of 256.0 MiB; 16.0 MiB free)' '$dir/v.txt'"
check "grep -qxE '      NVML( [0-9.]+ ms later)?: this process 168.0 MiB; other processes: pid $h 72.0 MiB' '$dir/v.txt'"
"$tlm" report --summary "$vt" > "$dir/v.sum"
check "grep -qxF '    $diag (of 256.0 MiB)' '$dir/v.sum'"
"$tlm" report --format json "$vt" > "$dir/v.json"
check "python3 - '$dir/v.json' $h $v <<'EOP'
import json, sys
r = json.load(open(sys.argv[1])); h, v = int(sys.argv[2]), int(sys.argv[3])
M = 1 << 20
o = r['ooms'][0]['device_memory']
want = {'total_bytes': 256 * M, 'free_bytes': 16 * M, 'used_bytes': 240 * M, 'tracked_bytes': 160 * M,
        'untracked_bytes': 8 * M, 'other_processes_bytes': 72 * M, 'unattributed_bytes': 8 * M,
        'nvml': 'ok', 'this_process_listed': True, 'this_process_nvml_bytes': 168 * M}
bad = {k: (o.get(k), w) for k, w in want.items() if o.get(k) != w}
procs = sorted((p['pid'], p['used_bytes'], p['this_process']) for p in o['nvml_processes'])
if procs != sorted([(h, 72 * M, False), (v, 168 * M, True)]):
    bad['nvml_processes'] = procs
st = r['device_memory']['devices'][0]['start']
if (st['tracked_bytes'], st['untracked_bytes']) != (32 * M, 8 * M):
    bad['start'] = st
if not r['device_memory']['devices'][0]['peak_is_reserved_peak'] or \
   r['device_memory']['devices'][0]['peak']['tracked_bytes'] != 160 * M:
    bad['peak'] = r['device_memory']['devices'][0]
if bad:
    print(bad)
    sys.exit(1)
EOP"

# the job report of the run: each process's untracked share at its peak and the OOM's diagnosis
"$tlm" report "$dir/t" > "$dir/job.txt"
check "grep -qE '^  pid $h@.* +0 +256.0 MiB +64.0 MiB +8.0 MiB +0 B$' '$dir/job.txt'"
check "grep -qE '^  pid $v@.* +0 +256.0 MiB +160.0 MiB +8.0 MiB +72.0 MiB$' '$dir/job.txt'"
check "grep -qxF '      device: $diag' '$dir/job.txt'"
"$tlm" report --format json "$dir/t" > "$dir/job.json"
check "python3 - '$dir/job.json' $h $v <<'EOP'
import json, sys
j = json.load(open(sys.argv[1])); h, v = int(sys.argv[2]), int(sys.argv[3])
M = 1 << 20
ps = {p.get('pid'): p for p in j['processes']}
a, b = ps[h]['device_memory_at_peak'], ps[v]['device_memory_at_peak']
ok = (a['tracked_bytes'], a['untracked_bytes'], a['other_processes_bytes']) == (64 * M, 8 * M, 0) and \
     (b['tracked_bytes'], b['untracked_bytes'], b['other_processes_bytes'], b['other_processes']) == \
     (160 * M, 8 * M, 72 * M, 1) and \
     ps[v]['first_oom']['diagnosis'] == '160.0 MiB tracked, 8.0 MiB context and untracked, 72.0 MiB held by pid %d (of 256.0 MiB; 16.0 MiB free)' % h
if not ok:
    print(a, b, ps[v]['first_oom'])
    sys.exit(1)
EOP"
# without NVML (TLM_NVML=off) the victim alone: 256 - 8 (its context) = 248 MiB, so 7 allocations
# succeed, the 8th fails with 24 MiB free, and the rest of used memory is one figure
mkdir "$dir/n"
TLM_NVML=off TLM_SIM_CONTEXT_MEMORY=8M TLM_SUMMARY=0 LD_PRELOAD="${TLM_TEST_PRELOAD_FIRST:-}" \
	"$tlm" run --simulate 256M --output "$dir/n/%p.trace" -- "$wl" fill 32 "$dir/victim2" > "$dir/fill2.out" 2>> "$dir/run.err"
check "grep -qx 'allocs 7' '$dir/fill2.out'"
"$tlm" report "$dir/n/$(cat "$dir/victim2").trace" > "$dir/n.txt"
check "grep -qxF '      device: 224.0 MiB tracked, 8.0 MiB untracked or other processes (of 256.0 MiB; 24.0 MiB free;' '$dir/n.txt'"
check "grep -qxF '        NVML not loaded: no per-process figures)' '$dir/n.txt'"
"$tlm" diff "$vt" "$dir/n/$(cat "$dir/victim2").trace" > /dev/null 2>> "$dir/run.err" || check false

if [ "$fail" != 0 ]; then
	for f in run.err v.txt job.txt n.txt; do echo "--- $f"; cat "$dir/$f"; done
fi
exit "$fail"
