#!/usr/bin/python3
"""CPU collective bandwidth: `benchmark comm` (our gloo worker) against
torch.distributed's gloo all_reduce, between the same two hosts, the same
sizes and the same timing rules, in one run. Target: our all-reduce bus
bandwidth within 10% of torch's (ratio >= 0.90).

Hosts: two network namespaces joined by a bridge (one process each; the
layout of tests/support/netns_hosts.h), or with --loopback two processes on
this host. Both sides are launched by the same node agents (primus-cli
direct), so they get the same environment (GLOO_SOCKET_IFNAME from the
network auto-configuration). Rounds alternate ours / torch to share any
drift of the machine; each size reports the median over rounds. torch's
all_reduce is in place, so it is compared with our in-place column (our
out-of-place column is shown too).

usage: /usr/bin/python3 bench/comm_gloo_vs_torch.py [--loopback] [--rounds 5]
           [--sizes 1M,4M,16M,64M] [--iters 20] [--warmup 5]
Needs root (network namespaces) and iproute2 unless --loopback.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

import benchlib as b
from cross_node_teardown import Hosts

MASTER_PORT = 29500
BENCH = os.path.dirname(os.path.abspath(__file__))


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def run_job(hosts, argv_for_node, work, env, label):
    """Runs one agent per node (or one agent for loopback); node 0's stdout."""
    nodes = 2 if hosts else 1
    procs, logs = [], []
    for node in range(nodes):
        log = open(os.path.join(work, f"{label}.node{node}.out"), "w+")
        err = open(os.path.join(work, f"{label}.node{node}.err"), "w+")
        argv = argv_for_node(node)
        if hosts:
            argv = hosts.command(node + 1, argv)
        procs.append(subprocess.Popen(argv, env=env, cwd=work, stdout=log, stderr=err))
        logs.append((log, err))
    codes = [p.wait(timeout=600) for p in procs]
    outputs = []
    for log, err in logs:
        log.seek(0)
        err.seek(0)
        outputs.append((log.read(), err.read()))
        log.close()
        err.close()
    if any(codes):
        raise SystemExit(f"{label} failed ({codes}):\n" + "\n".join(o + e for o, e in outputs))
    return outputs[0][0]


def agent(primus, hosts, node, nproc, log_dir):
    argv = [primus, "direct", "--nproc-per-node", str(nproc), "--log-dir", log_dir]
    if hosts:
        argv += ["--nnodes", "2", "--node-rank", str(node), "--master-addr", hosts.address(1),
                 "--master-port", str(MASTER_PORT)]
    return argv


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS)
    parser.add_argument("--loopback", action="store_true", help="two processes on this host instead of two hosts")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="1M,4M,16M,64M")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    primus = os.path.abspath(args.primus)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    if len(sizes) > 1 and any(sizes[i + 1] != sizes[i] * (sizes[1] // sizes[0]) for i in range(len(sizes) - 1)):
        raise SystemExit("--sizes must be a geometric series (benchmark comm steps by a factor)")
    factor = sizes[1] // sizes[0] if len(sizes) > 1 else 2
    nproc = 2 if args.loopback else 1

    work = b.workdir("comm-gloo")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    ours = {size: {"in": [], "out": []} for size in sizes}
    theirs = {size: [] for size in sizes}
    try:
        hosts_context = Hosts(2, work) if not args.loopback else None
        hosts = hosts_context.__enter__() if hosts_context else None
        try:
            for round_index in range(args.rounds):
                out = run_job(hosts, lambda node: agent(primus, hosts, node, nproc, f"{work}/logs") + [
                    "--", "benchmark", "comm", "-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", str(factor),
                    "-n", str(args.iters), "-w", str(args.warmup), "-c", "0", "--device", "cpu", "--json"],
                    work, env, f"ours{round_index}")
                report = json.loads(out)
                for row in report["collectives"][0]["results"]:
                    ours[row["size"]]["in"].append(row["in_place"]["bus_bw"])
                    ours[row["size"]]["out"].append(row["out_of_place"]["bus_bw"])
                out = run_job(hosts, lambda node: agent(primus, hosts, node, nproc, f"{work}/logs") + [
                    "--", "run", b.PYTHON, os.path.join(BENCH, "workers", "torch_gloo_allreduce.py"),
                    "--sizes", ",".join(map(str, sizes)), "--iters", str(args.iters), "--warmup", str(args.warmup)],
                    work, env, f"torch{round_index}")
                lines = [l[l.index("{"):] for l in out.splitlines() if "{" in l]  # behind the console prefix
                if not lines:
                    raise SystemExit(f"the torch anchor printed no result:\n{out}")
                for size, busbw in json.loads(lines[-1]).items():
                    theirs[int(size)].append(busbw)
        finally:
            if hosts_context:
                hosts_context.__exit__(None, None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    where = "2 processes on one host (loopback)" if args.loopback else "2 hosts (network namespaces), 1 process each"
    print(f"gloo all_reduce bus bandwidth, float32, {where}, median of {args.rounds} alternating rounds, "
          f"{args.iters} iterations after {args.warmup} warm-up:")
    print(f"  {'size':>10}  {'torch (GB/s)':>13}  {'ours in-place':>13}  {'ratio':>6}  {'ours out-of-place':>17}")
    ratios = []
    for size in sizes:
        t = statistics.median(theirs[size])
        i = statistics.median(ours[size]["in"])
        o = statistics.median(ours[size]["out"])
        ratios.append(i / t if t > 0 else 0)
        print(f"  {size:>10}  {t:>13.3f}  {i:>13.3f}  {ratios[-1]:>6.2f}  {o:>17.3f}")
    overall = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if all(r > 0 for r in ratios) else 0
    verdict = "met" if overall >= 0.90 else "MISSED"
    print(f"RESULT comm_gloo_vs_torch: ours/torch busbw {overall:.2f} (geometric mean over sizes, {where}); "
          f"target >= 0.90: {verdict}")


if __name__ == "__main__":
    main()
