#!/bin/sh
# SPDX-License-Identifier: MIT
# Puts the current PyTorch CUDA wheel (and the nvidia-* CUDA wheels it pulls)
# into a virtual environment OUTSIDE the source tree, for the real-PyTorch
# tests (tests/torch, docs/simulate.md). Reused when present: a second run
# costs one `import torch`.
#
#   TLM_TORCH_VENV   where (default /root/.cache/tlm/torch-venv)
#   TLM_TORCH_SPEC   what to install (default: "torch numpy torchvision transformers",
#                    the newest releases: tests/verdicts runs ResNet-18 and GPT-2 with
#                    random weights, nothing downloaded at run time)
#   TLM_TORCH=off    do nothing (the real-PyTorch tests then skip)
#
# Measured on a fresh 2-core VM (torch 2.15.0 + CUDA 13.2 wheels): 57 s,
# 5.3 GiB in the venv (see docs/simulate.md, "Install"). A failed install
# (no network) prints one line and leaves the tests to skip: it never fails
# the build.
set -u
[ "${TLM_TORCH:-on}" = off ] && exit 0
venv=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}
spec=${TLM_TORCH_SPEC:-torch numpy torchvision transformers}
py=${TLM_TORCH_PYTHON:-python3}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, numpy, torchvision, transformers' >/dev/null 2>&1; then
	exit 0
fi
# a venv from before torchvision and transformers were in the spec: add them, keep torch
if [ -z "${TLM_TORCH_SPEC:-}" ] && [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, numpy' >/dev/null 2>&1; then
	echo "tlm: adding torchvision and transformers to $venv"
	nice "$venv/bin/pip" install --no-cache-dir torchvision transformers >>"$(dirname "$venv")/torch-venv.log" 2>&1 ||
		echo "tlm: torch venv: torchvision/transformers install failed: tests/verdicts will fail"
	exit 0
fi
command -v "$py" >/dev/null 2>&1 || { echo "tlm: torch venv: no $py: real-PyTorch tests will be skipped"; exit 0; }
echo "tlm: installing $spec into $venv (about 5 GiB, once)"
mkdir -p "$(dirname "$venv")"
log=$(dirname "$venv")/torch-venv.log
start=$(date +%s)
# shellcheck disable=SC2086
if "$py" -m venv "$venv" >"$log" 2>&1 &&
	nice "$venv/bin/pip" install --no-cache-dir $spec >>"$log" 2>&1 &&
	"$venv/bin/python" -c 'import torch' >>"$log" 2>&1; then
	echo "tlm: torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') installed in $(($(date +%s) - start)) s"
else
	echo "tlm: torch venv: install failed (see $log): real-PyTorch tests will be skipped"
	rm -rf "$venv"
fi
exit 0
