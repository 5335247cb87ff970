#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the seed corpus of the trace-reader fuzzers (tests/fuzz/corpus/
# reader/) from real recordings: the end-to-end workload of tests/shim runs a
# few scenarios under libtlm.so on the simulated driver, compressed and not.
#   sh tests/fuzz/gen_corpus.sh BUILD_DIR
# BUILD_DIR is a normal (unsanitized) build. The number of chunks a run
# writes varies: check the fuzzers' executions per second after a
# regeneration (a 47 KB zstd threads-many seed once cut them to a third). Seeds are named after what made
# them; each is kept under 64 KiB (larger ones are cut at a chunk boundary
# so the fuzzer still sees a clean start, and also saved whole-but-cut in the
# middle of a chunk as a truncation seed). No ".trace" suffix: .gitignore
# ignores those.
set -eu
b=${1:?usage: gen_corpus.sh BUILD_DIR}
b=$(cd "$b" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus/reader
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
# the Python-stack seeds and hand-* (hand-devmem-z0/z1: DEVMEM and DEVPROCS
# records of every reason and status; hand-bomb-chunk: chunks declaring 4 MiB
# from 401 bytes, refused by their ratio; hand-clock-z0: a CLOCK record, the
# wall clock set an hour ahead under tests/export/clockstep.c's preload) are
# made by hand (docs/reliability.md): kept
find "$out" -type f ! -name 'python-stacks-*' ! -name 'hand-*' -delete
run() { # NAME COMPRESS ARGS...  ($EXTRA: one more VAR=value for the run)
	name=$1 z=$2
	shift 2
	d=$tmp/$name-z$z
	mkdir -p "$d"
	env LD_PRELOAD="$b/src/recording/libtlm.so" LD_LIBRARY_PATH="$b/src/sim" \
		TLM_OUTPUT="$d/t-%p.trace" TLM_SUMMARY=0 TLM_COMPRESS="$z" TLM_STACK_DEPTH=8 \
		TLM_DRAIN_MS="${DRAIN:-20}" ${EXTRA:+"$EXTRA"} "$b/tests/shim/workload" "$@" 2>/dev/null || true
	i=0
	for f in "$d"/t-*; do
		[ -f "$f" ] || continue
		size=$(wc -c <"$f")
		if [ "$size" -le 65536 ]; then
			cp "$f" "$out/$name-z$z-$i"
		else
			# keep the first 64 KiB: a cut trace (truncated) is a seed too
			head -c 65536 "$f" >"$out/$name-z$z-$i-cut"
		fi
		i=$((i + 1))
	done
}
for z in 0 1; do
	run runtime "$z" runtime
	run driver "$z" driver
	run threads "$z" threads 2 200
	run kill9 "$z" kill9 50 100
	run segv "$z" segv 5
	run fork "$z" fork
	run dlsym "$z" dlsym
	run procaddr "$z" procaddr
	# many small chunks (a drain every 2 ms), cut at 64 KiB
	DRAIN=2 run threads-many "$z" threads 4 3000
	# CUPTI's double held by another tool: PROP records with the holder's name
	EXTRA=TLM_CUPTI_LIBRARY=$b/src/sim/cupti/libcupti.so.13 TLM_SIM_CUPTI_HOLDER=nsys run cupti-held "$z" cupti
	# and attached, seeing calls that bypassed the hooks: CUPTI-only events
	EXTRA=TLM_CUPTI_LIBRARY=$b/src/sim/cupti/libcupti.so.13 TLM_TEST_CUPTI_SEES=1 run cupti-bypass "$z" cupti
	# the edges of a process: PROP end (_exit, exec, a failed exec), SIGNAL
	# for SIGTERM, a raw-fork child's own trace
	run fast-exit "$z" fast-exit _exit 5
	run exec "$z" exec
	run exec-fail "$z" exec-fail
	run term "$z" term 15 3
	run rawfork "$z" rawfork
done
# a few hand-made edge cases
printf 'TLMTRACE' >"$out/magic-only"
: >"$out/empty"
ls -l "$out" | awk '{s += $5} END {print "tlm: corpus", NR - 1, "files,", s, "bytes"}'
