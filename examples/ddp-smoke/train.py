"""A real, tiny data-parallel training run for CPU hosts.

Each worker joins the job through torchrun's environment contract (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT: primus-cli's node agent sets them),
then trains a small regression model with DistributedDataParallel over gloo.
Every rank sees its own shard of a synthetic dataset; gradients are averaged
across ranks, so all replicas stay identical, which the script checks at the
end. Runs on Debian's torch 1.13 and on torch 2.x.

    primus-cli direct --nproc-per-node 2 -- run /usr/bin/python3 examples/ddp-smoke/train.py
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234)  # same initial weights everywhere
    true_weights = torch.randn(16, 1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    data_rng = torch.Generator().manual_seed(100 + rank)  # each rank its own shard

    start = time.time()
    first_loss = None
    for step in range(1, args.steps + 1):
        x = torch.randn(args.batch, 16, generator=data_rng)
        y = x @ true_weights + 0.01 * torch.randn(args.batch, 1, generator=data_rng)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        averaged = loss.detach().clone()
        dist.all_reduce(averaged)
        averaged /= world
        if first_loss is None:
            first_loss = averaged.item()
        if rank == 0 and (step == 1 or step % 50 == 0 or step == args.steps):
            print(f"step {step}/{args.steps} loss {averaged.item():.5f}", flush=True)

    # DDP keeps replicas identical: compare a checksum of the weights.
    checksum = torch.tensor([sum(p.detach().sum().item() for p in model.parameters())])
    gathered = [torch.zeros(1) for _ in range(world)]
    dist.all_gather(gathered, checksum)
    in_sync = all(abs(g.item() - gathered[0].item()) < 1e-4 for g in gathered)
    final = averaged.item()
    if rank == 0:
        print(f"done: {world} workers, {args.steps} steps in {time.time() - start:.1f}s, "
              f"loss {first_loss:.4f} -> {final:.4f}, replicas in sync: {in_sync}", flush=True)
    dist.destroy_process_group()
    if not in_sync:
        print(f"rank {rank}: replicas diverged", file=sys.stderr)
        return 1
    if final > 0.5 * first_loss:
        print(f"rank {rank}: loss did not fall enough ({first_loss} -> {final})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
