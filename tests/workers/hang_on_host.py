"""A gloo job where the rank on one host (argv[1]) stops outside the collective.

Every rank does STEPS (argv[2], default 6) all_reduce steps; at step 2 the
rank running on the bad host sleeps instead, so the others wait in the
all_reduce. On any other set of hosts the job finishes: the bad-node tests
run it, find the host bad, and run it again without it.
"""
import socket
import sys
import time

import torch
import torch.distributed as dist


def wait_for_peer():
    time.sleep(600)  # the culprit: not in the collective


def main():
    bad_host = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    host = socket.gethostname()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tensor = torch.ones(4)
    for step in range(steps):
        if step == 2 and host == bad_host:
            print("rank %d on %s: stalling at step %d" % (rank, host, step), flush=True)
            wait_for_peer()
        dist.all_reduce(tensor)
        print("rank %d on %s step %d" % (rank, host, step), flush=True)
        time.sleep(0.1)
    print("rank %d on %s: done, world %d" % (rank, host, dist.get_world_size()), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
