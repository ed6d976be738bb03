#!/usr/bin/python3
"""Checks the Megatron-LM and TorchTitan commands primus-cli builds against the pinned releases themselves.

    check_native_commands.py --primus build/primus-cli [--megatron-git DIR] [--torchtitan-git DIR]

Run by ctest as tools.native_commands (labels slow;integration), from the
repository root. For every Megatron example (examples/megatron/*.yaml and
src/train/testdata/megatron_llama.yaml), at every world size its variants name
and at 8, for pretrain and posttrain, it takes the worker command that
`primus-cli --dry-run direct --nproc-per-node N -- train SUBTASK --config F`
prints and runs Megatron-LM's own parse_args() and validate_args() on it
(tests/tools/megatron_parse_args.py says how). It also checks that:
  * the checked-in option table is what tests/tools/extract_megatron_flags.py
    makes of the pinned tag now, and matches the options of the live parser
    (Kitchen's two options exist only where Kitchen is installed);
  * Megatron's parser rejects a bad command line (the harness can say no);
  * the TorchTitan key table is what extract_torchtitan_keys.py makes of its
    tag, and the job TOML of the golden test reads back (tomllib) with only
    keys of that table.

The upstream sources come from git directories (bare mirrors are enough:
files are read with `git show` and `git archive` into a temporary
directory, nothing is checked out or downloaded): --megatron-git /
$PRIMUS_MEGATRON_GIT (default /work/.mirror/NVIDIA+Megatron-LM/repo) and
--torchtitan-git / $PRIMUS_TORCHTITAN_GIT (default
/work/.mirror/pytorch+torchtitan/repo). The tags are the ones the data files
name. Without the Megatron-LM mirror (CI has none) the test exits 77, which
ctest reports as skipped.
"""

import argparse
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def header(path, product):
    with open(path, encoding="utf-8") as f:
        words = f.readline().lstrip("#").split()
    if len(words) != 3 or words[0] != product:
        raise SystemExit(f"{path}: the first line should be '# {product} <tag> <commit>'")
    return words[1], words[2]


def has_rev(git_dir, rev):
    return bool(git_dir) and os.path.isdir(git_dir) and subprocess.run(
        ["git", "-C", git_dir, "rev-parse", "--verify", "--quiet", rev + "^{commit}"],
        capture_output=True).returncode == 0


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


def worker_command(primus, config, world_size, subtask, env):
    result = run([primus, "--dry-run", "direct", "--nproc-per-node", str(world_size), "--", "train", subtask,
                  "--config", config, "--no-preflight"], env=env, cwd=ROOT)
    if result.returncode != 0:
        return None, result.stderr.strip()
    lines = result.stdout.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("worker command (once per rank):"):
            return shlex.split(lines[i + 1]), ""
    return None, "no worker command in the plan"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--primus", required=True, help="the primus-cli binary")
    parser.add_argument("--megatron-git", default=os.environ.get("PRIMUS_MEGATRON_GIT",
                                                                 "/work/.mirror/NVIDIA+Megatron-LM/repo"))
    parser.add_argument("--torchtitan-git", default=os.environ.get("PRIMUS_TORCHTITAN_GIT",
                                                                   "/work/.mirror/pytorch+torchtitan/repo"))
    options = parser.parse_args()
    megatron_table = glob.glob(os.path.join(ROOT, "data", "megatron_flags-*.tsv"))[0]
    titan_table = glob.glob(os.path.join(ROOT, "data", "torchtitan_keys-*.tsv"))[0]
    megatron_tag, _ = header(megatron_table, "Megatron-LM")
    titan_tag, _ = header(titan_table, "TorchTitan")
    if not has_rev(options.megatron_git, megatron_tag):
        print(f"SKIP: no Megatron-LM git directory with {megatron_tag} at '{options.megatron_git}' "
              "(set PRIMUS_MEGATRON_GIT)")
        return SKIP
    python = sys.executable
    checks = Checks()
    git = ["--git", options.megatron_git, "--rev", megatron_tag]

    # The static table: today's extraction of the tag, and the live parser's options.
    extracted = run([python, os.path.join(HERE, "extract_megatron_flags.py")] + git)
    checks.expect(extracted.returncode == 0 and extracted.stdout == open(megatron_table, encoding="utf-8").read(),
                  f"{os.path.relpath(megatron_table, ROOT)} is extract_megatron_flags.py's output for {megatron_tag}")
    live = run([python, os.path.join(HERE, "megatron_parse_args.py"), "--dump-table"] + git)
    static_rows = [line.split("\t")[:4] for line in open(megatron_table, encoding="utf-8").read().splitlines()
                   if line and not line.startswith("#")]
    live_rows = [line.split("\t") for line in live.stdout.splitlines()]
    # Added by arguments.py only where NVIDIA Kitchen is installed.
    kitchen = [row for row in static_rows if row[0] in ("--kitchen-config-file", "--kitchen-recipe-number")]
    checks.expect(live.returncode == 0 and [r for r in static_rows if r not in kitchen] == live_rows,
                  f"the table's {len(static_rows)} options are the live parser's {len(live_rows)}, "
                  f"in order, plus Kitchen's {len(kitchen)}")

    # Every example's commands through Megatron's own parser.
    with tempfile.TemporaryDirectory(prefix="native-commands-") as temp:
        env = dict(os.environ, MEGATRON_PATH="/opt/Megatron-LM")
        env.pop("EXP", None)
        files = []
        configs = sorted(glob.glob(os.path.join(ROOT, "examples", "megatron", "*.yaml")))
        configs.append(os.path.join(ROOT, "src", "train", "testdata", "megatron_llama.yaml"))
        for config in configs:
            for world_size in world_sizes(config):
                for subtask in ("pretrain", "posttrain"):
                    name = f"{os.path.relpath(config, ROOT)} {subtask} x{world_size}"
                    argv, error = worker_command(options.primus, config, world_size, subtask, env)
                    if argv is None:
                        checks.expect(False, f"{name}: primus-cli --dry-run: {error}")
                        continue
                    checks.expect((subtask == "posttrain") == ("--sft" in argv), f"{name}: --sft only for posttrain")
                    path = os.path.join(temp, f"{len(files)}.json")
                    with open(path, "w", encoding="utf-8") as f:
                        json.dump({"argv": argv, "world_size": world_size}, f)
                    files.append((name, path))
        bad = os.path.join(temp, "bad.json")
        with open(bad, "w", encoding="utf-8") as f:
            json.dump(["--num-layers", "two"], f)
        parsed = run([python, os.path.join(HERE, "megatron_parse_args.py"), "--validate"] + git +
                     [path for _, path in files] + [bad])
        results = {}
        for line in parsed.stdout.splitlines():
            path, _, verdict = line.partition(": ")
            results[path] = verdict
        for name, path in files:
            verdict = results.get(path, parsed.stderr.strip()[-500:])
            checks.expect(verdict.startswith("accepted") and verdict.endswith("validate_args (world size "
                                                                              f"{json.load(open(path))['world_size']}): passed"),
                          f"{name}: Megatron-LM {megatron_tag}: {verdict}")
        checks.expect(results.get(bad, "").startswith("rejected: pretrain_gpt.py: error: argument --num-layers"),
                      f"a bad command line is rejected: {results.get(bad)}")

    # TorchTitan: the key table, and the golden job file against it.
    if has_rev(options.torchtitan_git, titan_tag):
        extracted = run([python, os.path.join(HERE, "extract_torchtitan_keys.py"), "--git", options.torchtitan_git,
                         "--rev", titan_tag])
        checks.expect(extracted.returncode == 0 and extracted.stdout == open(titan_table, encoding="utf-8").read(),
                      f"{os.path.relpath(titan_table, ROOT)} is extract_torchtitan_keys.py's output for {titan_tag}")
    else:
        print(f"skip  no TorchTitan git directory with {titan_tag} at '{options.torchtitan_git}'")
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
