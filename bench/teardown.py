#!/usr/bin/python3
"""Teardown: from one worker's failure to the launcher's exit, the 7 peers
honouring SIGTERM (they run `sleep`). Rank 0 runs fail_after, which writes the
wall-clock time just before it exits 3; the bench notes the time the
launcher's process was reaped. Anchor in the same run: torchrun
(--monitor-interval 0.1). Target: ours <= 20 ms.

usage: /usr/bin/python3 bench/teardown.py [RUNS]
"""
import os
import shutil
import subprocess
import sys
import time

import benchlib as b

NPROC = 8
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
work = b.workdir("teardown")
env = b.isolated_env(work)
stamp = os.path.join(work, "failed_at")
worker = ["/bin/sh", "-c",
          f'if [ "$LOCAL_RANK" = 0 ]; then exec {b.tool("fail_after")} 300 {stamp} 3; else exec sleep 100; fi']


def teardown_seconds(argv):
    if os.path.exists(stamp):
        os.unlink(stamp)
    process = subprocess.Popen(argv, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    code = process.wait()
    exited = time.time_ns()
    with open(stamp) as f:
        failed = int(f.read())
    return (exited - failed) / 1e9, code


ours, torch = [], []
for i in range(runs):
    seconds, code = teardown_seconds(b.primus_direct(NPROC, worker, os.path.join(work, "logs")))
    assert code == 3, f"primus-cli exited {code}, expected the worker's 3"
    ours.append(seconds)
for _ in range(3):
    seconds, code = teardown_seconds(b.torchrun(NPROC, worker))
    torch.append(seconds)
    torch_code = code
shutil.rmtree(work, ignore_errors=True)

o, t = b.summary(ours), b.summary(torch)
b.table(f"failure -> launcher exit, {NPROC} workers, peers honour SIGTERM ({runs} runs, torchrun 3; medians)", [
    ("torchrun --monitor-interval 0.1 [anchor]", t["median"] * 1e3, f"ms  (min {t['min'] * 1e3:.1f}; exit code {torch_code})"),
    ("primus-cli direct -- run (ours)", o["median"] * 1e3, f"ms  (min {o['min'] * 1e3:.2f}, max {max(ours) * 1e3:.2f}; exit code 3)"),
    ("torchrun / ours", t["median"] / o["median"], "x"),
], note="target: ours <= 20 ms")
