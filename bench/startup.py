#!/usr/bin/python3
"""Start-up of the binary: `primus-cli --version` and `--help`, end to end,
from posix_spawn to waitpid as spawn_baseline times it in-process, against
the floor of starting any program (/bin/true timed the same way). The 8-worker launch
against the same floor is bench/launch_exit.py.

Set PRIMUS_BUILD_DIR to time another build (a before/after pair: run this
once per build, on the same machine, in the same minute).

usage: /usr/bin/python3 bench/startup.py [RUNS]
"""
import subprocess
import sys

import benchlib as b

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
work = b.workdir("startup")
env = b.isolated_env(work)
commands = {"--version": [b.PRIMUS, "--version"], "--help": [b.PRIMUS, "--help"]}
for argv in commands.values():
    assert subprocess.run(argv, env=env, stdout=subprocess.DEVNULL).returncode == 0, argv



def spawned_ms(argv):
    """spawn_baseline's own in-process figure: posix_spawn to waitpid, in ms."""
    out = subprocess.run([b.tool("spawn_baseline"), "1", *argv], env=env, cwd=work, capture_output=True, text=True)
    assert out.returncode == 0, f"{argv}: {out.stderr}"
    return float(out.stdout.strip().splitlines()[-1])


samples = {name: [] for name in commands}
floor = []
for _ in range(runs):  # interleaved, so machine noise hits all alike
    for name, argv in commands.items():
        samples[name].append(spawned_ms(argv))
    floor.append(spawned_ms(["/bin/true"]))

floor_ms = b.summary(floor)["median"]
rows = [("floor: /bin/true, spawn to reap", floor_ms, "ms")]
for name, values in samples.items():
    ms = b.summary(values)["median"]
    rows.append((f"primus-cli {name}", ms, "ms"))
    rows.append((f"primus-cli {name} / floor", ms / floor_ms, "x"))
b.table(f"start-up, posix_spawn to waitpid, median of {runs} ({b.PRIMUS})", rows)
