#!/usr/bin/python3
"""Checks the Megatron-LM and TorchTitan commands primus-cli builds against the pinned releases themselves.

    check_native_commands.py --primus build/primus-cli [--upstream ../shared/upstream]

Run by ctest as tools.native_commands (labels slow;integration), from the
repository root. The releases are the pinned archives of --upstream (default
../shared/upstream beside the repository; its README lists them): each one
is unpacked into a temporary directory. For every Megatron-LM release with a
compiled table (data/megatron_flags-<release>.tsv) and an archive, it checks:
  * the compiled table is what python/megatron_option_table.py makes of the
    release now, and matches the options of its live parser (Kitchen's two
    options exist only where Kitchen is installed);
  * for every Megatron example (examples/megatron/*.yaml,
    src/train/testdata/megatron_llama.yaml and the Megatron-LM template of
    every `primus-cli init` model at 8 GPUs), at every world size its variants
    name and at 8, for pretrain and posttrain, the worker command that
    `primus-cli --dry-run direct --nproc-per-node N -- train SUBTASK --config F
    megatron.release=<release>` prints passes Megatron-LM's own parse_args()
    and validate_args() of that release (tests/tools/megatron_parse_args.py
    says how);
  * Megatron's parser rejects a bad command line (the harness can say no).
A fork: core_v0.13.0 (the VCCL guide's) with an option of its own added
(--batch-p2p-communication, as VCCL's patch adds it) is given as the
checkout (megatron.path): primus-cli reads the fork's table, accepts the
option and emits it, and the fork's parser accepts the command; the same
key against the unpatched release is refused at load.
TorchTitan: the key table is what torchtitan_config_keys.py makes of its
archive, and the job TOML of the golden test reads back (tomllib) with only
keys of that table. Without the archives the test exits 77 (skipped).
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib

from upstream import DEFAULT_DIR, unpack

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def header(path, product):
    with open(path, encoding="utf-8") as f:
        words = f.readline().lstrip("#").split()
    if len(words) != 3 or words[0] != product:
        raise SystemExit(f"{path}: the first line should be '# {product} <tag> <commit>'")
    return words[1], words[2]


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            self.failures.append(what)


def world_sizes(config):
    sizes = {8}
    text = open(config, encoding="utf-8").read()
    block = re.search(r"^variants:\n((?:[ \t]+.*\n?)*)", text, re.M)
    if block:
        sizes.update(int(size) for size in re.findall(r"^[ \t]+(\d+):", block.group(1), re.M))
    return sorted(sizes)


def worker_command(primus, config, world_size, subtask, env, overrides=(), plan=None):
    """The worker argv of the --dry-run plan, or (None, the error); `plan` (a list) gets the plan's text."""
    result = run([primus, "--dry-run", "direct", "--nproc-per-node", str(world_size), "--", "train", subtask,
                  "--config", config, "--no-preflight"] + list(overrides), env=env, cwd=ROOT)
    if plan is not None:
        plan.append(result.stdout)
    if result.returncode != 0:
        return None, result.stderr.strip()
    lines = result.stdout.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("worker command (once per rank):"):
            return shlex.split(lines[i + 1]), ""
    return None, "no worker command in the plan"


def init_templates(primus, temp):
    """`primus-cli init`'s Megatron-LM templates, written for one node of 8 GPUs."""
    listed = run([primus, "init", "--list", "--json"])
    paths = []
    for model in json.loads(listed.stdout):
        if "megatron" not in model["backends"]:
            continue
        path = os.path.join(temp, f"init-{model['model']}.yaml")
        if not os.path.exists(path):
            run([primus, "init", model["model"], "--backend", "megatron", "--gpus", "8", "-o", path])
        paths.append(path)
    return paths


def megatron_examples(primus, release, checks, temp, env):
    """(name, path of a JSON command file) for every example at every size and subtask."""
    files = []
    configs = sorted(glob.glob(os.path.join(ROOT, "examples", "megatron", "*.yaml")))
    configs.append(os.path.join(ROOT, "src", "train", "testdata", "megatron_llama.yaml"))
    configs += init_templates(primus, temp)
    for config in configs:
        for world_size in world_sizes(config):
            for subtask in ("pretrain", "posttrain"):
                name = f"{os.path.relpath(config, ROOT)} {subtask} x{world_size}"
                plan = []
                argv, error = worker_command(primus, config, world_size, subtask, env,
                                             [f"megatron.release={release}"], plan)
                if argv is None:
                    # An example written for a newer release may be refused at load, naming the key;
                    # never handed to Megatron to be refused on every rank.
                    refused = re.search(r"primus-cli: error: .*(takes|is not a Megatron-LM|needs Megatron-LM)", error)
                    checks.expect(bool(refused), f"{name}: {release}: refused at load: {error[-220:]}")
                    continue
                checks.expect("CUDA_DEVICE_MAX_CONNECTIONS=1" in plan[0],
                              f"{name}: the workers get CUDA_DEVICE_MAX_CONNECTIONS=1")
                checks.expect((subtask == "posttrain") == ("--sft" in argv), f"{name}: --sft only for posttrain")
                path = os.path.join(temp, f"{release}-{len(files)}.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({"argv": argv, "world_size": world_size}, f)
                files.append((name, path))
    return files


def parse_all(python, checkout, files):
    # The workers' environment has it (the megatron backend sets it; core_v0.12's validate_args asserts it).
    env = dict(os.environ, CUDA_DEVICE_MAX_CONNECTIONS="1")
    paths = [path for _, path in files]
    if len(paths) == 1:
        paths.append(paths[0])  # with several files each verdict line names its file
    parsed = run([python, os.path.join(HERE, "megatron_parse_args.py"), "--validate", "--megatron", checkout] + paths,
                 env=env)
    results = {}
    for line in parsed.stdout.splitlines():
        path, _, verdict = line.partition(": ")
        results[path] = verdict
    return results, parsed.stderr.strip()[-500:]


def check_release(primus, python, table, archive, checks, temp):
    tag, commit = header(table, "Megatron-LM")
    checkout = unpack(archive, os.path.join(temp, tag))
    arguments_py = os.path.join(checkout, "megatron", "training", "arguments.py")
    extracted = run([python, os.path.join(ROOT, "python", "megatron_option_table.py"), arguments_py, "--release", tag,
                     "--commit", commit])
    checks.expect(extracted.returncode == 0 and extracted.stdout == open(table, encoding="utf-8").read(),
                  f"{os.path.relpath(table, ROOT)} is megatron_option_table.py's output for {tag}")
    live = run([python, os.path.join(HERE, "megatron_parse_args.py"), "--dump-table", "--megatron", checkout])
    static_rows = [line.split("\t")[:4] for line in open(table, encoding="utf-8").read().splitlines()
                   if line and not line.startswith("#")]
    live_rows = [line.split("\t") for line in live.stdout.splitlines()]
    # Added by arguments.py only where NVIDIA Kitchen is installed.
    kitchen = [row for row in static_rows if row[0] in ("--kitchen-config-file", "--kitchen-recipe-number")]
    # Kitchen's options: in the live parser of core_v0.13-0.15 always, later only where Kitchen is installed.
    checks.expect(live.returncode == 0 and live_rows in ([r for r in static_rows if r not in kitchen], static_rows),
                  f"{tag}: the table's {len(static_rows)} options are the live parser's {len(live_rows)}, "
                  f"in order, plus Kitchen's {len(kitchen)} {live.stderr.strip()[-300:]}")

    env = dict(os.environ, MEGATRON_PATH="/opt/Megatron-LM")  # not here: the compiled table is used
    env.pop("EXP", None)
    files = megatron_examples(primus, tag, checks, temp, env)
    bad = os.path.join(temp, f"{tag}-bad.json")
    with open(bad, "w", encoding="utf-8") as f:
        json.dump(["--num-layers", "two"], f)
    results, stderr = parse_all(python, checkout, files + [("bad", bad)])
    for name, path in files:
        verdict = results.get(path, stderr)
        world_size = json.load(open(path))["world_size"]
        checks.expect(verdict.startswith("accepted") and
                      verdict.endswith(f"validate_args (world size {world_size}): passed"),
                      f"{name}: Megatron-LM {tag}: {verdict}")
    checks.expect(results.get(bad, "").startswith("rejected: pretrain_gpt.py: error: argument --num-layers"),
                  f"{tag}: a bad command line is rejected: {results.get(bad)}")
    return checkout


def check_fork(primus, python, release_checkout, checks, temp):
    """core_v0.13.0 plus an option of its own, given as the checkout."""
    fork = os.path.join(temp, "fork")
    shutil.copytree(release_checkout, fork)
    arguments_py = os.path.join(fork, "megatron", "training", "arguments.py")
    text = open(arguments_py, encoding="utf-8").read()
    anchor = "    group.add_argument('--no-overlap-p2p-communication'"
    checks.expect(anchor in text, "the fork's patch applies to core_v0.13.0")
    if anchor not in text:
        return
    with open(arguments_py, "w", encoding="utf-8") as f:
        f.write(text.replace(anchor, "    group.add_argument('--batch-p2p-communication', action='store_true',\n"
                                     "                       help='batch the pipeline p2p operations')\n" + anchor, 1))
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(temp, "cache"))
    env.pop("EXP", None)
    config = os.path.join(ROOT, "examples", "megatron", "llama3_8b.yaml")
    key = "megatron.args.batch_p2p_communication=true"
    argv, error = worker_command(primus, config, 8, "pretrain", env, [f"megatron.path={fork}", key])
    checks.expect(argv is not None and "--batch-p2p-communication" in argv,
                  f"the fork's option is read from its checkout and emitted: {error or 'emitted'}")
    if argv is not None:
        path = os.path.join(temp, "fork.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"argv": argv, "world_size": 8}, f)
        results, stderr = parse_all(python, fork, [("fork", path)])
        verdict = results.get(path, stderr)
        checks.expect(verdict.startswith("accepted") and verdict.endswith("validate_args (world size 8): passed"),
                      f"the fork's own parser: {verdict}")
    argv, error = worker_command(primus, config, 8, "pretrain", env,
                                 [f"megatron.path={release_checkout}", key])
    checks.expect(argv is None and "batch_p2p_communication is not a Megatron-LM" in error,
                  f"the unpatched core_v0.13.0 refuses the fork's key at load: {error[-200:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--primus", required=True, help="the primus-cli binary")
    parser.add_argument("--upstream", default=DEFAULT_DIR,
                        help="the directory of the pinned archives (default: ../shared/upstream)")
    options = parser.parse_args()
    options.primus = os.path.abspath(options.primus)
    tables = sorted(glob.glob(os.path.join(ROOT, "data", "megatron_flags-*.tsv")))
    titan_table = glob.glob(os.path.join(ROOT, "data", "torchtitan_keys-*.tsv"))[0]
    titan_tag, titan_commit = header(titan_table, "TorchTitan")
    archives = {}
    for table in tables:
        tag, _ = header(table, "Megatron-LM")
        archive = os.path.join(options.upstream, f"megatron-lm-{tag}.tar.gz")
        if os.path.isfile(archive):
            archives[table] = archive
        else:
            print(f"skip  no archive {archive}")
    if not archives:
        print(f"SKIP: none of the pinned Megatron-LM archives is in {options.upstream}")
        return SKIP
    python = sys.executable
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="native-commands-") as temp:
        checkouts = {}
        for table, archive in archives.items():
            checkouts[header(table, "Megatron-LM")[0]] = check_release(options.primus, python, table, archive,
                                                                       checks, temp)
        if "core_v0.13.0" in checkouts:
            check_fork(options.primus, python, checkouts["core_v0.13.0"], checks, temp)
        else:
            print("skip  the fork check needs core_v0.13.0")

        # TorchTitan: the key table, and the golden job file against it.
        titan_archive = os.path.join(options.upstream, f"torchtitan-{titan_tag}.tar.gz")
        if os.path.isfile(titan_archive):
            titan = unpack(titan_archive, os.path.join(temp, "torchtitan"))
            extracted = run([python, os.path.join(ROOT, "python", "torchtitan_config_keys.py"),
                             os.path.join(titan, "torchtitan", "config", "job_config.py"), "--release", titan_tag,
                             "--commit", titan_commit])
            checks.expect(extracted.returncode == 0 and extracted.stdout == open(titan_table, encoding="utf-8").read(),
                          f"{os.path.relpath(titan_table, ROOT)} is torchtitan_config_keys.py's output for {titan_tag}")
            # A job.custom_config_module of the release (flux's), read from the checkout.
            experiment = os.path.join(temp, "flux.yaml")
            with open(experiment, "w", encoding="utf-8") as f:
                f.write("exp_name: flux\nbackend: torchtitan\nmodel: {name: flux, flavor: flux-debug}\n"
                        f"torchtitan:\n  path: {titan}\n  toml:\n"
                        "    job: {custom_config_module: torchtitan.models.flux.job_config}\n"
                        "    training: {classifier_free_guidance_prob: 0.447, img_size: 256}\n"
                        "    encoder: {t5_encoder: google/t5-v1_1-small, max_t5_encoding_len: 256}\n")
            plan = run([options.primus, "--dry-run", "direct", "--nproc-per-node", "2", "--", "train", "pretrain",
                        "--config", experiment, "--no-preflight"], cwd=temp)
            checks.expect(plan.returncode == 0 and re.search(r"with the \d+ keys of torchtitan.models.flux.job_config", plan.stdout)
                          and "unchecked" not in plan.stderr,
                          f"flux's job.custom_config_module is read from the checkout: {plan.stderr.strip()[-300:]}")
        else:
            print(f"skip  no archive {titan_archive}")
    keys = {line.split("\t")[0] for line in open(titan_table, encoding="utf-8").read().splitlines()
            if line and not line.startswith("#")}
    golden = os.path.join(ROOT, "src", "train", "testdata", "golden", "torchtitan_llama.toml")
    with open(golden, "rb") as f:
        document = tomllib.load(f)

    def leaves(table, prefix=""):
        for key, value in table.items():
            if isinstance(value, dict):
                yield from leaves(value, prefix + key + ".")
            else:
                yield prefix + key

    unknown = [key for key in leaves(document) if key not in keys]
    checks.expect(not unknown, f"the golden job TOML reads back and has only TorchTitan {titan_tag} keys {unknown or ''}")

    print(f"{len(checks.failures)} failed" if checks.failures else "all passed")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
