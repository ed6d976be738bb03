#!/usr/bin/env python3
"""Every `primus-cli` command line Primus documents, through ours with --dry-run.

Reads a pinned Primus tree (its docs/, runner/ usage texts, examples/ and
README.md), joins backslash-continued lines, keeps the lines that start a
`primus-cli` (or `runner/primus-cli`) command, and runs each as
`primus-cli --dry-run <the rest>` from the tree's root (its examples/ are
the experiment files the lines name), HOME a scratch directory. A line is:
  accepted  exit 0 (the plan printed);
  refused   exit 2, 3 or 4 with an error line (primus-cli's documented codes);
  broken    anything else (a crash, a signal, a timeout, a silent refusal).
Prints one line per refusal (the command, the code, the first error line)
and the counts; exits 1 when a line is broken, or when fewer than
--min-accepted lines are accepted.

    check_primus_doc_lines.py --binary build/primus-cli \
        --archive ../shared/upstream/primus-fd1eeabb.tar.gz [--min-accepted N] [--json OUT]

The archive is unpacked into a temporary directory (--tree DIR reads an
unpacked tree instead); without it the check is skipped (exit 77, naming it).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

from upstream import on_tree

SOURCES = ("docs", "runner", "examples", "README.md")
START = re.compile(r"^\s*(?:\$\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:bash\s+)?(?:\./)?(?:runner/)?primus-cli(?:\s+(.*))?$")


def doc_files(tree):
    for source in SOURCES:
        path = os.path.join(tree, source)
        if os.path.isfile(path):
            yield path
            continue
        for root, _, files in os.walk(path):
            for name in sorted(files):
                if name.endswith((".md", ".sh", ".txt")) or name == "primus-cli":
                    yield os.path.join(root, name)


def command_lines(path):
    """(line number, text after `primus-cli`) for each documented command."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        raw = handle.read().split("\n")
    i = 0
    while i < len(raw):
        line = raw[i].rstrip()
        number = i + 1
        while line.endswith("\\") and i + 1 < len(raw):
            i += 1
            line = line.rstrip("\\").rstrip() + " " + raw[i].strip()
        i += 1
        line = line.strip().strip("`").strip()
        if "`" in line:
            continue  # prose that quotes a command, not a command line
        match = START.match(line)
        if not match or not match.group(1):
            continue
        rest = match.group(1)
        rest = re.split(r"\s(?:\||&&|;|>|2>|#)\s", " " + rest + " ")[0].strip()
        if "<" in rest or "..." in rest or "[" in rest or "$" in rest or "{" in rest:
            continue  # a synopsis or a template, not a command line
        yield number, rest


def run(binary, rest, cwd, home):
    try:
        args = shlex.split(rest)
    except ValueError:
        return None
    env = dict(os.environ, HOME=home, PRIMUS_LOG_LEVEL="warn")
    try:
        done = subprocess.run([binary, "--dry-run"] + args, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=30)
    except subprocess.TimeoutExpired:
        return {"code": "timeout", "error": ""}
    error = ""
    for line in done.stderr.splitlines():
        if "ERROR" in line or line.startswith("primus-cli: error"):
            error = line.split("] ", 3)[-1] if "] " in line else line
            break
    return {"code": done.returncode, "error": error}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--tree")
    parser.add_argument("--archive")
    parser.add_argument("--min-accepted", type=int, default=0)
    parser.add_argument("--json")
    options = parser.parse_args()
    return on_tree(options.tree, options.archive, lambda tree: check(options, tree))


def check(options, tree):
    seen = set()
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in doc_files(tree):
            for number, rest in command_lines(path):
                if rest in seen:
                    continue
                seen.add(rest)
                outcome = run(options.binary, rest, tree, scratch)
                if outcome is None:
                    continue
                where = "%s:%d" % (os.path.relpath(path, tree), number)
                results.append(dict(outcome, where=where, line="primus-cli " + rest))
    accepted = [r for r in results if r["code"] == 0]
    refused = [r for r in results if r["code"] in (2, 3, 4) and r["error"]]
    broken = [r for r in results if r not in accepted and r not in refused]
    for r in refused:
        print("refused %s (exit %s): %s\n    %s" % (r["where"], r["code"], r["line"], r["error"]))
    for r in broken:
        print("BROKEN %s (exit %s): %s\n    %s" % (r["where"], r["code"], r["line"], r["error"]))
    print("%d documented lines: %d accepted, %d refused, %d broken" %
          (len(results), len(accepted), len(refused), len(broken)))
    if options.json:
        with open(options.json, "w") as out:
            json.dump(results, out, indent=1)
    if broken or len(accepted) < options.min_accepted:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
