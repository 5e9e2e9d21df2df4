"""What ``tkperf agent`` and the run that drives it say to each other.

One JSON object per line, over the SSH session's stdin and stdout:

* the run sends ``{"id": N, "op": NAME, "args": {...}}``, or
  ``{"op": "interrupt"}`` to stop the request under way (Ctrl-C);
* the agent answers a request with ``{"id": N, "ok": VALUE}`` or
  ``{"id": N, "error": {"type": CLASS, "message": TEXT}}``, and sends
  ``{"log": [LOGGER, LEVEL, TEXT]}`` and ``{"event": [KIND, TEXT]}`` lines
  while it works (every command line it runs is such a log line);
* the agent's first line is ``{"hello": {"tkperf": VERSION, "python": ...}}``.

Values are plain JSON; the dataclasses that cross are turned into dicts
here and back, field by field, so nothing but data is ever decoded (no
pickle: a test host cannot make the controlling host run code).
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, Optional, Type, TypeVar

from tkperf import errors
from tkperf.model.results import DeviceInfo, HealthSnapshot, HostInfo, PurgeRecord

T = TypeVar("T")
#: Longest line either side accepts (device facts are the largest, ~100 KB).
MAX_LINE = 16 << 20


def encode(obj: Dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def decode(line: bytes) -> Dict[str, Any]:
    obj = json.loads(line.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def to_dict(value: Any) -> Any:
    """A dataclass (or None) as a JSON-able dict."""
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def _fields(cls: Type[T], data: Any) -> Dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"expected an object for {cls.__name__}")
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return {k: v for k, v in data.items() if k in names}


def device(data: Any) -> DeviceInfo:
    return DeviceInfo(**_fields(DeviceInfo, data))


def host_info(data: Any) -> HostInfo:
    return HostInfo(**_fields(HostInfo, data))


def purge_record(data: Any) -> PurgeRecord:
    return PurgeRecord(**_fields(PurgeRecord, data))


def values(data: Any) -> tuple:
    """Health values: ((name, number), ...)."""
    return tuple((str(n), float(v)) for n, v in (data or ()))


def health(data: Any) -> Optional[HealthSnapshot]:
    if data is None:
        return None
    got = _fields(HealthSnapshot, data)
    got["values"] = values(got.get("values"))
    return HealthSnapshot(**got)


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
