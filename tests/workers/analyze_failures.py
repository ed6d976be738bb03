"""Real failures for `analyze logs` to diagnose (tests/integration/analyze_test.cc).
Each mode makes one rank fail the way it fails on clusters; the other rank is
an innocent peer that either dies of it or is stopped by the agent.

  killed      rank 1 is killed by SIGKILL mid-training (as by the OOM killer);
              rank 0 dies of "Connection closed by peer" in its all_reduce
  port        rank 0's rendezvous store cannot bind STORE_PORT, which another
              process holds (errno 98)
  module      rank 1 imports a module that is not installed
  exception   rank 1 raises in its training step
  master      rank 1 is given a MASTER_ADDR nothing answers on
"""
import datetime
import os
import signal
import sys
import time

mode = sys.argv[1]
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])

if mode == "module" and rank == 1:
    import primus_analyze_no_such_module  # noqa: F401

import torch
import torch.distributed as dist

if mode == "port":
    # A script with its own init_method URL, as many have.
    url = "tcp://127.0.0.1:%s" % os.environ["STORE_PORT"]
    dist.init_process_group("gloo", init_method=url, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
elif mode == "master":
    if rank == 1:
        os.environ["MASTER_ADDR"] = os.environ["WRONG_MASTER_ADDR"]
    timeout = 3 if rank == 1 else 60
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
else:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))

print("rank %d: joined the process group of %d" % (rank, world), flush=True)
for step in range(1, 1000):
    if mode == "killed" and rank == 1 and step == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "exception" and rank == 1 and step == 3:
        raise ValueError("loss became NaN at step %d" % step)
    tensor = torch.ones(1024)
    dist.all_reduce(tensor)
    print("step %d loss %.4f" % (step, 5.0 / step), flush=True)
    time.sleep(0.05)
