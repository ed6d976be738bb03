#!/usr/bin/env python3
"""Checks that each layer of src/ depends only on the layers below it.

The order is the one docs/architecture.md gives (its first code block, one
`src/<layer>/` line per layer, lowest first), so the document and the build
cannot drift apart. Two kinds of dependency are checked:
  - #include "<layer>/..." in any file under src/<layer>/ (tests included);
  - target_link_libraries(primus_<layer> ... primus_<other> ...) in
    src/<layer>/CMakeLists.txt.
A layer that docs/architecture.md's "## Public headers" section names
(lines "- `<layer>/<header>.h`: ...") is used by the other layers of src/
through that header alone; an include of any other of its headers from
outside the layer is a violation too.
Exit status 0 when every dependency points down (or sideways within a
layer), 1 with one line per violation otherwise.

usage: scripts/check_layers.py [REPO_ROOT]
"""
import os
import re
import sys


def layer_order(root):
    text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    block = re.search(r"```\n(.*?)```", text, re.S)
    if not block:
        sys.exit("docs/architecture.md: no code block with the layers")
    layers = re.findall(r"^src/(\w+)/", block.group(1), re.M)
    if not layers:
        sys.exit("docs/architecture.md: the first code block names no src/<layer>/ lines")
    return layers


def public_headers(root):
    text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    section = re.search(r"^## Public headers\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not section:
        return {}
    return dict(re.findall(r"^- `(\w+)/(\w+\.h)`", section.group(1), re.M))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    order = layer_order(root)
    rank = {layer: i for i, layer in enumerate(order)}
    problems = []
    on_disk = sorted(d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d)))
    for folder in on_disk:
        if folder not in rank:
            problems.append(f"src/{folder}/ is not a layer of docs/architecture.md: add it to the block, in its place")
    public = public_headers(root)
    include = re.compile(r'^\s*#\s*include\s+"(\w+)/([\w.]+)"')
    link = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)
    for layer in order:
        base = os.path.join(root, "src", layer)
        if not os.path.isdir(base):
            problems.append(f"docs/architecture.md names src/{layer}/, which does not exist")
            continue
        for directory, _, files in os.walk(base):
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                if name.endswith((".h", ".cc")):
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for number, line in enumerate(f, 1):
                            m = include.match(line)
                            if m and m.group(1) in rank and rank[m.group(1)] > rank[layer]:
                                problems.append(f"{relative}:{number}: the {layer} layer includes {m.group(1)}/, a layer above it")
                            elif m and m.group(1) in public and m.group(1) != layer and m.group(2) != public[m.group(1)]:
                                problems.append(f"{relative}:{number}: {m.group(1)}/{m.group(2)} is inside the {m.group(1)} layer;"
                                                f" other layers use {m.group(1)}/{public[m.group(1)]}")
                elif name == "CMakeLists.txt":
                    text = open(path, encoding="utf-8").read()
                    for m in link.finditer(text):
                        for library in re.findall(r"\bprimus_(\w+)", m.group(2)):
                            if library in rank and rank[library] > rank[layer]:
                                problems.append(f"{relative}: {m.group(1)} links primus_{library}, a layer above {layer}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} dependency problem(s); the order is docs/architecture.md's: {' < '.join(order)}")
        return 1
    print(f"layers ok: {' < '.join(order)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
