#!/bin/sh
# Fetches the CUDA runtimes the real-runtime tests (tests/realcuda) run besides
# the toolkit's own: the newest 13.x and a 12.x libcudart, as NVIDIA ships them
# in Python wheels, unpacked into a cache outside the tree:
#   ${TLM_WHEEL_CACHE:-$HOME/.cache/tlm/wheels}/<wheel name>/
# Reused when present. No network: one line, and those tests are skipped.
set -u
cache=${TLM_WHEEL_CACHE:-${HOME:-/root}/.cache/tlm/wheels}
mkdir -p "$cache" || exit 0
# pinned to the minor versions checked (docs/simulated-device.md)
for spec in "nvidia-cuda-runtime>=13.5,<13.6" "nvidia-cuda-runtime-cu12>=12.9,<12.10"; do
	name=${spec%%[<>=]*}
	stem=$(echo "$name" | tr - _)
	have=
	for d in "$cache/$stem"-[0-9]*; do
		[ -d "$d" ] && have=1
	done
	[ -n "$have" ] && continue
	if ! python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
		--python-version 3.11 -d "$cache" "$spec" >"$cache/pip.log" 2>&1; then
		echo "tlm: cannot download $spec (see $cache/pip.log): its real-runtime test will be skipped"
		continue
	fi
	for w in "$cache/$stem"-*.whl; do
		[ -f "$w" ] || continue
		d=${w%%-py3*}
		rm -rf "$d.tmp" && mkdir -p "$d.tmp" && python3 -m zipfile -e "$w" "$d.tmp" && mv "$d.tmp" "$d"
	done
done
exit 0
