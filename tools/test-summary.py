#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The console account of tools/test.sh: every skip with its reason, and the
counts over all stages.

  test-summary.py meson STAGE BUILD_DIR TALLY   one stage's meson test results
  test-summary.py count STAGE passed|failed TALLY [WHAT]   one result (the fuzzers)
  test-summary.py total TALLY                   "N passed, N failed, N skipped"

A skip is a whole test that exited 77, or a part of a passing test: a cmocka
case ("[  SKIPPED ]") or a part a shell test skipped (tlm_skip_case). Each one
is said through tests/common/skip.sh, which prints "tlm-skip: WHAT: REASON"
(and under CI=true fails what the bootstrap could have installed). A skip that
did not go through it has no reason to show; under CI=true it counts as a
failure, so no test can skip in CI by another way.
"""
import json
import os
import sys

MARK = "tlm-skip: "
FAILED = "so it must run)"  # the end of the rule's line when it fails the test


def skips_of(out, whole):
    """The skips one test's output reports: [(case-or-None, reason-or-None)]."""
    lines = out.splitlines()
    ok = lambda l: l.startswith(MARK) and not l.endswith(FAILED)
    reasons = [l[len(MARK):] for l in lines if ok(l)]
    found, current, pending = [], None, []
    for l in lines:
        # cmocka: "[ RUN      ] NAME", the rule's line, "[  SKIPPED ] NAME"
        # (its closing list names each skipped case again: not counted twice)
        if l.startswith("[ RUN      ] "):
            current, pending = l[13:].strip(), []
        elif ok(l):
            pending.append(l[len(MARK):])
        elif l.startswith("[  SKIPPED ] ") and current is not None and l[13:].strip() == current:
            found.append((current, pending[0] if pending else None))
            current = None
    if found:
        return found
    if reasons:
        return [(None, r) for r in reasons]
    return [(None, None)] if whole else []


def tally(path, stage, passed, failed, skipped):
    with open(path, "a") as f:
        f.write("%s %d %d %d\n" % (stage, passed, failed, skipped))


def meson(stage, build, path):
    ci = os.environ.get("CI") == "true"
    passed = failed = skipped = 0
    log = os.path.join(build, "meson-logs", "testlog.json")
    try:
        results = [json.loads(l) for l in open(log) if l.strip()]
    except OSError as e:
        print("tlm: %s: no test results (%s)" % (stage, e))
        tally(path, stage, 0, 1, 0)
        return
    for r in results:
        name = r["name"].split(":", 1)[-1].strip()
        out = (r.get("stdout") or "") + "\n" + (r.get("stderr") or "")
        res = r["result"]
        whole = res == "SKIP"
        if res == "OK":
            passed += 1
        elif not whole:
            failed += 1
            continue
        for case, reason in skips_of(out, whole):
            where = name + (" / " + case if case else "")
            if reason is None:
                if ci:
                    failed += 1
                    print("tlm: FAILED [%s] %s: skipped without a reason (not through tests/common/skip.sh), "
                          "not allowed under CI=true" % (stage, where))
                    continue
                reason = "no reason given (not through tests/common/skip.sh)"
            skipped += 1
            print("tlm: skipped [%s] %s: %s" % (stage, where, reason))
    print("tlm: %s: %d passed, %d failed, %d skipped" % (stage, passed, failed, skipped))
    tally(path, stage, passed, failed, skipped)


def total(path):
    n = [0, 0, 0]
    try:
        for l in open(path):
            f = l.split()
            for i in range(3):
                n[i] += int(f[i + 1])
    except OSError:
        pass
    print("%d passed, %d failed, %d skipped" % tuple(n))


def main(a):
    if len(a) == 4 and a[0] == "meson":
        meson(a[1], a[2], a[3])
    elif len(a) in (4, 5) and a[0] == "count":
        ok = a[2] == "passed"
        tally(a[3], a[1], int(ok), int(not ok), 0)
    elif len(a) == 2 and a[0] == "total":
        total(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
