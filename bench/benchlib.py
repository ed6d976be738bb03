"""Shared helpers of the bench scripts: where the binaries are, an isolated
environment for primus-cli (no user configuration), timing, and the
side-by-side table every bench prints (anchor, ours, ratio).

Run the benches with /usr/bin/python3 (Debian's, with torch 1.13): the
torchrun anchors need it. Binaries come from $PRIMUS_BUILD_DIR (default
<repo>/build)."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("PRIMUS_BUILD_DIR", os.path.join(ROOT, "build"))
PRIMUS = os.path.join(BUILD, "primus-cli")
TOOLS = os.path.join(BUILD, "bench")
PYTHON = "/usr/bin/python3"
TORCHRUN = [PYTHON, os.path.join(ROOT, "tests", "tools", "torchrun_compat.py")]


def tool(name):
    path = os.path.join(TOOLS, name)
    if not os.access(path, os.X_OK):
        sys.exit(f"{path} is missing: build first (ninja -C {BUILD})")
    return path


def workdir(tag):
    return tempfile.mkdtemp(prefix=f"primus-bench-{tag}-")


def isolated_env(home):
    """This process's environment with HOME moved, so no user config applies."""
    env = dict(os.environ)
    env["HOME"] = home
    env["NO_COLOR"] = "1"
    for name in list(env):
        if name.startswith(("PRIMUS_", "PET_")):
            del env[name]
    return env


def primus_direct(nproc, command, log_dir, extra=()):
    return [PRIMUS, "direct", "--nproc-per-node", str(nproc), "--log-dir", log_dir, *extra, "--", "run", *command]


def torchrun(nproc, command, extra=()):
    return TORCHRUN + ["--nproc_per_node", str(nproc), "--monitor_interval", "0.1", "--standalone",
                       "--no_python", *extra, *command]


def timed_run(argv, env=None, cwd=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """(seconds, exit code) of one run, end to end."""
    start = time.perf_counter()
    code = subprocess.run(argv, env=env, cwd=cwd, stdout=stdout, stderr=stderr).returncode
    return time.perf_counter() - start, code


def summary(samples):
    return {"median": statistics.median(samples), "min": min(samples), "n": len(samples)}


def table(title, rows, note=""):
    """rows: (label, value, unit)."""
    print(f"\n== {title}")
    width = max(len(label) for label, _, _ in rows)
    for label, value, unit in rows:
        print(f"  {label:<{width}}  {value:>12.3f} {unit}")
    if note:
        print(f"  {note}")
