#!/usr/bin/python3
"""Lists every option of Megatron-LM's argument parser, read statically.

    megatron_option_table.py ROOT/megatron/training/arguments.py [--release TAG --commit SHA]
    megatron_option_table.py --git MEGATRON_GIT_DIR --rev TAG

writes data/megatron_flags-<TAG>.tsv's text to stdout: one row per option of
add_megatron_arguments(), in the parser's order, as

    flags <TAB> dest <TAB> kind <TAB> nargs <TAB> type

flags    the option strings, comma-separated (--save-interval,--persistent-save-interval)
dest     the attribute argparse stores it in
kind     store_true | store_false | boolean_optional (--x and --no-x) | value
nargs    '+', '*' or a count for an option that takes several values; empty otherwise
type     the type= callable's name when the source shows one (int, float, str, an enum)

Nothing is imported or run: the module is read with `ast`. Options come from
two places in arguments.py, and both are followed:
  * explicit `group.add_argument(...)` calls;
  * `ArgumentGroupFactory(SomeConfig, exclude=[...]).build_group(...)`, which
    turns each field of a dataclass into an option. The dataclass sources are
    read from the same tree (the directory holding megatron/), and the
    factory's rules are applied: `--field-name`, dest = field; a bool field
    defaulting to False is store_true, any other bool field store_false as
    `--no-field-name`/`--disable-field-name`; Optional[X] is X; list[X] takes
    nargs '+'; Literal[...] the type of its choices; an Enum its class; a
    field's metadata["argparse_meta"] overrides all of these.
Options inside `if HAVE_<package>:` blocks (Kitchen) are listed too: they
exist where that package is installed.

With --git, files are read with `git show REV:path` from a bare repository
(no checkout needed) and the header names REV and its commit.
"""

import argparse
import ast
import os
import subprocess
import sys


class Tree:
    """Source files of one Megatron-LM revision: a directory or a git revision."""

    def __init__(self, root=None, git_dir=None, rev=None):
        self.root, self.git_dir, self.rev = root, git_dir, rev
        self._cache = {}
        self.read_files = []  # (relpath, size, mtime_ns) of every file read from a directory

    def read(self, relpath):
        if relpath in self._cache:
            return self._cache[relpath]
        text = None
        if self.git_dir:
            result = subprocess.run(["git", "-C", self.git_dir, "show", f"{self.rev}:{relpath}"],
                                    capture_output=True, text=True)
            if result.returncode == 0:
                text = result.stdout
        else:
            path = os.path.join(self.root, relpath)
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                status = os.stat(path)
                self.read_files.append((relpath, status.st_size, status.st_mtime_ns))
        self._cache[relpath] = text
        return text

    def module_path(self, module):
        base = module.replace(".", "/")
        for candidate in (base + ".py", base + "/__init__.py"):
            if self.read(candidate) is not None:
                return candidate
        return None


class Module:
    def __init__(self, tree, relpath):
        self.tree, self.relpath = tree, relpath
        self.ast = ast.parse(tree.read(relpath), relpath)
        parts = relpath[:-3].split("/")
        self.is_package = parts[-1] == "__init__"
        self.name = ".".join(parts[:-1] if self.is_package else parts)

    def absolute(self, node):
        """The absolute module name of an ImportFrom."""
        if node.level == 0:
            return node.module
        package = self.name.split(".")
        if not self.is_package:
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        return ".".join(package + ([node.module] if node.module else []))


class Resolver:
    """Finds class definitions across the tree by following `from X import Y`."""

    def __init__(self, tree):
        self.tree = tree
        self.modules = {}

    def module(self, relpath):
        if relpath not in self.modules:
            self.modules[relpath] = Module(self.tree, relpath)
        return self.modules[relpath]

    def find_class(self, module, name, imports=None, seen=None):
        """(Module, ClassDef) for `name` as seen from `module`, or None when outside the tree."""
        seen = seen or set()
        if (module.relpath, name) in seen:
            return None
        seen.add((module.relpath, name))
        for node in module.ast.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, node
        for node in list(imports or []) + [n for n in ast.walk(module.ast) if isinstance(n, ast.ImportFrom)]:
            for alias in node.names:
                if (alias.asname or alias.name) != name:
                    continue
                target = module.absolute(node)
                path = self.tree.module_path(target) if target else None
                if path:
                    found = self.find_class(self.module(path), alias.name, None, seen)
                    if found:
                        return found
                sub = self.tree.module_path(f"{target}.{alias.name}")
                if sub:  # `from pkg import submodule`: not a class
                    return None
        return None

    def is_enum(self, module, classdef, depth=0):
        for base in classdef.bases:
            text = ast.unparse(base)
            if text.split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"):
                return True
            if depth < 5 and isinstance(base, ast.Name):
                found = self.find_class(module, base.id)
                if found and self.is_enum(found[0], found[1], depth + 1):
                    return True
        return False


class TypeInferenceError(Exception):
    pass


def literal(node):
    return ast.literal_eval(node)


def subscript_parts(node):
    inner = node.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]


def is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


class FieldTypes:
    """The factory's _extract_type, on annotation syntax."""

    def __init__(self, resolver, module):
        self.resolver, self.module = resolver, module

    def extract(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
            if is_none(node.right):
                return self.extract(node.left)
            raise TypeInferenceError(ast.unparse(node))
        if isinstance(node, ast.Subscript):
            head = ast.unparse(node.value).split(".")[-1]
            parts = subscript_parts(node)
            if head in ("Optional",):
                return self.extract(parts[0])
            if head == "Union":
                if len(parts) == 2 and is_none(parts[1]):
                    return self.extract(parts[0])
                raise TypeInferenceError(ast.unparse(node))
            if head in ("list", "List"):
                if len(parts) != 1:
                    raise TypeInferenceError(ast.unparse(node))
                kwargs = self.extract(parts[0])
                kwargs["nargs"] = "+"
                return kwargs
            if head == "Literal":
                return {"type": type(literal(parts[0])).__name__}
            raise TypeInferenceError(ast.unparse(node))
        if isinstance(node, (ast.Name, ast.Attribute)):
            text = ast.unparse(node)
            if isinstance(node, ast.Name):
                found = self.resolver.find_class(self.module, node.id)
                if found and self.resolver.is_enum(*found):
                    return {"type": node.id, "enum": True}
            return {"type": text}
        raise TypeInferenceError(ast.unparse(node))


def call_name(node):
    return ast.unparse(node.func).split(".")[-1] if isinstance(node, ast.Call) else ""


def dataclass_fields(resolver, module, classdef):
    """[(name, annotation, field-call-or-default, Module)] in dataclasses.fields() order."""
    fields = {}
    for base in classdef.bases:
        if isinstance(base, ast.Name):
            found = resolver.find_class(module, base.id)
            if found:
                for item in dataclass_fields(resolver, *found):
                    fields.setdefault(item[0], item)
    for node in classdef.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if ast.unparse(node.annotation).split("[")[0].split(".")[-1] in ("ClassVar", "InitVar"):
            continue
        name = node.target.id
        item = (name, node.annotation, node.value, module)
        if name in fields:
            fields[name] = item  # a redefinition keeps its base's place
        else:
            fields[name] = item
    return list(fields.values())


def factory_rows(resolver, module, classdef, exclude):
    rows = []
    for name, annotation, value, field_module in dataclass_fields(resolver, module, classdef):
        if name in exclude:
            continue
        default, meta = value, None
        if call_name(value) == "field":
            keywords = {k.arg: k.value for k in value.keywords}
            if "init" in keywords and literal(keywords["init"]) is False:
                continue
            default = keywords.get("default")
            if "metadata" in keywords:
                metadata = keywords["metadata"]
                if isinstance(metadata, ast.Dict):
                    for key, item in zip(metadata.keys, metadata.values):
                        if isinstance(key, ast.Constant) and key.value == "argparse_meta":
                            meta = item
        row = {"flags": ["--" + name.replace("_", "-")], "dest": name, "action": None, "nargs": "", "type": ""}
        try:
            kwargs = FieldTypes(resolver, field_module).extract(annotation)
            row["type"] = kwargs["type"]
            row["nargs"] = kwargs.get("nargs", "")
            if kwargs["type"] == "bool":
                is_false = isinstance(default, ast.Constant) and default.value == False  # noqa: E712 (as the factory)
                row["action"] = "store_true" if is_false else "store_false"
                row["type"] = ""
                if row["action"] == "store_false":
                    row["flags"] = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
        except TypeInferenceError:
            if meta is None:
                raise
        if meta is not None:
            apply_meta(row, meta)
        rows.append(row)
    return rows


def apply_meta(row, meta):
    if not isinstance(meta, ast.Dict):
        raise SystemExit(f"argparse_meta of {row['dest']} is not a dict literal: {ast.unparse(meta)}")
    for key, item in zip(meta.keys, meta.values):
        key = literal(key)
        if key == "arg_names":
            row["flags"] = literal(item)
        elif key == "dest":
            row["dest"] = literal(item)
        elif key == "nargs":
            row["nargs"] = str(literal(item))
        elif key == "type":
            row["type"] = ast.unparse(item)
        elif key == "action":
            row["action"] = action_kind(item)
            if row["action"] in ("store_true", "store_false", "boolean_optional"):
                row["type"] = ""


def action_kind(node):
    text = ast.unparse(node).strip("'\"")
    if text in ("store_true", "store_false"):
        return text
    if text.endswith("BooleanOptionalAction"):
        return "boolean_optional"
    if text == "store":
        return None
    raise SystemExit(f"unsupported argparse action {text}: teach megatron_option_table.py what it does")


def add_argument_row(call):
    flags = [literal(a) for a in call.args]
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords:
        raise SystemExit(f"add_argument with **kwargs: {ast.unparse(call)}")
    longs = [f for f in flags if f.startswith("--")]
    dest = literal(keywords["dest"]) if "dest" in keywords else (longs or flags)[0].lstrip("-").replace("-", "_")
    row = {"flags": flags, "dest": dest, "action": None, "nargs": "", "type": ""}
    if "action" in keywords:
        row["action"] = action_kind(keywords["action"])
    if "nargs" in keywords:
        row["nargs"] = str(literal(keywords["nargs"]))
    if "type" in keywords and row["action"] is None:
        row["type"] = ast.unparse(keywords["type"])
    if row["action"] == "boolean_optional":
        row["flags"] = [f for long in longs for f in (long, "--no-" + long[2:])]
    return row


class FunctionWalker(ast.NodeVisitor):
    """The options one _add_*_args function adds, in source order."""

    def __init__(self, extractor, module, function):
        self.extractor, self.module, self.function = extractor, module, function
        self.factories = {}  # variable -> (class name, exclude)
        self.lists = {}      # variable -> list literal
        self.imports = [n for n in ast.walk(function) if isinstance(n, ast.ImportFrom)]
        self.rows = []

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.List):
                self.lists[node.targets[0].id] = literal(node.value)
            if call_name(node.value) == "ArgumentGroupFactory":
                self.factories[node.targets[0].id] = self.factory(node.value)

    def factory(self, call):
        cls = call.args[0].id
        exclude = []
        for keyword in call.keywords:
            if keyword.arg == "exclude":
                value = keyword.value
                exclude = self.lists[value.id] if isinstance(value, ast.Name) else literal(value)
        return cls, set(exclude)

    def visit_Call(self, node):
        self.generic_visit(node)
        name = call_name(node)
        if name == "add_argument":
            self.rows.append(add_argument_row(node))
        elif name == "build_group":
            target = node.func.value
            if isinstance(target, ast.Name) and target.id in self.factories:
                cls, exclude = self.factories[target.id]
            elif call_name(target) == "ArgumentGroupFactory":
                cls, exclude = self.factory(target)
            else:
                raise SystemExit(f"build_group on an unknown factory: {ast.unparse(node)}")
            found = self.extractor.resolver.find_class(self.module, cls, self.imports)
            if not found:
                raise SystemExit(f"cannot find the dataclass {cls} in the tree")
            self.rows.extend(factory_rows(self.extractor.resolver, found[0], found[1], exclude))
        elif isinstance(node.func, ast.Name) and node.func.id in self.extractor.functions \
                and node.func.id != self.function.name:
            self.rows.extend(self.extractor.function_rows(node.func.id))


class Extractor:
    ARGUMENTS = "megatron/training/arguments.py"

    def __init__(self, tree):
        self.tree = tree
        self.resolver = Resolver(tree)
        self.module = self.resolver.module(self.ARGUMENTS)
        self.functions = {n.name: n for n in self.module.ast.body if isinstance(n, ast.FunctionDef)}

    def function_rows(self, name):
        walker = FunctionWalker(self, self.module, self.functions[name])
        walker.visit(self.functions[name])
        return walker.rows

    def rows(self):
        # add_megatron_arguments calls the groups in order: parser = _add_x_args(parser).
        top = self.functions["add_megatron_arguments"]
        rows = []
        for node in top.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in self.functions:
                rows.extend(self.function_rows(node.value.func.id))
        return rows


def kind(row):
    if row["action"]:
        return row["action"]
    return "value"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("arguments_py", nargs="?", help="ROOT/megatron/training/arguments.py")
    parser.add_argument("--git", help="a Megatron-LM git directory (bare is fine)")
    parser.add_argument("--rev", help="with --git: the release tag")
    parser.add_argument("--release", default="", help="the release name for the header")
    parser.add_argument("--commit", default="", help="the commit for the header")
    parser.add_argument("--sources", action="store_true",
                        help="end with a '# source RELPATH SIZE MTIME_NS' line per file read (primus-cli's cache "
                             "of a checkout's table checks them)")
    args = parser.parse_args()
    if args.git:
        if not args.rev:
            parser.error("--git needs --rev")
        tree = Tree(git_dir=args.git, rev=args.rev)
        release = args.release or args.rev
        commit = args.commit or subprocess.run(["git", "-C", args.git, "rev-parse", args.rev + "^{commit}"],
                                               capture_output=True, text=True, check=True).stdout.strip()
    elif args.arguments_py:
        path = os.path.abspath(args.arguments_py)
        suffix = os.sep + Extractor.ARGUMENTS.replace("/", os.sep)
        if not path.endswith(suffix):
            parser.error(f"expected a path ending in {Extractor.ARGUMENTS}")
        tree = Tree(root=path[: -len(suffix)])
        release, commit = args.release or "unknown", args.commit or "unknown"
    else:
        parser.error("give the path of megatron/training/arguments.py, or --git DIR --rev TAG")

    rows = Extractor(tree).rows()
    out = sys.stdout
    out.write(f"# Megatron-LM {release} {commit}\n")
    out.write("# Every option of megatron/training/arguments.py's parser (add_megatron_arguments), in its order;\n")
    out.write("# written by python/megatron_option_table.py. Columns: flags (comma-separated), dest,\n")
    out.write("# kind (store_true, store_false, boolean_optional, value), nargs (+, * or a count: several values), type.\n")
    for row in rows:
        out.write("\t".join([",".join(row["flags"]), row["dest"], kind(row), row["nargs"], row["type"]]) + "\n")
    if args.sources:
        for relpath, size, mtime_ns in tree.read_files:
            out.write(f"# source {relpath} {size} {mtime_ns}\n")


if __name__ == "__main__":
    main()
