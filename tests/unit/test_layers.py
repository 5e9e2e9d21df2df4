"""The import structure of ``tkperf/``: layers without cycles.

The graph is read from the source with :mod:`ast`, so it holds every
import: at the top of a module, inside a function, under ``TYPE_CHECKING``.
Two rules: no cycle anywhere, and every import goes to the importing
module's own layer or a layer below, as the table in ``docs/layout.rst``
draws them (the table is read from there, so the page stays true).
"""
from __future__ import annotations

import ast
import os
import re
from typing import Dict, List, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "tkperf")
LAYOUT = os.path.join(ROOT, "docs", "layout.rst")
#: The data model's rule from issue 25: nothing of these above it.
ABOVE_MODEL = ("tkperf.engine", "tkperf.render", "tkperf.report", "tkperf.kit", "tkperf.store",
               "tkperf.testtypes", "tkperf.cli", "tkperf.remote")


def modules(root: str = PACKAGE) -> Dict[str, str]:
    """Dotted module name -> path, for every .py file under ``root``."""
    out = {}
    base = os.path.dirname(root)
    for folder, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


def _known(target: str, mods: Dict[str, str]) -> str:
    while target and target not in mods:
        target = target.rpartition(".")[0]
    return target


def imports(mods: Dict[str, str]) -> Dict[str, Set[Tuple[str, int]]]:
    """Module -> {(module of tkperf it imports, line)}, every import statement
    wherever it stands; ``from PKG import NAME`` counts NAME when it is a module."""
    out: Dict[str, Set[Tuple[str, int]]] = {}
    for name, path in mods.items():
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        found: Set[Tuple[str, int]] = set()
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            targets: List[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                t = _known(t, mods)
                if t and t != name:
                    found.add((t, node.lineno))
        out[name] = found
    return out


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layers(path: str = LAYOUT) -> List[Tuple[str, List[str]]]:
    """(layer, patterns) from the table in docs/layout.rst, top layer first:
    the indented lines after the line that ends 'top to bottom::'."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(r"top to bottom[^\n]*::\n\n((?:    \S[^\n]*\n)+)", text)
    assert m, "docs/layout.rst has no layer table"
    out = []
    for line in m.group(1).splitlines():
        label, *patterns = re.split(r"\s{2,}", line.strip())
        out.append((label, patterns))
    return out


def layer_of(module: str, table: List[Tuple[str, List[str]]]) -> int:
    """The index of ``module``'s layer: a pattern naming it exactly, else the
    longest ``PACKAGE.*`` containing it or being it (names are relative to ``tkperf``)."""
    rel = module[len("tkperf."):] if module.startswith("tkperf.") else ""
    best, depth = -1, -1
    for i, (_label, patterns) in enumerate(table):
        for p in patterns:
            if p == (rel or "tkperf"):
                return i
            if p.endswith(".*") and (rel + ".").startswith(p[:-1]) and len(p) > depth:
                best, depth = i, len(p)
    return best


def test_no_import_cycle() -> None:
    graph = {m: {t for t, _ in ts} for m, ts in imports(modules()).items()}
    assert cycles(graph) == []


def test_model_imports_nothing_above_it() -> None:
    wrong = sorted(f"{m} imports {t} (line {line})" for m, ts in imports(modules()).items()
                   if m.startswith("tkperf.model") for t, line in ts if t.startswith(ABOVE_MODEL))
    assert wrong == []


def test_every_import_goes_down_the_layers_of_docs_layout() -> None:
    table = layers()
    mods = modules()
    unplaced = sorted(m for m in mods if layer_of(m, table) < 0)
    assert unplaced == [], "modules docs/layout.rst does not place"
    upward = sorted(f"{m} ({table[layer_of(m, table)][0]}) imports {t} ({table[layer_of(t, table)][0]}), line {line}"
                    for m, ts in imports(mods).items() for t, line in ts
                    if layer_of(t, table) < layer_of(m, table))
    assert upward == []


def test_the_layers_are_folders() -> None:
    """Each row of the table names whole folders (``FOLDER.*``) or modules at
    the top of the package, never a module inside a folder: a folder is one
    layer, so its place says what it may import."""
    top = {name.split(".")[1] for name in modules() if name.count(".") == 1}
    wrong = [p for _label, patterns in layers() for p in patterns
             if not (p.endswith(".*") and "." not in p[:-2]) and not (p in top or p == "tkperf")]
    assert wrong == []
    folders = {name.split(".")[1] for name, path in modules().items() if name.count(".") >= 1
               and os.path.isdir(os.path.join(PACKAGE, name.split(".")[1]))}
    rows = {p[:-2] for _label, patterns in layers() for p in patterns if p.endswith(".*")}
    assert folders == rows, "every folder of tkperf/ has its row, and every row a folder"


def test_no_module_loads_another_by_name() -> None:
    """No string import across the layers: tkperf loads its own modules only
    through import statements (which the checks above see); the registry
    (entry points, views a type names) and the API 2 adapter (an old
    plug-in's view module) load plug-in code by the names it gives."""
    found = []
    for name, path in modules().items():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for m in re.finditer(r"import_module\(([^)]*)\)", text):
            arg = m.group(1)
            if "tkperf" in arg or (name not in ("tkperf.kit.registry", "tkperf.kit.adapter")
                                  and not arg.startswith(('"rst2pdf', "'rst2pdf"))):
                found.append(f"{name}: import_module({arg})")
    assert found == []


def test_built_in_types_live_by_the_api_and_the_pts_layer() -> None:
    """A module under tkperf/testtypes/<type>/ imports tkperf only through
    tkperf.api (the plug-in contract), tkperf.pts and its modules (the PTS
    layer the built-ins share) and its own package, and the real-world
    tests also tkperf.rwsw (the capture files they replay): no built-in
    borrows another's machinery, nor reaches past those doors into the kit
    or the report."""
    wrong = []
    for name, ts in imports(modules()).items():
        parts = name.split(".")
        if len(parts) < 3 or parts[1] != "testtypes":
            continue
        own = parts[2]
        for t, line in ts:
            tp = t.split(".")
            if t in ("tkperf.api", "tkperf.pts", "tkperf.testtypes") or (tp[1] == "testtypes" and len(tp) > 2
                                                                and tp[2] == own):
                continue
            if t.startswith("tkperf.pts.") or (own == "realworld" and t.startswith("tkperf.rwsw.")):
                continue
            wrong.append(f"{name} imports {t} (line {line})")
    assert wrong == []


def test_the_checks_see_what_they_should(tmp_path) -> None:
    """The graph counts imports inside functions and under TYPE_CHECKING,
    relative ones, and finds a cycle through them; the layer table puts a
    module in the most specific layer."""
    pkg = tmp_path / "tkperf"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from tkperf.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\n")
    (pkg / "sub" / "c.py").write_text("from .a import f\n")
    graph = {m: {t for t, _ in ts} for m, ts in imports(modules(str(pkg))).items()}
    assert cycles(graph) == [["tkperf.sub.a", "tkperf.sub.b", "tkperf.sub.c"]]
    table = [("top", ["sub.a"]), ("middle", ["sub.*"]), ("bottom", ["tkperf"])]
    assert [layer_of(m, table) for m in ("tkperf.sub.a", "tkperf.sub.b", "tkperf")] == [0, 1, 2]



def test_no_large_file_outside_examples_and_test_data() -> None:
    """What .ci/run refuses before it installs anything: a file over 100 KB
    outside examples/ and tests/data/ (the check is a find(1) line there)."""
    big = []
    for folder, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(folder, ROOT)
        # as .ci/run's find: the hidden folders at the top (.git, .pytest_cache ...) are not the checkout's
        dirs[:] = [d for d in dirs if not (rel == "." and (d.startswith(".") or d == "examples"))
                   and not (rel == "tests" and d == "data") and d not in ("__pycache__", ".mypy_cache",
                                                                        ".ruff_cache", "build")
                   and not d.endswith(".egg-info") and not (rel == "tkperf" and d == "help")]
        big += [os.path.join(rel, f) for f in files if os.path.getsize(os.path.join(folder, f)) > 100 * 1024]
    assert big == []
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        assert "-size +100k" in fh.read()
