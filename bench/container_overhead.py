#!/usr/bin/python3
"""Launch overhead of `primus-cli container` against a plain `podman run` of
the same command, in the same run (interleaved, medians). Target: at most
+50 ms.

  ours:   primus-cli container --image local/mini -- run /bin/true
          (the outer primus-cli resolves the launch and runs podman; inside,
          the mounted primus-cli runs `direct`, whose node agent starts
          /bin/true as its one worker)
  anchor: podman run --rm --network=host <ulimits> local/mini /bin/true
          (the ulimits are the two flags podman itself needs on hosts without
          CAP_SYS_RESOURCE, docs: test-infra.md; ours passes the same)

Also shown, to explain the difference: ours under --dry-run (everything up
to starting podman) and `primus-cli direct -- run /bin/true` on the host
(what the inner primus-cli adds inside the container).

Podman runs with a private store (a temporary CONTAINERS_STORAGE_CONF) and
an image imported from a root filesystem built here from host files.

usage: /usr/bin/python3 bench/container_overhead.py [RUNS]
"""
import os
import re
import resource
import shutil
import subprocess
import sys

import benchlib as b

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
if shutil.which("podman") is None:
    sys.exit("podman is not installed (scripts/setup.sh --all installs it)")
work = b.workdir("container")
env = b.isolated_env(work)
env.pop("DOCKER_HOST", None)
with open(os.path.join(work, "storage.conf"), "w") as conf:
    conf.write(f'[storage]\ndriver = "vfs"\ngraphroot = "{work}/graph"\nrunroot = "{work}/run"\n')
env["CONTAINERS_STORAGE_CONF"] = os.path.join(work, "storage.conf")


def build_rootfs(root):
    """/bin/true, a shell and the glibc libraries primus-cli needs."""
    for tool in ("true", "sh"):
        source = shutil.which(tool, path="/usr/bin:/bin")
        os.makedirs(os.path.join(root, "bin"), exist_ok=True)
        shutil.copy(source, os.path.join(root, "bin", tool))
    for binary in (shutil.which("true", path="/usr/bin:/bin"), b.PRIMUS):
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        for library in re.findall(r"(/\S+)", ldd):
            target = os.path.join(root, library.lstrip("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(library, target)
    for directory in ("etc", "tmp", "proc", "sys", "dev"):
        os.makedirs(os.path.join(root, directory), exist_ok=True)


rootfs = os.path.join(work, "rootfs")
build_rootfs(rootfs)
subprocess.run(f"tar -C {rootfs} -c . | podman import - local/mini", shell=True, env=env, check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], int(open("/proc/sys/kernel/pid_max").read()))
plain = ["podman", "run", "--rm", "--network=host", "--ulimit", f"nofile={nofile}:{nofile}",
         "--ulimit", f"nproc={nproc}:{nproc}", "local/mini", "/bin/true"]
ours = [b.PRIMUS, "--quiet", "container", "--image", "local/mini", "--", "run", "/bin/true"]
dry = [b.PRIMUS, "--dry-run", "container", "--image", "local/mini", "--", "run", "/bin/true"]
direct = [b.PRIMUS, "--quiet", "direct", "--log-dir", os.path.join(work, "logs"), "--", "run", "/bin/true"]

for argv in (plain, ours):  # warm the store and the page cache
    run = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True)
    assert run.returncode == 0, f"{' '.join(argv)} exited {run.returncode}: {run.stderr.strip()}"

samples = {"plain": [], "ours": [], "dry": [], "direct": []}
for _ in range(runs):  # interleaved, so machine noise hits both alike
    for key, argv in (("plain", plain), ("ours", ours), ("dry", dry), ("direct", direct)):
        seconds, code = b.timed_run(argv, env=env, cwd=work)
        assert code == 0, f"{key} exited {code}"
        samples[key].append(seconds)
leftover = subprocess.run(["podman", "ps", "-aq"], env=env, capture_output=True, text=True).stdout.strip()
subprocess.run(f"podman rm -af >/dev/null 2>&1; rm -rf {work}", shell=True, env=env)
assert not leftover, "a container was left behind"

s = {key: b.summary(values) for key, values in samples.items()}
overhead = (s["ours"]["median"] - s["plain"]["median"]) * 1e3
b.table(f"container launch + exit of /bin/true ({runs} runs each, interleaved; medians, min in brackets)", [
    ("podman run --rm --network=host (anchor)", s["plain"]["median"] * 1e3, f"ms  (min {s['plain']['min'] * 1e3:.1f})"),
    ("primus-cli container -- run (ours)", s["ours"]["median"] * 1e3, f"ms  (min {s['ours']['min'] * 1e3:.1f})"),
    ("ours - anchor", overhead, "ms  (target <= +50)"),
    ("  of which: ours --dry-run (to podman's start)", s["dry"]["median"] * 1e3, "ms"),
    ("  of which: primus-cli direct -- run on the host", s["direct"]["median"] * 1e3, "ms"),
])
