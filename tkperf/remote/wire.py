"""What ``tkperf agent`` and the run that drives it say to each other.

One JSON object per line, over the SSH session's stdin and stdout:

* the run sends ``{"id": N, "op": NAME, "args": {...}}``, or
  ``{"op": "interrupt"}`` to stop the request under way (Ctrl-C);
* the agent answers a request with ``{"id": N, "ok": VALUE}`` or
  ``{"id": N, "error": {"type": CLASS, "message": TEXT}}``, and sends
  ``{"log": [LOGGER, LEVEL, TEXT]}`` and ``{"event": [KIND, TEXT]}`` lines
  while it works (every command line it runs is such a log line);
* the agent's first line is ``{"hello": {"tkperf": VERSION, "python": ...}}``;
* a line that is not the protocol ends the session: the agent answers one
  ``{"fatal": TEXT}`` and exits, releasing the device; the run stops with
  exit 13 (:data:`MAX_REQUEST`, :data:`MAX_LINE` and :data:`MAX_DEPTH`
  bound a line before it is parsed; every field is checked for its type).

Values are plain JSON; the dataclasses that cross are turned into dicts
here and back, field by field, so nothing but data is ever decoded (no
pickle: a test host cannot make the controlling host run code).
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

from tkperf import errors, strictjson
from tkperf.model.results import DeviceInfo, HealthSnapshot, HostInfo, PurgeRecord

T = TypeVar("T")
#: Longest line the controlling side accepts from an agent (device facts are
#: the largest, ~100 KB).
MAX_LINE = 16 << 20
#: Longest request line an agent accepts: requests are a few hundred bytes.
MAX_REQUEST = 64 << 10
#: Deepest nesting of arrays and objects either side accepts.
MAX_DEPTH = 32


class WireError(ValueError):
    """A line that is not the protocol: the session ends with this message."""


def encode(obj: Dict[str, Any]) -> bytes:
    return (strictjson.dumps(obj, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def _depth(text: str) -> int:
    """How deep arrays and objects nest in the JSON ``text`` (strings skipped)."""
    deepest = level = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]}":
            level -= 1
    return deepest


def decode(line: bytes, limit: int = MAX_LINE) -> Dict[str, Any]:
    """One protocol line as a dict; WireError for anything else.  Size and
    nesting are bounded before the JSON parser sees the line."""
    if len(line) > limit:
        raise WireError(f"a line of {len(line)} bytes (at most {limit})")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("a line that is not UTF-8") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise WireError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        obj = strictjson.loads(text)  # NaN and Infinity are Python's, not JSON (the agent never sends them)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"not JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
    if not isinstance(obj, dict):
        raise WireError(f"a JSON {type(obj).__name__} where an object belongs")
    return obj


def to_dict(value: Any) -> Any:
    """A dataclass (or None) as a JSON-able dict."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


_SIMPLE = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}


def _typed(cls: Type[T], data: Any) -> Dict[str, Any]:
    """The fields of ``cls`` from ``data``, each checked against its type:
    a reply from a test host is not trusted to be what it claims."""
    if not isinstance(data, dict):
        raise WireError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    out: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise WireError(f"{cls.__name__} without {f.name}")
            continue
        value, want = data[f.name], hints.get(f.name)
        allowed = _SIMPLE.get(want) if isinstance(want, type) else None
        if allowed is not None and (not isinstance(value, allowed)
                                    or (want is not bool and isinstance(value, bool))):
            raise WireError(f"{cls.__name__}.{f.name} is a {type(value).__name__}, not a "
                            f"{getattr(want, '__name__', want)}")
        out[f.name] = value
    return out


def device(data: Any) -> DeviceInfo:
    return DeviceInfo(**_typed(DeviceInfo, data))


def host_info(data: Any) -> HostInfo:
    return HostInfo(**_typed(HostInfo, data))


def purge_record(data: Any) -> PurgeRecord:
    return PurgeRecord(**_typed(PurgeRecord, data))


def values(data: Any) -> Tuple[Tuple[str, float], ...]:
    """Health values: ((name, number), ...)."""
    if not isinstance(data, (list, tuple)):
        raise WireError("health values are not a list")
    out = []
    for pair in data:
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str)
                or not isinstance(pair[1], (int, float)) or isinstance(pair[1], bool)):
            raise WireError("a health value is not [name, number]")
        out.append((pair[0], float(pair[1])))
    return tuple(out)


def health(data: Any) -> Optional[HealthSnapshot]:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise WireError("a health snapshot is not an object")
    got = _typed(HealthSnapshot, {k: v for k, v in data.items() if k != "values"})
    got["values"] = values(data.get("values") or [])
    return HealthSnapshot(**got)


def heat(data: Any) -> Optional[Tuple[str, Tuple[Tuple[str, float], ...]]]:
    if data is None:
        return None
    if not isinstance(data, (list, tuple)) or len(data) != 2 or not isinstance(data[0], str):
        raise WireError("a health reading is not [source, values]")
    return data[0], values(data[1])


def strings(data: Any) -> List[str]:
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise WireError("expected a list of strings")
    return list(data)


def text(data: Any) -> str:
    if data is None:
        return ""
    if not isinstance(data, str):
        raise WireError(f"expected a string, got {type(data).__name__}")
    return data


def facts(data: Any) -> Dict[str, Any]:
    if not isinstance(data, dict):
        raise WireError("device facts are not an object")
    return data


def log_line(data: Any) -> Tuple[str, int, str]:
    """A ``log`` message's [LOGGER, LEVEL, TEXT]."""
    if (not isinstance(data, list) or len(data) != 3 or not isinstance(data[0], str)
            or not isinstance(data[1], int) or isinstance(data[1], bool) or not isinstance(data[2], str)):
        raise WireError("a log line is not [logger, level, text]")
    return data[0], data[1], data[2]


def event_line(data: Any) -> Tuple[str, str]:
    """An ``event`` message's [KIND, TEXT]."""
    if not isinstance(data, list) or len(data) != 2 or not all(isinstance(x, str) for x in data):
        raise WireError("an event is not [kind, text]")
    return data[0], data[1]


def error_dict(exc: BaseException) -> Dict[str, Any]:
    out: Dict[str, Any] = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__}
    if isinstance(exc, errors.FioError):
        out["stderr"] = exc.stderr
    if isinstance(exc, errors.Interrupted):
        out["signum"] = exc.signum
    return out


def error_class(name: str) -> Type[errors.TkperfError]:
    """The TkperfError subclass named ``name`` (RemoteError for anything else)."""
    cls = getattr(errors, str(name), None)
    if isinstance(cls, type) and issubclass(cls, errors.TkperfError) and cls is not errors.FioError:
        return cls
    return errors.RemoteError
