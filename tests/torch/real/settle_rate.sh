#!/bin/sh
# SPDX-License-Identifier: MIT
# How often PyTorch's exit abort (docs/simulate.md, "Exit status 134") kills
# a program that ends right after its last backward, with and without
# tests/common/torch_settle.py (a measurement, not a test: the abort is a
# race). RUNS runs each way, interleaved, on the simulated device (no tlm);
# with CPU (a number) all runs are pinned to that CPU, which makes the race
# more frequent. Prints the exit statuses counted per way.
#   sh tests/torch/real/settle_rate.sh [BUILD_DIR] [RUNS] [CPU]
set -u
b=${1:-build} runs=${2:-40} cpu=${3:-}
src=$(cd "$(dirname "$0")/../../.." && pwd)
py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
sim=$(cd "$b/src/sim" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/short.py" <<'PY'
import os, sys
import torch
if sys.argv[1] == "settle":
    sys.path.insert(0, os.path.join(sys.argv[2], "tests", "common"))
    import torch_settle  # noqa: F401
m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()
for _ in range(3):
    m.zero_grad()
    m(torch.randn(16, 64, device="cuda")).sum().backward()
PY
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	for way in plain settle; do
		# shellcheck disable=SC2086
		env TLM_SIM_DEVICES=1 TLM_SIM_MEMORY=1G LD_PRELOAD="$sim/libcuda.so.1 $sim/libnvidia-ml.so.1 $sim/libtlm_simblas.so" \
			${cpu:+taskset -c $cpu} "$py" "$tmp/short.py" $way "$src" >/dev/null 2>&1
		echo "$way $?" >>"$tmp/rc"
	done
done
echo "exit statuses of $runs runs each${cpu:+, pinned to CPU $cpu} (134: the abort):"
sort "$tmp/rc" | uniq -c
