#!/bin/sh
# SPDX-License-Identifier: MIT
# torch_zoo_cg.sh - what recording costs on the real PyTorch loops of
# tests/bench/torch_zoo.py, counted by valgrind's cache simulator instead of
# timed (a benchmark, not a test). Timed figures of one build move between
# runs by more than tlm's whole cost on a shared machine (torch_zoo.sh,
# torch_zoo_ab.sh); counts do not: the same build gives the same libtlm.so
# figures to about 1 %.
#
# Each variant (plain: the simulated device alone; tlm: libtlm.so preloaded,
# its defaults; recorder: _record_memory_history(stacks="python")) runs
# under cachegrind for N1 and N2 steps; a variant's cost per step is its
# count difference divided by N2 - N1, so start-up and exit cancel out, and
# what tlm or the recorder adds is that minus plain's. One figure sums the
# counts as cycles are roughly spent: est = instructions + 10 x first-level
# misses + 100 x last-level misses (an estimate, not a measurement). OpenBLAS's
# worker thread spins while it waits, for as long as the run's wall time
# under valgrind lets it: its counts are left out.
# Prints per loop the added instructions, misses and est per step of tlm and
# of the recorder, their ratio (issue 29 asks for at most 0.2), and
# libtlm.so's costliest functions per step.
#   sh tests/bench/torch_zoo_cg.sh [BUILD_DIR] [N1] [N2] [LOOPS...]
# defaults: build 10 40 gpt. About 3-5 minutes per run on a 2-core machine,
# six runs per loop. TLM_ZOO_LIB=PATH measures that libtlm.so instead of
# BUILD_DIR's (before and after figures of a change). TLM_ZOO_DIR=DIR keeps
# the counts there and reuses those present: delete DIR's *-tlm-* files and
# run again to measure another libtlm.so against the same plain and
# recorder runs (those two do not load libtlm.so). TLM_ZOO_CG_OPTS adds
# valgrind options to every run, as "--LL=1048576,16,64": a last level of
# this machine's per-core L2 (1 MiB), where the default is its shared L3, so
# that the LL misses count the lines an event finds evicted by the
# framework's work since the last one (keep such counts in their own
# TLM_ZOO_DIR).
set -u
b=${1:-build} n1=${2:-10} n2=${3:-40}
[ $# -gt 3 ] && shift 3 || set --
loops=${*:-gpt}
src=$(cd "$(dirname "$0")" && pwd)
b=$(cd "$b" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "torch_zoo_cg.sh: valgrind is not installed"; exit 2; }
me=torch_zoo_cg.sh
. "$src/zoo_env.sh"
if [ -n "${TLM_ZOO_DIR:-}" ]; then
	tmp=$TLM_ZOO_DIR
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d /tmp/tlm-zoo-cg.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
fi
one() { # LOOP VARIANT STEPS: $tmp/LOOP-VARIANT-STEPS.cg
	l=$1 v=$2 n=$3 out=$tmp/$1-$2-$3.cg
	case $v in
	plain | recorder) set -- env LD_PRELOAD="$pre" ;;
	tlm) set -- env LD_PRELOAD="$pre $lib" TLM_OUTPUT="$tmp/t.trace" TLM_SUMMARY=0 TLM_FORCE=1 ;;
	esac
	h=
	[ "$v" = recorder ] && h=--history
	if ! "$@" valgrind --tool=cachegrind --cache-sim=yes ${TLM_ZOO_CG_OPTS:-} --cachegrind-out-file="$out" \
		"$py" "$src/torch_zoo.py" "$l" --steps "$n" $h >"$out.log" 2>&1; then
		echo "  $l $v $n steps: FAILED"
		tail -5 "$out.log"
		rm -f "$out" # not reused by a TLM_ZOO_DIR run
		return 1
	fi
	rm -f "$tmp"/t.trace*
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for l in $loops; do
	for v in plain tlm recorder; do
		for n in "$n1" "$n2"; do
			[ -s "$tmp/$l-$v-$n.cg" ] || one "$l" "$v" "$n" || exit 1
		done
	done
	"$py" - "$tmp" "$l" "$n1" "$n2" <<'PY'
import collections, sys
tmp, loop, n1, n2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ours = ("/src/recording/", "/src/trace/", "/src/common/")

def load(variant, n):
    events, fl, fn = None, None, None
    whole = [0] * 9
    tlm = collections.defaultdict(lambda: [0] * 9)
    for line in open("%s/%s-%s-%d.cg" % (tmp, loop, variant, n)):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fl="):
            fl = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line[:1].isdigit():
            v = (list(map(int, line.split()[1:])) + [0] * 9)[:9]
            if fn == "blas_thread_server":
                continue  # OpenBLAS's waiting worker spins as long as the run lasts
            whole = [a + b for a, b in zip(whole, v)]
            if any(o in fl for o in ours):
                tlm[fn] = [a + b for a, b in zip(tlm[fn], v)]
    return {e: i for i, e in enumerate(events)}, whole, tlm

def per_step(variant):
    E, w1, t1 = load(variant, n1)
    _, w2, t2 = load(variant, n2)
    d = n2 - n1
    fns = {k: [(b - a) / d for a, b in zip(t1.get(k, [0] * 9), t2.get(k, [0] * 9))] for k in set(t1) | set(t2)}
    return E, [(b - a) / d for a, b in zip(w1, w2)], fns

def est(E, v):
    return (v[E["Ir"]] + 10 * (v[E["I1mr"]] + v[E["D1mr"]] + v[E["D1mw"]])
            + 100 * (v[E["ILmr"]] + v[E["DLmr"]] + v[E["DLmw"]]))

E, plain, _ = per_step("plain")
added = {}
for v in ("tlm", "recorder"):
    _, w, fns = per_step(v)
    a = [x - y for x, y in zip(w, plain)]
    added[v] = (a, fns)
print("%s: plain %.2fM est per step (%.2fM instructions)" % (loop, est(E, plain) / 1e6, plain[E["Ir"]] / 1e6))
for v in ("tlm", "recorder"):
    a = added[v][0]
    print("  %-8s adds %6.3fM est, %6.3fM instructions, %6.0f L1 misses, %5.0f LL misses per step" % (
        v, est(E, a) / 1e6, a[E["Ir"]] / 1e6, a[E["D1mr"]] + a[E["D1mw"]], a[E["DLmr"]] + a[E["DLmw"]]))
r = est(E, added["recorder"][0])
print("  ratio tlm / recorder: est %.2f, instructions %.2f" % (
    est(E, added["tlm"][0]) / r if r > 0 else 0,
    added["tlm"][0][E["Ir"]] / added["recorder"][0][E["Ir"]] if added["recorder"][0][E["Ir"]] > 0 else 0))
fns = added["tlm"][1]
own = [sum(f[i] for f in fns.values()) for i in range(9)]
print("  libtlm.so's own code: %.3fM est per step; the rest of tlm's is what its presence adds elsewhere" % (est(E, own) / 1e6))
for k, f in sorted(fns.items(), key=lambda kv: -est(E, kv[1]))[:12]:
    print("    %-36s est %8.0f  instructions %8.0f  L1 misses %6.0f" % (k[:36], est(E, f), f[E["Ir"]], f[E["D1mr"]] + f[E["D1mw"]]))
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
