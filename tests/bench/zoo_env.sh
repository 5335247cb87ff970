# SPDX-License-Identifier: MIT
# zoo_env.sh - sourced by the zoo benchmarks (torch_zoo_cg.sh,
# torch_zoo_perf.sh) with b (an absolute build directory) and me (the
# script's name) set: the PyTorch venv's python ($py), the libtlm.so to
# measure ($lib: TLM_ZOO_LIB, else the build's), the simulated device
# ($sim, preloaded as $pre) and its settings. Exits 2 without the venv.
py=${TLM_TORCH_VENV:-/root/.cache/tlm/torch-venv}/bin/python
lib=${TLM_ZOO_LIB:-$b/src/recording/libtlm.so}
sim=$b/src/sim
[ -x "$py" ] || { echo "$me: no PyTorch venv at $py (tools/torch-venv.sh)"; exit 2; }
export TORCH_CUDNN_SDPA_DEPRIORITIZED=1 TLM_SIM_DEVICES=1 TLM_SIM_MEMORY=4G PYTHONHASHSEED=0
pre="$sim/libcuda.so.1 $sim/libnvidia-ml.so.1 $sim/libtlm_simblas.so"
