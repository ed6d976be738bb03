"""A Python worker that logs like a training script: print() of MEGABYTES of
~100-byte lines (the realistic counterpart of line_writer).

usage: python3 bench/print_worker.py MEGABYTES"""
import os
import sys

total = int(float(sys.argv[1]) * 1024 * 1024)
rank = os.environ.get("RANK", "?")
written = step = 0
while written < total:
    line = f"rank {rank} step {step} loss 2.3456 lr 0.0003 tokens/s 123456 grad_norm 0.875 ".ljust(99, "x")
    print(line)
    written += 100
    step += 1
