#!/usr/bin/python3
"""Cross-node teardown: from one worker's failure on host 2 to the last
worker of the job gone, on every host. Two "hosts" are network namespaces
joined by a bridge (made here with `ip`, removed at the end with everything
still running in them); each runs one agent with 2 workers that record their
pid and sleep. The bench SIGKILLs rank 2 (host2, local rank 0) and polls /proc
until no worker of the job is alive (the namespaces share the PID namespace).
Target: median < 1 s.

Anchor: torchrun (static rendezvous over its TCPStore, --monitor-interval 0.1)
in the same scenario. Host 2's torchrun stops its own workers; host 1's learns
of nothing (with NCCL its workers would only fail at the collective timeout),
so its time is capped and reported as "> cap".

usage: /usr/bin/python3 bench/cross_node_teardown.py [--primus build/primus-cli]
           [--runs 10] [--cap 5] [--torchrun-runs 1] [--torchrun-cap 30]
Needs root (network namespaces) and iproute2.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import time

import benchlib as b
from benchlib import Hosts, alive

NPROC = 2
MASTER_PORT = 29500  # every namespace is a fresh network stack: always free
VICTIM = 2           # rank 2 = host2's local rank 0


def worker(piddir):
    """Records its pid in <piddir>/<RANK>.pid, then is `sleep` (exec). A
    script file: torchrun would read "$$" in its arguments as an escaped "$"."""
    script = os.path.join(piddir, "worker.sh")
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write(f"echo $$ > {piddir}/$RANK.new && mv {piddir}/$RANK.new {piddir}/$RANK.pid && exec sleep 600\n")
    return ["/bin/sh", script]


def primus_agent(primus, hosts, node_rank, piddir, log_dir):
    return [primus, "direct", "--nnodes", "2", "--node-rank", str(node_rank), "--master-addr", hosts.address(1),
            "--master-port", str(MASTER_PORT), "--nproc-per-node", str(NPROC), "--log-dir", log_dir,
            "--", "run", *worker(piddir)]


def torchrun_agent(hosts, node_rank, piddir):
    return b.TORCHRUN + ["--nnodes", "2", "--node_rank", str(node_rank), "--master_addr", hosts.address(1),
                         "--master_port", str(MASTER_PORT), "--nproc_per_node", str(NPROC),
                         "--monitor_interval", "0.1", "--no_python", *worker(piddir)]


def one_run(hosts, agent_argv, work, run, env, cap):
    """(seconds from the SIGKILL of rank 2 to the last worker gone, seconds to
    the last of host2's own workers gone, ranks alive at the cap): the first
    is None when some are still alive after `cap`, the second when host2's."""
    piddir = os.path.join(work, f"run{run}")
    os.makedirs(piddir)
    agents = []
    try:
        for node in (0, 1):
            with open(os.path.join(piddir, f"agent{node}.log"), "w") as log:
                agents.append(subprocess.Popen(hosts.command(node + 1, agent_argv(node, piddir)), env=env, cwd=work,
                                               stdout=log, stderr=subprocess.STDOUT))
        world = 2 * NPROC
        deadline = time.monotonic() + 60
        paths = [os.path.join(piddir, f"{rank}.pid") for rank in range(world)]
        while not all(os.path.exists(p) for p in paths):
            if time.monotonic() > deadline or any(a.poll() is not None for a in agents):
                logs = "".join(open(os.path.join(piddir, f"agent{n}.log")).read() for n in (0, 1))
                raise SystemExit(f"the workers did not all start (run {run}):\n{logs}")
            time.sleep(0.005)
        pids = [int(open(p).read()) for p in paths]

        local = pids[NPROC:]  # host2's workers
        failed = time.monotonic()
        os.kill(pids[VICTIM], signal.SIGKILL)
        local_seconds = None
        while any(alive(pid) for pid in pids):
            if local_seconds is None and not any(alive(pid) for pid in local):
                local_seconds = time.monotonic() - failed
            if time.monotonic() - failed > cap:
                return None, local_seconds, [rank for rank, pid in enumerate(pids) if alive(pid)]
            time.sleep(0.001)
        seconds = time.monotonic() - failed
        return seconds, local_seconds if local_seconds is not None else seconds, []
    finally:
        hosts.kill_all()
        for agent in agents:
            agent.wait()


def measure(label, hosts, agent_argv, work, env, runs, cap):
    samples, capped, survivors, local = [], 0, set(), []
    for run in range(runs):
        seconds, local_seconds, alive_ranks = one_run(hosts, agent_argv, work, f"{label}{run}", env, cap)
        if local_seconds is not None:
            local.append(local_seconds)
        if seconds is None:
            capped += 1
            survivors.update(alive_ranks)
            if capped >= 2:  # it does not tear the job down: stop waiting for it
                break
        else:
            samples.append(seconds)
    return samples, capped, sorted(survivors), local


def describe(samples, capped, survivors, local, cap):
    alive_after = ""
    if survivors:
        hosts = sorted({f"host{rank // NPROC + 1}" for rank in survivors})
        alive_after = f"; still alive at the cap: ranks {','.join(map(str, survivors))} on {','.join(hosts)}"
    if not samples:
        return f"> {cap:g} s cap in {capped} of {capped} runs{alive_after}"
    text = spread(samples)
    if capped:
        text += f"; {capped} more runs > {cap:g} s cap"
    return text + f" ({len(samples) + capped} runs){alive_after}"


def spread(samples):
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return f"median {statistics.median(samples) * 1e3:.1f} ms, p90 {p90 * 1e3:.1f} ms, max {ordered[-1] * 1e3:.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS, help="the primus-cli binary (default: build/primus-cli)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cap", type=float, default=5.0, help="seconds to wait for the last worker (ours)")
    parser.add_argument("--torchrun-runs", type=int, default=1, help="0 skips the torchrun anchor")
    parser.add_argument("--torchrun-cap", type=float, default=30.0)
    args = parser.parse_args()
    primus = os.path.abspath(args.primus)
    if not os.access(primus, os.X_OK):
        raise SystemExit(f"{primus} is missing: build first (ninja -C build) or pass --primus")

    work = b.workdir("cross-node")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    env["GLOO_SOCKET_IFNAME"] = "eth0"
    try:
        with Hosts(2, work) as hosts:
            ours = measure(
                "primus", hosts, lambda node, piddir: primus_agent(primus, hosts, node, piddir, f"{piddir}/logs{node}"),
                work, env, args.runs, args.cap)
            torch = ([], 0, [], [])
            if args.torchrun_runs > 0:
                torch = measure("torchrun", hosts, lambda node, piddir: torchrun_agent(hosts, node, piddir),
                                              work, env, args.torchrun_runs, args.torchrun_cap)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"cross-node teardown, 2 hosts (network namespaces) x {NPROC} sleeping workers, "
          f"SIGKILL of rank {VICTIM} on host2 -> last worker gone on every host:")
    if args.torchrun_runs > 0:
        print(f"  torchrun --monitor-interval 0.1 [anchor]: {describe(*torch, args.torchrun_cap)}")
    print(f"  primus-cli direct (ours):                 {describe(*ours, args.cap)}")
    for label, result in (("torchrun", torch), ("ours", ours)):
        if result[3]:
            print(f"  host2's own workers gone, {label}: {spread(result[3])}")
    samples, capped, _, _ = ours
    verdict = "met" if samples and not capped and statistics.median(samples) < 1.0 else "MISSED"
    print(f"RESULT cross_node_teardown: ours {describe(*ours, args.cap)}; target median < 1 s: {verdict}")


if __name__ == "__main__":
    main()
