#!/bin/sh
# SPDX-License-Identifier: MIT
# Real torchrun under `tlm run` on the simulated device (docs/job.md, "Real
# torchrun"): 2 ranks of ranks.py (gloo), each with 2 fork DataLoader
# workers, rank 1 with a subprocess; then check.py asserts the job report's
# exact figures, the JSON (tlm-job/1) and the text tlm run printed.
#   run.sh CASE TLM SRCDIR
# CASE ok:   `torchrun --standalone --nproc-per-node 2 ...`, exit 0
# CASE fail: `python -m torch.distributed.run ...` with TLM_TEST_FAIL=1: rank 1
#            exits 3, torchrun ends rank 0 with SIGTERM and exits 1
# CASE term: torchrun, the ranks sleep at the end; SIGTERM sent to tlm run
#            reaches torchrun, which ends both ranks with it and exits 1
# Skipped (exit 77, one line) when the venv of tools/torch-venv.sh is absent.
set -u
# (case term: SIGTERM to tlm run, which torchrun passes on to its ranks)
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/signals.sh"
case=$1 tlm=$2 src=$3
. "${TLM_TEST_COMMON:-$(dirname "$0")/../../common}/skip.sh"
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
py=$venv/bin/python
if ! tlm_has_modules "$py" torch; then
	tlm_skip torch-venv "no PyTorch venv at $venv (tools/torch-venv.sh): real-torchrun test '$case' not run"
fi
case $case in
ok) launch="$venv/bin/torchrun" fail= ;;
fail) launch="$py -m torch.distributed.run" fail=1 ;;
# term: torchrun's agent, ended by SIGTERM, leaves its rendezvous open
# (torch/distributed/launcher/api.py: no rdzv_handler.shutdown() on a
# SignalException), so its keep-alive thread, a daemon thread that calls
# the TCPStore every keep_alive_interval (5 s) with the GIL released, runs
# on while the interpreter exits. One caught inside such a call aborts the
# agent (pybind11's GIL reacquire in a noexcept destructor, pthread_exit:
# "terminate called without an active exception", SIGABRT, exit 134; a
# daemon thread looping on TCPStore.get at exit, without tlm: 10 of 10
# runs). It flaked so under ASan, where the calls are slower. An interval
# past the test's timeout leaves the thread waiting on its event instead.
term) launch="$venv/bin/torchrun --rdzv-conf keep_alive_interval=600" fail=term ;;
*) echo "run.sh: unknown case '$case'"; exit 2 ;;
esac
tmp=$(mktemp -d)
if [ -n "${TLM_TEST_KEEP:-}" ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
mkdir "$tmp/t" "$tmp/out"
start=$(date +%s.%N)
run_job() { # exec: in its subshell, becomes tlm run (whose pid $! then is)
	# a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
	# shellcheck disable=SC2086
	exec env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} ${fail:+TLM_TEST_FAIL=$fail} \
		"$tlm" run --simulate 1G --devices 2 -o "$tmp/t/%h-%r-%p.trace" -- \
		$launch --standalone --nproc-per-node 2 "$src/ranks.py" "$tmp/out" >"$tmp/run.out" 2>"$tmp/run.log"
}
if [ "$case" != term ]; then
	(run_job)
	rc=$?
else
	run_job &
	pid=$!
	# both ranks are done once both have written their figures (then they sleep)
	end=$(($(date +%s) + 240))
	while [ ! -e "$tmp/out/rank-0.json" ] || [ ! -e "$tmp/out/rank-1.json" ]; do
		if [ "$(date +%s)" -gt $end ] || ! kill -0 $pid 2>/dev/null; then
			echo "term: the ranks did not get to the end"
			break
		fi
		sleep 0.1
	done
	sleep 0.5 # past the barrier, into the sleep
	kill -TERM $pid
	wait $pid
	rc=$?
fi
secs=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
if ! "$tlm" report --format json "$tmp/t" >"$tmp/job.json"; then
	tail -n 40 "$tmp/run.log"
	echo "tlm report failed on the traces of the run (tlm run exited $rc)"
	exit 1
fi
if ! "$py" "$src/check.py" "$case" "$tmp" "$src/ranks.py" "$rc"; then
	tail -n 60 "$tmp/run.log"
	exit 1
fi
echo "tlm run over torchrun took $secs s"
