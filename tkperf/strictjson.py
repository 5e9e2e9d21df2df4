"""The one way tkperf prints or sends JSON: strict RFC 8259.

Python's :func:`json.dumps` writes ``NaN``, ``Infinity`` and
``-Infinity`` for floats that are not finite, tokens no JSON parser but
Python's and JavaScript's ``eval`` accepts.  :func:`dumps` maps every such
float (numpy's too) to ``null``, a value that is absent, and asks
:mod:`json` to refuse one all the same (``allow_nan=False``), so a
non-finite value can never reach the output.  :func:`loads` is the reading
side: it refuses the three tokens instead of turning them into floats.
Every JSON document tkperf prints (``show``, ``check``, ``compare``,
``history``, ``info``, ``tests`` with ``--json``), writes
(``--json-summary``) or sends (the agent's wire, a child run's progress)
goes through :func:`dumps`.

Every such document is also valid UTF-8 once decoded.  A file name whose
bytes are not UTF-8 reaches Python as lone surrogates (``os.fsdecode``: the
byte 0xff is U+DCFF), which :mod:`json` writes as ``\\udcff``: valid JSON
syntax, but a string no UTF-8 reader can hold (strict decoders refuse it,
others garble it).  :func:`dumps` writes each lone surrogate, in a value or
a name, as U+FFFD (the replacement character), one per byte that was not
UTF-8; the name's other characters are kept (docs/resilience.rst, "Trust
model").  The JSON itself is ASCII, as :mod:`json` writes it.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

#: A UTF-16 surrogate on its own: never a character (a str from ``os.fsdecode`` or a ``\\udcff`` escape).
_LONE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def text(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD: text every UTF-8 encoder takes."""
    return _LONE.sub(REPLACEMENT, value) if _LONE.search(value) else value


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by ``None``
    and every string's lone surrogates by U+FFFD (:func:`text`; in dicts,
    their names too, lists and tuples, at any depth)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(k) if isinstance(k, str) else k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``value`` with non-finite floats as ``null`` and lone
    surrogates as U+FFFD: strict JSON, valid UTF-8.  A ``default`` function's
    text is checked too (its strings are made after :func:`finite` ran)."""
    default = kwargs.pop("default", None)
    if default is not None:
        kwargs["default"] = lambda obj: finite(default(obj))
    return json.dumps(finite(value), allow_nan=False, **kwargs)


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def loads(text: Any) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (a ValueError)."""
    return json.loads(text, parse_constant=_refuse)
