#!/usr/bin/python3
"""ssh launch: from the launch command to the first training step on every
host, and to the launcher's exit, for a 3-host gloo DDP job started over ssh.

Three "hosts" are network namespaces on a bridge (benchlib.SshHosts), each
running Debian's sshd with this bench's own keys and configuration; the
launching side is host1, like mpirun on a cluster's first node. The job is
bench/workers/elastic_worker.py, one worker per host, --steps 3 with no pause:
it joins the gloo group, runs DDP steps and appends one timestamped line per
step to a shared events file (the namespaces share the filesystem).

  ours:    primus-cli ssh -F ssh_config --hostfile H -- run python3 -u worker ...
           (host checks, one agent per host, the agents' control channel)
  anchor:  PDSH_SSH_ARGS_APPEND="-F ssh_config" pdsh -R ssh -w host1,host2,host3 \\
               'GLOO_SOCKET_IFNAME=eth0 torchrun --nnodes 3 --node_rank %n --master_addr host1 \\
                --monitor_interval 0.1 --nproc_per_node 1 --no_python python3 -u worker ...'
           (Debian's pdsh with its ssh module; %n is the host's index in -w;
           torch 1.13's torchrun through tests/tools/torchrun_compat.py)

Both sides run interleaved in the same bench run, through the same sshd and
ssh client configuration. Times are from just before the launcher is started
(wall clock) to the last of the three worker processes started (before it
imports torch: the launchers' own share), to the latest of the three ranks'
step-1 lines (the workers' own time.time()), and to the launcher's exit;
medians over --runs after one uncounted warm-up launch of each side, ratio
anchor / ours.

usage: /usr/bin/python3 bench/ssh_launch.py [--primus build/primus-cli] [--runs 5] [--keep]
Needs root (network namespaces), iproute2, openssh-server/-client and pdsh
(scripts/setup.sh --all).
"""
import argparse
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import time

import benchlib as b

HOSTS = 3
MASTER_PORT = 29500
STEPS = 3
WORKER = os.path.join(b.ROOT, "bench", "workers", "elastic_worker.py")


def worker_argv(run_dir):
    return [b.PYTHON, "-u", WORKER, "--ckpt-dir", os.path.join(run_dir, "ckpt"), "--events",
            os.path.join(run_dir, "events"), "--steps", str(STEPS), "--step-seconds", "0"]


def ours_argv(primus, hosts, run_dir):
    hostfile = os.path.join(run_dir, "hostfile")
    with open(hostfile, "w") as f:
        f.writelines(f"host{h} slots=1\n" for h in range(1, HOSTS + 1))
    return [primus, "ssh", "-F", hosts.ssh_config, "--hostfile", hostfile, "--master-port", str(MASTER_PORT),
            "--", "run", *worker_argv(run_dir)]


def anchor_argv(hosts, run_dir):
    remote = ["env", "GLOO_SOCKET_IFNAME=eth0", "OMP_NUM_THREADS=1", f"TMPDIR={run_dir}", *b.TORCHRUN,
              "--nnodes", str(HOSTS), "--node_rank", "%n", "--master_addr", "host1", "--master_port", str(MASTER_PORT),
              "--nproc_per_node", "1", "--monitor_interval", "0.1", "--no_python", *worker_argv(run_dir)]
    command = "cd " + shlex.quote(run_dir) + " && exec " + " ".join(
        "%n" if word == "%n" else shlex.quote(word) for word in remote)
    return ["pdsh", "-R", "ssh", "-w", ",".join(f"host{h}" for h in range(1, HOSTS + 1)), command]


def read_events(events):
    """({rank: its process start}, {rank: time of its step-1 line}) from the events file."""
    started, steps = {}, {}
    try:
        with open(events) as f:
            for line in f:
                fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
                if line.startswith("elastic-join "):
                    started[int(fields["rank"])] = float(fields["started"])
                elif line.startswith("elastic-step ") and fields.get("step") == "1":
                    steps[int(fields["rank"])] = float(fields["time"])
    except FileNotFoundError:
        pass
    return started, steps


def one_run(side, argv, hosts, run_dir, env, cap):
    """Seconds from the launch to: the last worker process started (before it
    imports torch), the last rank's first step, the launcher's exit."""
    log_path = os.path.join(run_dir, "launcher.log")
    with open(log_path, "w") as log:
        start = time.time()
        launcher = subprocess.Popen(hosts.command(1, argv), env=env, cwd=run_dir, stdout=log, stderr=subprocess.STDOUT)
        try:
            code = launcher.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            code = None
        exited = time.time() - start
    try:
        started, steps = read_events(os.path.join(run_dir, "events"))
        if code != 0 or len(steps) != HOSTS or len(started) != HOSTS:
            raise SystemExit(f"{side}: exit {code}, step 1 on ranks {sorted(steps)} of {HOSTS} "
                             f"(cap {cap:g} s); its output:\n{open(log_path).read()[-4000:]}")
        return max(started.values()) - start, max(steps.values()) - start, exited
    finally:
        hosts.kill_all_but_sshd()


def median(samples):
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS, help="the primus-cli binary (default: build/primus-cli)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds one launch may take")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) and print its path")
    args = parser.parse_args()
    primus = os.path.abspath(args.primus)
    if not os.access(primus, os.X_OK):
        raise SystemExit(f"{primus} is missing: build first (ninja -C build primus-cli) or pass --primus")
    for program in ("pdsh", "/usr/sbin/sshd", "ssh"):
        if not shutil.which(program):
            raise SystemExit(f"{program} is missing: scripts/setup.sh --all installs it")

    # Ctrl-C and SIGTERM end the bench through the finally clauses (namespaces, sshd, processes).
    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    work = b.workdir("ssh-launch")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    env["PDSH_SSH_ARGS_APPEND"] = ""   # set below, once the ssh configuration exists
    samples = {"anchor": ([], [], []), "ours": ([], [], [])}
    try:
        with b.SshHosts(HOSTS, work) as hosts:
            env["PDSH_SSH_ARGS_APPEND"] = f"-F {hosts.ssh_config}"
            sides = {"anchor": lambda d: anchor_argv(hosts, d), "ours": lambda d: ours_argv(primus, hosts, d)}
            # One warm-up launch of each side (page cache: torch, the binary), not counted.
            for run in range(-1, args.runs):
                for side, make in sides.items():   # interleaved: both sides see the same machine load
                    run_dir = os.path.join(work, f"{side}{run}")
                    os.makedirs(run_dir)
                    times = one_run(side, make(run_dir), hosts, run_dir, env, args.cap)
                    if run >= 0:
                        for index, seconds in enumerate(times):
                            samples[side][index].append(seconds)
                    print(f"  {side} run {run}: workers started {times[0]:.3f} s, first step on all hosts "
                          f"{times[1]:.3f} s, exit {times[2]:.3f} s"
                          + (" (warm-up)" if run < 0 else ""), flush=True)
    except KeyboardInterrupt as e:
        raise SystemExit(f"interrupted ({e}): hosts, sshd and processes removed")
    finally:
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print(f"\nssh launch, {HOSTS} hosts (network namespaces, sshd each) x 1 gloo DDP worker, launched from host1; "
          f"medians [min] of {args.runs} runs:")
    rows = []
    for index, what in ((0, "launch -> every worker process started (before importing torch)"),
                        (1, "launch -> first step on all hosts"), (2, "launch -> launcher exit")):
        anchor, ours = samples["anchor"][index], samples["ours"][index]
        rows.append((what, median(anchor), min(anchor), median(ours), min(ours), median(anchor) / median(ours)))
        print(f"  {what}: pdsh + torchrun [anchor] {median(anchor):.3f} s [{min(anchor):.3f}], "
              f"primus-cli ssh {median(ours):.3f} s [{min(ours):.3f}], ratio {rows[-1][5]:.2f}x")
    _, step, exit_ = rows
    print(f"RESULT ssh_launch: first step {step[3]:.2f} s vs pdsh+torchrun {step[1]:.2f} s ({step[5]:.2f}x); "
          f"exit {exit_[3]:.2f} s vs {exit_[1]:.2f} s ({exit_[5]:.2f}x)")


if __name__ == "__main__":
    main()
