#!/bin/sh
# SPDX-License-Identifier: MIT
# The job report's HTML page in headless Chromium (job_browser.py, through
# playwright): job_gen's synthetic job of 64 ranks on 8 hosts, its merged
# timeline hovered, zoomed, panned and scrolled against the generator's
# exact figures. Exit 77 (skipped) without chromium or without the
# playwright venv (tools/viz-venv.sh).
# usage: job_browser.sh TLM JOB_GEN [--screenshot PNG]
set -eu
tlm=$1 gen=$2
shot=""
[ "${3:-}" = "--screenshot" ] && shot=$(realpath "$4")
here=$(dirname "$0")
. "${TLM_TEST_COMMON:-$(dirname "$0")/../common}/skip.sh"
browser=""
for b in chromium chromium-browser; do
	command -v "$b" >/dev/null 2>&1 && { browser=$(command -v "$b"); break; }
done
[ -n "$browser" ] || tlm_skip chromium "chromium is not installed: the job's timeline was not drawn"
venv=${TLM_VIZ_VENV:-/root/.cache/tlm/viz-venv}
py="$venv/bin/python"
if ! [ -x "$py" ] || ! "$py" -c 'import playwright.sync_api' 2>/dev/null; then
	tlm_skip playwright "no playwright in $venv (tools/viz-venv.sh makes it): the job's timeline was not drawn"
fi
work=$(mktemp -d /tmp/tlm-jobbrowser-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/t"
"$gen" "$work/t" 64 4000 > "$work/truth"
"$tlm" report --format html -o "$work/job.html" "$work/t"
set -- --page "$work/job.html" --truth "$work/truth"
[ -n "$shot" ] && set -- "$@" --shot "$shot"
"$py" "$here/job_browser.py" --browser "$browser" "$@"
