# SPDX-License-Identifier: MIT
# check_steps.py REPORT.json TRUTH MODE STEPS LEAK: the report of a
# steps_workload.py run has exactly its steps, its leak per step, the
# forecast from the free memory it saw, and Block.forward's activations.
import json
import sys

H, O, LOSS, LAYERS, MiB = 256 << 10, 64 << 10, 4 << 10, 6, 1 << 20


def main():
    rep, truth, mode, steps, leak = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    r = json.load(open(rep))
    free_first, first_size = map(int, open(truth).read().split())
    st = r["steps"]
    fails = []

    def want(what, got, exp):
        if got != exp:
            fails.append("%s: got %r, want %r" % (what, got, exp))

    want("steps found", st["found"], True)
    if not st["found"]:
        print("\n".join(fails))
        return 1
    want("step count", st["count"], steps)
    want("driving frame", st["driving_frame"]["function"], "main")
    first = 1 if mode == "warmup" else 0
    want("first steady step", st["first_steady_step"], first)
    persistent = 4 * MiB + (4 * (512 << 10) if mode == "warmup" else 0)
    last_peak = persistent + steps * leak + LAYERS * (H + O) + LOSS + O
    want("last step peak", st["per_step"][-1]["peak_bytes"], last_peak)
    leaks = [l for l in r["leaks"] if l.get("bytes_per_step") is not None]
    want("leaks with bytes_per_step", len(leaks), 1)
    if leaks:
        want("bytes per step", leaks[0]["bytes_per_step"], leak)
        want("steps with survivors", leaks[0]["steps_with_survivors"], steps - 1 - first)
        want("leak bytes", leaks[0]["bytes"], steps * leak)
    dev = [d for d in r["devices"] if d["device"] == 0 and d["kind"] == "device"][0]
    fc = dev["forecast"]
    cap = free_first + first_size
    want("forecast capacity", fc and fc["capacity_bytes"], cap)
    want("forecast steps", fc and fc["steps_to_oom"], (cap - last_peak) // leak)
    want("forecast steady", fc and fc["steady"], True)
    act = r["activations"]["functions"]
    top = act[0] if act else {}
    fn = (top.get("frame") or {}).get("function") or ""
    if not fn.endswith("forward") or fn.endswith("Model.forward"):
        fails.append("top activation function: %r" % fn)
    want("activation bytes", top.get("bytes_at_peak"), LAYERS * (H + O))
    want("instances", top.get("instances"), LAYERS)
    ck = top.get("checkpointing") or [{}]
    peak = r["activations"]["peak_bytes"]
    want("checkpoint each instance", ck[0].get("estimated_peak_bytes"), peak - LAYERS * (H + O) + LAYERS * O + H)
    if fails:
        print("\n".join(fails))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
