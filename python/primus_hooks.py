"""The Python API for primus-cli hooks and patches (docs/hooks.md).

A hook is any script primus-cli runs before a task; a Python one can use this
module, which primus-cli puts on the hooks' PYTHONPATH. It speaks the same
line protocol as a shell hook (`env.K=V`, `extra.k=v` on stdout), so shell
and Python hooks mix in one directory:

    from primus_hooks import context, set_env, add_arg, skip, fail

    ctx = context()
    if ctx.dry_run:
        skip("nothing to prepare in a dry run")
    data = ctx.config.get("data", {}).get("path", "/data/corpus")
    set_env("HF_DATASETS_CACHE", "/scratch/hf")
    add_arg("data-path", data)     # the backend gets --data-path <data>

Nothing here imports anything beyond the standard library.
"""

import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

__all__ = ["Context", "context", "set_env", "add_arg", "add_args", "skip", "fail"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ARG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class Context:
    """What the hook runs for."""
    task: str                      # train, run, benchmark, preflight
    subtask: str                   # pretrain, gemm, ... ("" when the task has none)
    config: Dict[str, Any] = field(default_factory=dict)  # train: the resolved experiment (secrets redacted)
    exp_dir: Optional[str] = None  # train: the experiment directory
    node_rank: int = 0
    nnodes: int = 1
    world_size: Optional[int] = None
    dry_run: bool = False
    kind: str = "hook"             # hook or patch


def _int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def context() -> Context:
    """The context primus-cli gave this script (its PRIMUS_* variables)."""
    config: Dict[str, Any] = {}
    path = os.environ.get("PRIMUS_CONFIG_JSON")
    if path:
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
        if isinstance(loaded, dict):
            config = loaded
    world = os.environ.get("WORLD_SIZE")
    return Context(
        task=os.environ.get("PRIMUS_TASK", ""),
        subtask=os.environ.get("PRIMUS_SUBTASK", ""),
        config=config,
        exp_dir=os.environ.get("PRIMUS_EXP_DIR") or None,
        node_rank=_int("NODE_RANK", 0),
        nnodes=_int("NNODES", 1),
        world_size=int(world) if world and world.isdigit() else None,
        dry_run=os.environ.get("PRIMUS_DRY_RUN") == "1",
        kind=os.environ.get("PRIMUS_HOOK_KIND", "hook"),
    )


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def set_env(name: str, value: Any) -> None:
    """Sets NAME for the workers (and the hooks after this one): `env.NAME=value`."""
    text = str(value)
    if not _NAME.match(name):
        raise ValueError(f"set_env: {name!r} is not a variable name")
    if "\n" in text or "\r" in text:
        raise ValueError(f"set_env: the value of {name} has a line break")
    _emit(f"env.{name}={text}")


def add_arg(name: str, value: Any) -> None:
    """Adds `--name value` to the task's arguments: `extra.name=value`."""
    text = str(value)
    name = name[2:] if name.startswith("--") else name
    if not _ARG.match(name):
        raise ValueError(f"add_arg: {name!r} is not an option name")
    if "\n" in text or "\r" in text:
        raise ValueError(f"add_arg: the value of --{name} has a line break")
    _emit(f"extra.{name}={text}")


def add_args(**options: Any) -> None:
    """add_arg for each keyword, in order; '_' in a keyword becomes '-' (data_path= gives --data-path)."""
    for name, value in options.items():
        add_arg(name.replace("_", "-"), value)


def skip(reason: str) -> None:
    """Ends this script without applying anything (a patch is reported as skipped)."""
    sys.stderr.write(f"skipped: {reason}\n")
    sys.stderr.flush()
    sys.exit(2 if os.environ.get("PRIMUS_HOOK_KIND") == "patch" else 0)


def fail(reason: str) -> None:
    """Stops the launch with REASON: no worker starts."""
    sys.stderr.write(f"{reason}\n")
    sys.stderr.flush()
    sys.exit(1)
