# SPDX-License-Identifier: MIT
# One rank of the real-torchrun job of tests/job/real (check.py holds the
# truth): ranks that differ by construction, on the simulated device.
#   torchrun --standalone --nproc-per-node 2 ranks.py OUT_DIR
# Rank r, on cuda:LOCAL_RANK:
#   - allocates (r + 1) x 12 MiB at RANK_LINE (at least 10 MiB and a
#     multiple of 2 MiB: PyTorch's allocator takes a segment of exactly that);
#   - runs a DataLoader with 2 fork workers that never touch CUDA;
#   - rank 0 asks for 2 GiB at OOM_LINE (more than the 1 GiB device) and
#     catches torch.OutOfMemoryError;
#   - rank 1 keeps 3 x 512 KiB alive to the end at LEAK_LINE, the first
#     before anything else, the others at the end (a leak by report.md's
#     rule; the small pool puts the three in one 2 MiB segment), and runs
#     this file again as a subprocess (`--child`) that allocates 4 MiB at
#     CHILD_LINE (a 20 MiB segment) and exits.
# Each rank writes what torch says to OUT_DIR/rank-R.json. With
# TLM_TEST_FAIL=1, rank 1 then exits with status 3 and rank 0 sleeps until
# torchrun, seeing the failure, ends it with SIGTERM; with TLM_TEST_FAIL=term
# both sleep until the test sends SIGTERM to tlm run.
import json
import os
import subprocess
import sys
import time

import torch

MiB = 1 << 20
KEEP = []  # rank 1's leak: alive to the end of the run


def worker_init(_):
    with open(os.path.join(sys.argv[1], "worker-%s-%d" % (os.environ["RANK"], os.getpid())), "w"):
        pass


def load():
    """Two fork workers batch CPU tensors; the sum says they did."""
    from torch.utils.data import DataLoader, TensorDataset
    data = TensorDataset(torch.arange(64, dtype=torch.float32))
    dl = DataLoader(data, batch_size=8, num_workers=2, multiprocessing_context="fork",
                    worker_init_fn=worker_init)
    return sum(float(b[0].sum()) for b in dl)


def phase(rank, dev, dist):
    x = torch.empty((rank + 1) * 12 * MiB, dtype=torch.uint8, device=dev)  # RANK_LINE
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)  # gloo, on the CPU
    out = {"all_reduce": float(total), "loaded": load(), "oom": None, "child": None}
    if rank == 1:
        child = subprocess.run([sys.executable, __file__, sys.argv[1], "--child"])
        out["child"] = child.returncode
    del x
    if rank == 0:
        try:
            torch.empty(2 << 30, dtype=torch.uint8, device=dev)  # OOM_LINE
        except torch.OutOfMemoryError as e:
            out["oom"] = str(e).splitlines()[0]
    return out


def work(rank, dev, dist):
    for step in range(3):
        if rank == 1:
            KEEP.append(torch.empty(512 * 1024, dtype=torch.uint8, device=dev))  # LEAK_LINE
        if step == 0:
            out = phase(rank, dev, dist)  # PHASE_CALL
        else:
            time.sleep(0.05)
    return out


def child():
    y = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")  # CHILD_LINE
    with open(os.path.join(sys.argv[1], "child-%d.json" % os.getpid()), "w") as f:
        json.dump({"pid": os.getpid(), "ppid": os.getppid(), "max_memory_allocated": torch.cuda.max_memory_allocated(),
                   "max_memory_reserved": torch.cuda.max_memory_reserved()}, f)
    del y


def main():
    import torch.distributed as dist
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    dist.init_process_group("gloo")
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    out = work(rank, dev, dist)  # WORK_CALL
    out.update(rank=rank, local_rank=local, pid=os.getpid(), ppid=os.getppid(), device=local,
               max_memory_allocated=torch.cuda.max_memory_allocated(dev),
               max_memory_reserved=torch.cuda.max_memory_reserved(dev),
               num_ooms=torch.cuda.memory_stats(dev).get("num_ooms", 0))
    path = os.path.join(sys.argv[1], "rank-%d.json" % rank)
    with open(path + ".tmp", "w") as f:
        json.dump(out, f)
    os.rename(path + ".tmp", path)  # whole when it appears (run.sh waits for it)
    dist.barrier()  # rank 0 is done when rank 1 fails
    fail = os.environ.get("TLM_TEST_FAIL")
    if fail == "1" and rank == 1:
        sys.exit(3)
    if fail:
        time.sleep(60)
    dist.destroy_process_group()


if __name__ == "__main__":
    child() if sys.argv[2:] == ["--child"] else main()  # CHILD_CALL
