# SPDX-License-Identifier: MIT
"""The lines of a workload's markers (a comment "# LINE_NAME" at the end of
a line), so that the checks find their truth by name and edits cannot skew
them."""


def lines_of(path):
    """{NAME: line number} of every "# LINE_NAME" marker in path."""
    lines = {}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if "# LINE_" in text:
                lines[text.split("# LINE_")[1].strip()] = n
    return lines
