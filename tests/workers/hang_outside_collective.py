"""A gloo job where one rank stops outside the collective the others are in.

Every rank does a few all_reduce steps; at step 3 rank HANG_RANK (argv[1])
sleeps instead of joining the next all_reduce, so every other rank waits in
it, silent. Used by the culprit tests (analyze hang, the hang banner).
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def wait_for_peer():
    time.sleep(600)  # the culprit: not in the collective


def main():
    hang_rank = int(sys.argv[1])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tensor = torch.ones(4)
    for step in range(10):
        if step == 3 and rank == hang_rank:
            print("rank %d: stalling at step %d" % (rank, step), flush=True)
            wait_for_peer()
        dist.all_reduce(tensor)
        print("rank %d step %d" % (rank, step), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
