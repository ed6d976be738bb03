#!/usr/bin/python3
"""How long a quick preflight (no --perf) takes per node: on this host alone,
and as node 0 of 4 nodes (network-namespace hosts, root) with node 0
gathering every report, measuring latency, clock skew and ~0.25 s of TCP
bandwidth to each peer. Target: under 2 s per node. The default check set
(host, gpu, network, software: torch's version read from its package) and
`--all` without --perf's GPU runs are both shown on one node.

usage: /usr/bin/python3 bench/preflight_quick.py [RUNS]
"""
import os
import statistics
import subprocess
import sys
import time

import benchlib as b

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
work = b.workdir("preflight")
env = b.isolated_env(work)


def timed(argv, **kwargs):
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work, **kwargs)
    return time.perf_counter() - start, result


one = [timed([b.PRIMUS, "preflight", "--python", "/usr/bin/python3"])[0] for _ in range(runs)]
print("RESULT preflight_quick one node (host, gpu, network, software; torch version from its package): "
      "median %.3f s (min %.3f, %d runs); target < 2 s: %s"
      % (statistics.median(one), min(one), runs, "met" if statistics.median(one) < 2 else "MISSED"))
full = [timed([b.PRIMUS, "preflight", "--host", "--gpu", "--network", "--software", "--python", "/usr/bin/python3"])[0]
        for _ in range(min(runs, 3))]
print("  with --software (a real `import torch`): median %.3f s" % statistics.median(full))

# Four hosts as network namespaces: ip netns, each node its own UTS name.
hosts = 4
prefix = "pfb%d" % os.getpid()
subnet = "10.%d.%d" % (200 + os.getpid() % 50, os.getpid() % 250)


def sh(command):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


try:
    sh("ip link add %sbr type bridge && ip link set %sbr up" % (prefix, prefix))
    for i in range(1, hosts + 1):
        ns = "%s-h%d" % (prefix, i)
        sh("ip netns add %s" % ns)
        sh("ip link add %sv%d type veth peer name eth0 netns %s" % (prefix, i, ns))
        sh("ip link set %sv%d master %sbr up" % (prefix, i, prefix))
        sh("ip -n %s addr add %s.%d/24 dev eth0 && ip -n %s link set eth0 up && ip -n %s link set lo up"
           % (ns, subnet, i, ns, ns))
    per_node = []
    for _ in range(runs):
        start = time.perf_counter()
        procs = []
        for i in range(1, hosts + 1):
            argv = ["ip", "netns", "exec", "%s-h%d" % (prefix, i), b.PRIMUS, "direct", "--nnodes", str(hosts),
                    "--node-rank", str(i - 1), "--master-addr", "%s.1" % subnet, "--master-port", "29555", "--",
                    "preflight", "--host", "--network", "--report", os.path.join(work, "report"), "--timeout", "20"]
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=work))
        outputs = [p.communicate()[0].decode() for p in procs]
        elapsed = time.perf_counter() - start
        assert "preflight of %d node(s)" % hosts in outputs[0], outputs[0]
        per_node.append(elapsed)
    print("RESULT preflight_quick %d nodes (namespaces, node 0 measuring each peer): median %.3f s for the job "
          "(min %.3f, %d runs); target < 2 s per node: %s"
          % (hosts, statistics.median(per_node), min(per_node), runs, "met" if statistics.median(per_node) < 2 else "MISSED"))
finally:
    for i in range(1, hosts + 1):
        subprocess.run(["ip", "netns", "del", "%s-h%d" % (prefix, i)], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "link", "del", "%sbr" % prefix], stderr=subprocess.DEVNULL)
