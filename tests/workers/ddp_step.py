"""One DDP training step over gloo, launched once per rank by the agent:
init_process_group("gloo", init_method="env://") must find everything it
needs (MASTER_ADDR/PORT, RANK, WORLD_SIZE) in the environment the agent gives."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])
assert int(os.environ["LOCAL_RANK"]) == rank % int(os.environ["LOCAL_WORLD_SIZE"])

torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
ddp = DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
inputs = torch.full((8, 4), float(rank + 1))  # different data on each rank
ddp(inputs).sum().backward()
optimizer.step()

# Gradients were averaged: every rank holds the same parameters.
flat = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.zeros_like(flat) for _ in range(world)]
dist.all_gather(gathered, flat)
assert all(torch.allclose(gathered[0], g) for g in gathered), "parameters differ across ranks"
print(f"ddp step ok: rank {rank} of {world}", flush=True)
dist.destroy_process_group()
