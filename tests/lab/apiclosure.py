"""Whether the plug-in contract is closed: every type a recorded signature,
field, property or base of a module's ``__all__`` names is itself recorded
(by identity), opaque, or Python's, its standard library's or numpy's
(``tests/unit/test_api_contract.py``, issue 59 item 1)."""
from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any, List, Tuple

#: What a recorded signature may name besides the record: the types of
#: Python itself, its standard library and numpy's arrays.
OUTSIDE = ("builtins", "numpy")


def _annotations(obj: Any) -> List[Tuple[str, Any, str]]:
    """(where, namespace, annotation text) of every annotation the record of
    ``obj`` shows: a function's parameters and return, a class's fields,
    class variables, methods and properties (the members :func:`_members` records)."""
    out: List[Tuple[str, Any, str]] = []

    def of_function(where: str, fn: Any) -> None:
        fn = inspect.unwrap(fn)
        glob = getattr(fn, "__globals__", {})
        for pname, ann in getattr(fn, "__annotations__", {}).items():
            out.append((f"{where} {pname}", glob, ann))

    if inspect.isfunction(obj):
        of_function(obj.__name__, obj)
        return out
    if not inspect.isclass(obj):
        return out
    fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
    for base in obj.__mro__:
        if not base.__module__.startswith("tkperf"):
            continue
        glob = vars(sys.modules[base.__module__])
        for name, ann in base.__dict__.get("__annotations__", {}).items():
            if not name.startswith("_") or name in fields:
                out.append((f"{obj.__name__}.{name}", glob, ann))
        for name, value in vars(base).items():
            if name.startswith("_") and name != "__init__":
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property) and value.fget is not None:
                of_function(f"{obj.__name__}.{name}", value.fget)
            elif inspect.isfunction(value):
                of_function(f"{obj.__name__}.{name}", value)
    return out


def _names(text: Any) -> List[str]:
    """The dotted names an annotation (text, or an object) uses."""
    if not isinstance(text, str):
        text = getattr(text, "__name__", None) or repr(text)
        return [] if text in ("None",) else [str(text)]
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return [text]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.append(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and not any(isinstance(p, ast.Attribute) and p.value is node
                                                    for p in ast.walk(tree)):
            found.append(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += _names(node.value)  # a forward reference inside an annotation
    return found


def _resolve(dotted: str, namespace: Any) -> Any:
    """What ``dotted`` names in a module's ``namespace``: a name of the
    module, a builtin, or one it imports for type checking only."""
    head, *rest = dotted.split(".")
    obj = namespace.get(head, getattr(builtins, head, _MISSING))
    if obj is _MISSING:
        obj = _checking_import(namespace, head)
    for part in rest:
        obj = getattr(obj, part, _MISSING)
    return obj


_MISSING = object()


def _checking_import(namespace: Any, name: str) -> Any:
    """``name`` as the module of ``namespace`` imports it under
    ``if TYPE_CHECKING:`` (not bound when it runs)."""
    path = namespace.get("__file__")
    if not path:
        return _MISSING
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    home = importlib.import_module(node.module)
                    return getattr(home, alias.name, None) or importlib.import_module(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == name:
                    return importlib.import_module(alias.name)
    return _MISSING


def _outside(obj: Any) -> bool:
    """A type of Python, its standard library or numpy, or a type variable."""
    if isinstance(obj, typing.TypeVar) or obj is None or obj is Ellipsis:
        return True
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    if isinstance(obj, types.ModuleType):
        module = obj.__name__
    top = str(module).split(".")[0]
    return top in OUTSIDE or top in sys.stdlib_module_names


def unrecorded(module: types.ModuleType) -> List[str]:
    """Every type a recorded signature, field or property of ``module``
    names that is neither recorded itself (a name of ``__all__``, by
    identity) nor Python's, its standard library's or numpy's: each as
    "where: name"."""
    opaque = getattr(module, "_OPAQUE", ())
    recorded = {id(getattr(module, n)) for n in module.__all__}
    wrong = []
    for name in module.__all__:
        if name in opaque:
            continue
        obj = getattr(module, name)
        found = _annotations(obj)
        if typing.get_origin(obj) is not None:  # a type alias: its members
            found.append((name, {}, obj))
        if inspect.isclass(obj):  # a class's bases are its record's too
            found += [(f"{name} base", {}, b) for b in obj.__bases__ if b.__module__.startswith("tkperf")]
        for where, namespace, ann in found:
            for dotted in _names(ann) if isinstance(ann, str) else [ann]:
                target = _resolve(dotted, namespace) if isinstance(ann, str) else dotted
                if target is _MISSING:
                    wrong.append(f"{where}: {dotted} (not found)")
                    continue
                wrong += [f"{where}: {getattr(t, '__name__', t)}" for t in _parts(target)
                          if id(t) not in recorded and not _outside(t)]
    return sorted(set(wrong))


def _parts(target: Any) -> List[Any]:
    """The types an annotation's object stands for: an alias
    (``Callable[[TestRun, int], ...]``, a ``Union``) by its members."""
    if typing.get_origin(target) is None:
        return [target]
    out = []
    for arg in typing.get_args(target):
        out += [a for part in (arg if isinstance(arg, list) else [arg]) for a in _parts(part)]
    return out
