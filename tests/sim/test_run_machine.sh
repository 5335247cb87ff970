#!/bin/sh
# SPDX-License-Identifier: MIT
# tlm run --simulate makes one machine per run (docs/simulate.md): every
# process of the run shares the simulated device's memory, the file lives
# under /dev/shm (or $TMPDIR) and is gone after the run; a TLM_SIM_MACHINE
# the caller set is used as it is and kept.
#   test_run_machine.sh TLM SIM_HOLDER
set -eu
tlm=$1 holder=$2
# a sanitized build: its runtime first (TLM_TEST_PRELOAD_FIRST, tests/sim/meson.build)
[ -n "${TLM_TEST_PRELOAD_FIRST:-}" ] && export LD_PRELOAD="$TLM_TEST_PRELOAD_FIRST"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/out* "$dir"/err* "$dir"/a "$dir"/b; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

# the job: holder A keeps 20 MiB while holder B (4 MiB) reads the device's free
cat >"$dir/job.sh" <<'JOB'
echo "machine=$TLM_SIM_MACHINE"
rm -f "$D/f" "$D/a" "$D/b"
mkfifo "$D/f"
"$H" 20 <"$D/f" >"$D/a" &
exec 3>"$D/f"
n=0
until grep -q ready "$D/a" 2>/dev/null; do n=$((n + 1)); [ $n -lt 600 ] || exit 9; sleep 0.05; done
"$H" 4 </dev/null >"$D/b"
exec 3>&-
wait
JOB

run() { # OUT-SUFFIX [ENV...]
	s=$1
	shift
	(cd "$dir" && env "$@" D="$dir" H="$holder" "$tlm" run --no-summary --simulate 64M --devices 1 \
		-- sh "$dir/job.sh" >"$dir/out$s" 2>"$dir/err$s") || fail "tlm run $s"
}

# 64 MiB - 8 (A's context) - 20 (A) - 8 (B's context) - 4 (B) = 24 MiB
want_free=$((24 << 20))

run 1 TLM_SIM_MACHINE=
m=$(sed -n 's/^machine=//p' "$dir/out1")
case "$m" in
/dev/shm/tlm-sim-machine-* | "${TMPDIR:-/tmp}"/tlm-sim-machine-* | /tmp/tlm-sim-machine-*) ;;
*) fail "machine file '$m'" ;;
esac
[ ! -e "$m" ] || fail "the run's machine $m is left behind"
set -- $(cat "$dir/b")
[ "$1" = ready ] && [ "$3" = 2 ] && [ "$4" = 1 ] || fail "holder B said: $*"
[ "$5" = "$want_free" ] || fail "holder B saw $5 bytes free, not $want_free"
echo "ok the run's machine ($m): B saw $5 bytes free beside A, and the file is gone"

# two runs: two machines (fresh names)
run 2 TLM_SIM_MACHINE=
m2=$(sed -n 's/^machine=//p' "$dir/out2")
[ "$m2" != "$m" ] || fail "the same machine file twice: $m"

# the caller's machine is used and kept
: >"$dir/mine"
run 3 TLM_SIM_MACHINE="$dir/mine"
[ "$(sed -n 's/^machine=//p' "$dir/out3")" = "$dir/mine" ] || fail "the caller's TLM_SIM_MACHINE was replaced"
[ -s "$dir/mine" ] || fail "the caller's machine file was removed or not used"
set -- $(cat "$dir/b")
[ "$5" = "$want_free" ] || fail "on the caller's machine B saw $5 bytes free, not $want_free"
echo "ok the caller's TLM_SIM_MACHINE is used and kept"
