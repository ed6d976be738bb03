#!/usr/bin/python3
"""The README's main job, many times in a row, on a loaded machine: does it
ever hang?

Runs `primus-cli direct -- train pretrain --config examples/gpt/configs/tiny-cpu.yaml`
--runs times with --hogs busy loops beside it (default 50 runs, 2 hogs) and
counts, per run: exit code, wall time, and the time from the trainer's
"done:" line to the launcher's exit. A run is a hang when it is still running
at --cap seconds, or when the launcher had to stop a worker stuck at exit
(exit code 6, "stuck at exit"): both mean the trainer did not leave on its
own. Target: 0 hangs in 50 runs.

Anchor (same run, --anchor-runs): the same job with the trainer's old teardown
(`--teardown destroy`: destroy_process_group() and a normal interpreter exit),
which deadlocks now and then in torch 1.13's gloo teardown. There the
launcher's exit grace (--exit-grace, default 60 s; 10 s here) is what ends the
stuck rank, with exit code 6.

usage: /usr/bin/python3 bench/main_job_soak.py [--primus build/primus-cli]
           [--runs 50] [--hogs 2] [--cap 300] [--anchor-runs 0]
Prints one line per run and a summary: "N runs, H hangs, F failures".
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = "examples/gpt/configs/tiny-cpu.yaml"


def start_hogs(count):
    return [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(count)]


def run_once(primus, workspace, cap, extra_flags, script_args):
    argv = [primus, "direct", *extra_flags, "--", "train", "pretrain", "--config", CONFIG,
            f"workspace={workspace}", *script_args]
    start = time.monotonic()
    done_at = [None]
    lines = []
    process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", env={**os.environ, "NO_COLOR": "1"})

    def reader():
        for line in process.stdout:
            lines.append(line)
            if done_at[0] is None and "done: " in line:
                done_at[0] = time.monotonic()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        code = process.wait(timeout=cap)
        timed_out = False
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
        timed_out = True
    thread.join(timeout=5)
    end = time.monotonic()
    after_done = end - done_at[0] if done_at[0] is not None else None
    return {"code": code, "wall": end - start, "after_done": after_done, "timed_out": timed_out,
            "stuck": code == 6 or any("stuck at exit" in line for line in lines), "tail": lines[-15:]}


def series(label, primus, runs, cap, extra_flags, script_args):
    results = []
    for i in range(runs):
        workspace = tempfile.mkdtemp(prefix="primus-soak-")
        try:
            r = run_once(primus, workspace, cap, extra_flags, script_args)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        hang = r["timed_out"] or r["stuck"]
        results.append(r)
        after = f"{r['after_done']:.2f}s" if r["after_done"] is not None else "-"
        verdict = "HANG" if hang else ("ok" if r["code"] == 0 else f"FAILED ({r['code']})")
        print(f"{label} run {i + 1}/{runs}: exit {r['code']}, {r['wall']:.1f}s, done->exit {after}: {verdict}",
              flush=True)
        if verdict.startswith("FAILED"):
            sys.stdout.write("".join(r["tail"]))
    hangs = sum(1 for r in results if r["timed_out"] or r["stuck"])
    failures = sum(1 for r in results if r["code"] != 0 and not (r["timed_out"] or r["stuck"]))
    clean = [r["after_done"] for r in results if r["after_done"] is not None and not (r["timed_out"] or r["stuck"])]
    walls = [r["wall"] for r in results]
    summary = f"{label}: {runs} runs, {hangs} hangs, {failures} failures"
    if walls:
        summary += f"; wall median {statistics.median(walls):.1f}s max {max(walls):.1f}s"
    if clean:
        summary += f"; done->exit median {statistics.median(clean):.2f}s max {max(clean):.2f}s"
    return summary, hangs, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--primus", default=os.path.join(REPO, "build", "primus-cli"))
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--cap", type=float, default=300, help="seconds before a run counts as hung")
    parser.add_argument("--anchor-runs", type=int, default=0,
                        help="runs of the old teardown (--teardown destroy) first, for comparison")
    args = parser.parse_args()
    if not os.access(args.primus, os.X_OK):
        raise SystemExit(f"{args.primus}: not built (scripts/build.sh)")
    hogs = start_hogs(args.hogs)
    try:
        summaries = []
        print(f"main job x{args.runs} with {args.hogs} CPU hog(s) on {os.cpu_count()} core(s)", flush=True)
        if args.anchor_runs:
            summaries.append(series("anchor (--teardown destroy, --exit-grace 10)", args.primus, args.anchor_runs,
                                    args.cap, ["--exit-grace", "10"], ["--teardown", "destroy"])[0])
        summary, hangs, failures = series("main job", args.primus, args.runs, args.cap, [], [])
        summaries.append(summary)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print()
    for line in summaries:
        print(line)
    return 1 if hangs or failures else 0


if __name__ == "__main__":
    sys.exit(main())
