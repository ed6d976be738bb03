#!/usr/bin/python3
"""The anchor of bench/comm_gloo_vs_torch.py: torch.distributed's gloo
all_reduce timed the way nccl-tests (and `benchmark comm`) time it. One
float32 allocation of the largest size; for every size: warm-up, a barrier,
--iters back-to-back all_reduce calls whose tensor slides through that
allocation (nccl-tests' per-iteration shift, against cache effects), the wall
time per iteration averaged over ranks, busbw = size / time * 2(n-1)/n.
torch's all_reduce is in place, so this is nccl-tests' in-place column.
Rank 0 prints one JSON line {"<size>": busbw GB/s, ...}.

It lives in bench/workers/ so that bench/logging.py does not shadow the
standard module. Run it as the workers of an agent: primus-cli direct ... -- run /usr/bin/python3 bench/workers/torch_gloo_allreduce.py --sizes 1048576,...
"""
import argparse
import json
import time

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", required=True, help="bytes, comma-separated")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    big = torch.zeros(max(sizes) // 4)
    result = {}
    for size in sizes:
        count = size // 4
        steps = max(1, (max(sizes) // 4) // count)
        for i in range(args.warmup):
            dist.all_reduce(big[0:count])
        dist.barrier()
        start = time.perf_counter()
        for i in range(args.iters):
            shift = count * (i % steps)
            dist.all_reduce(big[shift:shift + count])
        seconds = torch.tensor([(time.perf_counter() - start) / args.iters], dtype=torch.float64)
        dist.all_reduce(seconds)
        mean = seconds.item() / n
        result[str(size)] = size / mean / 1e9 * 2 * (n - 1) / n
    if rank == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
