#!/usr/bin/python3
"""Telemetry at scale: node 0 aggregating 64 node agents, and /metrics for
64 nodes x 8 GPUs.

64 node agents run on loopback as one job (--nnodes 64, --master-addr
127.0.0.1), one `sleep` worker each. Every agent reads the GPUs of an 8-GPU
MI300X fixture tree (PRIMUS_SYSFS_ROOT=tests/fixtures/hosts/mi300x-8/sys), so
each node's sample carries 8 GPUs, and sends it to node 0 every second
(--telemetry-interval 1). Node 0 serves the job on --metrics-port.

  aggregation: node 0's agent CPU time (utime + stime of /proc/PID/stat) over
               a --window of seconds once every node reported, as a share of
               one core, with telemetry at 1 s and, in the same run, with
               telemetry off (--telemetry-interval 0; the anchor: the agent's
               own heartbeats and supervision). Target: the difference under
               5% of a core.
  member:      the same for node 1 (its own sampling and sending).
  /metrics:    the time to fetch node 0's /metrics (64 nodes x 8 GPUs),
               median over --fetches; anchor: the same bytes served as a
               static file by Python's http.server on loopback, same client,
               same run. Target: under 10 ms.

usage: /usr/bin/python3 bench/telemetry_aggregation.py [--primus build/primus-cli] [--agents 64]
                                                       [--window 20] [--fetches 50]
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

import benchlib as b

FIXTURE = os.path.join(b.ROOT, "tests", "fixtures", "hosts", "mi300x-8", "sys")


def free_port(count=1):
    """A port P with P..P+count-1 free on loopback."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1] & ~3
        if port < 1024 or port + count > 65535:
            continue
        sockets = []
        try:
            for offset in range(count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port + offset))
            return port
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fetch(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    start = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - start
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"GET {path} on port {port}: HTTP {response.status}")
    return elapsed, body


def start_job(primus, agents, interval, work, tag, metrics_port, duration):
    port = free_port(2)
    env = dict(os.environ, PRIMUS_SYSFS_ROOT=FIXTURE)
    env.pop("PRIMUS_JOB_TOKEN", None)
    processes = []
    for rank in range(agents):
        argv = [primus, "-q", "direct", "--nnodes", str(agents), "--node-rank", str(rank), "--master-addr",
                "127.0.0.1", "--master-port", str(port), "--nproc-per-node", "1", "--telemetry-interval",
                str(interval), "--log-dir", os.path.join(work, f"{tag}-logs{rank}")]
        if rank == 0 and metrics_port:
            argv += ["--metrics-port", str(metrics_port)]
        argv += ["--", "run", "sleep", str(duration)]
        log = open(os.path.join(work, f"{tag}-agent{rank}.log"), "w")
        processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env))
    return processes


def wait_for_all_nodes(job_json, agents, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(job_json) as f:
                view = json.load(f)
            if sum(1 for node in view.get("nodes", []) if node.get("gpus")) >= agents:
                return view
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{job_json}: not every node reported within {timeout} s")


def measure(primus, agents, interval, window, work, tag, metrics_port=0, fetches=0):
    duration = window + 60
    processes = start_job(primus, agents, interval, work, tag, metrics_port, duration)
    result = {}
    try:
        if interval > 0:
            view = wait_for_all_nodes(os.path.join(work, f"{tag}-logs0", "telemetry", "job.json"), agents, 60)
            result["gpus"] = sum(len(node.get("gpus", [])) for node in view["nodes"])
        else:
            time.sleep(5)  # every agent joined and the workers run
        node0, node1 = processes[0].pid, processes[1].pid
        before = (cpu_seconds(node0), cpu_seconds(node1))
        time.sleep(window)
        after = (cpu_seconds(node0), cpu_seconds(node1))
        result["node0"] = (after[0] - before[0]) / window
        result["node1"] = (after[1] - before[1]) / window
        if fetches:
            times, body = [], b""
            for _ in range(fetches):
                elapsed, body = fetch(metrics_port, "/metrics")
                times.append(elapsed)
            result["metrics_ms"] = statistics.median(times) * 1000
            result["metrics_body"] = body
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return result


def static_anchor(body, work, fetches):
    root = os.path.join(work, "static")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "metrics"), "wb") as f:
        f.write(body)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while True:
            try:
                fetch(port, "/metrics")
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        return statistics.median(fetch(port, "/metrics")[0] for _ in range(fetches)) * 1000
    finally:
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--primus", default=os.path.join(b.ROOT, "build", "primus-cli"))
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--window", type=float, default=20)
    parser.add_argument("--fetches", type=int, default=50)
    args = parser.parse_args()
    work = b.workdir("telemetry-aggregation")
    try:
        metrics_port = free_port()
        on = measure(args.primus, args.agents, 1, args.window, work, "on", metrics_port, args.fetches)
        off = measure(args.primus, args.agents, 0, args.window, work, "off")
        anchor_ms = static_anchor(on["metrics_body"], work, args.fetches)
        print(f"{args.agents} agents on loopback, {on['gpus']} GPUs in node 0's view, window {args.window:g} s; "
              f"load average {os.getloadavg()[0]:.1f}")
        rows = [
            ("node 0 agent, telemetry every 1 s", f"{on['node0'] * 100:.2f}% of a core"),
            ("node 0 agent, telemetry off (anchor)", f"{off['node0'] * 100:.2f}% of a core"),
            ("node 0: aggregation's share", f"{(on['node0'] - off['node0']) * 100:.2f}% of a core (target < 5%)"),
            ("node 1 agent, telemetry every 1 s", f"{on['node1'] * 100:.2f}% of a core"),
            ("node 1 agent, telemetry off", f"{off['node1'] * 100:.2f}% of a core"),
            ("/metrics from node 0 (median)", f"{on['metrics_ms']:.2f} ms, {len(on['metrics_body']) / 1024:.0f} KiB "
                                              f"(target < 10 ms)"),
            ("same bytes from python -m http.server (anchor)", f"{anchor_ms:.2f} ms"),
            ("ratio /metrics / static file", f"{on['metrics_ms'] / anchor_ms:.2f}x"),
        ]
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"  {name:<{width}}  {value}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
