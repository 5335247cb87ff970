#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh TEST - one real-runtime test: a program built by the CUDA toolkit's
# nvcc, run on the simulated driver (build/src/sim/libcuda.so.1) under
# libtlm.so, its trace checked against the program's own truth (check.py).
#
#   allocs-static   allocs.cu, nvcc's default static cudart
#   allocs-shared   allocs.cu, -cudart shared (the toolkit's libcudart.so.13)
#   cublas          cublas.cu: cublasCreate/SetWorkspace/Destroy
#   cupti           allocs-static with TLM_CUPTI=on and the toolkit's libcupti.so.13
#   wheel-13 / wheel-12   allocs-shared against the newest 13.x / a 12.x
#                   runtime from its pip wheel (tools/fetch-cuda-wheels.sh)
#   unknown-version the simulator told to report a driver older than the runtime
#
# Needs: CUDA_HOME (default /usr/local/cuda) with bin/nvcc; otherwise exits 77
# (meson: skipped) with one line saying what was not tested. Env from meson:
# TLM_TEST_LIBTLM, TLM_TEST_SIMDIR, TLM_TEST_DUMP, TLM_TEST_WORK.
set -u
t=${1:?usage: run.sh TEST}
src=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
	echo "SKIP $t: no CUDA toolkit (no $nvcc; set CUDA_HOME): NVIDIA's real runtime on the simulated driver not tested"
	exit 77
fi
work=${TLM_TEST_WORK:?}/$t
mkdir -p "$work"
lib=$cuda/lib64
[ -d "$lib" ] || lib=$cuda/lib
# The toolkit's libraries first: build/src/sim also holds tlm's runtime double.
ldpath=$lib:$TLM_TEST_SIMDIR
pre=${TLM_TEST_PRELOAD_FIRST:+$TLM_TEST_PRELOAD_FIRST:}$TLM_TEST_LIBTLM

build() { # OUT SRC NVCC-ARGS...: compile once per source change
	out=$1 s=$2
	shift 2
	if [ ! -x "$out" ] || [ "$s" -nt "$out" ]; then
		nice "$nvcc" -g -Xcompiler -O0 -arch=sm_90 -o "$out.tmp" "$s" "$@" >"$work/nvcc.log" 2>&1 || {
			echo "FAIL $t: nvcc failed:"
			cat "$work/nvcc.log"
			exit 1
		}
		mv "$out.tmp" "$out"
	fi
}

# record PROG [ENV...]: run PROG under libtlm.so on the simulator, check its trace
record() {
	prog=$1
	shift
	rm -f "$work/trace" "$work/truth"
	env "$@" LD_LIBRARY_PATH="$ldpath" LD_PRELOAD="$pre" TLM_SUMMARY=0 TLM_OUTPUT="$work/trace" \
		TLM_TEST_TRUTH="$work/truth" TLM_SIM_DEVICES=2 TLM_SIM_MEMORY=1G \
		timeout 120 "$prog" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $t: $prog exited $rc"
		cat "$work/out" "$work/err"
		exit 1
	fi
	"$TLM_TEST_DUMP" "$work/trace" >"$work/dump" || { echo "FAIL $t: trace unreadable"; exit 1; }
	python3 "$src/check.py" "$work/dump" "$work/truth" "$prog" || exit 1
}

case $t in
allocs-static)
	build "$work/allocs" "$src/allocs.cu"
	record "$work/allocs"
	;;
allocs-shared)
	build "$work/allocs" "$src/allocs.cu" -cudart shared
	record "$work/allocs"
	;;
cublas)
	build "$work/cublas" "$src/cublas.cu" -lcublas
	record "$work/cublas"
	;;
*)
	echo "run.sh: unknown test '$t'" >&2
	exit 64
	;;
esac
