#!/usr/bin/python3
"""Lists every key of TorchTitan's job configuration, read statically.

    torchtitan_config_keys.py ROOT/torchtitan/config/job_config.py [--release TAG --commit SHA]
    torchtitan_config_keys.py --git TORCHTITAN_GIT_DIR --rev TAG
    torchtitan_config_keys.py --module torchtitan.models.flux.job_config --root DIR [--root DIR ...]

writes data/torchtitan_keys-<TAG>.tsv's text to stdout: one row per setting
of the JobConfig dataclass, as

    section.key <TAB> type

in the file's order. A field whose type is another dataclass of the file
(training.dataloader, quantize.linear.float8) is a TOML table: its fields are
listed under the dotted path. The type is the annotation as written
(`int`, `str | None`, `Literal['linear', 'sqrt', 'cosine']`, `list[str]`).
--module reads the JobConfig of a job.custom_config_module instead (the
sections and keys TorchTitan merges into its own): the module's file is
looked for below each --root (MODULE.py, or MODULE/__init__.py, following
a relative `from .x import JobConfig` there); exit 3 when it is not found.
Nothing is imported or run: the file is read with `ast`. With --git, it is
read with `git show REV:torchtitan/config/job_config.py` from a bare
repository, and the header names REV and its commit.
"""

import argparse
import ast
import os
import subprocess
import sys

JOB_CONFIG = "torchtitan/config/job_config.py"


def dataclasses_of(tree):
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def fields(classdef):
    for node in classdef.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.annotation


def rows(classes, classdef, prefix, depth=0):
    for name, annotation in fields(classdef):
        path = f"{prefix}.{name}" if prefix else name
        nested = annotation.id if isinstance(annotation, ast.Name) else None
        if nested in classes and depth < 8:
            yield from rows(classes, classes[nested], path, depth + 1)
        else:
            yield path, ast.unparse(annotation)


def module_job_config(roots, module):
    """(path, text) of the file defining MODULE's JobConfig, or None."""
    for root in roots:
        base = os.path.join(root, *module.split("."))
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            tree = ast.parse(text, path)
            if "JobConfig" in dataclasses_of(tree):
                return path, text
            for node in tree.body:  # from .job_config import JobConfig, or from a.b.job_config import JobConfig
                if not (isinstance(node, ast.ImportFrom) and node.module and node.level <= 1 and
                        any(alias.name == "JobConfig" for alias in node.names)):
                    continue
                package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
                target = package + "." + node.module if node.level == 1 else node.module
                found = module_job_config([root], target) if target != module else None
                if found:
                    return found
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("job_config_py", nargs="?", help=f"ROOT/{JOB_CONFIG}")
    parser.add_argument("--git", help="a TorchTitan git directory (bare is fine)")
    parser.add_argument("--rev", help="with --git: the release tag")
    parser.add_argument("--release", default="", help="the release name for the header")
    parser.add_argument("--commit", default="", help="the commit for the header")
    parser.add_argument("--module", help="a job.custom_config_module to read instead")
    parser.add_argument("--root", action="append", default=[], help="with --module: where to look for it")
    args = parser.parse_args()
    source = JOB_CONFIG
    if args.module:
        found = module_job_config(args.root, args.module)
        if not found:
            sys.stderr.write(f"{args.module}: no JobConfig found below {', '.join(args.root) or 'no root'}\n")
            raise SystemExit(3)
        source, text = found
        release, commit = args.release or "custom", args.commit or "unknown"
    elif args.git:
        if not args.rev:
            parser.error("--git needs --rev")
        text = subprocess.run(["git", "-C", args.git, "show", f"{args.rev}:{JOB_CONFIG}"],
                              capture_output=True, text=True, check=True).stdout
        release = args.release or args.rev
        commit = args.commit or subprocess.run(["git", "-C", args.git, "rev-parse", args.rev + "^{commit}"],
                                               capture_output=True, text=True, check=True).stdout.strip()
    elif args.job_config_py:
        with open(args.job_config_py, encoding="utf-8") as f:
            text = f.read()
        release, commit = args.release or "unknown", args.commit or "unknown"
    else:
        parser.error(f"give the path of {JOB_CONFIG}, or --git DIR --rev TAG")

    classes = dataclasses_of(ast.parse(text, source))
    if "JobConfig" not in classes:
        raise SystemExit(f"no JobConfig dataclass in {source}")
    out = sys.stdout
    out.write(f"# TorchTitan {release} {commit}\n")
    out.write(f"# Every setting of {source if args.module else JOB_CONFIG}'s JobConfig, as section.key (tables nested "
              "with dots) and\n")
    out.write("# its annotation; written by python/torchtitan_config_keys.py.\n")
    for path, annotation in rows(classes, classes["JobConfig"], ""):
        if "." not in path:
            raise SystemExit(f"JobConfig.{path} is not a section: teach torchtitan_config_keys.py about it")
        out.write(f"{path}\t{annotation}\n")


if __name__ == "__main__":
    main()
