"""``docs/layout.rst``, the map of ``tkperf/``, held to the tree.

The page describes each folder of ``tkperf/`` under a heading line of its
own (````engine/````), naming its modules in double back quotes.  Read
from there:

* every module of a folder (and of its sub-folders) is named in its
  folder's part; a test type's folder is named as a whole (its modules are
  its own: ``docs/extending.rst``); every module at the top of the package
  is named somewhere on the page;
* a bare lower-case name in a folder's part is one of that folder's
  modules or folders (a function is written with its parentheses, a
  command as ``tkperf NAME``), a path names a file or folder that exists,
  and a dotted ``tkperf.`` name is a module of the tree or a name one
  defines;
* no count of files, modules or names is given: the page would go stale
  with the next module (``benchmarks/frontdoor.py`` measures the files a
  run passes through).
"""
from __future__ import annotations

import ast
import os
import re
from typing import Dict, List, Set

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "tkperf")
LAYOUT = os.path.join(ROOT, "docs", "layout.rst")

#: A folder's part: its heading line, then the indented lines below it.
PART = re.compile(r"^``([a-z_]+)/``\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.M)
QUOTED = re.compile(r"``([^`]+)``")
BARE = re.compile(r"[a-z_][a-z0-9_]*(?:\.py|/)?")
PATH = re.compile(r"[a-z_][a-z0-9_.-]*(?:/[a-z0-9_.-]+)+/?")
DOTTED = re.compile(r"tkperf(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
COUNT = re.compile(r"\b\d[\d,]*\s+(?:files|modules|names)\b")


def page() -> str:
    with open(LAYOUT, encoding="utf-8") as f:
        return f.read()


def parts(text: str) -> Dict[str, str]:
    """Folder -> the text of its part of the page."""
    return {m.group(1): m.group(2) for m in PART.finditer(text)}


def folders() -> List[str]:
    return sorted(d for d in os.listdir(PACKAGE)
                  if os.path.isfile(os.path.join(PACKAGE, d, "__init__.py")))


def _stem(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")


def contents(folder: str, whole_types: bool = True) -> Set[str]:
    """The names of the modules and folders under ``tkperf/FOLDER`` (at any
    depth; with ``whole_types``, a test type's folder without its modules)."""
    out: Set[str] = set()
    top = os.path.join(PACKAGE, folder)
    for where, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.isfile(os.path.join(where, d, "__init__.py"))]
        out.update(dirs)
        out.update(f[:-3] for f in files if f.endswith(".py") and f != "__init__.py")
        if whole_types and folder == "testtypes":
            out.update(dirs)
            break
    return out


def named(text: str) -> Set[str]:
    """What a part names: each quoted word or path, by its last component."""
    return {_stem(t) for t in QUOTED.findall(text) if BARE.fullmatch(t) or PATH.fullmatch(t)}


def test_every_folder_has_a_part() -> None:
    got = parts(page())
    assert sorted(got) == folders(), "docs/layout.rst: each folder of tkperf/ needs a part of its own"


def test_every_module_is_described() -> None:
    got = parts(page())
    missing = {folder: sorted(contents(folder) - named(got.get(folder, ""))) for folder in folders()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"modules docs/layout.rst does not describe, by folder: {missing}"


def test_every_module_at_the_top_is_named() -> None:
    words = set(QUOTED.findall(page()))
    top = sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py") and f != "__init__.py")
    missing = [m for m in top if not {m, f"{m}.py", f"tkperf.{m}"} & words]
    assert not missing, f"modules of tkperf/ docs/layout.rst does not name: {missing}"


def test_no_part_names_what_is_not_there() -> None:
    wrong = []
    for folder, text in parts(page()).items():
        here = contents(folder, whole_types=False) | {"__init__"}  # a package's own module
        for token in QUOTED.findall(text):
            if BARE.fullmatch(token) and _stem(token) not in here:
                wrong.append(f"{folder}/: ``{token}`` is no module or folder of tkperf/{folder}/")
            elif PATH.fullmatch(token) and not any(
                    os.path.exists(os.path.join(base, token.rstrip("/") + end))
                    for base in (ROOT, PACKAGE) for end in ("", ".py")):
                wrong.append(f"{folder}/: ``{token}`` does not exist")
    assert not wrong, "docs/layout.rst:\n" + "\n".join(wrong)


def _entry_point_groups() -> Set[str]:
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        return set(re.findall(r'^\[project\.entry-points\."([^"]+)"\]', f.read(), re.M))


def _top_names(path: str) -> Set[str]:
    """The names a module defines at its top: functions, classes, assignments, imports."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out: Set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _resolves(dotted: str) -> bool:
    """Whether ``tkperf.a.b`` is a module of the tree, or a name one defines
    at its top (read from the source: nothing is imported)."""
    words = dotted.split(".")
    for cut in range(len(words), 0, -1):
        base = os.path.join(ROOT, *words[:cut])
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(path):
                return cut == len(words) or words[cut] in _top_names(path)
    return False


def test_dotted_names_import() -> None:
    groups = _entry_point_groups()
    dotted = sorted({t for t in QUOTED.findall(page()) if DOTTED.fullmatch(t) and t not in groups})
    assert dotted, "the check reads no dotted name"
    wrong = [t for t in dotted if not _resolves(t)]
    assert not wrong, f"docs/layout.rst names what is not in the tree: {wrong}"


def test_no_counts() -> None:
    found = COUNT.findall(page())
    assert not found, f"docs/layout.rst gives counts that go stale with the tree: {found}"


def test_the_reading_is_not_vacuous() -> None:
    """The parts are found, and a module left out or a dead name would be seen."""
    got = parts(page())
    assert {"cli", "engine", "testtypes", "model"} <= set(got)
    assert "run" in named(got["engine"]) and "iops" in contents("testtypes")
    assert "view" not in contents("testtypes") and "view" in contents("testtypes", whole_types=False)
    assert "no_such_module" not in named(got["engine"] + "``no_such``")
    assert COUNT.findall("from main: 26 files") and not _resolves("tkperf.no_such_module")
    assert _resolves("tkperf.rwsw.model.Capture") and not _resolves("tkperf.pts.no_such_name")
