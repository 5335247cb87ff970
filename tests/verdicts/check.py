# SPDX-License-Identifier: MIT
# check.py GROUP DIR: tests/verdicts' assertions on the reports of run.sh's
# programs. Every expected figure is known without tlm: the programs'
# construction (loop counts, leak sizes), torch's own figures and real
# outcomes written by prog.py (TRUTH), and the exit statuses of the runs.
import base64
import json
import os
import re
import sys

# checkpointing estimates against the twins' real peaks: the tolerance is
# the one achieved (docs/report.md, "Activations and checkpointing")
CKPT_TOL = {"Block.forward": 0.0, "TransformerEncoderLayer.forward": 0.01, "BasicBlock.forward": 0.025,
            "GPT2Block.forward": 0.05}
FORECAST_TOL = (0.10, 2)  # within 10 % or 2 steps of the real run

fails = []
D = sys.argv[2]


def load(name, ext="json"):
    with open(os.path.join(D, "%s.%s" % (name, ext))) as f:
        return json.load(f) if ext in ("json", "truth") else f.read()


def rc(name):
    return int(load(name, "rc").strip())


def want(what, got, exp):
    if got != exp:
        fails.append("%s: got %r, want %r" % (what, got, exp))


def phases(r):
    return {p["name"]: p for p in r["steps"].get("phases", [])}


def check_phases(name, r, exp, primary="training"):
    ph = phases(r)
    for n, c in exp.items():
        want("%s: phase %s count" % (name, n), ph.get(n, {}).get("count"), c)
    want("%s: steps.count (the %s phase)" % (name, primary), r["steps"]["count"], exp[primary])
    tr = ph.get("training")
    if tr:
        want("%s: the training phase is primary" % name, tr["primary"], True)
    if "micro-steps" in exp and "micro-steps" in ph:
        want("%s: micro-steps inside training" % name, ph["micro-steps"]["inside"] is not None, True)


def leak_of(r, phase="training"):
    ls = phases(r).get(phase, {}).get("leaks", [])
    return ls[0] if ls else None


def labels(r):
    for sec in ("at_peak", "live_at_end", "leaks"):
        for s in r[sec]:
            yield sec, s


def check_labels(name, r):
    named = 0
    for sec, s in labels(r):
        lbl = s.get("label") or ""
        has_name = any(f.get("function") for f in s.get("stack", []))
        if has_name and re.match(r"^(dev \d+: |host: )?0x[0-9a-f]+", lbl):
            fails.append("%s: %s site labelled by an address while a named frame is on its stack: %s" %
                         (name, sec, lbl))
        named += "(autograd's backward)" in lbl
    return named


def group_native():
    te, base, te0 = load("train_eval"), load("base8k"), load("train_eval0")
    for n, r in (("train_eval", te), ("base8k", base), ("train_eval0", te0)):
        check_phases(n, r, {"training": 20, "evaluation": 50})
    l = leak_of(te)
    want("train_eval: leak per step", l and l["bytes_per_step"], 65536)
    want("train_eval: steps with survivors", l and l["steps_with_survivors"], l and l["steps_measured"])
    want("train_eval0: no leak", leak_of(te0), None)
    # the kept losses dropped when training ends: no leak live at the end, a leak per step,
    # said in the summary and LEAKS, and the gate fails on it
    fr = load("train_free")
    check_phases("train_free", fr, {"training": 20, "evaluation": 50})
    l = leak_of(fr)
    want("train_free: leak per step", l and l["bytes_per_step"], 65536)
    want("train_free: leaks live at the end", fr["leaks"], [])
    # the last step much shorter than the rest: the burst of frees right after it is not in it
    l = leak_of(load("train_free_fast"))
    want("train_free_fast: leak per step", l and l["bytes_per_step"], 65536)
    if "leaks: none at the end; 1 site grew in most steps, freed later (steps, below)" not in load("train_free", "sum"):
        fails.append("train_free: the summary does not say the step leak:\n" + load("train_free", "sum"))
    if "  but 1 site left memory in most steps and freed it later: LEAKS PER STEP" not in load("train_free", "txt"):
        fails.append("train_free: LEAKS does not point at the step leak")
    if "leaks: none\n" not in load("train_eval0", "sum"):
        fails.append("train_eval0: the summary of a run without leaks:\n" + load("train_eval0", "sum"))
    want("gate on a leak freed before the end: exit status", rc("gate_free"), 1)
    if ("leaks per step grew by %d B" % (65536 - 8192) not in load("gate_free", "out") or
            "  +56.0 KiB per step at sites whose memory was freed before the run ended" not in load("gate_free", "out")):
        fails.append("gate_free: no per-step growth of %d B in:\n%s" % (65536 - 8192, load("gate_free", "out")))
    check_phases("epochs", load("epochs"), {"training": 18, "evaluation": 27})
    l = leak_of(load("epochs"))
    want("epochs: leak per step", l and l["bytes_per_step"], 32768)
    check_phases("accum", load("accum"), {"training": 8, "micro-steps": 32})
    check_phases("steps3", load("steps3"), {"training": 3})
    # the case: the training leak grew 8 times under a longer evaluation
    want("gate exit status", rc("gate"), 1)
    out = load("gate", "out")
    if "leaks per step grew by %d B" % (65536 - 8192) not in out:
        fails.append("gate: no per-step growth of %d B in:\n%s" % (65536 - 8192, out))


def group_phases():
    for name in ("train_eval", "epochs", "accum", "steps3", "steps4"):
        r, t = load(name), load(name, "truth")
        want("%s: exit" % name, rc(name), 0)
        check_phases(name, r, t["phases"])
        df = r["steps"]["driving_frame"] or {}
        want("%s: driving frame in the program's file" % name, os.path.basename(df.get("file") or ""), "prog.py")


def ckpt_check(name, base, twins, unit):
    funcs = base["activations"]["functions"]
    top = funcs[0] if funcs else {}
    want("%s: checkpointing unit" % name, (top.get("frame") or {}).get("function"), unit)
    est = {c["every"]: c["estimated_peak_bytes"] for c in (top.get("checkpointing") or [])}
    tol = CKPT_TOL[unit]
    for every, truth in twins:
        real = truth["steady_peak"]
        e = est.get(every)
        if e is None or abs(e - real) > tol * real:
            fails.append("%s every %d: estimated %r, real peak %d (tolerance %.1f %%)" % (name, every, e, real,
                                                                                       100 * tol))
        else:
            print("%s: checkpoint every %d: estimated %d B, real %d B (%+.2f %%)" %
                  (name, every, e, real, 100.0 * (e - real) / real))


def group_modules():
    for name, steps in (("resnet0", 4), ("gpt20", 6), ("tr0", 6)):
        r, t = load(name), load(name, "truth")
        want("%s: exit" % name, rc(name), 0)
        check_phases(name, r, {"training": steps})
        nodes = check_labels(name, r)
        if not nodes:
            fails.append("%s: no site named by its autograd node" % name)
    ckpt_check("resnet", load("resnet0"), [(1, load("resnet1", "truth")), (2, load("resnet2", "truth"))],
               "BasicBlock.forward")
    ckpt_check("gpt2", load("gpt20"), [(1, load("gpt21", "truth"))], "GPT2Block.forward")
    ckpt_check("transformer", load("tr0"), [(1, load("tr1", "truth")), (2, load("tr2", "truth"))],
               "TransformerEncoderLayer.forward")
    # HTML: the active timeline's first event on the axis' clock (seconds
    # since the trace start, as data-t0, the first event of the run, says)
    html = load("resnet0", "html")
    fig = re.search(r'<figure class="active"[^>]*data-t0="(\d+)"', html)
    data = re.search(r'class="active-data">([^<]*)', html)
    if not fig or not data:
        fails.append("html: no active timeline")
    else:
        first, mul = 0, 1
        for c in base64.b64decode(data.group(1).strip()):
            first += (c & 0x7F) * mul
            mul *= 128
            if not c & 0x80:
                break
        t0 = int(fig.group(1))
        if not (t0 <= first < t0 + 10**9 and t0 > 10**9):
            fails.append("html: first drawn event at %d ns, the run's first event at %d ns" % (first, t0))
    # the 8 B of pinned memory PyTorch keeps is folded, not charted
    if "host pinned: peak 8 B, too small beside the others to chart" not in html:
        fails.append("html: the host's 8 B are not folded")


def group_leaks():
    r, t = load("leak_eval"), load("leak_eval", "truth")
    check_phases("leak_eval", r, t["phases"])
    l = leak_of(r)
    want("leak_eval: leak per step (torch's memory_allocated)", l and l["bytes_per_step"], t["leak_per_step"])
    want("leak_eval: steps with survivors", l and l["steps_with_survivors"], l and l["steps_measured"])
    if l and "prog.py:" not in (l["label"] or ""):
        fails.append("leak_eval: the leak's label names no line of the program: %r" % l["label"])
    want("leak gate exit status", rc("gate"), 1)
    dies, dt = load("leak_dies"), load("leak_dies", "truth")
    ok, ot = load("leak_ok"), load("leak_ok", "truth")
    want("leak_dies: exit", rc("leak_dies") != 0, True)
    died = dies["steps"].get("died")
    want("leak_dies: the step it died in", died and died["step"], dt["started"])
    fc = [d["forecast"] for d in dies["devices"] if d["kind"] == "device" and d["forecast"]]
    if fc and fc[0]["steps_to_oom"] is not None:
        fails.append("leak_dies: a run that died is forecast: %r" % fc[0])
    want("leak_dies: a fatal OOM", [o["outcome"] for o in dies["ooms"]], ["fatal"])
    fc = [d["forecast"] for d in ok["devices"] if d["kind"] == "device" and d["forecast"]]
    real = dt["completed"] - ot["completed"]  # steps the real run completed after leak_ok's last
    got = fc[0]["steps_to_oom"] if fc else None
    if got is None or abs(got - real) > max(FORECAST_TOL[1], FORECAST_TOL[0] * real):
        fails.append("leak_ok: forecast %r more steps, the real run completed %d more" % (got, real))
    else:
        print("forecast: %d more steps, real %d (linear rule: %d)" % (got, real, fc[0]["linear_steps_to_oom"]))


def group_oom():
    for name in ("oom_recovered", "oom_raised", "oom_fatal"):
        r, t = load(name), load(name, "truth")
        outs = [o["outcome"] for o in r["ooms"]]
        want("%s: outcomes" % name, outs, [t["oom"]["outcome"]])
        s = load(name, "sum")
        if t["oom"]["outcome"] == "recovered":
            want("recovered: torch's own retries", t["oom"]["retries"], 1)
            want("recovered: torch's own OOMs", t["oom"]["ooms"], 0)
            want("recovered: exit", rc(name), 0)
            if r["ooms"] and not (r["ooms"][0]["retry"] or {}).get("freed_bytes"):
                fails.append("recovered: no retry cost")
            if "0 raised, 0 fatal; 1 recovered" not in s:
                fails.append("recovered: summary:\n" + s)
        elif t["oom"]["outcome"] == "raised":
            want("raised: caught", t["oom"].get("caught"), True)
            want("raised: exit", rc(name), 0)
            if "1 raised, 0 fatal" not in s:
                fails.append("raised: summary:\n" + s)
        else:
            want("fatal: exit", rc(name) != 0, True)
            if "0 raised, 1 fatal" not in s:
                fails.append("fatal: summary:\n" + s)


def group_ckpt():
    base = load("ck0")
    check_phases("ck0", base, {"training": 8})
    ckpt_check("mlp", base, [(n, load("ck%d" % n, "truth")) for n in (1, 2, 3)], "Block.forward")


def main():
    globals()["group_" + sys.argv[1]]()
    if fails:
        print("\n".join(fails))
        return 1
    print("verdicts %s: ok" % sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
