# SPDX-License-Identifier: MIT
# tests/whatif/real/oracle.py TLM PYTHON DIR [--workloads W,...] [--memory SIZE] [--table]
# - tlm whatif's predictions against PyTorch's real allocator.
#
# 1. Each workload of workloads.py runs under PyTorch's defaults on the
#    simulated device (`tlm run --simulate SIZE`, default 1G), recorded.
# 2. tlm whatif predicts, from each of those traces, every setting of its own
#    grid and the EXTRA settings: peak reserved, OOMs, device allocations and
#    frees.
# 3. Each workload runs again under each of those settings
#    (PYTORCH_CUDA_ALLOC_CONF), and torch's own figures are the truth:
#    max_memory_reserved(), the OutOfMemoryErrors raised, memory_stats()'s
#    num_device_alloc and num_device_free.
# Every prediction must equal its real run, in bytes and counts; every run
# must have been compared (a run that dies, a setting missing, a grid without
# one of the kinds of settings: a failure). Each run's own trace, replayed
# under its own settings, must reproduce its driver calls event for event and
# the allocator's totals at every block event. --table prints the comparison
# as docs/whatif.md's table instead of failing on a difference.
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ["mixed", "growing", "interleave", "splits", "batches", "cache"]
EXTRA = ["roundup_power2_divisions:[16:2,64:4,>:8]", "garbage_collection_threshold:0.6,per_process_memory_fraction:0.85"]
# the kinds of settings every workload's comparison must cover
KINDS = ["expandable_segments:True", "max_split_size_mb:", "roundup_power2_divisions:", "roundup_power2_divisions:[",
         "garbage_collection_threshold:"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    tlm, py, d = sys.argv[1:4]
    rest = sys.argv[4:]
    workloads, memory, table = WORKLOADS, "1G", False
    while rest:
        a = rest.pop(0)
        if a == "--workloads":
            workloads = rest.pop(0).split(",")
        elif a == "--memory":
            memory = rest.pop(0)
        elif a == "--table":
            table = True
        else:
            fail("usage: oracle.py TLM PYTHON DIR [--workloads W,...] [--memory SIZE] [--table]")

    # a sanitized libtlm.so needs its runtime ahead of it (TLM_TEST_PRELOAD_FIRST, tests/shim)
    run_env = dict(os.environ)
    if os.environ.get("TLM_TEST_PRELOAD_FIRST"):
        run_env["LD_PRELOAD"] = os.environ["TLM_TEST_PRELOAD_FIRST"]

    def runs(tag, jobs):
        """Runs the jobs (workload, conf) in one recorded process tree; their figures by job."""
        path = os.path.join(d, tag + ".jobs")
        with open(path, "w") as f:
            for k, (w, c) in enumerate(jobs):
                f.write("%s-%d\t%s\t%s\n" % (tag, k, w, c))
        p = subprocess.run([tlm, "run", "--no-summary", "--simulate", memory, "-o", os.path.join(d, "t-%p.trace"),
                            "--", py, os.path.join(HERE, "workloads.py"), d, path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                           env=run_env)
        out = {}
        for k, j in enumerate(jobs):
            f = os.path.join(d, "%s-%d.json" % (tag, k))
            if not os.path.exists(f):
                print(p.stdout[-3000:])
                fail("%s under '%s' left no figures (its run died): not compared" % j)
            with open(f) as fh:
                out[j] = json.load(fh)
        return out

    def whatif(*args):
        p = subprocess.run([tlm, "whatif", "--format", "json"] + list(args), stdout=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode:
            fail("tlm whatif %s: exit %d" % (" ".join(args), p.returncode))
        return json.loads(p.stdout)["devices"][0]

    def trace(fig):
        return os.path.join(d, "t-%d.trace" % fig["pid"])

    def reproduced(fig, what):
        c = whatif(trace(fig))["check"]
        if (c["mismatches"] or not c["done"]) and not table:
            fail("%s: the replay of the real run under its own settings: %s" % (what, c["first_mismatch"]))
        return c

    base = runs("base", [(w, "") for w in workloads])
    predicted = {}
    for w in workloads:
        b = base[(w, "")]
        if b["persistent_ooms"]:
            fail("%s: %d requests that live on failed under the defaults: no setting can be predicted" %
                 (w, b["persistent_ooms"]))
        c = reproduced(b, w + " under the defaults")
        grid = whatif(trace(b))
        extra = whatif(*sum([["--setting", s] for s in EXTRA], []), trace(b))
        settings = grid["settings"][1:] + extra["settings"][1:]
        for k in KINDS:
            if not any(s["label"].startswith(k) or "," + k in s["label"] for s in settings):
                fail("%s: no setting of kind %s compared" % (w, k))
        predicted[w] = [grid["settings"][0]] + settings
        print("ok %s: the defaults' run reproduced (%d driver calls, %d block events); memory %d B from %s; "
              "%d settings to compare" % (w, c["driver_calls"], c["block_events"], grid["memory_bytes"],
                                          grid["memory_source"], len(settings)))

    # each setting as written (the recorded settings are the defaults)
    alt = runs("alt", [(w, s["label"]) for w in workloads for s in predicted[w][1:]])
    rows, bad, compared = [], 0, 0
    for w in workloads:
        for s in predicted[w]:
            name = "(defaults)" if s["label"] == "recorded" else s["label"]
            real = base[(w, "")] if s["label"] == "recorded" else alt[(w, name)]
            own = reproduced(real, "%s under %s" % (w, name))["mismatches"] == 0 if s["label"] != "recorded" else True
            got = (s["peak_reserved_bytes"], s["ooms"], s["driver_allocs"], s["driver_frees"])
            want = (real["max_memory_reserved"], real["ooms"], real["num_device_alloc"], real["num_device_free"])
            compared += 1
            rows.append((w, name, got, want, own))
            if got != want:
                bad += 1
                if not table:
                    print("FAIL %s %s: predicted (peak reserved, OOMs, device allocs, frees) %r, torch says %r" %
                          (w, name, got, want))
            elif not table:
                print("ok %s %s: predicted = real: %r" % (w, name, got))
    if table:
        print("| workload | setting | peak reserved: predicted | real | OOMs | device allocs/frees |")
        print("|---|---|---:|---:|---|---|")
        for w, s, g, r, own in rows:
            print("| %s | `%s` | %d | %d%s | %d / %d | %d/%d / %d/%d%s |" %
                  (w, s, g[0], r[0], "" if g[0] == r[0] else " (%+.1f MiB)" % ((g[0] - r[0]) / 2 ** 20),
                   g[1], r[1], g[2], g[3], r[2], r[3], "" if own else " (its own replay fails)"))
        print("%d of %d predictions equal the real run" % (compared - bad, compared))
        return
    if bad:
        fail("%d of %d predictions differ from the real runs" % (bad, compared))
    print("PASS: %d predictions, each equal to its real run, over %d workloads" % (compared, len(workloads)))


main()
