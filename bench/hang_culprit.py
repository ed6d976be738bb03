#!/usr/bin/python3
"""From a hang to the guilty rank to a healthy job: a CPU/gloo job of 2 hosts
x 2 workers (network namespaces with sshd, benchlib.SshHosts) where the rank
with local rank 0 on host2 stops inside step 3, outside the all_reduce the
other three wait in (bench/workers/hang_step_worker.py, events in a shared
file). Ours, with the policy and a spare host:

    primus-cli --set direct.exclude_bad_nodes=true --set direct.max_restarts=1
        ssh --hostfile <host1..3> -N 2 -- direct --nproc-per-node 2 --hang-timeout T -- run ...

timed from the stall (the worker's own line) to:
  detected  the agent's "hung" line, minus T (the watchdog's own timeout)
  culprit   node 0's "hang: ..." line naming the rank, after detection
  next      the first step of the next attempt (on host1 and the spare host3), after detection

Anchor: torchrun (Debian's torch 1.13, static rendezvous) on host1 and host2,
same worker, same hosts, in the same run: the time from the stall to any line
of torchrun naming the stalled rank (torchrun has no watchdog: expected none
before gloo's collective timeout of 30 minutes), capped at --cap.

usage: /usr/bin/python3 bench/hang_culprit.py [--primus build/primus-cli] [--runs 3]
           [--hang-timeout 10] [--cap 90] [--keep]
Needs root (network namespaces), iproute2, util-linux, openssh-server.
"""
import argparse
import datetime
import os
import re
import shutil
import signal
import statistics
import subprocess
import time

import benchlib as b

WORKER = os.path.join(b.ROOT, "bench", "workers", "hang_step_worker.py")
MASTER_PORT = 29511
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\] \[(\S+)\] \[(\w+)\] (.*)$")


def stamp_seconds(text):
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(
        tzinfo=datetime.datetime.now().astimezone().tzinfo).timestamp()


def events(path):
    found = []
    try:
        with open(path) as f:
            for line in f:
                kind, rest = line.split(" ", 1)
                fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
                found.append((kind, float(fields["time"]), fields))
    except FileNotFoundError:
        pass
    return found


def log_lines(path):
    """(seconds since the epoch, host, level, text) of each stamped line; `[hostN] ` prefixes of ssh dropped."""
    lines = []
    with open(path, errors="replace") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if raw.startswith("[host") and "] [" in raw and not raw.startswith("[host1]  ["):
                raw = raw.split("] ", 1)[1] if raw.split("] ", 1)[1].startswith("[") else raw
            match = STAMP.match(raw)
            if match:
                lines.append((stamp_seconds(match.group(1)), match.group(2), match.group(3), match.group(4)))
    return lines


def ours(primus, hosts, run_dir, env, hang_timeout, cap):
    hostfile = os.path.join(run_dir, "hostfile")
    with open(hostfile, "w") as f:
        f.write("host1 slots=2\nhost2 slots=2\nhost3 slots=2\n")
    events_file = os.path.join(run_dir, "events")
    argv = [primus, "--set", "direct.exclude_bad_nodes=true", "--set", "direct.max_restarts=1", "ssh", "-F",
            hosts.ssh_config, "--hostfile", hostfile, "-N", "2", "--", "direct", "--hang-timeout", str(hang_timeout),
            "--term-timeout", "2", "--env", "GLOO_SOCKET_IFNAME=eth0", "--", "run", b.PYTHON, WORKER, events_file,
            "host2", "8"]
    log_path = os.path.join(run_dir, "launcher.log")
    with open(log_path, "w") as log:
        launcher = subprocess.Popen(hosts.command(1, argv), env=env, cwd=run_dir, stdout=log, stderr=subprocess.STDOUT)
        try:
            code = launcher.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            launcher.kill()
            code = None
    try:
        found = events(events_file)
        stall = next((t for kind, t, f in found if kind == "hang-stall"), None)
        lines = log_lines(log_path)
        hung = next((t for t, host, level, text in lines if " hung: no output" in text), None)
        culprit = next((t for t, host, level, text in lines if text.startswith("hang: rank")), None)
        next_step = None
        if hung is not None:
            next_step = next((t for kind, t, f in found if kind == "hang-step" and f["host"] == "host3"), None)
        if code != 0 or None in (stall, hung, culprit, next_step):
            raise SystemExit(f"ours: exit {code}, stall {stall}, hung {hung}, culprit {culprit}, next {next_step}; "
                             f"its output:\n{open(log_path).read()[-5000:]}")
        return hung - stall - hang_timeout, culprit - hung, next_step - hung
    finally:
        hosts.kill_all_but_sshd()


def torchrun(hosts, run_dir, env, cap):
    events_file = os.path.join(run_dir, "events")
    logs, procs = [], []
    for host in (1, 2):
        argv = ["env", "GLOO_SOCKET_IFNAME=eth0", "OMP_NUM_THREADS=1", *b.TORCHRUN, "--nnodes", "2", "--node_rank",
                str(host - 1), "--master_addr", "host1", "--master_port", str(MASTER_PORT), "--nproc_per_node", "2",
                "--monitor_interval", "0.1", "--no_python", b.PYTHON, WORKER, events_file, "host2", "8"]
        log = open(os.path.join(run_dir, f"torchrun{host}.log"), "w")
        logs.append(log)
        procs.append(subprocess.Popen(hosts.command(host, argv), env=env, cwd=run_dir, stdout=log,
                                      stderr=subprocess.STDOUT))
    try:
        deadline = time.time() + cap
        stall, named = None, None
        while time.time() < deadline and named is None:
            time.sleep(0.5)
            if stall is None:
                stall = next((t for kind, t, f in events(events_file) if kind == "hang-stall"), None)
                rank = next((f["rank"] for kind, t, f in events(events_file) if kind == "hang-stall"), None)
                continue
            for host in (1, 2):
                text = open(os.path.join(run_dir, f"torchrun{host}.log"), errors="replace").read()
                # Any line of torchrun's own (not the worker's) naming the rank.
                for line in text.splitlines():
                    if (f"rank {rank}" in line or f"rank: {rank}" in line or f"local_rank: {rank}" in line) \
                            and "stalls at step" not in line and "step " not in line.split("rank")[-1][:8]:
                        named = time.time()
                        break
        return None if named is None or stall is None else named - stall
    finally:
        for proc in procs:
            proc.kill()
        for log in logs:
            log.close()
        hosts.kill_all_but_sshd()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hang-timeout", type=float, default=10.0)
    parser.add_argument("--cap", type=float, default=90.0, help="seconds one side may take")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    primus = os.path.abspath(args.primus)
    for program in ("/usr/sbin/sshd", "ssh"):
        if not shutil.which(program):
            raise SystemExit(f"{program} is missing: scripts/setup.sh --all installs it")

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    work = b.workdir("hang-culprit")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    samples = {"detected": [], "culprit": [], "next": [], "torchrun": []}
    try:
        with b.SshHosts(3, work) as hosts:
            for run in range(args.runs):
                run_dir = os.path.join(work, f"ours{run}")
                os.makedirs(run_dir)
                detected, culprit, next_step = ours(primus, hosts, run_dir, env, args.hang_timeout, args.cap)
                samples["detected"].append(detected)
                samples["culprit"].append(culprit)
                samples["next"].append(next_step)
                anchor_dir = os.path.join(work, f"torchrun{run}")
                os.makedirs(anchor_dir)
                named = torchrun(hosts, anchor_dir, env, args.cap)
                samples["torchrun"].append(named)
                print(f"  run {run}: detected +{detected:.2f} s past the timeout, culprit +{culprit:.2f} s, "
                      f"next attempt's first step +{next_step:.2f} s; torchrun: "
                      + (f"{named:.1f} s" if named is not None else f"no line naming the rank in {args.cap:g} s"),
                      flush=True)
    finally:
        if args.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in samples.items() if k != "torchrun"}
    anchor = [s for s in samples["torchrun"] if s is not None]
    ours_named = args.hang_timeout + med["detected"] + med["culprit"]
    print(f"\nhang -> culprit -> next attempt, 2 hosts x 2 workers (gloo), hang timeout {args.hang_timeout:g} s, "
          f"median of {args.runs}:")
    print(f"  detection past the timeout:            {med['detected']:.2f} s   (target <= 2 s)")
    print(f"  culprit named after detection:         {med['culprit']:.2f} s   (target <= 10 s)")
    print(f"  next attempt's first step, after it:   {med['next']:.2f} s   (target <= 30 s)")
    if anchor:
        print(f"  stall -> a line naming the rank: ours {ours_named:.1f} s, torchrun {statistics.median(anchor):.1f} s "
              f"(ratio {statistics.median(anchor) / ours_named:.1f}x)")
    else:
        print(f"  stall -> a line naming the rank: ours {ours_named:.1f} s, torchrun none within {args.cap:g} s "
              f"(ratio > {args.cap / ours_named:.1f}x; gloo's own timeout is 1800 s)")


if __name__ == "__main__":
    main()
