#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh TEST - one real-runtime test: a program built by the CUDA toolkit's
# nvcc, run on the simulated driver (build/src/sim/libcuda.so.1) under
# libtlm.so, its trace checked against the program's own truth (check.py).
#
#   allocs-static   allocs.cu, nvcc's default static cudart
#   allocs-shared   allocs.cu, -cudart shared (the toolkit's libcudart.so.13)
#   allocs-ptds     allocs.cu, static, --default-stream per-thread
#   contents        contents.cu (static and shared): copies, sets, 2D, async, peer, symbols read back byte-exact
#   general         general.cu .. general4.cu (static and shared): templates, managed from host, streams,
#                   events, a pool across 4 threads, a captured graph; two devices from threads, 3D,
#                   symbols, clusters, peer access, cudaDeviceReset; big __device__ arrays,
#                   cudaHostRegister, cudaMemset3D, cudaStreamAttachMemAsync; pools on two
#                   devices with access, VMM aliasing through the driver API
#   driver-api      driver.c: the driver API, linked with the toolkit's stub libcuda.so
#   cublas          cublas.cu: cublasCreate/SetWorkspace/Destroy
#   cupti           allocs-static with TLM_CUPTI=on and the toolkit's libcupti.so.13
#   wheel-13 / wheel-12   allocs-shared against the newest 13.x / a 12.x
#                   runtime from its pip wheel (tools/fetch-cuda-wheels.sh)
#   unknown-version a runtime version the simulator was not checked with
#   double-first    build/src/sim/runtime before the toolkit: tlm's runtime double says so
#   olddriver       a libcuda.so.1 that does not export the names libtlm.so dlsyms
#
# Needs: CUDA_HOME (default /usr/local/cuda) with bin/nvcc; otherwise exits 77
# (meson: skipped) with one line saying what was not tested. Env from meson:
# TLM_TEST_LIBTLM, TLM_TEST_SIMDIR, TLM_TEST_DOUBLEDIR, TLM_TEST_DUMP, TLM_TEST_WORK.
set -u
t=${1:?usage: run.sh TEST}
src=$(cd "$(dirname "$0")" && pwd)
. "${TLM_TEST_COMMON:-$src/../common}/skip.sh"
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || tlm_skip toolkit "$t: no CUDA toolkit (no $nvcc; set CUDA_HOME): NVIDIA's real runtime on the simulated driver not tested"
work=${TLM_TEST_WORK:?}/$t
mkdir -p "$work"
lib=$cuda/lib64
[ -d "$lib" ] || lib=$cuda/lib
# The simulated driver first, as a user would: build/src/sim holds only
# libcuda.so.1 (tlm's runtime double is in build/src/sim/runtime).
ldpath=$TLM_TEST_SIMDIR:$lib
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
	python3 "$src/check.py" "$work/dump" "$work/truth" "$prog" $checkargs || exit 1
}
checkargs=

wheels=${TLM_WHEEL_CACHE:-${HOME:-/root}/.cache/tlm/wheels}
wheel_lib() { # STEM SUBDIR LIB: the newest unpacked wheel's library directory
	found=
	for d in "$wheels/$1"-[0-9]*; do
		[ -f "$d/$2/$3" ] && found=$d/$2
	done
	if [ -z "$found" ]; then
		# (called in a command substitution: the line to stderr, the verdict as the status)
		tlm_skip_case cuda-wheels "$t: no $3 wheel in $wheels (tools/fetch-cuda-wheels.sh): that runtime not tested" >&2 && exit 77
		exit 1
	fi
	echo "$found"
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
general)
	# general.cu and general2.cu under both cudarts, the sim dir first: exit 0,
	# and every call counted ("op kind count" per pair, sorted)
	for prog in general:"1 0 403;1 1 1;2 0 404;3 6 1;4 6 1;5 6 1" general2:"1 0 6;1 1 1;1 2 2;2 0 6;2 2 2" general3:"1 0 2;1 1 1;2 0 3" \
		general4:"1 0 3;1 3 1;1 4 1;1 5 2;2 0 2;2 3 1;2 4 1;2 5 1;3 6 2;4 6 2;5 6 2"; do
		name=${prog%%:*} want=${prog#*:}
		for v in static shared; do
			a=; [ $v = shared ] && a="-cudart shared"
			l=; [ $name = general4 ] && l="-L$lib/stubs -lcuda"
			build "$work/$name-$v" "$src/$name.cu" -std=c++17 $a $l
			env LD_LIBRARY_PATH="$ldpath" LD_PRELOAD="$pre" TLM_SUMMARY=0 TLM_OUTPUT="$work/trace-$v" \
				TLM_SIM_DEVICES=2 timeout 120 "$work/$name-$v" >"$work/out" 2>"$work/err" || {
				echo "FAIL $t ($name, $v): exit $?"; cat "$work/out" "$work/err"; exit 1; }
			got=$("$TLM_TEST_DUMP" "$work/trace-$v" | awk '$1 == "E" { c[$2 " " $3]++ } END { for (k in c) print k, c[k] }' | sort | paste -sd';')
			[ "$got" = "$want" ] || { echo "FAIL $t ($name, $v): counts $got, want $want"; exit 1; }
			rm -f "$work/trace-$v"
		done
	done
	echo "PASS $t: general.cu to general4.cu, static and shared: every call recorded; contents and graph replays checked"
	;;
contents)
	# device memory holds what was copied or set there (contents.cu checks
	# every byte and exits non-zero otherwise), static and shared cudart
	build "$work/contents" "$src/contents.cu"
	record "$work/contents"
	build "$work/contents-shared" "$src/contents.cu" -cudart shared
	record "$work/contents-shared"
	;;
allocs-ptds)
	# --default-stream per-thread: the runtime takes the _ptsz driver flavours
	build "$work/allocs" "$src/allocs.cu" --default-stream per-thread
	record "$work/allocs"
	grep -q "cuMemAllocAsync_ptsz" "$work/dump" || { echo "FAIL $t: no per-thread flavour recorded"; exit 1; }
	;;
driver-api)
	# the driver API from C, linked with the toolkit's stub libcuda.so
	out=$work/driver
	if [ ! -x "$out" ] || [ "$src/driver.c" -nt "$out" ]; then
		${CC:-cc} -g -O0 -I"$cuda/include" -o "$out" "$src/driver.c" -L"$lib/stubs" -lcuda \
			>"$work/cc.log" 2>&1 || { echo "FAIL $t: cc failed:"; cat "$work/cc.log"; exit 1; }
	fi
	record "$out"
	;;
cublas)
	build "$work/cublas" "$src/cublas.cu" -lcublas
	record "$work/cublas"
	;;
wheel-13)
	# the newest 13.x runtime in place of the toolkit's, same binary
	wl=$(wheel_lib nvidia_cuda_runtime nvidia/cu13/lib libcudart.so.13) || exit $?
	build "$work/allocs" "$src/allocs.cu" -cudart shared
	ldpath=$wl:$TLM_TEST_SIMDIR
	record "$work/allocs"
	grep "tlm-sim" "$work/err" && { echo "FAIL $t: the simulator did not know this runtime"; exit 1; }
	echo "runtime: $wl"
	;;
wheel-12)
	# a 12.x runtime: the program links libcudart.so.12 from the wheel
	wl=$(wheel_lib nvidia_cuda_runtime_cu12 nvidia/cuda_runtime/lib libcudart.so.12) || exit $?
	build "$work/allocs" "$src/allocs.cu" -cudart none -L"$wl" -l:libcudart.so.12
	ldpath=$wl:$TLM_TEST_SIMDIR
	record "$work/allocs"
	grep "tlm-sim" "$work/err" && { echo "FAIL $t: the simulator did not know this runtime"; exit 1; }
	echo "runtime: $wl"
	;;
double-first)
	# build/src/sim/runtime ahead of the toolkit: the runtime double is loaded, and
	# must say so in one line rather than fail with a linker error
	build "$work/allocs" "$src/allocs.cu" -cudart shared
	# (a sanitized build's double needs its sanitizer runtime first)
	env ${TLM_TEST_PRELOAD_FIRST:+LD_PRELOAD=$TLM_TEST_PRELOAD_FIRST} LD_LIBRARY_PATH="$TLM_TEST_DOUBLEDIR:$TLM_TEST_SIMDIR:$lib" \
		timeout 60 "$work/allocs" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ne 127 ] || [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q "^tlm-sim: .*runtime double" "$work/err"; then
		echo "FAIL $t: exit $rc, stderr:"
		cat "$work/err"
		exit 1
	fi
	echo "PASS $t: $(cat "$work/err")"
	;;
olddriver)
	# A driver that does not export cuCtxGetDevice, cuMemGetInfo_v2,
	# cuDriverGetVersion, cuPointerGetAttribute by name: libtlm.so must find
	# them through cuGetProcAddress, record everything right, and look each
	# name up by dlsym at most once (not once per event).
	build "$work/allocs" "$src/allocs.cu" -cudart shared
	ldpath=$lib:$TLM_TEST_OLDDRIVER
	nm -D --defined-only "$TLM_TEST_OLDDRIVER/libcuda.so.1" | grep -q " cuCtxGetDevice$" &&
		{ echo "FAIL $t: the old driver exports cuCtxGetDevice"; exit 1; }
	record "$work/allocs" LD_DEBUG=symbols LD_DEBUG_OUTPUT="$work/ld"
	n=$(cat "$work"/ld.* | grep -c "symbol=cuCtxGetDevice;  lookup in file=$TLM_TEST_OLDDRIVER/libcuda.so.1")
	rm -f "$work"/ld.*
	# (two threads may race to the first lookup: at most 2, never one per event)
	if [ "$n" -gt 2 ]; then
		echo "FAIL $t: cuCtxGetDevice looked up in the driver $n times"
		exit 1
	fi
	echo "PASS $t: names missing from the driver by name looked up $n time(s), devices right through cuGetProcAddress"
	# cuMemGetInfo missing both ways (the runtime does not need it here):
	# each of the program's 8 failed allocations wants the free memory; the
	# failed lookup is made once, not once per event
	record "$work/allocs" LD_DEBUG=symbols LD_DEBUG_OUTPUT="$work/ld" TLM_SIM_HIDE=cuMemGetInfo
	n=$(cat "$work"/ld.* | grep -c "symbol=cuMemGetInfo_v2;  lookup in file=$TLM_TEST_OLDDRIVER/libcuda.so.1")
	rm -f "$work"/ld.*
	failed=$(grep -c "^E 1 0 [a-zA-Z_0-9]* 0 1099511627776 2 " "$work/dump")
	if [ "$n" -gt 2 ] || [ "$failed" -ne 8 ]; then
		echo "FAIL $t: cuMemGetInfo_v2 (absent) looked up $n times; $failed failed allocations recorded (want 8)"
		exit 1
	fi
	echo "PASS $t: a name the driver lacks entirely looked up $n time(s) for $failed failed allocations"
	;;
cupti)
	# The toolkit's real libcupti.so.13 on the simulated driver. It needs
	# export tables nobody has described (2c8e0ad8-..., then fc58ac1a-...;
	# docs/simulated-device.md), so it cannot attach: tlm must say so once
	# and record everything by interposition, unharmed.
	cupti=
	for c in "$lib/libcupti.so.13" "$cuda/extras/CUPTI/lib64/libcupti.so.13" "$cuda/lib/libcupti.so.13"; do
		[ -f "$c" ] && { cupti=$c; break; }
	done
	[ -n "$cupti" ] || tlm_skip toolkit "$t: no libcupti.so.13 in $cuda: real CUPTI not tested"
	build "$work/allocs" "$src/allocs.cu"
	record "$work/allocs" TLM_CUPTI=on TLM_CUPTI_LIBRARY="$cupti"
	grep -q "^P cupti unusable$" "$work/dump" &&
		grep -q "^P cupti.detail cuptiSubscribe failed: CUPTI_ERROR_UNKNOWN$" "$work/dump" || {
		echo "FAIL $t: CUPTI's outcome:"
		grep "^P" "$work/dump"
		exit 1
	}
	[ "$(grep -c "CUPTI" "$work/err")" -eq 1 ] || { echo "FAIL $t: not one CUPTI line:"; cat "$work/err"; exit 1; }
	echo "PASS $t: real CUPTI ($cupti) does not attach to the simulator; recorded as unusable, said once"
	;;
unknown-version)
	# a runtime the simulator was not checked with: exactly one line naming
	# its version, and the program still runs (here 13.0, declared unknown)
	build "$work/allocs" "$src/allocs.cu"
	record "$work/allocs" TLM_SIM_KNOWN_RUNTIMES=12090
	n=$(grep -c "tlm-sim" "$work/err")
	want="tlm-sim: CUDA runtime 13.0 is not one this simulated driver was checked with (12.9, 13.0, 13.2, 13.3, 13.4, 13.5): its private interface may differ and it may fail"
	if [ "$n" -ne 1 ] || [ "$(grep tlm-sim "$work/err")" != "$want" ]; then
		echo "FAIL $t: expected one line naming 13.0, got $n:"
		cat "$work/err"
		exit 1
	fi
	echo "PASS $t: one line: $want"
	;;
*)
	echo "run.sh: unknown test '$t'" >&2
	exit 64
	;;
esac
