#!/usr/bin/env python3
"""Every example experiment of a pinned Primus release through our Primus
backend: each one either runs (dry run: a plan and a worker command; run: the
workers start Primus's CLI with exactly `train <suite> --config <file>`), or
is refused with exit 3 (a configuration problem) or 4 (something missing in
the environment) and a message that names the file. Anything else fails.

    check_primus_examples.py --binary build/primus-cli \
        --archive ../shared/upstream/primus-fd1eeabb.tar.gz [--run N] [--jobs 2]

The release is unpacked from its pinned archive into a temporary directory
(--release DIR reads an unpacked tree instead); without it the check is
skipped (exit 77, naming the archive).

The Primus installation is the fixture of tests/fixtures/primus/ (its main.py
records what each worker was started with) around the release's own presets
(primus/configs). --run N also launches N examples for real (one per
framework first), 8 workers each. Prints a line per refusal and the counts.
"""
import argparse
import collections
import concurrent.futures
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

from upstream import on_tree

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_MAIN = os.path.join(HERE, "..", "fixtures", "primus", "main.py")
SUBCOMMANDS = ["train", "benchmark", "preflight", "projection", "data", "node_smoke"]


def make_install(root, release):
    cli = os.path.join(root, "primus", "cli")
    os.makedirs(os.path.join(cli, "subcommands"))
    shutil.copy(FIXTURE_MAIN, os.path.join(cli, "main.py"))
    for name in SUBCOMMANDS:
        open(os.path.join(cli, "subcommands", name + ".py"), "w").close()
    with open(os.path.join(root, "primus", "__init__.py"), "w") as out:
        out.write('__version__ = "fixture-%s"\n' % os.path.basename(release.rstrip("/")))
    os.symlink(os.path.abspath(os.path.join(release, "primus", "configs")), os.path.join(root, "primus", "configs"))


@functools.lru_cache(maxsize=None)
def modules_of(path):
    """The file's modules: map as Primus would see it at the top level, or {}."""
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except Exception:
        return {}
    modules = data.get("modules") if isinstance(data, dict) else None
    return modules if isinstance(modules, dict) else {}


def suite_of(path):
    modules = modules_of(path)
    return "posttrain" if "post_trainer" in modules and "pre_trainer" not in modules else "pretrain"


def framework_of(path):
    for module in modules_of(path).values():
        return str(module.get("framework")) if isinstance(module, dict) else "-"
    return "-"


def launch(binary, example, suite, env, cwd, dry_run, nnodes=1):
    args = [binary] + (["--dry-run"] if dry_run else []) + [
        "direct", "--nproc-per-node", "8", "--nnodes", str(nnodes), "--", "train", suite, "--config", example,
        "--no-preflight"]
    result = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    return result


def first_error(text):
    for line in text.splitlines():
        if line.startswith("primus-cli: error: "):
            return line[len("primus-cli: error: "):].strip()
        if "[ERROR]" in line or line.startswith("error"):
            return line.split("[ERROR]", 1)[-1].strip()
    return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--release")
    parser.add_argument("--archive")
    parser.add_argument("--run", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    return on_tree(args.release, args.archive, lambda release: check(args, release))


def check(args, release):
    binary = os.path.abspath(args.binary)
    examples = sorted(
        os.path.join(dirpath, name)
        for dirpath, _, names in os.walk(os.path.join(release, "examples"))
        for name in names if name.endswith((".yaml", ".yml")))
    failures = []
    outcomes = {}
    with tempfile.TemporaryDirectory(prefix="primus-examples-") as tmp:
        install = os.path.join(tmp, "Primus")
        make_install(install, release)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIMUS_", "SLURM_", "PET_"))}
        env.update({"PRIMUS_PATH": install, "PRIMUS_WORKSPACE": os.path.join(tmp, "ws"), "NO_COLOR": "1",
                    "PRIMUS_FIXTURE_RECORD": os.path.join(tmp, "records")})

        def dry(example):
            # Many examples are written for several 8-GPU nodes: the smallest
            # node count whose world size the layout check accepts.
            for nnodes in (1, 2, 4, 8, 16, 32, 64):
                result = launch(binary, os.path.abspath(example), suite_of(example), env, tmp, True, nnodes)
                if result.returncode != 3 or "does not divide" not in result.stderr:
                    break
            return example, (result, nnodes)

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for example, (result, nnodes) in pool.map(dry, examples):
                name = os.path.relpath(example, release)
                text = result.stdout + result.stderr
                if result.returncode == 0:
                    if "through Primus fixture-" not in text or "primus/cli/main.py train " not in text:
                        failures.append("%s: exit 0 without a Primus plan" % name)
                    status = "runs" if nnodes == 1 else "runs on %2d nodes" % nnodes
                    outcomes[name] = (status, framework_of(example), "")
                elif result.returncode in (3, 4):
                    message = first_error(text)
                    if not message or os.path.basename(example) not in text:
                        failures.append("%s: exit %d without a message naming the file:\n%s" % (name, result.returncode, text[-800:]))
                    outcomes[name] = ("refused %d" % result.returncode, framework_of(example), message)
                else:
                    failures.append("%s: exit %d\n%s" % (name, result.returncode, text[-800:]))
                    outcomes[name] = ("BAD %d" % result.returncode, framework_of(example), "")

        # Real launches: one per framework first, then in order.
        runnable = [name for name, outcome in outcomes.items() if outcome[0] == "runs"]
        chosen, seen = [], set()
        for name in runnable:
            if outcomes[name][1] not in seen:
                seen.add(outcomes[name][1])
                chosen.append(name)
        chosen += [name for name in runnable if name not in chosen]
        ran = 0
        for name in chosen[:args.run]:
            example = os.path.abspath(os.path.join(release, name))
            records = env["PRIMUS_FIXTURE_RECORD"]
            shutil.rmtree(records, ignore_errors=True)
            suite = suite_of(example)
            result = launch(binary, example, suite, env, tmp, False)
            expected = ["train", suite, "--config", example, "--no-preflight"][:4]
            files = sorted(os.listdir(records)) if os.path.isdir(records) else []
            argvs = [json.load(open(os.path.join(records, f)))["argv"] for f in files]
            if result.returncode != 0 or len(files) != 8 or any(a != expected for a in argvs):
                failures.append("%s: real run exit %d, %d workers recorded, argv %s\n%s" % (
                    name, result.returncode, len(files), argvs[:1], (result.stdout + result.stderr)[-800:]))
            ran += 1

    counts = collections.Counter(outcome[0] for outcome in outcomes.values())
    by_framework = collections.defaultdict(collections.Counter)
    for status, framework, _ in outcomes.values():
        by_framework[framework][status if status.startswith("refused") else status.split()[0]] += 1
    for name, (status, framework, message) in sorted(outcomes.items()):
        if status != "runs":
            print("%-10s %-70s %s" % (status, name, message[:160]))
    print("\n%d examples: %s" % (len(outcomes), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    for framework, counter in sorted(by_framework.items()):
        print("  %-16s %s" % (framework, ", ".join("%s %d" % kv for kv in sorted(counter.items()))))
    print("('runs': 8 workers on one node; 'runs on N nodes': the layout needs N x 8 workers, checked with --dry-run)")
    print("real runs through the fixture (8 workers each): %d" % ran)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
