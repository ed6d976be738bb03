#!/usr/bin/python3
"""Many agents: 64 node agents on loopback as one job (--nnodes 64, node
ranks 0..63, --master-addr 127.0.0.1), one trivial worker each (/bin/true).
Measures from starting the first agent to the last agent exiting 0: the join
of 64 nodes on node 0's control channel, the start barrier, 64 workers, the
exit. Target: median < 3 s on this machine.

usage: /usr/bin/python3 bench/many_agents.py [--primus build/primus-cli] [--agents 64] [--runs 5]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import time

import benchlib as b


def free_port_pair():
    """An even port P with P and P+1 free (the master port and the control port)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1] & ~1
        if port + 1 > 65535 or port < 1024:
            continue
        try:
            with socket.socket() as a, socket.socket() as c:
                a.bind(("127.0.0.1", port))
                c.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


def one_run(primus, agents, work, run, env, timeout):
    """Seconds from the first agent's start to the last agent's exit."""
    port = free_port_pair()
    rundir = os.path.join(work, f"run{run}")
    os.makedirs(rundir)
    logs = [os.path.join(rundir, f"agent{rank}.log") for rank in range(agents)]
    processes = []
    start = time.perf_counter()
    try:
        for rank in range(agents):
            argv = [primus, "direct", "--nnodes", str(agents), "--node-rank", str(rank),
                    "--master-addr", "127.0.0.1", "--master-port", str(port), "--nproc-per-node", "1",
                    "--log-dir", os.path.join(rundir, f"logs{rank}"), "--", "run", "/bin/true"]
            with open(logs[rank], "w") as log:
                processes.append(subprocess.Popen(argv, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT))
        codes = [p.wait(timeout=max(0.1, timeout - (time.perf_counter() - start))) for p in processes]
        seconds = time.perf_counter() - start
    except subprocess.TimeoutExpired:
        raise SystemExit(f"the {agents} agents did not all exit within {timeout:g} s (run {run})")
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [(rank, code) for rank, code in enumerate(codes) if code != 0]
    if failed:
        rank, code = failed[0]
        raise SystemExit(f"{len(failed)} of {agents} agents failed (run {run}); node {rank} exited {code}:\n"
                         + open(logs[rank]).read())
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS, help="the primus-cli binary (default: build/primus-cli)")
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a run is given up")
    args = parser.parse_args()
    primus = os.path.abspath(args.primus)
    if not os.access(primus, os.X_OK):
        raise SystemExit(f"{primus} is missing: build first (ninja -C build) or pass --primus")

    work = b.workdir("many-agents")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    try:
        samples = [one_run(primus, args.agents, work, run, env, args.timeout) for run in range(args.runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = statistics.median(samples)
    verdict = "met" if median < 3.0 else "MISSED"
    print(f"RESULT many_agents: {args.agents} agents on loopback, 1 x /bin/true each, first start -> last exit 0: "
          f"median {median:.3f} s (min {min(samples):.3f}, max {max(samples):.3f}, {len(samples)} runs); "
          f"target < 3 s: {verdict}")


if __name__ == "__main__":
    main()
