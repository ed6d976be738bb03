#!/usr/bin/python3
"""Logging throughput: 8 workers each writing MEGABYTES of 100-byte lines.

Anchor, in the same run: the same 8 workers started together with stdout
redirected straight to a file each (no launcher). Ours: primus-cli direct --
run, every line stamped into the rank's log file and prefixed on the console,
with the console (agent stdout) to /dev/null, then to a file. Three workers:
line_writer with 64 KiB writes (C++, nothing but logging at page-cache speed:
the worst case), line_writer with 4 KiB writes (a C/C++ program's stdio
buffer), and print_worker.py (print() per line, like a training script; the
environment's PYTHONUNBUFFERED applies to both sides).
Target: ours <= 1.25x the anchor's wall time.

A second anchor, the floor: the bytes our path has to put in the page cache
(every line stamped into its rank's file, and prefixed again on the console),
written by the same plain writers without a launcher: 8 writers of the
stamped lines plus, for the file console, one writer of the console's bytes
(one file takes its writes one at a time). Ours cannot beat it; ours / floor
is what the launcher costs beyond writing those bytes.

A third anchor, once per C++ writer: torchrun with --log_dir and --tee 3 (per
rank files and the console, what a user of torchrun runs to get both),
console to a file.

usage: /usr/bin/python3 bench/logging.py [MEGABYTES] [RUNS]
"""
import os
import shutil
import subprocess
import sys
import time

import benchlib as b

NPROC = 8
megabytes = sys.argv[1] if len(sys.argv) > 1 else "50"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
work = b.workdir("logging")
env = b.isolated_env(work)


def plain_writers(commands, tag):
    """(seconds, bytes written): the commands started together, each with stdout to a file of its own."""
    out_dir = os.path.join(work, tag)
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"out{i}") for i in range(len(commands))]
    files = [open(path, "wb") for path in paths]
    start = time.perf_counter()
    processes = [subprocess.Popen(c, stdout=f, env=dict(env, RANK=str(i))) for i, (c, f) in enumerate(zip(commands, files))]
    codes = [p.wait() for p in processes]
    seconds = time.perf_counter() - start
    for f in files:
        f.close()
    assert codes == [0] * len(commands), codes
    size = sum(os.path.getsize(path) for path in paths)
    shutil.rmtree(out_dir)
    return seconds, size


def straight_to_files(command):
    return plain_writers([command] * NPROC, "direct")


def under_agent(command, console_path):
    log_dir = os.path.join(work, "logs")
    with open(console_path, "wb") as console:
        start = time.perf_counter()
        code = subprocess.run(b.primus_direct(NPROC, command, log_dir), env=env, cwd=work, stdout=console,
                              stderr=subprocess.DEVNULL).returncode
        seconds = time.perf_counter() - start
    assert code == 0, f"primus-cli exited {code}"
    logs = os.path.join(log_dir, "attempt_0")
    size = sum(os.path.getsize(os.path.join(logs, f)) for f in os.listdir(logs) if f.endswith(".log"))
    lines = sum(1 for f in os.listdir(logs) if f.endswith(".log") for _ in open(os.path.join(logs, f), "rb"))
    console_size = os.path.getsize(console_path) if console_path != os.devnull else 0
    shutil.rmtree(log_dir)
    if console_path != os.devnull:
        os.unlink(console_path)
    return seconds, size, lines, console_size


def floor(log_size, console_size):
    """The same bytes as ours, written straight to files by line_writer."""
    writer = b.tool("line_writer")
    stamped_line = str(round(100 * log_size / (NPROC * int(megabytes) * 2**20)))  # 100 bytes + stamp
    commands = [[writer, str(log_size / NPROC / 2**20), stamped_line, "65536"] for _ in range(NPROC)]
    if console_size:
        prefixed_line = str(round(100 * console_size / (NPROC * int(megabytes) * 2**20)))
        commands.append([writer, str(console_size / 2**20), prefixed_line, "65536"])
    seconds, _ = plain_writers(commands, "floor")
    return seconds


def torchrun_tee(command):
    log_dir = os.path.join(work, "torchrun-logs")
    console_path = os.path.join(work, "torchrun-console.txt")
    with open(console_path, "wb") as console:
        seconds, code = b.timed_run(b.torchrun(NPROC, command, ["--log_dir", log_dir, "--tee", "3"]), env=env,
                                    cwd=work, stdout=console)
    assert code == 0, f"torchrun exited {code}"
    console_size = os.path.getsize(console_path)
    os.unlink(console_path)
    shutil.rmtree(log_dir)
    return seconds, console_size


workers = {
    "line_writer, 64 KiB writes (worst case)": [b.tool("line_writer"), megabytes, "100", "65536"],
    "line_writer, 4 KiB writes (stdio)": [b.tool("line_writer"), megabytes, "100", "4096"],
    "print_worker.py (print per line)": [sys.executable, os.path.join(b.ROOT, "bench", "print_worker.py"), megabytes],
}
for name, command in workers.items():
    direct, null_console, file_console, null_floor, file_floor = [], [], [], [], []
    for _ in range(runs):  # interleaved against machine noise
        seconds, raw_size = straight_to_files(command)
        direct.append(seconds)
        seconds, log_size, lines, _ = under_agent(command, os.devnull)
        null_console.append(seconds)
        seconds, _, _, console_size = under_agent(command, os.path.join(work, "console.txt"))
        file_console.append(seconds)
        if "line_writer" in name:  # the floor's writers are line_writer too
            null_floor.append(floor(log_size, 0))
            file_floor.append(floor(log_size, console_size))
    d, n, f = b.summary(direct), b.summary(null_console), b.summary(file_console)
    line_writer_rows = []
    if "line_writer" in name:
        nf, ff = b.summary(null_floor), b.summary(file_floor)
        seconds, torchrun_console = torchrun_tee(command)
        line_writer_rows = [
            ("floor: ours' bytes, plain writers, no console", nf["median"], f"s   (min {nf['min']:.3f}; {log_size / 2**20:.0f} MB)"),
            ("floor: ours' bytes, plain writers, console file", ff["median"], f"s   (min {ff['min']:.3f}; {(log_size + console_size) / 2**20:.0f} MB)"),
            ("floor (file) / anchor", ff["median"] / d["median"], "x   (what writing those bytes costs)"),
            ("ours (/dev/null) / floor", n["median"] / nf["median"], "x"),
            ("ours (file) / floor", f["median"] / ff["median"], "x"),
            ("torchrun --log_dir --tee 3, console > file [anchor]", seconds, f"s   (1 run; console {torchrun_console / 2**20:.0f} MB)"),
            ("ours (file) / torchrun", f["median"] / seconds, "x"),
        ]
    b.table(f"{NPROC} x {megabytes} MB of lines, {name} ({runs} runs; medians)", [
        ("workers > files, no launcher [anchor]", d["median"], f"s   (min {d['min']:.3f}; {raw_size / 2**20:.0f} MB)"),
        ("primus-cli, console > /dev/null (ours)", n["median"], f"s   (min {n['min']:.3f}; log files {log_size / 2**20:.0f} MB, {lines} lines)"),
        ("primus-cli, console > file (ours)", f["median"], f"s   (min {f['min']:.3f}; console {console_size / 2**20:.0f} MB)"),
        ("ours (/dev/null) / anchor", n["median"] / d["median"], "x   (target <= 1.25)"),
        ("ours (file) / anchor", f["median"] / d["median"], "x   (target <= 1.25)"),
        *line_writer_rows,
    ])
shutil.rmtree(work, ignore_errors=True)
