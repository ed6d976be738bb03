#!/usr/bin/python3
"""The worker of bench/elastic_recovery.py: a small data-parallel job (gloo,
CPU) that survives elastic restarts.

Each attempt joins the process group from torchrun's environment, resumes
from rank 0's checkpoint in --ckpt-dir (step and weights, broadcast), and
trains a tiny linear model for ever (or --steps): one DDP step, then a pause of
--step-seconds. Rank 0 writes the checkpoint after every step (temporary file,
then rename). After every step each rank prints, and appends to --events (one
write per line, O_APPEND, so ranks on every host can share the file):

    elastic-step time=<epoch s> host=<hostname> rank=<RANK> world=<WORLD_SIZE> restart=<TORCHELASTIC_RESTART_COUNT> step=<N>

and once per attempt, when the process group has formed (to the file only):

    elastic-join time=<epoch s> host=... rank=... world=... restart=... started=<process start> imported=<torch imported>

--collective-timeout bounds every gloo operation: a peer that vanished without
closing its sockets (a cut link) makes the collective fail after that long
instead of gloo's 30 minutes, and the launcher then restarts the group.

Run it as the workers of an agent:
    torchrun ... --no-python /usr/bin/python3 -u bench/workers/elastic_worker.py --ckpt-dir D --events F
"""
import time

STARTED = time.time()   # before importing torch: the bench's breakdown starts here

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt-dir", required=True)
    parser.add_argument("--events", required=True, help="file the step lines are appended to")
    parser.add_argument("--step-seconds", type=float, default=0.1, help="pause after every step")
    parser.add_argument("--collective-timeout", type=float, default=10.0, help="seconds (gloo)")
    parser.add_argument("--steps", type=int, default=0, help="stop after this step (0: never)")
    args = parser.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    host = socket.gethostname()
    torch.set_num_threads(1)
    imported = time.time()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.collective_timeout))
    joined = time.time()

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    path = os.path.join(args.ckpt_dir, "last.pt")
    if rank == 0 and os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
    # Rank 0 decides: the step here, the weights in DDP's initial broadcast
    # (plain SGD keeps no other state).
    box = torch.tensor([step])
    dist.broadcast(box, 0)
    step = int(box.item())
    ddp = DistributedDataParallel(model)

    events = os.open(args.events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(events, (f"elastic-join time={joined:.6f} host={host} rank={rank} world={world} restart={restart} "
                      f"started={STARTED:.6f} imported={imported:.6f}\n").encode())
    while not args.steps or step < args.steps:
        step += 1
        generator = torch.Generator().manual_seed(step * 1000 + rank)
        x = torch.randn(8, 16, generator=generator)
        loss = ddp(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()   # the all-reduce: completes only with every rank of this world
        optimizer.step()
        line = (f"elastic-step time={time.time():.6f} host={host} rank={rank} world={world} "
                f"restart={restart} step={step}\n")
        os.write(events, line.encode())
        sys.stdout.write(line)
        sys.stdout.flush()
        if rank == 0:
            os.makedirs(args.ckpt_dir, exist_ok=True)
            torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
                       path + ".tmp")
            os.replace(path + ".tmp", path)
        time.sleep(args.step_seconds)
    dist.barrier()
    # Leave without tearing gloo down (torch 1.13's teardown can deadlock).
    os._exit(0)


if __name__ == "__main__":
    main()
