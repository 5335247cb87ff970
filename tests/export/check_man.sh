#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages say what the tool does: every subcommand of `tlm --help` has
# a section in tlm(1); every option that `tlm --help` or `tlm CMD --help`
# prints is in tlm(1), and every option tlm(1) names is printed by one of
# them; every TLM_* variable of docs/environment.md is in libtlm(7) and
# libtlm(7) names no other. When man or groff is installed the pages are
# also formatted with warnings on.
# usage: check_man.sh TLM SOURCE_ROOT
set -eu
tlm=$1
src=$2
work=$(mktemp -d /tmp/tlm-man-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# roff source with "\-" as "-" and font escapes removed
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"; }
plain "$src/man/tlm.1" >"$work/tlm.1"
plain "$src/man/libtlm.7" >"$work/libtlm.7"

"$tlm" --help >"$work/help" || bad "tlm --help failed"
cmds=$(sed -n '/^commands:/,/^$/p' "$work/help" | awk 'NF && $1 != "commands:" {print $1}')
[ -n "$cmds" ] || bad "no commands in tlm --help"
cp "$work/help" "$work/all-help"
for c in $cmds; do
	grep -q "^\.SS \"tlm $c" "$work/tlm.1" || bad "tlm.1 has no section for '$c'"
	if [ "$c" != help ]; then
		"$tlm" "$c" --help >"$work/help-$c" || bad "tlm $c --help failed"
		cat "$work/help-$c" >>"$work/all-help"
	fi
done
opts() { grep -oE -- '(^|[^a-zA-Z0-9-])--?[a-zA-Z][a-zA-Z-]*' "$1" | sed -E 's/^[^-]*//' | sort -u; }
opts "$work/all-help" >"$work/help-opts"
opts "$work/tlm.1" >"$work/man-opts"
for o in $(cat "$work/help-opts"); do
	grep -qx -- "$o" "$work/man-opts" || bad "option $o (tlm --help) is not in tlm.1"
done
for o in $(cat "$work/man-opts"); do
	case $o in --) continue ;; esac
	grep -qx -- "$o" "$work/help-opts" || bad "option $o of tlm.1 is in no --help"
done
grep -oE 'TLM_[A-Z0-9_]+' "$src/docs/environment.md" | sort -u >"$work/env-doc"
grep -oE 'TLM_[A-Z0-9_]+' "$work/libtlm.7" | sort -u >"$work/env-man"
for v in $(cat "$work/env-doc"); do
	grep -qx "$v" "$work/env-man" || bad "$v (docs/environment.md) is not in libtlm.7"
done
for v in $(cat "$work/env-man"); do
	grep -qx "$v" "$work/env-doc" || bad "$v of libtlm.7 is not in docs/environment.md"
done
if command -v groff >/dev/null 2>&1; then
	for p in tlm.1 libtlm.7; do
		out=$(groff -man -ww -z "$src/man/$p" 2>&1) || bad "groff failed on $p"
		[ -z "$out" ] || bad "groff warns on $p: $out"
	done
else
	echo "note: groff not installed: the pages were checked, not formatted"
fi
n=$(wc -l <"$work/help-opts")
if [ $fails -ne 0 ]; then
	echo "$fails problem(s)"
	exit 1
fi
echo "ok: $(echo $cmds | wc -w) commands, $n options, $(wc -l <"$work/env-doc") variables"
echo "1 passed, 0 failed"
