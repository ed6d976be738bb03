#!/usr/bin/python3
"""Elastic recovery: from a node's loss (or arrival) to the first training step
at the new world size. Three "hosts" are network namespaces joined by a bridge
(benchlib.Hosts, removed at the end with everything still running in them);
each runs one agent of an elastic job with one worker:

    <launcher> --nnodes 2:3 --nproc_per_node 1 --rdzv_backend c10d
        --rdzv_endpoint <host1>:29400 --rdzv_id bench --max_restarts 3
        --monitor_interval 0.1 --rdzv_conf join_timeout=J,last_call_timeout=L (--last-call, default 1)
        --no_python /usr/bin/python3 -u bench/workers/elastic_worker.py ...

(underscore spellings: torch 1.13's torchrun knows no others; ours takes both).
The worker (bench/workers/elastic_worker.py) is a small gloo DDP job that
checkpoints every step, resumes from it, and appends a timestamped line per
step with its WORLD_SIZE and TORCHELASTIC_RESTART_COUNT to a shared file.

Scenarios, each timed from the event to the first step line at the new world
size on a surviving host (the hosts share one clock):
  kill   SIGKILL host3's agent (the launcher process only)         3 -> 2 nodes
  crash  SIGKILL every process on host3 (a node dying)             3 -> 2 nodes
  cut    `ip link set <host3's veth> down` on the bridge side      3 -> 2 nodes
  add    start host3's agent while the job runs on hosts 1 and 2   2 -> 3 nodes

Anchor: torchrun (Debian's torch 1.13 through tests/tools/torchrun_compat.py),
c10d rendezvous, same hosts, same flags, same worker, in the same run. Ours:
`primus-cli torchrun` with identical flags. A side that does not reach the new
world size within --cap is reported as "> cap" with the tail of its logs; a
launcher that refuses elastic jobs ("not supported yet", exit 2) is reported
as such.

Detection in torch 1.13's c10d rendezvous: a node counts as gone when its
keep-alive is older than keep_alive_interval x keep_alive_max_attempt, fixed
at 5 s x 3 = 15 s in 1.13 (our launcher reads both from --rdzv_conf, same
defaults; --keep-alive passes them to both sides). A worker whose peer vanished
without closing its sockets (cut link) fails its collective after the worker's
--collective-timeout (gloo).

usage: /usr/bin/python3 bench/elastic_recovery.py [--primus build/primus-cli]
           [--runs 3] [--cap 120] [--scenarios kill,crash,cut,add]
           [--sides torchrun,ours] [--keep-alive 5,3] [--keep]
Needs root (network namespaces), iproute2 and util-linux (nsenter, unshare).
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

import benchlib as b

HOSTS = 3
RDZV_PORT = 29400   # every namespace is a fresh network stack: always free
WORKER = os.path.join(b.ROOT, "bench", "workers", "elastic_worker.py")
JOIN_LINE = re.compile(r"elastic-join time=([0-9.]+) host=(\S+) rank=(\d+) world=(\d+) restart=(\d+) "
                       r"started=([0-9.]+) imported=([0-9.]+)")
STEP_LINE = re.compile(r"elastic-step time=([0-9.]+) host=(\S+) rank=(\d+) world=(\d+) restart=(\d+) step=(\d+)")
SCENARIOS = {   # name: (hosts started first, new world size, hosts whose steps count, description)
    "kill": ((1, 2, 3), 2, ("host1", "host2"), "SIGKILL of host3's agent"),
    "crash": ((1, 2, 3), 2, ("host1", "host2"), "SIGKILL of everything on host3"),
    "cut": ((1, 2, 3), 2, ("host1", "host2"), "host3's link cut"),
    "add": ((1, 2), 3, ("host1", "host2", "host3"), "host3's agent started"),
}


class NotSupported(Exception):
    """The launcher refused the elastic job."""


class Events:
    """The step lines the workers append to one shared file, read as they come."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""
        self.steps = []   # (time, host, rank, world, restart, step)
        self.joins = []   # (time, host, rank, world, restart, started, imported)

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.steps
        self.offset += len(data)
        data = self.partial + data
        lines = data.split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            text = line.decode(errors="replace")
            m = JOIN_LINE.search(text)
            if m:
                t, host, rank, world, restart, started, imported = m.groups()
                self.joins.append((float(t), host, int(rank), int(world), int(restart), float(started),
                                   float(imported)))
            m = STEP_LINE.search(text)
            if m:
                t, host, rank, world, restart, step = m.groups()
                self.steps.append((float(t), host, int(rank), int(world), int(restart), int(step)))
        return self.steps


def phases(events, event, host, rank, world, restart):
    """{phase: seconds from the event} for the worker whose step was the first at
    the new size: its process started, torch imported, process group formed."""
    for t, h, r, w, n, started, imported in events.joins:
        if (h, r, w, n) == (host, rank, world, restart) and started >= event:
            return {"started": started - event, "imported": imported - event, "joined": t - event}
    return {}


def tail(path, lines=12):
    """The last lines of an agent's log, step lines condensed to the last one."""
    try:
        with open(path, errors="replace") as f:
            text = f.readlines()
    except OSError as e:
        return f"(no log: {e})\n"
    other = [line for line in text if "elastic-step" not in line]
    steps = [line for line in text if "elastic-step" in line]
    out = other[-lines:]
    if steps:
        out.append(f"[{len(steps)} step lines; the last:] {steps[-1]}")
    return "".join(out)


def after_event(events, event):
    """What the workers did after the event: the world sizes of their steps, by host."""
    by_host = {}
    for t, host, _, world, _, step in events.steps:
        if t >= event:
            by_host.setdefault(host, {}).setdefault(world, []).append(step)
    if not by_host:
        return "  no step on any host after the event\n"
    return "".join(f"  {host} after the event: " + ", ".join(
        f"{len(s)} steps at world size {w} (last step {max(s)})" for w, s in sorted(worlds.items())) + "\n"
        for host, worlds in sorted(by_host.items()))


class Side:
    """One launcher: how its agent's command line starts."""

    def __init__(self, label, launcher):
        self.label = label
        self.launcher = launcher

    def agent(self, hosts, run_dir, args):
        conf = f"join_timeout={args.join_timeout:g},last_call_timeout={args.last_call:g}"
        if args.keep_alive:
            interval, attempts = args.keep_alive.split(",")
            conf += f",keep_alive_interval={interval},keep_alive_max_attempt={attempts}"
        return self.launcher + [
            "--nnodes", f"2:{HOSTS}", "--nproc_per_node", "1", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", f"{hosts.address(1)}:{RDZV_PORT}", "--rdzv_id", "bench",
            "--max_restarts", "3", "--monitor_interval", "0.1", "--rdzv_conf", conf,
            "--no_python", b.PYTHON, "-u", WORKER, "--ckpt-dir", os.path.join(run_dir, "ckpt"),
            "--events", os.path.join(run_dir, "steps.log"), "--step-seconds", f"{args.step_seconds:g}",
            "--collective-timeout", f"{args.collective_timeout:g}"]


def one_run(side, scenario, hosts, work, run, env, args):
    """Seconds from the event to the first step at the new world size on a
    surviving host (None past the cap), and a note (the capped side's log tails)."""
    first, target, counted, _ = SCENARIOS[scenario]
    run_dir = os.path.join(work, f"{side.label}-{scenario}-{run}")
    os.makedirs(run_dir)
    events = Events(os.path.join(run_dir, "steps.log"))
    agents, logs = {}, {}

    def start(host):
        logs[host] = os.path.join(run_dir, f"host{host}.log")
        with open(logs[host], "w") as log:
            agents[host] = subprocess.Popen(hosts.command(host, side.agent(hosts, run_dir, args)), env=env,
                                            cwd=b.ROOT, stdout=log, stderr=subprocess.STDOUT)

    def log_tails(which=None):
        return "".join(f"  --- host{h} ({side.label}) log tail:\n{tail(logs[h])}"
                       for h in sorted(logs) if which is None or h in which)

    cut = False
    try:
        for host in first:
            start(host)
        # Up: every started host has run a few steps at the full size.
        deadline = time.monotonic() + args.start_cap
        while True:
            steps = events.poll()
            running = {h for (_, h, _, w, _, _) in steps if w == len(first)}
            settled = [s for s in steps if s[3] == len(first)]
            if len(running) == len(first) and len(settled) >= 3 * len(first):
                break
            for host, agent in agents.items():
                if agent.poll() is not None:
                    text = tail(logs[host], 40)
                    if "not supported" in text:
                        reason = next((line.strip() for line in text.splitlines() if "not supported" in line),
                                      "not supported")
                        reason = re.sub(r"^(\[[^]]*\] )+", "", reason)   # the log line's stamps
                        raise NotSupported(reason, agent.returncode)
                    raise RuntimeError(f"host{host}'s agent exited ({agent.returncode}) before the job ran "
                                       f"at world size {len(first)}:\n{log_tails()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the job did not run at world size {len(first)} within "
                                   f"{args.start_cap:g} s:\n{log_tails()}")
            time.sleep(0.02)

        seen = len(events.steps)
        if scenario == "kill":
            event = time.time()
            os.kill(agents[3].pid, signal.SIGKILL)
        elif scenario == "crash":
            event = time.time()
            hosts.kill_all(3)
        elif scenario == "cut":
            event = time.time()
            b.ip("link", "set", hosts.outside_link(3), "down")
            cut = True
        else:
            event = time.time()
            start(3)

        deadline = time.monotonic() + args.cap
        while time.monotonic() < deadline:
            steps = events.poll()
            for t, host, rank, world, restart, _ in steps[seen:]:
                if world == target and host in counted and t >= event:
                    return t - event, restart, phases(events, event, host, rank, world, restart)
            seen = len(steps)
            time.sleep(0.02)
        return None, None, after_event(events, event) + log_tails()
    finally:
        hosts.kill_all()
        for agent in agents.values():
            agent.wait()
        if cut:
            b.ip("link", "set", hosts.outside_link(3), "up")


def measure(side, scenario, hosts, work, env, args):
    """{'samples', 'capped', 'restarts', 'note', 'error'} over --runs."""
    result = {"samples": [], "capped": 0, "restarts": set(), "note": "", "error": None, "phases": []}
    for run in range(args.runs):
        try:
            seconds, restart, detail = one_run(side, scenario, hosts, work, run, env, args)
        except RuntimeError as e:
            result["error"] = "did not start (below)"
            result["note"] = f"  did not start: {e}\n"
            print(f"  {side.label} {scenario} run {run}: did not start: {e}", file=sys.stderr, flush=True)
            break
        if seconds is None:
            result["capped"] += 1
            result["note"] = detail
            print(f"  {side.label} {scenario} run {run}: > {args.cap:g} s", flush=True)
            if result["capped"] >= 2:   # it does not recover: stop waiting for it
                break
        else:
            result["samples"].append(seconds)
            result["restarts"].add(restart)
            result["phases"].append(detail)
            print(f"  {side.label} {scenario} run {run}: {seconds:.2f} s (restart count {restart}; "
                  f"{breakdown([detail])})", flush=True)
    return result


def breakdown(phases):
    """Medians of the first new-size worker's phases, in seconds after the event."""
    names = ("started", "imported", "joined")
    found = [p for p in phases if p]
    if not found:
        return "no breakdown"
    return ", ".join(f"{name} +{statistics.median(p[name] for p in found):.2f} s" for name in names)


def describe(result, cap):
    if result is None:
        return "-"
    if result["error"] and not result["samples"]:
        return result["error"]
    if not result["samples"]:
        return f"> {cap:g} s ({result['capped']} runs)"
    text = f"{statistics.median(result['samples']):.2f} s"
    if len(result["samples"]) > 1:
        text += f" [{min(result['samples']):.2f}-{max(result['samples']):.2f}]"
    if result["capped"]:
        text += f", {result['capped']} runs > {cap:g} s"
    return text


def ratio(anchor, ours, cap):
    if not anchor or not ours or not ours["samples"]:
        return "-"
    if not anchor["samples"]:
        return f"> {cap / statistics.median(ours['samples']):.1f}x" if anchor["capped"] else "-"
    return f"{statistics.median(anchor['samples']) / statistics.median(ours['samples']):.2f}x"


def check_prerequisites():
    if os.geteuid() != 0:
        raise SystemExit("elastic_recovery.py needs root (it creates network namespaces)")
    missing = [tool for tool in ("ip", "nsenter", "unshare") if not shutil.which(tool)]
    if missing:
        raise SystemExit(f"elastic_recovery.py needs {', '.join(missing)} (apt: iproute2, util-linux)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primus", default=b.PRIMUS, help="the primus-cli binary (default: build/primus-cli)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds to wait for the new world size")
    parser.add_argument("--start-cap", type=float, default=90.0, help="seconds to wait for the job to run")
    parser.add_argument("--scenarios", default="kill,crash,cut,add", help="comma-separated: " + ",".join(SCENARIOS))
    parser.add_argument("--sides", default="torchrun,ours", help="torchrun, ours or both")
    parser.add_argument("--join-timeout", type=float, default=60.0, help="rdzv_conf join_timeout (s)")
    parser.add_argument("--last-call", type=float, default=1.0,
                        help="rdzv_conf last_call_timeout (s); torchrun's default is 30 (it waits for it again in "
                             "every new rendezvous round, after a loss too)")
    parser.add_argument("--keep-alive", metavar="INTERVAL,ATTEMPTS",
                        help="add keep_alive_interval/keep_alive_max_attempt to --rdzv_conf "
                             "(torch 1.13 ignores them: 5 s x 3 there)")
    parser.add_argument("--step-seconds", type=float, default=0.1, help="the worker's pause after each step")
    parser.add_argument("--collective-timeout", type=float, default=10.0, help="the worker's gloo timeout (s)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) and print its path")
    parser.add_argument("--verbose", action="store_true", help="LOGLEVEL=INFO for torchrun's agents (logs only)")
    args = parser.parse_args()
    scenarios = [s for s in args.scenarios.split(",") if s]
    sides = [s for s in args.sides.split(",") if s]
    for s in scenarios:
        if s not in SCENARIOS:
            parser.error(f"unknown scenario {s} (known: {', '.join(SCENARIOS)})")
    for s in sides:
        if s not in ("torchrun", "ours"):
            parser.error(f"unknown side {s} (torchrun, ours)")
    check_prerequisites()
    primus = os.path.abspath(args.primus)
    if "ours" in sides and not os.access(primus, os.X_OK):
        raise SystemExit(f"{primus} is missing: build first (ninja -C build primus-cli) or pass --primus")
    launchers = {"torchrun": Side("torchrun", b.TORCHRUN), "ours": Side("ours", [primus, "torchrun"])}

    # Ctrl-C and SIGTERM end the bench through the finally clauses (namespaces, processes).
    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)   # also when started with SIGINT ignored (`cmd &`)
    work = b.workdir("elastic")
    env = b.isolated_env(work)
    env["PRIMUS_JOB_TOKEN"] = f"bench-token-{os.getpid()}"
    env["GLOO_SOCKET_IFNAME"] = "eth0"
    env["OMP_NUM_THREADS"] = "1"
    env["TMPDIR"] = work   # torchrun's /tmp/torchelastic_* directories go away with it
    if args.verbose:
        env["LOGLEVEL"] = "INFO"
    results = {}
    try:
        with b.Hosts(HOSTS, work) as hosts:
            refused = {}   # side: the result saying it refused the elastic job
            for scenario in scenarios:
                for side in sides:   # interleaved: both sides see the same machine load
                    if side in refused:
                        results[side, scenario] = refused[side]
                        continue
                    try:
                        results[side, scenario] = measure(launchers[side], scenario, hosts, work, env, args)
                    except NotSupported as e:
                        refused[side] = results[side, scenario] = {
                            "samples": [], "capped": 0, "restarts": set(), "note": "", "phases": [],
                            "error": f"not supported yet (exit {e.args[1]})", "refusal": e.args[0]}
                        print(f"  {side}: refused the elastic job (exit {e.args[1]}): {e.args[0]}", flush=True)
    finally:
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    keep_alive = args.keep_alive or "5,3"
    interval, attempts = keep_alive.split(",")
    print(f"\nelastic recovery, {HOSTS} hosts (network namespaces) x 1 gloo worker, --nnodes 2:{HOSTS}, c10d; "
          f"event -> first step at the new world size on a surviving host (median [min-max] of {args.runs} runs):")
    print(f"  heartbeat timeout: keep-alive {interval} s x {attempts} = {float(interval) * int(attempts):g} s "
          f"(torch 1.13: fixed 5 s x 3); worker collective timeout {args.collective_timeout:g} s; "
          f"last_call_timeout {args.last_call:g} s; step every ~{args.step_seconds:g} s")
    rows = [("scenario", "torchrun [anchor]", "ours", "torchrun/ours")]
    for scenario in scenarios:
        anchor, ours = results.get(("torchrun", scenario)), results.get(("ours", scenario))
        rows.append((f"{scenario}: {SCENARIOS[scenario][3]}", describe(anchor, args.cap), describe(ours, args.cap),
                     ratio(anchor, ours, args.cap)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print("  where the time goes (medians after the event; the worker that made the first step at the new size):")
    for scenario in scenarios:
        for side in sides:
            result = results.get((side, scenario))
            if result and result["phases"]:
                print(f"    {scenario}, {side}: new worker process {breakdown(result['phases'])}, "
                      f"then its first step")
    for (side, scenario), result in sorted(results.items()):
        if result["note"]:
            what = ("did not start" if result["error"] and not result["capped"]
                    else f"never reached the new world size within {args.cap:g} s")
            print(f"\n{side}, {scenario}: {what}:\n{result['note']}", end="")
    for side in sides:
        refusal = next((r["refusal"] for (s, _), r in results.items() if s == side and r.get("refusal")), None)
        if refusal:
            print(f"\n{side} refused the elastic job: {refusal}")
    summary = "; ".join(f"{scenario} {describe(results.get(('ours', scenario)), args.cap)}"
                        for scenario in scenarios)
    print(f"\nRESULT elastic_recovery: ours {summary}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as e:
        sys.exit(f"interrupted ({e or 'Ctrl-C'}): namespaces and processes removed")
