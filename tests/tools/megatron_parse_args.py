#!/usr/bin/python3
"""Runs Megatron-LM's own argument parser on a command line and says whether it accepts it.

    megatron_parse_args.py (--megatron DIR | --git MEGATRON_GIT_DIR --rev TAG) ARGS... [--validate]
    megatron_parse_args.py (--megatron DIR | --git ... --rev ...) --dump-table

Each ARGS is a file holding one worker command line: a JSON list of strings,
a JSON object {"argv": [...], "world_size": N}, or one argument per line
('-' reads stdin). Everything before the first option (the interpreter,
pretrain_gpt.py) is dropped. Prints "accepted: N arguments" for each, or
"rejected: <argparse's message>"; exits 0 when every one was accepted, 1
otherwise, 2 on a usage or setup error. --dump-table prints the live parser's
options in the format of python/megatron_option_table.py, to check
that static table against it.

How it runs. The parser is Megatron-LM's: megatron.training.arguments.parse_args()
of the given checkout, or of `git archive TAG megatron` unpacked into a temporary
directory (a bare mirror is enough), called with sys.argv set to the command
line, so argparse's own rules decide (unknown flags, nargs, types, choices,
store_true/store_false). Building that parser imports megatron.core, which
needs PyTorch 2.x, Triton, a recent NumPy and `packaging`; this machine has
Python 3.11 with torch 1.13 and none of the rest. So, before the import:
  * torch, triton, numpy and packaging are replaced by stub modules: every
    attribute is a class whose attributes, calls, subscripts and comparisons
    give more stubs (false in conditions, "99.0.0" as a version), which is
    enough for module-level code such as decorators, base classes, type
    annotations and version checks. Parsing never touches a tensor.
    torch.cuda.get_device_capability() says 9.0 (an H100-class GPU), for the
    checks of validate_args that ask.
  * typing.override (Python 3.12) is defined as the identity when missing.
Optional packages (Transformer Engine, Apex, Kitchen, ModelOpt, ...) are left
missing, so Megatron takes its own "not installed" paths: Kitchen's two options
are then absent, as on any machine without Kitchen.
--validate also runs validate_args() (the cross-argument checks: required
model sizes, seq_length against max_position_embeddings, the layout against
the world size) with WORLD_SIZE from the file or --world-size. Its few
device-dependent checks see the stub (compute capability 9.0, versions
"99.0.0"): a failure that names a device or a version is the stub's, not the
command line's.
"""

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import typing

STUBBED = ("torch", "triton", "numpy", "packaging", "regex", "einops", "pydantic")


class StubMeta(typing._ProtocolMeta):  # a Protocol-compatible metaclass: stubs may be mixed with Protocols
    def __getattr__(cls, name):
        if name == "__version__":
            return "99.0.0"
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        sub = StubMeta(name, (Stub,), {})
        setattr(cls, name, sub)
        return sub

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())

    def __bool__(cls):
        return False


class Stub(metaclass=StubMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):  # class X(BaseModel, extra='allow') (pydantic, core_v0.16)
        pass

    def __call__(self, *args, **kwargs):
        # Used as a decorator: give the function back.
        return args[0] if len(args) == 1 and callable(args[0]) and not kwargs else Stub()

    def __getattr__(self, name):
        if name == "__file__":
            return "/nonexistent/stub.so"  # a compiled extension's path (core_v0.15's unified memory)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __getitem__(self, key):
        return Stub()

    def __int__(self):
        return 0

    __index__ = __int__

    def __float__(self):
        return 0.0

    def __str__(self):
        return "stub"

    def __add__(self, other):
        return Stub()

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __or__ = __ror__ = __and__ = __add__

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return StubMeta(spec.name.rsplit(".", 1)[-1], (Stub,), {})

    def exec_module(self, module):
        module.__path__ = []


def load_arguments_module(root):
    for name in list(sys.modules):
        if name.split(".")[0] in STUBBED:
            del sys.modules[name]
    if not hasattr(typing, "override"):
        typing.override = lambda function: function
    sys.meta_path.insert(0, StubFinder())
    sys.path.insert(0, root)
    import warnings
    warnings.simplefilter("ignore")
    with contextlib.redirect_stdout(io.StringIO()):
        import megatron.training.arguments as arguments
    arguments.torch.cuda.get_device_capability = lambda device=None: (9, 0)
    return arguments


def unpack(git_dir, rev, into):
    archive = subprocess.run(["git", "-C", git_dir, "archive", "--format=tar", rev, "megatron"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"setup: git archive {rev} failed: {archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(into)


def read_args(path, world_size):
    """(argv without the interpreter and script, world size)."""
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    stripped = text.strip()
    if stripped.startswith("{"):
        document = json.loads(stripped)
        argv, world_size = document["argv"], document.get("world_size", world_size)
    elif stripped.startswith("["):
        argv = json.loads(stripped)
    else:
        argv = [line for line in text.split("\n") if line != ""]
    first = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    return argv[first:], world_size


def check(arguments, argv, world_size, validate):
    """One line saying what Megatron's parser (and validate_args) made of argv; and whether it accepted it."""
    sys.argv = ["pretrain_gpt.py"] + argv
    os.environ["WORLD_SIZE"] = str(world_size)
    os.environ["RANK"] = "0"
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            args = arguments.parse_args()
    except SystemExit as error:
        message = errors.getvalue().strip().split("\n")[-1]
        return f"rejected: {message or error}", False
    line = f"accepted: {len(argv)} arguments"
    if validate:
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                arguments.validate_args(args, {"tokenizer_type": "GPT2BPETokenizer"})
            line += "; validate_args (world size %d): passed" % world_size
        except Exception as error:  # noqa: BLE001 (report whatever it raised)
            line += "; validate_args (world size %d): %s: %s" % (world_size, type(error).__name__, error)
    return line, True


def dump_table(arguments):
    parser = argparse.ArgumentParser(allow_abbrev=False)
    arguments.add_megatron_arguments(parser)
    kinds = {"_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false",
             "BooleanOptionalAction": "boolean_optional", "_StoreAction": "value"}
    for action in parser._actions:
        if not action.option_strings or type(action).__name__ == "_HelpAction":
            continue
        kind = kinds.get(type(action).__name__, type(action).__name__)
        nargs = "" if action.nargs in (None, 0) else str(action.nargs)
        print("\t".join([",".join(action.option_strings), action.dest, kind, nargs]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("args_files", nargs="*", help="command lines: JSON lists or objects, or one argument per line")
    parser.add_argument("--megatron", help="a Megatron-LM checkout")
    parser.add_argument("--git", help="a Megatron-LM git directory (bare is fine)")
    parser.add_argument("--rev", help="with --git: the release tag")
    parser.add_argument("--validate", action="store_true", help="also run validate_args() (see above)")
    parser.add_argument("--world-size", type=int, default=1, help="WORLD_SIZE when a file does not say (default 1)")
    parser.add_argument("--dump-table", action="store_true", help="print the live parser's options")
    options = parser.parse_args()
    if bool(options.megatron) == bool(options.git) or (options.git and not options.rev):
        parser.error("give --megatron DIR, or --git DIR --rev TAG")
    if not options.dump_table and not options.args_files:
        parser.error("give the files holding the command lines")

    with tempfile.TemporaryDirectory(prefix="megatron-parse-") as temp:
        root = options.megatron
        if options.git:
            unpack(options.git, options.rev, temp)
            root = temp
        arguments = load_arguments_module(os.path.abspath(root))
        if options.dump_table:
            dump_table(arguments)
            return 0
        all_accepted = True
        for path in options.args_files:
            argv, world_size = read_args(path, options.world_size)
            line, accepted = check(arguments, argv, world_size, options.validate)
            all_accepted = all_accepted and accepted
            print(f"{path}: {line}" if len(options.args_files) > 1 else line)
        return 0 if all_accepted else 1


if __name__ == "__main__":
    sys.exit(main())
