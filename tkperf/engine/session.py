"""A session: one run (or resumed run) of tkperf on one target, from the
device lock to the last saved result.

The front door (:mod:`tkperf.engine.run`) builds a :class:`Session` from
an opened target and checked options and calls :meth:`Session.execute`; everything between the lock and the final
save happens here: the safety checks, the confirmation (through the
caller's ``confirm``), O_EXCL, the run's log file, a new or resumed
:class:`~tkperf.model.results.RunResult`, and the
:class:`~tkperf.engine.runner.Runner` under signal handling, inside the
drive's write cache setting (:mod:`tkperf.target.writecache`), which is
restored however the run ends.
"""
from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from tkperf import __version__, store
from tkperf.engine import resume
from tkperf.engine.runner import Runner
from tkperf.errors import RemoteError
from tkperf.fio import keep
from tkperf.fio.backend import FioBackend, LocalFio
from tkperf.fio.jobs import FioSettings
from tkperf.kit import options
from tkperf.kit.options import RunOptions
from tkperf.model import files, segments
from tkperf.model.results import DeviceInfo, Event, RunResult, now_iso
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.target import armap, device, facts, guard
from tkperf.target.side import CacheHandle, LocalSide, TargetSide
from tkperf.untrusted import for_terminal

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")


@dataclass
class Session(store.RunFiles):
    """Everything one run needs, decided before the device is touched."""

    profile: str
    opts: RunOptions
    device: DeviceInfo
    name: str
    outdir: str
    saved: Optional[RunResult] = None
    force: bool = False
    description: str = ""
    description_fields: Dict[str, str] = field(default_factory=dict)
    features: List[Tuple[str, str]] = field(default_factory=list)
    #: Where the target is (this host, or a test host over SSH) and the fio
    #: that runs the workloads (made from the options when not given).
    side: TargetSide = field(default_factory=LocalSide)
    fio: Optional[FioBackend] = None
    #: Facts of how the run reaches its target, kept as ``facts["remote"]``.
    remote_facts: Dict[str, object] = field(default_factory=dict)
    #: The run once it exists (also when execute raised after creating it).
    run: Optional[RunResult] = field(default=None, init=False)
    #: On an emulated SSD: what holds its drive between fio processes (facts.SimdriveHold).
    _drive_hold: Optional[facts.SimdriveHold] = field(default=None, init=False, repr=False)

    def backend(self) -> FioBackend:
        if self.fio is None:
            local = LocalFio(fio_settings(self.device, self.opts), self.outdir)
            local.target_check = lambda: device.check_still(self.device)
            if self.device.transport == EMULATED:
                self._drive_hold = local.after_fio = facts.SimdriveHold(self.device)
            self.fio = local
        return self.fio

    def execute(self, confirm: Callable[[DeviceInfo], None]) -> RunResult:
        """Lock, check, confirm, hold O_EXCL and run; the result file is saved
        whatever happens, and exceptions go on to the caller."""
        fio = self.backend()
        side = self.side
        with side.locked(self.device):
            problems = side.check_safe(self.device, self.force)
            confirm(self.device)
            store.ensure_dir(self.outdir, "output directory")  # after a "no", none is left behind
            hold = armap.Hold(self.device) if self.opts.maps_segments else None
            with hold if hold is not None else side.exclusive(self.device):
                self._open_log()
                return self._locked(fio, problems, hold)

    def _open_log(self) -> None:
        """The run's log file; it stays open after ``execute`` so that what
        follows the run (the final report) is logged too: :meth:`close_log`."""
        self._handler: Optional[logging.Handler] = log_file_handler(self.log_path)
        log.setLevel(logging.DEBUG)
        log.addHandler(self._handler)

    def close_log(self) -> None:
        handler = getattr(self, "_handler", None)
        if handler is not None:
            log.removeHandler(handler)
            handler.close()
            self._handler = None

    def _locked(self, fio: FioBackend, problems: List[str], hold: Optional[armap.Hold] = None) -> RunResult:
        self._log_start(fio, problems)
        dev = self._prepare_file(self.device)
        run = self.run = self._start_run(fio, dev)
        if self.saved is None or not run.facts:
            run.facts = self.side.device_facts(dev)  # read-only; missing tools are listed, never fatal
        if self.remote_facts:
            run.facts["remote"] = dict(self.remote_facts)
        keep.attach(fio, run.facts, self.outdir, self.name, fresh=self.saved is None)
        runner = Runner(run=run, opts=self.opts, device=dev, fio=fio, xml_path=self.xml_path,
                        side=self.side)
        self._first_events(runner, run, dev, problems)
        with guard.signals_raise():
            cache = self.side.write_cache(dev, self.opts.write_cache,
                                          lambda kind, message: self._cache_event(runner, kind, message))
            try:
                run.device = replace(run.device, write_cache=cache.state)
                with self._segments(hold, runner):
                    runner.execute()
            finally:
                self._restore_cache(cache, run)
                if self._drive_hold is not None:  # idle time after the run is the emulated drive's again
                    self._drive_hold.release()
        return run

    def _log_start(self, fio: FioBackend, problems: List[str]) -> None:
        """The log's first lines: what runs where, and each safety check forced past."""
        log.info("tkperf %s: %s %s of %s as %r", __version__, self.profile,
                 "resumed run" if self.saved else "run", self.device.path, self.name)
        if self.side.describe():
            log.info("target on a test host: %s", self.side.describe())
        server = getattr(fio, "server", "")  # a back end that drives an fio server
        if server:
            log.info("fio: %s here, server %s on %s", fio.version, server, getattr(fio, "where", "?"))
        for p in problems:
            log.warning("forced past: %s", p)

    def _prepare_file(self, dev: DeviceInfo) -> DeviceInfo:
        """A file target made ready (and identified once it exists); any other target as it is."""
        if dev.kind != "file":
            return dev
        self.side.prepare_file(dev)
        if not dev.inode:  # created just now: what identifies it exists from here on
            dev = self.device = replace(dev, inode=self.side.resolve(dev.resolved, dev.size_bytes).inode)
        progress.info("%s is a file target: results describe the filesystem and host, not a drive",
                      dev.path)
        return dev

    def _start_run(self, fio: FioBackend, dev: DeviceInfo) -> RunResult:
        """The saved run made ready to go on, or a new one."""
        if self.saved is not None:
            for path in resume.clean_leftovers(self.outdir, self.name):
                log.info("removed leftover %s", path)
            for line in resume.prepare(self.saved):
                progress.info("resume: %s", line)
            return self.saved
        return RunResult(name=self.name, started=now_iso(), device=dev,
                         host=self.side.host_info(fio.version), options=self.opts.to_dict(),
                         profile=self.profile, quick=self.opts.quick, description=self.description,
                         description_fields=dict(self.description_fields), features=list(self.features),
                         tkperf_version=__version__)

    def _first_events(self, runner: Runner, run: RunResult, dev: DeviceInfo, problems: List[str]) -> None:
        """A new run's notes (the target's kind, --quick, a file target) and each check forced past."""
        found = run.facts.get("target")
        target: Dict[str, Any] = found if isinstance(found, dict) else {}
        if self.saved is None and dev.kind != "file":  # a file target has its own note below
            for w in (target.get("target_kind") or {}).get("warnings", []):
                runner.event("warning", str(w))
        if self.saved is None:
            if self.opts.quick:
                runner.event("note", "--quick smoke-test profile: not a PTS-conformant measurement")
            if dev.kind == "file":
                runner.event("note", "file target: fio wrote to a file, not a raw block device")
        for p in problems:
            runner.event("warning", f"forced past safety check: {p}")

    @contextlib.contextmanager
    def _segments(self, hold: Optional[armap.Hold], runner: Runner) -> Iterator[None]:
        """The ActiveRange segments' map while the tests run (``--ar-segments``
        N > 1): the workloads of every test that uses the test range run on
        it (the others on the device, :meth:`RunOptions.for_test`); the
        run's note names the map once it exists."""
        if hold is None:
            yield
            return
        lay = self.opts.segment_layout(self.device.size_bytes)
        with hold.mapped(lay, self.opts.ar_segments) as path:
            said = (f"test range: {lay.count:,} ActiveRange segments of {segments.size_text(lay.size)} spread "
                    f"randomly across the active range (seed {lay.seed}), mapped as {path}")
            if self.saved is None:
                runner.event("note", said)
            else:  # a resumed run has the note already; its log says where this part ran
                log.info("%s", said)
            yield

    def _cache_event(self, runner: Runner, kind: str, message: str) -> None:
        runner.event(kind, message)
        progress.info("%s", message)

    def _restore_cache(self, cache: CacheHandle, run: RunResult) -> None:
        """Put the write cache back and save what that recorded: the runner
        saved its last state before this."""
        before = len(run.events)
        try:
            cache.restore()
        except RemoteError as exc:  # the agent puts it back itself when its session ends
            run.events.append(Event(time=now_iso(), kind="warning",
                                    message=f"write cache not restored from here ({exc}); the test "
                                            "host's agent restores it when its session ends"))
        finally:
            if len(run.events) > before:
                try:
                    store.save(run, self.xml_path)
                except Exception as exc:  # noqa: BLE001 - the run's own outcome is the one to report
                    log.error("could not save the write cache events: %s", exc)


class _LogFile(logging.StreamHandler):
    """A log handler on a file opened by :func:`log_file_handler`; closing it closes the file."""

    def close(self) -> None:
        try:
            self.acquire()
            try:
                stream = self.stream
                if stream is not None and not stream.closed:
                    stream.close()
            finally:
                self.release()
        finally:
            super().close()


def log_file_handler(path: str) -> logging.Handler:
    """The run's log file, appended to, opened without following a link
    planted in the output directory (:func:`tkperf.model.files.open_own`)."""
    fd = files.open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "log file")
    handler = _LogFile(os.fdopen(fd, "a", encoding="utf-8", errors="replace"))
    handler.setFormatter(_TerminalSafeFormatter("%(asctime)s %(levelname)s %(message)s"))
    return handler


class _TerminalSafeFormatter(logging.Formatter):
    """Log lines as a terminal may show them (``tail -f``): what a device or
    a file said is escaped (:func:`tkperf.untrusted.for_terminal`)."""

    def format(self, record: logging.LogRecord) -> str:
        return for_terminal(super().format(record))


def fio_settings(dev: DeviceInfo, opts: RunOptions) -> FioSettings:
    """The [global] section of the fio jobs of a run on ``dev``: the target,
    the data pattern and the range the tests use (as ``size=`` when below 100%;
    the WIPC job carries its own when ``--test-range`` narrows the tests).
    With ActiveRange segments the target is their map, whole
    (:mod:`tkperf.target.armap`), and the WIPC names the real device.  A
    test that does not use the test range gets the device and the active
    range instead (:func:`tkperf.engine.runner.settings_for`)."""
    active = opts.test_bytes(dev.size_bytes)
    pattern = options.data_pattern_fio(opts.data_pattern)
    refill = opts.refill_buffers and not any(k == "refill_buffers" for k, _ in pattern)
    if opts.maps_segments:
        return FioSettings(filename=armap.map_path(), refill_buffers=refill, extra=pattern)
    return FioSettings(filename=dev.resolved, refill_buffers=refill,
                       size=active if active < dev.size_bytes else 0, extra=pattern)
