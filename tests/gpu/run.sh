#!/bin/sh
# The GPU check, on a machine with an NVIDIA GPU (one call, well under 10
# minutes): every interception path on the real driver, then a PyTorch
# training loop whose peak reserved memory tlm must report to the byte.
# Prints PASS/FAIL lines; output files go to $OUT (or /tmp/tlm-gpu).
set -u
g=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/tlm-gpu}
mkdir -p "$out"
tool() { LD_LIBRARY_PATH="$g/toollib" "$@"; }
pre="$g/lib/libtlm.so"
export TLM_SUMMARY=0
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
status=0
for b in paths_static paths_shared; do
	rm -f "$out/$b.trace"
	echo "== $b"
	LD_LIBRARY_PATH="$g/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$pre" \
		TLM_TEST_TRUTH="$out/$b.truth" TLM_OUTPUT="$out/$b.trace" "$g/bin/$b" || status=1
	tool "$g/bin/trace_check" "$out/$b.trace" "$out/$b.truth" || status=1
	tool "$g/bin/tlm" info "$out/$b.trace" | tail -12
done
echo "== torch"
rm -f "$out/torch.trace"
LD_LIBRARY_PATH="$g/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$pre" TLM_OUTPUT="$out/torch.trace" \
	python3 "$g/torch_check.py" "$out/torch.json" || status=1
tool "$g/bin/tlm" info "$out/torch.trace" | tail -12
if tool "$g/bin/tlm" report --format json -o "$out/torch-report.json" "$out/torch.trace"; then
	python3 - "$out/torch.json" "$out/torch-report.json" <<'PY' || status=1
import json, sys
t = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
d = [x for x in r["devices"] if x["device"] == 0 and x["kind"] == "device"]
got = d[0]["peak_reserved_bytes"] if d else None
ok = got == t["reserved_peak"]
print("%s torch: tlm peak reserved %s, torch.cuda max_memory_reserved %d" % ("PASS" if ok else "FAIL", got, t["reserved_peak"]))
sys.exit(0 if ok else 1)
PY
else
	echo "FAIL torch: tlm report failed"
	status=1
fi
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
