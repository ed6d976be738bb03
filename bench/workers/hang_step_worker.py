"""bench/hang_culprit.py's worker: a gloo job where the rank with local rank
0 on one host (argv[2]) stops inside a step, outside the all_reduce the
others are in. Appends a timestamped line per event to a shared file
(argv[1]): `hang-step time=T host=H rank=R world=W step=S` after each
all_reduce, `hang-stall time=T host=H rank=R step=S` when it stops. On other
hosts it runs STEPS (argv[3]) steps and ends.
"""
import os
import socket
import sys
import time

import torch
import torch.distributed as dist


def event(path, text):
    with open(path, "a") as out:
        out.write("%s time=%.6f %s\n" % (text.split(" ", 1)[0], time.time(), text.split(" ", 1)[1]))


def wait_for_peer():
    time.sleep(3600)


def main():
    events, bad_host, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    host = socket.gethostname()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    tensor = torch.ones(1024)
    for step in range(steps):
        if step == 3 and host == bad_host and os.environ.get("LOCAL_RANK") == "0":
            event(events, "hang-stall host=%s rank=%d step=%d" % (host, rank, step))
            print("rank %d stalls at step %d" % (rank, step), flush=True)
            wait_for_peer()
        dist.all_reduce(tensor)
        event(events, "hang-step host=%s rank=%d world=%d step=%d" % (host, rank, world, step))
        print("rank %d step %d" % (rank, step), flush=True)
        time.sleep(0.2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
