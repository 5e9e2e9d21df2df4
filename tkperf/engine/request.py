"""One run's request: everything ``ssd run``, ``hdd run`` and ``resume``
take from their command line, as typed values.

The command line is turned into a :class:`RunRequest` once, at the top
(:func:`tkperf.cli.runargs.request_from_args`); the single run, the run of
several targets and resume take it, and a child of a run of several
targets receives it as a JSON file (``to_json``/``load``), not as a
rebuilt command line (docs/parallel.rst).

The JSON document carries ``"schema": "tkperf-run-request"`` and a
``"version"``; versions:

1. the first: profile, devices, size, name, outdir, options (as in the
   result file), report formats, the switches, json_summary, mail,
   description and features files, remote.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, Optional, Tuple

from tkperf.errors import UsageError
from tkperf.kit import options
from tkperf.kit.options import REPORT_FORMATS, RunOptions
from tkperf.model.files import read_limited

SCHEMA = "tkperf-run-request"
VERSION = 1
PROFILES = ("ssd", "hdd")


@dataclass(frozen=True)
class RemoteSettings:
    """How remote targets are reached (``--fio-port``, ``--ssh-config``,
    ``--remote-tkperf``); None: the default, or a resumed run's saved value."""

    fio_port: Optional[int] = None
    ssh_config: Optional[str] = None
    remote_tkperf: Optional[str] = None


@dataclass(frozen=True)
class MailRequest:
    """What the mail options say, unchecked: :func:`tkperf.notify.mail_settings`
    checks them and reads the password (never kept here)."""

    recipients: Tuple[str, ...] = ()
    smtp: Optional[str] = None
    starttls: bool = False
    user: Optional[str] = None
    password_file: Optional[str] = None
    sender: Optional[str] = None


@dataclass(frozen=True)
class RunRequest:
    """A run as its command line asked for it.  ``devices``: the target
    arguments as given (one per run; several: a run of several targets);
    ``size``: bytes of a file target; ``name``/``outdir``: None for the
    defaults; ``description``/``features``: the files' paths."""

    profile: str
    devices: Tuple[str, ...]
    options: RunOptions
    size: Optional[int] = None
    name: Optional[str] = None
    outdir: Optional[str] = None
    report_formats: Tuple[str, ...] = REPORT_FORMATS
    no_report: bool = False
    #: Plots as PNG files too, which the reST then refers to (``--png``).
    png: bool = False
    resume: bool = False
    overwrite: bool = False
    force: bool = False
    yes: bool = False
    quiet: bool = False
    debug: bool = False
    dry_run: bool = False
    #: The dry run prints the fio job files after its summary (``--jobs``).
    jobs: bool = False
    json_summary: Optional[str] = None
    mail: MailRequest = field(default_factory=MailRequest)
    description: Optional[str] = None
    features: Optional[str] = None
    remote: RemoteSettings = field(default_factory=RemoteSettings)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise UsageError(f"profile {self.profile!r}: choose from {', '.join(PROFILES)}")
        if not self.devices or not all(isinstance(d, str) and d for d in self.devices):
            raise UsageError("a run request needs at least one target")
        if not isinstance(self.options, RunOptions):
            raise UsageError("a run request's options must be RunOptions")
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "report_formats", options.parse_report_formats(self.report_formats))
        object.__setattr__(self, "mail", replace(self.mail, recipients=tuple(self.mail.recipients)))

    @property
    def device(self) -> str:
        """The target of a run of one target."""
        if len(self.devices) != 1:
            raise ValueError(f"a request of {len(self.devices)} targets has no single device")
        return self.devices[0]

    def to_dict(self) -> dict:
        out: dict = {"schema": SCHEMA, "version": VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "options":
                out[f.name] = value.to_dict()
            elif isinstance(value, (MailRequest, RemoteSettings)):
                out[f.name] = {g.name: _plain(getattr(value, g.name)) for g in fields(value)}
            else:
                out[f.name] = _plain(value)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, doc: object, where: str = "run request") -> RunRequest:
        """The request of a :meth:`to_dict` document; one-line UsageError for
        anything else (another schema, a newer version, a wrong field)."""
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
            raise UsageError(f"{where}: not a tkperf run request (schema {got!r}, expected {SCHEMA!r})")
        version = doc.get("version")
        if version != VERSION:
            raise UsageError(f"{where}: run request version {version!r}; this tkperf reads version {VERSION}")
        try:
            kwargs = {}
            for f in fields(cls):
                if f.name not in doc:
                    continue
                value = doc[f.name]
                if f.name == "options":
                    value = RunOptions.from_dict(_mapping(value, f.name))
                elif f.name == "mail":
                    value = _typed(MailRequest, _mapping(value, f.name))
                elif f.name == "remote":
                    value = _typed(RemoteSettings, _mapping(value, f.name))
                kwargs[f.name] = value
            unknown = sorted(set(doc) - {f.name for f in fields(cls)} - {"schema", "version"})
            if unknown:
                raise ValueError(f"unknown field {unknown[0]!r}")
            return _typed(cls, kwargs)
        except (UsageError, ValueError, TypeError, KeyError) as exc:
            detail = " ".join(str(exc).split())
            raise UsageError(f"{where}: a bad run request ({detail})") from None

    @classmethod
    def from_json(cls, text: str, where: str = "run request") -> RunRequest:
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{where}: not a tkperf run request (not JSON: {exc})") from None
        return cls.from_dict(doc, where)


@dataclass(frozen=True)
class ResumeRequest:
    """What ``tkperf resume RESULT.xml`` takes from its command line; the
    rest (profile, target, options, name) comes from the saved run."""

    report_formats: Tuple[str, ...] = REPORT_FORMATS
    no_report: bool = False
    png: bool = False
    force: bool = False
    yes: bool = False
    quiet: bool = False
    json_summary: Optional[str] = None
    mail: MailRequest = field(default_factory=MailRequest)
    remote: RemoteSettings = field(default_factory=RemoteSettings)


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _mapping(value: object, name: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object")
    return value


#: The JSON types a field of each declared type takes (None allowed for Optional).
_TYPES = {"str": (str,), "int": (int,), "bool": (bool,)}


def _typed(cls, data: dict):
    """``cls(**data)`` after checking each value against its field's declared
    type; tuples arrive as JSON lists."""
    kwargs: Dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value, kind = data[f.name], str(f.type)
        if kind.startswith("Optional["):
            kind = kind[len("Optional["):-1]
            if value is None:
                kwargs[f.name] = None
                continue
        if kind.startswith("Tuple[str"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{f.name} must be a list of strings")
            value = tuple(value)
        elif kind in _TYPES:
            ok = isinstance(value, _TYPES[kind]) and not (kind == "int" and isinstance(value, bool))
            if not ok:
                raise ValueError(f"{f.name} must be a {kind}, not {json.dumps(value)}")
        kwargs[f.name] = value
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    return cls(**kwargs)


def write(request: RunRequest, path: str) -> None:
    """``request`` as a new JSON file only its owner reads (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(request.to_json() + "\n")


#: A request is a few kilobytes of JSON; a larger file is not one.
MAX_REQUEST_BYTES = 1 << 20


def load(path: str) -> RunRequest:
    """The request in ``path``; a one-line UsageError if it cannot be read or is not one."""
    data = read_limited(path, "--request", MAX_REQUEST_BYTES, UsageError)  # never through another user's link
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--request {path}: {exc}") from None
    return RunRequest.from_json(text, f"--request {path}")
