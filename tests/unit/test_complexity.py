"""No function of ``tkperf/`` or ``examples/`` over cyclomatic complexity 20.

Counted as radon counts it (:func:`radon.complexity.cc_visit`): every
branch, loop, ``except``, comprehension clause and boolean operator.
ruff's C901 (mccabe) counts no boolean operators, so a function of
``a and b or c`` conditions passes it far above 20; this test holds the
line radon draws (``radon cc -s -n D tkperf examples`` lists the same).
"""
from __future__ import annotations

import functools
import os
from typing import Dict, Iterator, List, Tuple

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDERS = ("tkperf", "examples")
LIMIT = 20

#: Functions over the limit in files being changed on other branches
#: (path::name, as :func:`over_limit` names them). This list must be empty:
#: it is emptied once those branches are merged and their functions split.
ALLOWED = frozenset({
})


def _functions(blocks: List[object]) -> Iterator[Function]:
    """Every function and method radon reports (a class's methods, and its inner classes' too)."""
    for block in blocks:
        if isinstance(block, Class):
            yield from block.methods
            yield from _functions(list(block.inner_classes))
        elif isinstance(block, Function):
            yield block


@functools.cache
def complexities() -> Dict[str, Tuple[int, int]]:
    """path::name -> (complexity, line) for every function of the checked
    folders (read once: the caller does not change it)."""
    out: Dict[str, Tuple[int, int]] = {}
    for top in FOLDERS:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    code = f.read()
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                for fn in _functions(cc_visit(code)):
                    out.setdefault(f"{rel}::{fn.fullname}", (fn.complexity, fn.lineno))
    return out


def over_limit() -> Dict[str, Tuple[int, int]]:
    return {key: got for key, got in complexities().items() if got[0] > LIMIT}


def test_no_function_over_the_limit() -> None:
    found = {key: got for key, got in over_limit().items() if key not in ALLOWED}
    assert not found, f"functions over cyclomatic complexity {LIMIT} (radon; split them):\n" + "\n".join(
        f"  {key.split('::')[0]}:{line} {key.split('::')[1]} ({cc})" for key, (cc, line) in sorted(found.items()))


def test_the_allowed_list_is_still_needed() -> None:
    """Each allowed function exists and is still over the limit: a stale entry fails."""
    every = complexities()
    missing = sorted(key for key in ALLOWED if key not in every)
    assert not missing, f"allowed but no such function (remove it from ALLOWED): {missing}"
    split = sorted(f"{key} ({every[key][0]})" for key in ALLOWED if every[key][0] <= LIMIT)
    assert not split, f"allowed but no longer over {LIMIT} (remove it from ALLOWED): {split}"


def test_the_count_sees_boolean_operators() -> None:
    """The measure is radon's: ``and``/``or`` count, so 21 of them are over the limit."""
    code = "def f(a):\n    return " + " and ".join(["a"] * 21) + "\n"
    (fn,) = _functions(cc_visit(code))
    assert fn.complexity == 21
    assert "tkperf/engine/plan.py::summary" in complexities()
