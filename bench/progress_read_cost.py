#!/usr/bin/python3
"""The agent's CPU cost of reading progress from the workers' output.

Each run: `primus-cli direct` with 4 workers that `cat` a prepared file of
LINES lines each (their cost is nearly nil and the same in every run), with
--progress-format none (the anchor: the agent's log path alone), auto and
megatron. Two kinds of output: Megatron-LM training_log lines (every line a
progress line: the worst case) and plain log lines without the word "loss"
(what most of a log is: the prefilter's cost). CPU is user+sys of the agent
and its workers (getrusage of the children), runs interleaved; the reader's
cost is the difference from the anchor, per 10k lines.
Target: below 1% of a core for a 64-rank node printing one progress line per
rank per second (64 lines per second).

usage: /usr/bin/python3 bench/progress_read_cost.py [LINES] [RUNS]
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys

import benchlib as b

NPROC = 4
lines = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
work = b.workdir("progress")
env = b.isolated_env(work)

megatron = os.path.join(work, "megatron.txt")
with open(megatron, "w") as out:
    for i in range(1, lines + 1):
        # Megatron-LM core_v0.19 training_log's fields, in its format
        out.write(f" [2026-11-27 12:00:00.123456] iteration {i:8d}/{lines:8d} | consumed samples: {i * 64:12d} |"
                  f" elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 412.3 |"
                  f" learning rate: {3e-4:.6E} | global batch size: {64:5d} | lm loss: {7.5:.6E} |"
                  f" loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 |"
                  f" number of nan iterations:   0 |\n")
plain = os.path.join(work, "plain.txt")
with open(plain, "w") as out:
    for i in range(lines):
        out.write(f"[rank0]: building the data loader shard {i} of the dataset, {i * 4096} samples so far, ok\n")


def cpu_seconds(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = subprocess.run(command, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert code == 0, f"exit {code}: {command}"
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


results = {}
for kind, path in (("megatron lines", megatron), ("plain lines", plain)):
    samples = {"none": [], "auto": [], "megatron": []}
    for _ in range(runs):
        for fmt in samples:
            log_dir = os.path.join(work, "logs")
            shutil.rmtree(log_dir, ignore_errors=True)
            command = b.primus_direct(NPROC, ["/bin/cat", path], log_dir,
                                      ["--progress-format", fmt, "--telemetry-interval", "0"])
            samples[fmt].append(cpu_seconds(command))
    results[kind] = {fmt: statistics.median(values) for fmt, values in samples.items()}
shutil.rmtree(work, ignore_errors=True)

total_lines = lines * NPROC
for kind, medians in results.items():
    rows = [(f"--progress-format {fmt}", medians[fmt], "s CPU") for fmt in medians]
    for fmt in ("auto", "megatron"):
        extra = max(0.0, medians[fmt] - medians["none"])
        per_10k = extra / total_lines * 1e4
        rows.append((f"{fmt}: cost per 10k lines", per_10k * 1000, "ms CPU"))
        rows.append((f"{fmt}: 64 lines/s, share of a core", per_10k * 64 / 1e4 * 100, "%"))
        rows.append((f"{fmt} / none", medians[fmt] / medians["none"], "x"))
    b.table(f"{kind}: {NPROC} workers x {lines} lines, median of {runs}", rows,
            "target: the 64 lines/s share below 1% of a core")
