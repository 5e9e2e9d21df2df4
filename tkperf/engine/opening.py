"""A run's target opened and checked before anything touches it
(:func:`open_run`, an :class:`OpenedTarget`; a saved run's request to
resume it, :func:`resume_request`), and what that needs: how a
target on a test host is reached (``HOST:/dev/...``; ``docs/remote.rst``),
run names, the root check, the refusal to replace an earlier result, the
unattended options, and the dry run's content (:func:`dry_run`).
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from tkperf import notify
from tkperf.engine import plan
from tkperf.engine import writerate as target_rate
from tkperf.engine.request import MailRequest, RemoteSettings, ResumeRequest, RunRequest
from tkperf.engine.session import fio_settings
from tkperf.errors import EXIT_OK, EXIT_REFUSED, OutputError, ResumeError, ToolError, UsageError
from tkperf.fio.backend import FioBackend
from tkperf.fio.jobs import FioSettings
from tkperf.kit import registry, writerate
from tkperf.kit.options import RunOptions, check_fits
from tkperf.model.results import DeviceInfo, RunResult
from tkperf.remote import FIO_PORT, fio_host
from tkperf.target import armap, description, device
from tkperf.target.identity import split_target
from tkperf.target.side import LocalSide, TargetSide
from tkperf.verdict import conformance

DEFAULT_REMOTE_TKPERF = "tkperf"


@dataclass(frozen=True)
class OpenedTarget:
    """One target of a request, opened and checked: its device, the run's
    name and output directory, the description and feature files read, and
    the side that reaches it (close it: :meth:`close`)."""

    device: DeviceInfo
    name: str
    outdir: str
    description: description.Description
    features: List[Tuple[str, str]]
    side: TargetSide

    def close(self) -> None:
        self.side.close()


def open_run(request: RunRequest, device: str, size: Optional[int]) -> OpenedTarget:
    """``device`` of ``request`` opened and checked, all before anything touches it."""
    opts, profile = request.options, request.profile
    # no -dsc, no -fm: nothing to read
    desc = description.read_description(request.description) if request.description else description.Description("", {})
    features = description.read_features(request.features) if request.features else []
    side, dev = open_target(device, size, request.remote)
    try:
        if not request.dry_run:
            need_root(dev, [profile, "run", device, "..."])
            sweep_maps(side)
        check_fits(opts, dev.size_bytes, dev.logical_sector)
        check_segments(opts, dev, side, request.dry_run)
        registry.plan_all(opts, dev.size_bytes)  # a plan that cannot be made is refused before anything runs
        name = check_name(request.name) if request.name else default_name(dev)
    except BaseException:
        side.close()
        raise
    return OpenedTarget(dev, name, request.outdir or name, desc, features, side)


def sweep_maps(side: TargetSide) -> None:
    """Remove what killed tkperf runs on this host left of their segments'
    maps (:func:`tkperf.target.armap.sweep`): such a map still holds its
    device, which the safety checks would call in use.  What it leaves
    :func:`say_left` tells."""
    if not side.host:
        armap.sweep()


def say_left(warning: Callable[[str], None]) -> None:
    """Tell once what the sweep of maps left, and why (before any error
    the run stops with: a left map may be why its device is in use)."""
    for line in armap.unsaid():
        warning(line)


def check_segments(opts: RunOptions, dev: DeviceInfo, side: TargetSide, dry_run: bool = False) -> None:
    """``--ar-segments`` N > 1 where the segments can be mapped, all before
    anything is written: a block device on this host, a kernel with
    device-mapper and ``dmsetup``, segments that fit the active range.  A
    dry run makes no map: what this host lacks for one is a note of its
    plan instead (:func:`map_needs`)."""
    if not opts.maps_segments:  # one span, or no test runs over the test range
        return
    armap.refuse_target(dev, bool(side.host), opts.ar_segments)
    opts.segment_layout(dev.size_bytes)
    if not dry_run:
        armap.require(opts.ar_segments, load=True)


def map_needs(opts: RunOptions, side: TargetSide) -> Tuple[str, ...]:
    """What a run with segments needs that this host lacks (device-mapper,
    ``dmsetup``), in one line for the dry run, which maps nothing; the run
    itself is refused with the same words (exit 5)."""
    if not opts.maps_segments or side.host:
        return ()
    try:
        armap.require(opts.ar_segments, load=False)
    except ToolError as exc:
        return (f"the run itself needs device-mapper and dmsetup to map its segments, and would stop: {exc}",)
    return ()


def resume_request(asked: ResumeRequest, saved: RunResult, path: str) -> RunRequest:
    """The request that continues ``saved``: its own target, options and
    name, and what the resume command line says."""
    bad = notify.CONTROL.search(saved.name)
    if bad or not saved.name:  # it names the files and folders the resumed run writes
        shown = repr(path) if notify.CONTROL.search(path) else path  # one line
        raise ResumeError(f"{shown}: its run name {saved.name!r} holds a control character "
                          f"(U+{ord(bad.group()):04X}); tkperf never names a file so" if bad else
                          f"{shown}: the run has no name; tkperf cannot resume it")
    if os.path.basename(path) != f"{saved.name}.xml":
        raise ResumeError(f"{path}: resume needs the file under its run name {saved.name}.xml")
    try:
        opts = RunOptions.from_dict(saved.options)
    except (UsageError, ValueError, TypeError) as exc:
        raise ResumeError(f"{path}: its options cannot be read back ({exc})") from None
    return RunRequest(
        profile=saved.profile, devices=(saved.device.path,), options=opts,
        size=saved.device.size_bytes if saved.device.kind == "file" else None,
        name=saved.name, outdir=os.path.dirname(os.path.abspath(path)),
        report_formats=asked.report_formats, no_report=asked.no_report, png=asked.png, resume=True,
        force=asked.force, yes=asked.yes, quiet=asked.quiet, json_summary=asked.json_summary, mail=asked.mail,
        remote=asked.remote)


# --- how a target is reached ----------------------------------------------------

def fio_port(given: RemoteSettings, saved: Optional[dict] = None) -> int:
    port = given.fio_port
    if port is None:
        port = int((saved or {}).get("fio_port") or FIO_PORT)
    if not 0 < port < 65536:
        raise UsageError(f"--fio-port {port}: give a TCP port, 1 to 65535")
    return port


def _remote_tkperf(given: RemoteSettings, saved: Optional[dict] = None) -> List[str]:
    text = given.remote_tkperf or (saved or {}).get("remote_tkperf") or DEFAULT_REMOTE_TKPERF
    try:
        words = shlex.split(str(text))
    except ValueError as exc:
        raise UsageError(f"--remote-tkperf {text!r}: {exc}") from None
    if not words:
        raise UsageError("--remote-tkperf needs a command")
    return words


def _ssh_config(given: RemoteSettings, saved: Optional[dict] = None) -> Optional[str]:
    path = given.ssh_config or (saved or {}).get("ssh_config") or None
    if path and not os.path.isfile(path):
        raise UsageError(f"--ssh-config {path}: no such file")
    return os.path.abspath(path) if path else None


def open_target(target: str, size: Optional[int], given: RemoteSettings,
                saved: Optional[dict] = None) -> Tuple[TargetSide, DeviceInfo]:
    """The side of ``target`` (this host, or a test host over SSH) and its device.
    ``saved``: a resumed run's ``facts["remote"]``, for what the command line leaves out."""
    where = split_target(target)
    if where is None:  # the remote options are for the remote targets among several
        return LocalSide(), device.resolve(target, size)  # what LocalSide.resolve does
    from tkperf.remote import proxy  # a local run never loads the remote side

    host, path = where
    fio_port(given, saved)  # a bad port is refused before any connection
    side = proxy.connect(host, _ssh_config(given, saved), _remote_tkperf(given, saved))
    try:
        return side, side.resolve(path, size)
    except BaseException:
        side.close()
        raise


def backend(side: TargetSide, settings: FioSettings, outdir: str, given: RemoteSettings,
            saved: Optional[dict] = None) -> Optional[FioBackend]:
    """fio's client for a remote side (its server checked now, before anything
    is written); None on this host (the session makes its own)."""
    if not side.host:
        return None
    from tkperf.remote.fio import RemoteFio  # a local run never loads the remote side

    return RemoteFio(settings, outdir, side.host, fio_port(given, saved), session=side)


def facts(side: TargetSide, given: RemoteSettings, saved: Optional[dict] = None) -> Dict[str, object]:
    """``facts["remote"]`` of a run: how it reached its target, for the header and a resume."""
    if not side.host:
        return {}
    config = _ssh_config(given, saved)
    return {"host": side.host, "fio_host": fio_host(side.host), "fio_port": fio_port(given, saved),
            "remote_tkperf": " ".join(shlex.quote(w) for w in _remote_tkperf(given, saved)),
            **({"ssh_config": config} if config else {})}


def saved_remote(run_facts: dict) -> dict:
    got = run_facts.get("remote") if isinstance(run_facts, dict) else None
    return got if isinstance(got, dict) else {}


# --- names, root, earlier results ------------------------------------------------

def default_name(dev: DeviceInfo) -> str:
    """The drive's model, else the device's name (``HOST-name`` on a test host)."""
    base = dev.model if dev.kind == "block" and dev.model and not dev.model.startswith("loop") else \
        os.path.basename(dev.resolved)
    where = split_target(dev.path)
    if where is not None and base == os.path.basename(dev.resolved):
        base = f"{fio_host(where[0])}-{base}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-") or "tkperf-run"


def check_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name):
        raise UsageError(f"--name {name!r}: use letters, digits, '.', '_' and '-' only")
    return name


def command_words(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def can_write(path: str) -> bool:
    """Whether this user may open ``path`` for writing (root may; a member of
    the disk group may, too, but then purges and write-cache settings fail)."""
    return os.geteuid() == 0


def need_root(dev: DeviceInfo, words: Sequence[str]) -> None:
    """A UsageError when a local block device is to be written by a user who
    is not root; ``words``: the command line, repeated with sudo."""
    if dev.kind != "block" or split_target(dev.path) is not None or can_write(dev.resolved):
        return
    raise UsageError(f"{dev.path}: testing a block device needs root: run as root or with sudo "
                     f"(sudo tkperf {command_words(words)})")


_THROWAWAY: List[str] = []


@contextlib.contextmanager
def throwaway_target() -> Iterator[None]:
    """Within the block, runs test a throw-away target (``tkperf demo``): it is
    gone when the run ends, so an interrupted run is never told to resume."""
    _THROWAWAY.append("demo")
    try:
        yield
    finally:
        _THROWAWAY.pop()


def throwaway() -> bool:
    return bool(_THROWAWAY)


def resume_command(xml_path: str, assume_yes: bool) -> str:
    """The command that continues the interrupted run saved as ``xml_path``
    ('' for a throw-away target, which is gone by then)."""
    if _THROWAWAY:
        return ""
    return "tkperf " + command_words(["resume", xml_path] + (["--yes"] if assume_yes else []))


def refuse_replacing(xml_path: str, overwrite: bool) -> None:
    """A new run never replaces an earlier result (complete or not) unless
    told to with ``--overwrite``: an OutputError naming ``tkperf resume`` and
    the option.  Called before anything touches the device."""
    if overwrite or not os.path.lexists(xml_path):
        return
    if throwaway():  # tkperf demo: its target is gone, the result cannot be continued
        raise OutputError(f"{xml_path} holds the result of an earlier demo: replace it with "
                          "--overwrite, or choose another --outdir")
    raise OutputError(f"{xml_path} holds the result of an earlier run: continue it with "
                      f"'tkperf resume {xml_path}', replace it with --overwrite, or choose "
                      "another --name or --outdir")


def unattended(json_summary: Optional[str], m: MailRequest) -> Optional[notify.MailSettings]:
    """Check ``--json-summary`` (OutputError) and the mail options
    (UsageError) before the run starts; the mail settings or None."""
    if json_summary:
        notify.check_summary_path(json_summary)
    if m == MailRequest():  # no mail option given: no mail
        return None
    return notify.mail_settings(list(m.recipients), m.smtp, m.starttls, m.user, m.password_file,
                                m.sender, os.environ)


# --- the dry run ------------------------------------------------------------------

@dataclass(frozen=True)
class DryRun:
    """What ``--dry-run`` tells of one target: the plan's summary lines (time
    per test, total), the verdict this target would get and its deviations,
    what only the run can tell, what a real run would refuse, and the fio job
    files (None: not asked for, ``--jobs``)."""

    summary: Tuple[str, ...]
    verdict: str
    deviations: Tuple[str, ...]
    unknown: Tuple[str, ...]
    refusals: Tuple[str, ...]
    job_files: Optional[Tuple[str, ...]]
    #: What the run itself needs that this host lacks (device-mapper for
    #: ActiveRange segments): the dry run shows its plan all the same.
    needs: Tuple[str, ...] = ()
    #: A run of several targets: the target as given, its run's name and outdir.
    target: str = ""
    name: str = ""
    outdir: str = ""
    #: ``--force`` was given: the run would go past the refusals.
    forced: bool = False

    @property
    def exit_code(self) -> int:
        """The code the real run would exit with before writing: EXIT_REFUSED
        for a target it would refuse (without ``--force``), else 0."""
        return EXIT_REFUSED if self.refusals and not self.forced else EXIT_OK


def dry_run(dev: DeviceInfo, opts: RunOptions, profile: str, side: TargetSide,
            jobs: bool = False, force: bool = False) -> DryRun:
    with writerate.assumed(target_rate.of_device(dev)):  # an emulated SSD: its model's speed
        lines, rows = plan.summary(dev, opts, profile)
        files = tuple(plan.job_files(dev, opts, fio_settings(dev, opts))) if jobs else None
    verdict, unknown = conformance.of_target(opts.to_dict(), dev, profile,
                                             [r.key for r in rows if r.purge != "none"])
    return DryRun(summary=tuple(lines), verdict=verdict.sentence(), deviations=tuple(verdict.deviations),
                  unknown=tuple(unknown), refusals=tuple(side.safety_problems(dev)), job_files=files,
                  needs=map_needs(opts, side), forced=force)
