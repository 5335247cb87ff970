#!/bin/sh
# SPDX-License-Identifier: MIT
# torch_zoo_perf.sh - libtlm.so's own CPU time per training step on a real
# PyTorch loop of tests/bench/torch_zoo.py, by perf's timer samples (a
# benchmark, not a test). cachegrind (torch_zoo_cg.sh) counts instructions
# and misses but not what a miss costs, nor a load that waits for a store's
# line; timed runs (torch_zoo_ab.sh) move by more than tlm's cost on a
# shared machine. Samples inside libtlm.so move less: the loop runs N1 and
# N2 steps under `perf record -e cpu-clock` (all threads, 20 kHz), and the
# difference of libtlm.so's samples over N2 - N1 steps is its time per step,
# start-up and exit cancelled. Prints that, zstd's, the whole process's, and
# libtlm.so's costliest functions, in microseconds per step. Compare two
# builds in alternation: the machine's speed moves between runs.
#   sh tests/bench/torch_zoo_perf.sh [BUILD_DIR] [N1] [N2] [LOOP]
# defaults: build 100 900 gpt. TLM_ZOO_LIB=PATH measures that libtlm.so.
set -u
b=${1:-build} n1=${2:-100} n2=${3:-900} loop=${4:-gpt}
b=$(cd "$b" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null 2>&1 || { echo "torch_zoo_perf.sh: perf is not installed (linux-perf)"; exit 2; }
me=torch_zoo_perf.sh
. "$src/zoo_env.sh"
tmp=$(mktemp -d /tmp/tlm-zoo-perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for n in "$n1" "$n2"; do
	if ! perf record -q -F 20000 -e cpu-clock -o "$tmp/$n.data" env LD_PRELOAD="$pre $lib" \
		TLM_OUTPUT="$tmp/t.trace" TLM_SUMMARY=0 TLM_FORCE=1 "$py" "$src/torch_zoo.py" "$loop" --steps "$n" \
		>"$tmp/$n.log" 2>&1; then
		echo "torch_zoo_perf.sh: $loop, $n steps: FAILED"
		tail -5 "$tmp/$n.log"
		exit 1
	fi
	rm -f "$tmp"/t.trace*
	perf report -i "$tmp/$n.data" --sort dso,sym --stdio -n 2>/dev/null >"$tmp/$n.txt"
done
python3 - "$tmp" "$n1" "$n2" "$(basename "$lib")" "$loop" <<'PY'
import collections, sys
tmp, n1, n2, lib, loop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]

def samples(n):
    c = collections.Counter()
    for line in open("%s/%d.txt" % (tmp, n)):
        f = line.split()
        if len(f) < 4 or not f[0].endswith("%") or not f[1].isdigit():
            continue
        c[(f[2], " ".join(f[4:]) if f[3] == "[.]" or f[3] == "[k]" else " ".join(f[3:]))] += int(f[1])
    return c

a, b = samples(n1), samples(n2)
us = 1e6 / 20000 / (n2 - n1)  # one sample is 50 us of CPU
d = {k: (b[k] - a[k]) * us for k in set(a) | set(b)}
ours = sum(v for k, v in d.items() if k[0] == lib)
zstd = sum(v for k, v in d.items() if k[0].startswith("libzstd"))
print("%s: %s %.1f us per step, zstd %.1f, the whole process %.1f (%d steps)" % (loop, lib, ours, zstd, sum(d.values()), n2 - n1))
for k, v in sorted(((k, v) for k, v in d.items() if k[0] == lib), key=lambda kv: -kv[1])[:12]:
    print("  %7.1f %s" % (v, k[1]))
PY
