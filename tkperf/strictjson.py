"""The one way tkperf prints or sends JSON: strict RFC 8259.

Python's :func:`json.dumps` writes ``NaN``, ``Infinity`` and
``-Infinity`` for floats that are not finite, tokens no JSON parser but
Python's and JavaScript's ``eval`` accepts.  :func:`dumps` maps every such
float (numpy's too) to ``null``, a value that is absent, and asks
:mod:`json` to refuse one all the same (``allow_nan=False``), so a
non-finite value can never reach the output.  :func:`loads` is the reading
side: it refuses the three tokens instead of turning them into floats.
Every JSON document tkperf prints (``show``, ``check``, ``history``,
``info``, ``tests`` with ``--json``), writes (``--json-summary``) or sends
(the agent's wire, a child run's progress) goes through :func:`dumps`.
"""
from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by ``None``
    (in dicts, lists and tuples, at any depth)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of ``value`` with non-finite floats as ``null``: strict JSON."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def loads(text: Any) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (a ValueError)."""
    return json.loads(text, parse_constant=_refuse)
