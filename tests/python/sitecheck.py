# SPDX-License-Identifier: MIT
"""What the Python checks share about sites: the truth tallied from a
workload's own loop, and its difference from what a report has."""


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
