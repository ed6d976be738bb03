#!/usr/bin/python3
"""Launch + exit of 8 trivial workers (/bin/true), end to end.

Anchors, measured in the same run: torchrun (--monitor-interval 0.1,
--standalone, --no-python), and the bare floor: spawn_baseline, a C++ program
that posix_spawns 8 /bin/true and waitpids them (timed end to end like ours,
and by itself in-process). Targets: torchrun / ours >= 100; ours / bare <= 2.

usage: /usr/bin/python3 bench/launch_exit.py [RUNS]
"""
import os
import shutil
import subprocess
import sys

import benchlib as b

NPROC = 8
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
work = b.workdir("launch")
env = b.isolated_env(work)
ours_cmd = b.primus_direct(NPROC, ["/bin/true"], os.path.join(work, "logs"))
bare_cmd = [b.tool("spawn_baseline"), str(NPROC), "/bin/true"]

ours, bare, bare_inproc = [], [], []
for _ in range(runs):  # interleaved, so machine noise hits both alike
    seconds, code = b.timed_run(ours_cmd, env=env, cwd=work)
    assert code == 0, f"primus-cli exited {code}"
    ours.append(seconds)
    out = subprocess.run(bare_cmd, capture_output=True, text=True)
    bare_inproc.append(float(out.stdout) / 1000)
    seconds, _ = b.timed_run(bare_cmd)
    bare.append(seconds)

torch = []
for _ in range(3):
    seconds, code = b.timed_run(b.torchrun(NPROC, ["/bin/true"]), env=env, cwd=work)
    assert code == 0, f"torchrun exited {code}"
    torch.append(seconds)
shutil.rmtree(work, ignore_errors=True)

o, p, pi, t = b.summary(ours), b.summary(bare), b.summary(bare_inproc), b.summary(torch)
b.table(f"launch + exit of {NPROC} x /bin/true ({runs} runs each, torchrun 3; medians, min in brackets)", [
    ("torchrun --monitor-interval 0.1   [anchor]", t["median"] * 1e3, f"ms  (min {t['min'] * 1e3:.1f})"),
    ("bare posix_spawn+waitpid, end to end [anchor]", p["median"] * 1e3, f"ms  (min {p['min'] * 1e3:.2f})"),
    ("bare posix_spawn+waitpid, in-process", pi["median"] * 1e3, f"ms  (min {pi['min'] * 1e3:.2f})"),
    ("primus-cli direct -- run (ours)", o["median"] * 1e3, f"ms  (min {o['min'] * 1e3:.2f})"),
    ("torchrun / ours", t["median"] / o["median"], "x   (target >= 100; medians)"),
    ("torchrun / ours, fastest runs", t["min"] / o["min"], "x"),
    ("ours / bare end to end", o["median"] / p["median"], "x   (target <= 2; medians)"),
    ("ours / bare end to end, fastest runs", o["min"] / p["min"], "x   (least disturbed by other load)"),
])
