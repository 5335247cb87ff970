# SPDX-License-Identifier: MIT
"""The snapshot of snap_synth's trace, exactly (test export_torch_snapshot_vmm).
usage: check_snap_synth.py SNAP_SYNTH_BINARY"""
import os
import pickle
import subprocess
import sys
import tempfile

MiB = 1 << 20
VA, EXT = 0x300000000000, 0x7000000000
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "s.pickle")
    subprocess.run([sys.argv[1], path, os.path.join(d, "s.html")], check=True)
    s = pickle.load(open(path, "rb"))
    html = open(os.path.join(d, "s.html"), encoding="utf-8").read()
fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" {detail!r:.600}"))
    fails += not ok


segs = s["segments"]
check("two segments: the cudaMalloc outside the allocator, then the expandable one",
      [(g["address"], g["total_size"], g["is_expandable"], "tlm_api" in g) for g in segs]
      == [(EXT, 4 * MiB, False, True), (VA, 4 * MiB, True, False)], segs)
ext, exp = segs
check("outside the allocator: one active block, its API and its stack",
      ext["tlm_api"] == "cudaMalloc" and ext["allocated_size"] == 4 * MiB and len(ext["frames"]) == 1
      and [(b["address"], b["size"], b["state"]) for b in ext["blocks"]] == [(EXT, 4 * MiB, "active_allocated")],
      ext)
check("the expandable segment (2 MiB pages: PyTorch's small pool): blocks tile both chunks, the freed one inactive",
      [(b["address"], b["size"], b["state"]) for b in exp["blocks"]]
      == [(VA, MiB, "active_allocated"), (VA + MiB, 2 * MiB, "active_allocated"), (VA + 3 * MiB, MiB, "inactive")]
      and exp["allocated_size"] == 3 * MiB and exp["frames"] == [] and exp["segment_type"] == "small", exp)
check("blocks keep their stacks (2 frames each)", [len(b["frames"]) for b in exp["blocks"]] == [2, 2, 0])
tr = s["device_traces"]
got = [(e["action"], e.get("addr", e.get("device_free")), e["size"]) for e in tr[0]]
want = [("segment_map", VA, 2 * MiB), ("alloc", VA, MiB), ("segment_map", VA + 2 * MiB, 2 * MiB),
        ("alloc", VA + MiB, 2 * MiB), ("alloc", VA + 7 * MiB // 2, MiB // 2),
        ("free_requested", VA + 7 * MiB // 2, MiB // 2), ("free_completed", VA + 7 * MiB // 2, MiB // 2),
        ("segment_alloc", EXT, 4 * MiB), ("alloc", EXT, 4 * MiB), ("oom", MiB, 8 * MiB)]
check("one device, its trace in order (the failed cuMemCreate folded into the allocator's oom)",
      len(tr) == 1 and got == want, got)
check("only the entries outside the allocator are marked",
      [e.get("tlm_api") for e in tr[0]] == [None] * 7 + ["cudaMalloc"] * 2 + [None])
t0 = tr[0][0]["time_us"]
# the 512 KiB block's allocation was stamped 9.5 ms, after its free's 9 ms:
# it shows 9 ms, the latest its allocation can have happened; no time goes
# back on the events' clock. The wall clock, which PyTorch reads at each
# event, was set 50 ms ahead at 8 ms and 30 ms back at 11 ms (CLOCK records):
# the times follow it, as PyTorch's own would
check("times: microseconds, exact, on the wall clock as it was set during the run",
      t0 == 1700000000000000 + 3000 and [e["time_us"] - t0 for e in tr[0]]
      == [0, 1000, 3000, 4000, 56000, 56000, 56000, 57000, 57000, 29000], [e["time_us"] - t0 for e in tr[0]])
check("allocator settings: expandable segments", s["allocator_settings"] == {"expandable_segments": True})
sites = html.split('class="active-sites">', 1)[1].split("</script>", 1)[0]
check("the timeline marks the cudaMalloc as outside the allocator, and only it",
      sites.count('"outside the allocator (cudaMalloc)"') == 1 and sites.count("outside the allocator") == 1, sites)
print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
sys.exit(1 if fails else 0)
