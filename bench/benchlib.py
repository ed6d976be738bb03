"""Shared helpers of the bench scripts: where the binaries are, an isolated
environment for primus-cli (no user configuration), timing, and the
side-by-side table every bench prints (anchor, ours, ratio), and hosts made
of network namespaces for the multi-node benches (Hosts; root and iproute2).

Run the benches with /usr/bin/python3 (Debian's, with torch 1.13): the
torchrun anchors need it. Binaries come from $PRIMUS_BUILD_DIR (default
<repo>/build)."""
import os
import signal
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


def alive(pid):
    """False when the process is gone or a zombie (dead, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def ip(*args, check=True):
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"`ip {' '.join(args)}` failed: {result.stderr.strip()} "
                         "(network namespaces need root and iproute2)")


class Hosts:
    """host1..hostN: network namespaces on a bridge, eth0 at 10.A.B.<i>/24, lo
    up, their own host name and an /etc/hosts naming them all (the layout of
    tests/support/netns_hosts.h). Names carry our pid; the bridge has no
    address, so the subnet exists only inside our namespaces."""

    def __init__(self, count, workdir):
        self.count = count
        self.tag = f"{os.getpid()}b"
        self.bridge = f"pb{self.tag}"
        value = os.getpid() % 32768
        self.subnet = f"10.{128 + value // 256}.{value % 256}."
        self.hosts_file = os.path.join(workdir, "hosts")
        self.made = []  # ("netns"|"link", name), to remove in reverse

    def address(self, host):
        return f"{self.subnet}{host}"

    def namespace(self, host):
        return f"primus-{self.tag}-h{host}"

    def __enter__(self):
        try:
            with open(self.hosts_file, "w") as f:
                f.write("127.0.0.1\tlocalhost\n")
                f.writelines(f"{self.address(h)}\thost{h}\n" for h in range(1, self.count + 1))
            ip("link", "add", self.bridge, "type", "bridge")
            self.made.append(("link", self.bridge))
            ip("link", "set", self.bridge, "up")
            for host in range(1, self.count + 1):
                ns, outside = self.namespace(host), self.outside_link(host)
                ip("netns", "add", ns)
                self.made.append(("netns", ns))
                ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ns)
                # Removed before its namespace: deleting one end removes the pair at once,
                # while a deleted namespace is cleaned up by the kernel later.
                self.made.append(("link", outside))
                ip("link", "set", outside, "master", self.bridge)
                ip("link", "set", outside, "up")
                ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
                ip("-n", ns, "link", "set", "eth0", "up")
                ip("-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def command(self, host, argv):
        """argv run on `host`; nsenter, unshare and sh exec into it."""
        script = f'hostname host{host} && mount --bind {self.hosts_file} /etc/hosts && exec "$@"'
        return ["nsenter", f"--net=/run/netns/{self.namespace(host)}", "unshare", "--uts", "--mount",
                "--propagation", "private", "sh", "-c", script, f"host{host}", *argv]

    def outside_link(self, host):
        """The bridge-side end of host's veth pair: `ip link set <it> down` cuts the host off."""
        return f"pv{self.tag}h{host}"

    def processes(self, host=None):
        """Live pids in our namespaces (only host's, when given)."""
        inodes = set()
        for kind, name in self.made:
            if host is not None and name != self.namespace(host):
                continue
            if kind == "netns" and os.path.exists(f"/run/netns/{name}"):
                st = os.stat(f"/run/netns/{name}")
                inodes.add((st.st_dev, st.st_ino))
        found = []
        for entry in os.listdir("/proc"):
            try:
                st = os.stat(f"/proc/{entry}/ns/net") if entry.isdigit() else None
            except OSError:
                continue
            if st and (st.st_dev, st.st_ino) in inodes and alive(int(entry)):
                found.append(int(entry))
        return found

    def kill_all(self, host=None, keep=()):
        """SIGKILL what still runs in our namespaces (only host's, when given), but the
        pids in keep: only we start processes there."""
        deadline = time.monotonic() + 5
        while (pids := [p for p in self.processes(host) if p not in keep]) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def __exit__(self, *exc):
        self.kill_all()
        for kind, name in reversed(self.made):
            ip(*(("netns", "del") if kind == "netns" else ("link", "del")), name, check=False)
        self.made = []


class SshHosts(Hosts):
    """Hosts, each running Debian's sshd with our own configuration, host key and
    authorized keys, and root's home of its own (the layout of
    tests/integration/ssh_test.cc; no system file is touched or read at login).
    Clients use `ssh -F <ssh_config>`: our user key, root, known_hosts in workdir. The sshd processes live in the namespaces, so Hosts' teardown stops
    them with everything else. Needs openssh-server and openssh-client."""

    def __init__(self, count, workdir):
        super().__init__(count, workdir)
        self.dir = workdir
        self.ssh_config = os.path.join(workdir, "ssh_config")

    def __enter__(self):
        super().__enter__()
        try:
            self._start_sshd()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start_sshd(self):
        d = self.dir
        os.makedirs("/run/sshd", exist_ok=True)
        for key in ("hostkey", "userkey"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, key)], check=True)
        with open(self.ssh_config, "w") as f:
            f.write(f"Host *\n  IdentityFile {d}/userkey\n  IdentitiesOnly yes\n  User root\n"
                    f"  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n")
        # Each host's root has a home of its own (an /etc/passwd bind-mounted in
        # the host's mount namespace): no login reads a startup file of the
        # machine's /root, whose work (a `pyenv rehash`, say) would be timed.
        with open("/etc/passwd") as f:
            system_passwd = f.read().splitlines()
        self.sshd = []
        for host in range(1, self.count + 1):
            home = os.path.join(d, f"home-host{host}")
            os.makedirs(home, exist_ok=True)
            passwd = os.path.join(d, f"passwd-host{host}")
            with open(passwd, "w") as f:
                for line in system_passwd:
                    fields = line.split(":")
                    if len(fields) == 7 and fields[0] == "root":
                        fields[5], fields[6] = home, "/bin/bash"
                    f.write(":".join(fields) + "\n")
            config = os.path.join(d, f"sshd{host}_config")
            with open(config, "w") as f:
                f.write(f"ListenAddress {self.address(host)}:22\nHostKey {d}/hostkey\n"
                        f"AuthorizedKeysFile {d}/userkey.pub\nPasswordAuthentication no\n"
                        "KbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\n"
                        f"PermitRootLogin prohibit-password\nPidFile {d}/sshd{host}.pid\n"
                        f"SetEnv XDG_CACHE_HOME={d}/cache-host{host}\n")
            log = open(os.path.join(d, f"sshd{host}.log"), "w")
            start = f"mount --bind {passwd} /etc/passwd && exec /usr/sbin/sshd -D -e -f {config}"
            self.sshd.append(subprocess.Popen(self.command(host, ["/bin/sh", "-c", start]),
                                              stdout=log, stderr=subprocess.STDOUT))
            log.close()
        deadline = time.monotonic() + 10
        for host in range(1, self.count + 1):
            while not os.path.exists(os.path.join(d, f"sshd{host}.pid")):
                if time.monotonic() > deadline or self.sshd[host - 1].poll() is not None:
                    raise SystemExit(f"sshd on host{host} did not start: "
                                     f"{open(os.path.join(d, f'sshd{host}.log')).read()}")
                time.sleep(0.01)

    def kill_all_but_sshd(self):
        """SIGKILL what runs in our namespaces except the listening sshd processes
        (a run's leftovers: agents, workers, sessions)."""
        self.kill_all(keep={process.pid for process in self.sshd})

    def __exit__(self, *exc):
        super().__exit__(*exc)
        for process in getattr(self, "sshd", []):
            process.wait()
        self.sshd = []
