# SPDX-License-Identifier: MIT
# torch_issue4.py - the PyTorch check on a real GPU (issue 4).
#
#   python3 torch_issue4.py workload OUT.json   run under libtlm.so: a training loop that leaks through
#                                               losses.append(loss), a reference cycle holding a CUDA
#                                               tensor freed by gc.collect(), and a fragmentation pattern
#                                               that ends in an out-of-memory error; writes torch's own
#                                               figures and the lines that tlm must name
#   python3 torch_issue4.py check OUT.json REPORT.json
#                                               compares tlm's report with them; prints PASS/FAIL lines
#   python3 torch_issue4.py steps N             times N training steps; prints the mean step time (ms)
#   python3 torch_issue4.py steps-history N     the same under torch.cuda.memory._record_memory_history
import gc
import inspect
import json
import os
import sys
import time

MiB = 1 << 20


def line_of(marker):
    """The line of this file that carries the comment marker."""
    for i, text in enumerate(open(__file__), 1):
        if text.rstrip().endswith("# " + marker) and "line_of" not in text:
            return i
    raise SystemExit("marker %s not found" % marker)


def model_and_opt(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).cuda()
    return model, torch.optim.Adam(model.parameters())


def step(torch, model, opt, x):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


class Node:
    def __init__(self, torch):
        self.tensor = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")  # CYCLE
        self.me = self  # the cycle: only the collector frees it


def workload(out):
    import torch
    model, opt = model_and_opt(torch)
    Node(torch)
    gc.collect()  # frees the cycle's tensor: gc-freed
    torch.cuda.synchronize()

    # fragmentation: 4 MiB tensors share 20 MiB segments; keep one in five, then ask for
    # 24 MiB under a per-process cap: the free memory is there, but in holes of 16 MiB
    total = torch.cuda.get_device_properties(0).total_memory
    cap = 2 << 30
    torch.cuda.set_per_process_memory_fraction(cap / total)
    blocks = []
    oom = False
    try:
        while True:
            blocks.append(torch.empty(4 * MiB, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        pass
    keep = [b for i, b in enumerate(blocks) if i % 5 == 0]
    del blocks
    try:
        big = torch.empty(24 * MiB, dtype=torch.uint8, device="cuda")  # OOM
        del big
    except torch.cuda.OutOfMemoryError:
        oom = True
    del keep
    torch.cuda.set_per_process_memory_fraction(1.0)

    # a training loop that keeps every loss: a leak per step, dropped when workload() returns
    losses = []
    for _ in range(60):
        x = torch.randn(256, 1024, device="cuda")
        loss = step(torch, model, opt, x)
        losses.append(loss.detach().clone())  # LEAK
        time.sleep(0.005)  # the rest of a real step
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats()
    # the leak per step by torch's own count: what dropping the list gives back
    held = torch.cuda.memory_allocated()
    n = len(losses)
    del losses
    leak_per_step = (held - torch.cuda.memory_allocated()) // n
    json.dump({"allocated_peak": st["allocated_bytes.all.peak"],
               "reserved_peak": st["reserved_bytes.all.peak"],
               "leak_per_step": leak_per_step,
               "oom": oom, "file": os.path.basename(__file__),
               "lines": {m: line_of(m) for m in ("LEAK", "CYCLE", "OOM")}},
              open(out, "w"))
    print("torch_issue4: peaks allocated %d reserved %d, oom %s" %
          (st["allocated_bytes.all.peak"], st["reserved_bytes.all.peak"], oom))


def frames_have(stack, file, line):
    return any(f.get("kind") == "python" and os.path.basename(f.get("file") or "") == file
               and f.get("line") == line for f in stack)


def check(truth_path, report_path):
    t = json.load(open(truth_path))
    r = json.load(open(report_path))
    ok = True

    def say(good, what):
        nonlocal ok
        ok &= bool(good)
        print("%s torch4: %s" % ("PASS" if good else "FAIL", what))

    d = [x for x in r["devices"] if x["device"] == 0 and x["kind"] == "device"]
    d = d[0] if d else {}
    say(d.get("peak_allocated_bytes") == t["allocated_peak"],
        "peak allocated %s = torch %d" % (d.get("peak_allocated_bytes"), t["allocated_peak"]))
    # PyTorch's segments (the "pytorch" owner, from tlm's own driver events and native
    # stacks) against torch's reserved peak; the device also holds what cuBLAS takes
    # itself (its handles' default workspaces), outside PyTorch's count
    own = {o["owner"]: o for o in d.get("owners") or []}
    say(own.get("pytorch", {}).get("peak_bytes") == t["reserved_peak"],
        "peak reserved by PyTorch's segments %s = torch %d (owners: %s)"
        % (own.get("pytorch", {}).get("peak_bytes"), t["reserved_peak"],
           ", ".join("%s %d" % (k, o["peak_bytes"]) for k, o in sorted(own.items()))))
    say(sum(o["bytes_at_reserved_peak"] for o in own.values()) == d.get("peak_reserved_bytes"),
        "the owners add up to the device's reserved peak %s" % d.get("peak_reserved_bytes"))
    pk = [s for s in r.get("at_peak", []) if s["device"] == 0 and s["kind"] == "device"]
    say(sum(s["bytes"] for s in pk) == t["allocated_peak"],
        "at the peak: %d sites add up to torch's peak %d" % (len(pk), t["allocated_peak"]))
    L = t["lines"]
    # the list is dropped before the run ends: a leak per step (STEPS), not one live at the end
    label = "(%s:%d)" % (t["file"], L["LEAK"])
    lk = [x for p in r["steps"]["phases"] for x in p["leaks"] if x["label"].endswith(label)]
    say(len(lk) == 1 and lk[0]["bytes_per_step"] == t["leak_per_step"]
        and lk[0]["steps_with_survivors"] == lk[0]["steps_measured"] >= 50,
        "a leak per step at %s:%d (losses.append): %s, torch %d B per step"
        % (t["file"], L["LEAK"], lk, t["leak_per_step"]))
    say(any(frames_have(s["stack"], t["file"], L["CYCLE"]) for s in r["gc_freed"]),
        "gc-freed memory at %s:%d (the cycle)" % (t["file"], L["CYCLE"]))
    ooms = [o for o in r["ooms"] if o.get("requested_bytes") == 24 * MiB]
    say(t["oom"] and ooms and ooms[0]["verdict"] == "fragmentation",
        "the 24 MiB request failed and tlm says fragmentation (%s)" %
        ([o.get("verdict") for o in ooms] or "no OOM recorded"))
    return ok


def steps(n, history):
    import torch
    model, opt = model_and_opt(torch)
    if history:
        torch.cuda.memory._record_memory_history(stacks="python")
    x = torch.randn(256, 1024, device="cuda")
    for _ in range(20):  # warm up
        step(torch, model, opt, x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step(torch, model, opt, torch.randn(256, 1024, device="cuda"))
    torch.cuda.synchronize()
    print("%.4f" % ((time.perf_counter() - t0) * 1e3 / n))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "workload":
        workload(sys.argv[2])
    elif mode == "check":
        sys.exit(0 if check(sys.argv[2], sys.argv[3]) else 1)
    elif mode in ("steps", "steps-history"):
        steps(int(sys.argv[2]), mode == "steps-history")
    else:
        raise SystemExit(__doc__)
