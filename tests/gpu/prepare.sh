#!/bin/sh
# Builds, on this (GPU-less) machine, everything the GPU check needs into
# .gpu/ (git-ignored), to be carried to the GPU machine, which has CUDA,
# PyTorch and Python but no libunwind or elfutils. Then, on the GPU machine,
# from the repository root: sh .gpu/run.sh   (see tests/gpu/README.md)
set -eu
cd "$(dirname "$0")/../.."
sh tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
rm -rf .gpu
mkdir -p .gpu/bin .gpu/lib .gpu/toollib
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
cp build/src/recording/libtlm.so .gpu/lib/
cp build/src/command/tlm build/tests/gpu/trace_check .gpu/bin/
# libtlm.so's own dependencies that a CUDA image lacks (libunwind); the tools
# get every non-glibc dependency, in a directory only they use.
# libtlm.so opens libunwind.so.8 at run time (no ldd line names it)
u=$(ldconfig -p | awk '$1 == "libunwind.so.8" && /x86-64/ {print $NF; exit}')
[ -n "$u" ] || { echo "prepare.sh: libunwind.so.8 not found (sh tools/deps.sh installs it)" >&2; exit 1; }
cp -L "$u" .gpu/lib/
for f in .gpu/bin/tlm .gpu/bin/trace_check .gpu/lib/libtlm.so; do ldd "$f"; done |
	awk '/=> \// {print $3}' | sort -u |
	grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
	while read -r l; do cp -L "$l" .gpu/toollib/; done
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# nvcc links cudart statically by default: the cuGetProcAddress path
"$NVCC" -O2 -o .gpu/bin/paths_static tests/gpu/paths.cu
"$NVCC" -O2 -cudart shared -o .gpu/bin/paths_shared tests/gpu/paths.cu
cp tests/gpu/run.sh tests/gpu/torch_check.py tests/gpu/torch_issue4.py tests/gpu/nccl_check.py tests/gpu/compare_info.py .gpu/
# the simulated device, for the GPU-vs-simulated comparison of the tiny GPT
mkdir -p .gpu/sim
cp build/src/sim/libcuda.so.1 build/src/sim/libnvidia-ml.so.1 build/src/sim/libtlm_simblas.so .gpu/sim/
cp tests/gpu/torch_gpt.py tests/torch/real/gpt.py .gpu/
du -sh .gpu
echo "ready: carry .gpu and run: sh .gpu/run.sh"
