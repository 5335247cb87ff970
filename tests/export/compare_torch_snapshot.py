# SPDX-License-Identifier: MIT
"""tlm's snapshot of a real-PyTorch run against PyTorch's own
(tests/torch/real/run.sh).

usage: compare_torch_snapshot.py TORCH.pickle TLM.pickle REPORT.json

The run recorded its history with torch.cuda.memory._record_memory_history(
stacks="python") from its first CUDA allocation and dumped it at its end;
tlm recorded the same run. Both are loaded with pickle (as memory_viz's
_read does) and must agree:
  - the same top-level keys (tlm adds 'tlm');
  - PyTorch's segments: the same, every key equal (requested_size aside:
    PyTorch's allocator tap reports rounded sizes only), with the same blocks
    (address, size, state, frames);
  - each device's trace, tlm's entries outside the allocator (key tlm_api)
    aside: the same actions at the same addresses, streams, frames (a
    block's free too: its Python frames) and device free memory, in the
    same order; sizes equal, but for a block,
    PyTorch writes the size asked for and tlm the block's:
    max(512, the request rounded up to 512);
    times within 1 ms for most (median) entries;
  - what tlm adds (tlm_api): segments of their own whose bytes, with
    PyTorch's, are the device's reserved bytes in tlm's report.
"""
import json
import pickle
import statistics
import sys

fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" {detail}"))
    fails += not ok


def strip(d, drop):
    return {k: v for k, v in d.items() if k not in drop}


def main():
    t = pickle.load(open(sys.argv[1], "rb"))
    m = pickle.load(open(sys.argv[2], "rb"))
    rep = json.load(open(sys.argv[3]))
    check("top-level keys", set(t) == set(m) - {"tlm"}, (sorted(t), sorted(m)))
    own = sorted((s for s in m["segments"] if "tlm_api" not in s), key=lambda s: (s["device"], s["address"]))
    ext = [s for s in m["segments"] if "tlm_api" in s]
    ts = sorted(t["segments"], key=lambda s: (s["device"], s["address"]))
    check(f"PyTorch's {len(ts)} segments", [(s["device"], s["address"], s["total_size"]) for s in ts]
          == [(s["device"], s["address"], s["total_size"]) for s in own])
    bad = [(a["address"], k) for a, b in zip(ts, own) for k in a
           if k not in ("blocks", "requested_size") and a[k] != b.get(k)]
    check("segments: every key equal (requested_size aside)", not bad, bad[:5])
    tb = [strip(b, {"requested_size"}) for s in ts for b in s["blocks"]]
    mb = [strip(b, {"requested_size"}) for s in own for b in s["blocks"]]
    check(f"blocks: {len(tb)} equal (address, size, state, frames)", tb == mb,
          next(((x, y) for x, y in zip(tb, mb) if x != y), (len(tb), len(mb))))
    check("devices", len(t["device_traces"]) <= len(m["device_traces"]))
    for dev, tt in enumerate(t["device_traces"]):
        mm = [e for e in m["device_traces"][dev] if "tlm_api" not in e]
        check(f"device {dev}: {len(tt)} trace entries", len(tt) == len(mm), len(mm))
        order = [(i, a["action"], b["action"]) for i, (a, b) in enumerate(zip(tt, mm))
                 if (a["action"], a.get("addr"), a.get("device_free"), a["stream"]) !=
                 (b["action"], b.get("addr"), b.get("device_free"), b["stream"])]
        check(f"device {dev}: same actions, addresses, streams, device free memory, in order", not order, order[:3])
        sizes = [(i, a["action"], a["size"], b["size"]) for i, (a, b) in enumerate(zip(tt, mm))
                 if b["size"] != (max(512, (a["size"] + 511) // 512 * 512)
                                  if a["action"] in ("alloc", "free_requested", "free_completed") else a["size"])]
        check(f"device {dev}: sizes (blocks: the request rounded as the allocator rounds it)", not sizes, sizes[:3])
        # every entry has PyTorch's frames, a block's free too (libtlm.so
        # records its Python frames, docs/recording.md)
        frees = ("free_requested", "free_completed")
        fr = [i for i, (a, b) in enumerate(zip(tt, mm)) if a["frames"] != b["frames"]]
        nf = sum(1 for a in tt if a["action"] in frees and a["frames"])
        check(f"device {dev}: the same frames ({nf} block frees with frames)", not fr and nf > 0,
              fr[:3] and (tt[fr[0]]["action"], tt[fr[0]]["frames"][:2], mm[fr[0]]["frames"][:2]))
        keys = [i for i, (a, b) in enumerate(zip(tt, mm)) if set(a) != set(b)]
        check(f"device {dev}: the same keys in each entry", not keys, keys[:1] and (sorted(tt[keys[0]]), sorted(mm[keys[0]])))
        dt = [abs(a["time_us"] - b["time_us"]) for a, b in zip(tt, mm)]
        if dt:
            print(f"   device {dev}: |time_us difference| median {statistics.median(dt)} us, max {max(dt)} us")
            check(f"device {dev}: times agree (median within 1 ms)", statistics.median(dt) <= 1000)
    for d in rep["devices"]:
        if d["kind"] != "device" or d["device"] < 0:
            continue
        res = sum(s["total_size"] for s in own + ext if s["device"] == d["device"])
        check(f"device {d['device']}: PyTorch's segments + {sum(1 for s in ext if s['device'] == d['device'])} "
              "outside the allocator = the report's reserved bytes", res == d["reserved_bytes_at_end"],
              (res, d["reserved_bytes_at_end"]))
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


sys.exit(main())
