#!/usr/bin/python3
"""What telemetry costs the node agent: the agent process's own CPU time
(utime + stime from /proc/<pid>/stat, read until just before it exits) over a
run of 8 workers that each append a metrics line every 0.1 s for 20 s, with
--telemetry-interval 0 (off; the anchor), 5 (the default) and 0.1 (enough samples
to measure). The cost of
one sample is the extra CPU time divided by the number of samples taken
(history.jsonl's lines). Target: under 2 ms of CPU per sample for 8 workers
(at the default 5 s, 0.04 % of one core).

usage: /usr/bin/python3 bench/telemetry.py [seconds] [runs]
"""
import os
import subprocess
import sys
import time

import benchlib as b

NPROC = 8
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
work = b.workdir("telemetry")
env = b.isolated_env(work)
TICK = os.sysconf("SC_CLK_TCK")
WORKER = os.path.join(work, "worker.py")
with open(WORKER, "w") as f:
    f.write(f"""
import json, os, time
out = open(os.environ["PRIMUS_METRICS_FILE"], "a", buffering=1)
start, step = time.time(), 0
while time.time() - start < {SECONDS}:
    time.sleep(0.1)
    step += 1
    out.write(json.dumps({{"step": step, "total_steps": 1000, "loss": 1.0, "tokens_per_s": 1e4, "step_time_s": 0.1}}) + "\\n")
""")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def run(interval, index):
    log_dir = os.path.join(work, f"logs-{interval}-{index}")
    argv = b.primus_direct(NPROC, ["/usr/bin/python3", WORKER], log_dir,
                           extra=("--telemetry-interval", str(interval)))
    process = subprocess.Popen(argv, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = 0.0
    while process.poll() is None:
        value = cpu_seconds(process.pid)
        if value is not None:
            last = value
        time.sleep(0.05)
    history = os.path.join(log_dir, "telemetry", "history.jsonl")
    samples = sum(1 for _ in open(history)) if os.path.exists(history) else 0
    return last, samples, process.returncode


results = {}
for index in range(RUNS):
    for interval in (0, 5, 0.1):  # interleaved: the machine's load hits each alike
        cpu, samples, code = run(interval, index)
        if code != 0:
            sys.exit(f"run with --telemetry-interval {interval} failed with {code}")
        results.setdefault(interval, []).append((cpu, samples))

off = b.summary([cpu for cpu, _ in results[0]])["median"]
rows = [("agent CPU, telemetry off (anchor)", off, "s")]
for interval in (5, 0.1):
    cpu = b.summary([c for c, _ in results[interval]])["median"]
    samples = b.summary([s for _, s in results[interval]])["median"]
    rows.append((f"agent CPU, --telemetry-interval {interval:g}", cpu, "s"))
    rows.append((f"  samples taken ({interval:g} s)", samples, ""))
    if samples:
        rows.append((f"  CPU per sample ({interval:g} s)", (cpu - off) / samples * 1000, "ms"))
b.table(f"telemetry cost: {NPROC} workers, {SECONDS:g} s, median of {RUNS} runs (CPU time at "
        f"{TICK} ticks/s)", rows,
        "the agent's own utime+stime; the orphan guard and the workers are not counted")
