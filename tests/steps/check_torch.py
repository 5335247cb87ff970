# SPDX-License-Identifier: MIT
# check_torch.py LEAK.json LEAK.truth BASE.json CK1.truth CK2.truth: the
# reports of torch_steps.py runs (10 steps): exact step count, leak per
# step and forecast on the leaking run; on the run without checkpointing,
# the checkpointing estimates for every block and every 2 blocks against
# torch's own steady peaks (max_memory_allocated after the first two
# steps) of the runs that did checkpoint, to the byte (what was achieved).
import json
import sys

STEPS, LEAK = 10, 65536


def main():
    leak, truth, base, ck1, ck2 = (json.load(open(p)) for p in sys.argv[1:6])
    fails = []

    def want(what, got, exp):
        if got != exp:
            fails.append("%s: got %r, want %r" % (what, got, exp))

    for name, r in (("leak", leak), ("base", base)):
        want(name + " steps", r["steps"]["count"], STEPS)
    ls = [l for l in leak["leaks"] if l.get("bytes_per_step") is not None]
    want("leak sites", len(ls), 1)
    if ls:
        want("bytes per step", ls[0]["bytes_per_step"], LEAK)
        want("steps with survivors", ls[0]["steps_with_survivors"], ls[0]["steps_measured"])
    fc = [d for d in leak["devices"] if d["device"] == 0 and d["kind"] == "device"][0]["forecast"]
    want("capacity", fc and fc["capacity_bytes"], truth["capacity"])
    # steps_to_oom itself is checked against a real run that dies of its leak
    # (tests/verdicts, group leaks): here, that it comes from the allocator's
    # model, and that the cache and rounding never make the run last longer
    # than the bytes alone
    if fc and fc["steps_to_oom"] is not None:
        want("forecast method", fc["method"], "allocator model")
        if fc["steps_to_oom"] > fc["linear_steps_to_oom"]:
            fails.append("steps to oom %d > %d by the bytes alone" % (fc["steps_to_oom"], fc["linear_steps_to_oom"]))
    else:
        fails.append("no forecast")
    funcs = base["activations"]["functions"]
    top = funcs[0] if funcs else {}
    want("top function", (top.get("frame") or {}).get("function"), "Block.forward")
    ck = {c["every"]: c for c in (top.get("checkpointing") or [])}
    for every, run in ((1, ck1), (2, ck2)):
        real = run["steady_peak"]
        est = ck.get(every, {}).get("estimated_peak_bytes")
        if est != real:
            fails.append("checkpoint every %d: estimated %r, measured %r" % (every, est, real))
        else:
            print("checkpoint every %d: estimated %d B, torch's steady peak %d B, rule of thumb %d B" %
                  (every, est, real, ck[every]["rule_of_thumb_peak_bytes"]))
    if fails:
        print("\n".join(fails))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
