# SPDX-License-Identifier: MIT
"""What the Python checks share about sites: the truth tallied from a
workload's own loop, and its difference from what a report has."""
import json


def tally(allocations):
    """{frames: (bytes, count)} of (frames, size) pairs."""
    sites = {}
    for frames, size in allocations:
        b, c = sites.get(frames, (0, 0))
        sites[frames] = (b + size, c + 1)
    return sites


def compare(got, truth):
    """One line for each site where got (as tally gives it) differs from truth."""
    return ["site %s: got %s, expected %s" % (k, got.get(k), truth.get(k))
            for k in sorted(set(got) | set(truth)) if got.get(k) != truth.get(k)]


def live_sites(report, workload_file):
    """The Python sites of a JSON report's live_at_end, as tally gives
    them: (function, line) frames innermost first; and one line for each
    fault: a frame not of workload_file, two sites with the same frames."""
    got, fails = {}, []
    for s in json.load(open(report))["live_at_end"]:
        py = [fr for fr in s["stack"] if fr["kind"] == "python"]
        if any(fr["file"] is None or not fr["file"].endswith(workload_file) for fr in py):
            fails.append("a frame not of %s: %s" % (workload_file, py))
        k = tuple((fr["function"].rsplit(".", 1)[-1], fr["line"]) for fr in py)
        if k in got:
            fails.append("two sites with the same frames %s" % (k,))
        got[k] = (s["bytes"], s["count"])
    return got, fails
