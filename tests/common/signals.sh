# SPDX-License-Identifier: MIT
# signals.sh - sourced first by a shell test whose children rely on the
# default signal state (a signal that kills them, a handler they install, a
# disposition they report):
#   . "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/signals.sh"
# The test's caller may have left signals ignored (nohup: SIGHUP; a
# background job of a script: SIGINT, SIGQUIT) or blocked, and a shell
# cannot undo a disposition ignored at its start (POSIX). So the script runs
# itself again, once, under sigdfl (every signal SIG_DFL, an empty mask), and
# its children inherit that. The shell still starts its own background jobs
# (`cmd &`) with SIGINT and SIGQUIT ignored: start one that must die of
# either as "$TLM_TEST_SIGDFL" cmd &.
# (read by the shell itself: a command substitution's child would see the
# shell's mask while it waits, which dash fills)
_tlm_sig=
while read -r _tlm_k _tlm_v; do
	case $_tlm_k in SigIgn: | SigBlk:) [ "$_tlm_v" = 0000000000000000 ] || _tlm_sig="$_tlm_sig $_tlm_k $_tlm_v" ;; esac
done </proc/self/status
if [ -n "$_tlm_sig" ]; then
	if [ ! -x "${TLM_TEST_SIGDFL:-}" ] || [ -n "${_TLM_SIGDFL_ONCE:-}" ]; then
		echo "signals.sh: signals ignored or blocked ($_tlm_sig) and no TLM_TEST_SIGDFL to reset them (run through meson test)" >&2
		exit 1
	fi
	_TLM_SIGDFL_ONCE=1 exec "$TLM_TEST_SIGDFL" /bin/sh "$0" "$@"
fi
unset _tlm_sig _tlm_k _tlm_v _TLM_SIGDFL_ONCE
