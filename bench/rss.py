#!/usr/bin/python3
"""Memory of the launcher while it supervises 8 workers (`sleep`): VmRSS and
VmHWM of the agent process (primus-cli), read from /proc while the workers
run; the orphan guard's RSS is shown too (a fork of the agent, its pages
mostly shared). Anchor in the same run: torchrun's agent process.
Target: ours <= 10 MB.

usage: /usr/bin/python3 bench/rss.py
"""
import os
import shutil
import subprocess
import time

import benchlib as b

NPROC = 8
work = b.workdir("rss")
env = b.isolated_env(work)


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def measure(argv, settle):
    process = subprocess.Popen(argv, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(settle)
    rss, hwm = status_kib(process.pid, "VmRSS"), status_kib(process.pid, "VmHWM")
    guard = [p for p in children(process.pid) if comm(p) == "primus-guard"]
    guard_rss = status_kib(guard[0], "VmRSS") if guard else 0
    workers = len([p for p in children(process.pid) if comm(p) == "sleep"])
    process.wait()
    return rss / 1024, hwm / 1024, guard_rss / 1024, workers


ours = measure(b.primus_direct(NPROC, ["sleep", "3"], os.path.join(work, "logs")), 1.5)
torch = measure(b.torchrun(NPROC, ["sleep", "6"]), 4.5)
shutil.rmtree(work, ignore_errors=True)
b.table(f"launcher memory while supervising {NPROC} workers", [
    ("torchrun agent VmRSS [anchor]", torch[0], f"MB  (VmHWM {torch[1]:.1f} MB, {torch[3]} workers seen)"),
    ("primus-cli agent VmRSS (ours)", ours[0], f"MB  (VmHWM {ours[1]:.1f} MB, {ours[3]} workers seen)"),
    ("primus-cli orphan guard VmRSS", ours[2], "MB  (fork of the agent, pages shared)"),
    ("torchrun / ours", torch[0] / ours[0], "x"),
], note="target: ours <= 10 MB")
