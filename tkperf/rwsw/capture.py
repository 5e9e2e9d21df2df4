"""``tkperf capture``: record a device's block I/O, or import a blktrace
capture, and write ``DIR/NAME.xml`` (the streams and steps,
:mod:`tkperf.rwsw.model`) with ``DIR/NAME.iolog`` (the I/Os, packed:
:mod:`tkperf.rwsw.packedlog`) beside it.

The requests stream from the trace through the pairing
(:class:`tkperf.rwsw.trace.Pairer`) into the step figures and the iolog
(:class:`tkperf.rwsw.steps.Accumulator`): memory follows what is in
flight, not the length of the capture.  The first signal while recording
ends it early and keeps it (:class:`StopAndKeep`).

Neither file replaces an existing one.  The raw events of a recording go
to unnamed temporary files in the output directory (``O_TMPFILE``), which
must therefore not be on the captured disk; they are analysed after the
recording, or with ``--analysis during`` a part at a time while it goes on
(:mod:`tkperf.rwsw.liveparts`).  Nothing is read or
written through a link another user could plant there
(:func:`tkperf.model.files.open_to_read`, docs/rwsw.rst).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import IO, Callable, Dict, List, Optional, Sequence, Tuple, Union

from tkperf import durations, programs
from tkperf.errors import Interrupted, OutputError, ResultFileError, UsageError
from tkperf.model.files import foreign_link, open_to_read, temp_file
from tkperf.rwsw import blkparse, combine, combinelog, daylong, model, rawtrace, several, steps, summary, trace, tracing
from tkperf.rwsw.liveparts import Parts
from tkperf.target import guard

log = logging.getLogger("tkperf")

#: The first bytes of blktrace's binary records (``BLK_IO_TRACE_MAGIC``, the version byte aside).
_BLKTRACE_MAGIC = b"\x74\x61\x65"
#: The most steps an imported trace is cut into: every step is kept, an
#: empty one too, so two I/Os years apart at a step of seconds are refused
#: (give a longer --step) instead of costing minutes and gigabytes.
MAX_IMPORT_STEPS = 100_000


@dataclass(frozen=True)
class Written:
    """What a capture wrote and what the user should know of it."""

    capture: model.Capture
    xml: str
    iolog: str
    notes: Tuple[str, ...]


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def paths(outdir: str, name: str, replace: bool = False) -> Tuple[str, str]:
    """``DIR/NAME.xml`` and ``DIR/NAME.iolog``, after checking that the
    directory exists and neither file does, unless told to ``replace`` them
    (OutputError otherwise)."""
    why = foreign_link(outdir)
    if why:
        raise OutputError(f"--outdir {outdir}: {why}; tkperf does not write through it")
    if not os.path.isdir(outdir):
        raise OutputError(f"--outdir {outdir}: no such directory")
    xml, iolog = os.path.join(outdir, f"{name}.xml"), os.path.join(outdir, f"{name}.iolog")
    for p in (xml, iolog):
        if os.path.lexists(p) and not replace:
            raise OutputError(f"{p} exists; tkperf capture does not replace it (give another --name or remove it)")
    return xml, iolog


class _Iolog:
    """The iolog, written piece by piece as the requests stream by into a
    fresh temporary file (O_EXCL, mode 0644 less the umask: nothing planted
    in the directory is written through) that becomes ``path`` when the
    capture is complete, or is removed."""

    fh: IO[bytes]

    def __init__(self, path: str, replace: bool = False) -> None:
        self.path = path
        self.replace = replace
        self.tmp = ""

    def __enter__(self) -> _Iolog:
        # Made here, not in __init__: a signal between the two would leave a
        # file no __exit__ removes.  One that arrives once the file is made
        # removes it on the way out.
        try:
            with temp_file(os.path.dirname(os.path.abspath(self.path)), f".{os.path.basename(self.path)}.",
                           perms=0o644, buffering=1 << 20) as (fh, tmp):
                self.fh, self.tmp = fh, tmp  # written as the requests stream by; committed or removed
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        except BaseException:
            self._discard()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        with programs.signals_held():  # a signal now waits until the file is gone
            self._discard()

    def _discard(self) -> None:
        fh = getattr(self, "fh", None)
        if fh is not None and not fh.closed:
            with contextlib.suppress(OSError):
                fh.close()
        if self.tmp and os.path.lexists(self.tmp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.tmp)

    def commit(self) -> None:
        try:
            self.fh.flush()
            os.fsync(self.fh.fileno())
            self.fh.close()
            if os.path.lexists(self.path) and not self.replace:
                raise OutputError(f"{self.path} exists; tkperf capture does not replace it")
            os.replace(self.tmp, self.path)
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def _write(log_: Optional[_Iolog], capture: model.Capture, xml: str, overwrite: bool = False) -> None:
    if log_ is not None:
        log_.commit()
    try:
        model.save(capture, xml, overwrite=overwrite)
        model.load(xml)  # what was written reads back
    except BaseException:  # nothing is left where a capture fails: a retry under the name works
        for path in (xml, log_.path if log_ is not None else xml):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise


def _notes(skipped: Dict[str, int], ios: int, lost: int = 0, problems: Sequence[str] = (),
           stopped: Optional[model.Capture] = None) -> Tuple[str, ...]:
    out: List[str] = list(problems)
    if stopped is not None and stopped.stopped_at is not None:
        out.append(f"stopped early by {stopped.stopped_by} after {durations.duration(stopped.stopped_at)}: "
                   "what was recorded until then is kept (the file says so)")
    if lost:
        touched = stopped.steps_touched_by_loss if stopped is not None else ()
        where = (f"; pairing restarted after each loss, and the figures of step{'s' if len(touched) > 1 else ''} "
                 f"{summary.numbers_text(touched)} (marked in the capture) are of the events recorded"
                 if touched else "; the figures are of the events recorded")
        out.append(f"the kernel's trace buffer overflowed: {lost} events were lost{where} (a shorter capture or a "
                   "less busy device loses none)")
    for why, n in sorted(skipped.items()):
        out.append(f"{n} events left out: {why}")
    if ios == 0:
        out.append("no I/O was seen on the device during the capture")
    return tuple(out)


class StopAndKeep:
    """Signals while a capture runs: before recording begins one stops
    everything (nothing to keep); while recording, the first SIGINT, SIGTERM
    or SIGHUP ends the recording early and what was recorded is kept, the
    second stops everything (:class:`~tkperf.errors.Interrupted`); once the
    recording is over, the first lets the analysis finish and the second
    stops it.  Tracing is put back in every case (:class:`tracing.Recorder`)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.recording: Optional[bool] = False   # None: the recording is over
        self.stopped_by: Optional[str] = None
        self.signals = 0

    def __enter__(self) -> StopAndKeep:
        self.previous = {s: signal.getsignal(s) for s in guard.SIGNALS}
        for s in guard.SIGNALS:
            signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, h in self.previous.items():
            signal.signal(s, h)

    def _handler(self, signum: int, frame: object) -> None:
        if programs.starting():  # raised inside fork hooks, it would be lost
            programs.defer(lambda: self._handler(signum, frame))
            return
        name = guard.SIGNALS.get(signum, str(signum))
        self.signals += 1
        if self.signals == 1 and self.recording:
            self.stopped_by = name
            self.say(f"{name}: stopping the capture and keeping what was recorded (again to abort)")
            return
        if self.signals == 1 and self.stopped_by is None and self.recording is None:
            self.say(f"{name}: the recording is complete; finishing its analysis (again to abort)")
            return
        for s in guard.SIGNALS:  # the clean-up that follows must not be cut short
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum, name)

    def stop(self) -> bool:
        return self.stopped_by is not None


def _say(text: str) -> None:
    print(f"tkperf: {text}", file=sys.stderr, flush=True)


class _Analysis:
    """What the recorded requests stream into: the whole's accumulator (it
    writes the iolog) and, for several devices, each device's beside it
    (:mod:`tkperf.rwsw.several`)."""

    def __init__(self, devs: Sequence[tracing.DeviceFacts], step: float, log_: _Iolog) -> None:
        self.devs = devs
        self.acc = steps.Accumulator(step, log_.fh, lost_known=True)
        self.parts: List[steps.Accumulator] = []
        self.sink: trace.Sink = self.acc
        if len(devs) == 1:
            d = devs[0]
            self.spans: Sequence[trace.Span] = (trace.Span(d.kernel_dev, d.first_sector,
                                                           d.sectors if d.first_sector else None, 0),)
        else:
            self.spans = several.spans(devs)
            self.parts = [steps.Accumulator(step, None, lost_known=True) for _ in devs]
            self.sink = several.Split(self.acc, self.parts, [s.base for s in self.spans])

    def stream(self, rec: tracing.Recorder, seconds: float) -> rawtrace.Stream:
        assert rec.layout is not None
        return rawtrace.Stream(rec.layout, self.sink, self.spans, seconds)

    def capture(self, names: Sequence[str], lost: int, meta: Dict[str, str]) -> model.Capture:
        """The capture of the recorded events: of one device, or of several, each with its own figures."""
        if not self.parts:
            return self.acc.finish(device=names[0], size=self.devs[0].size, lost_events=lost, **meta)
        whole = self.acc.finish(device=several.joined(names), size=sum(d.size for d in self.devs), lost_events=lost,
                                **meta)
        each = tuple(several.device(part.finish(device=n, size=d.size, lost_events=lost, **meta), n, d.size, sp.base,
                                    meta["host"])
                     for part, n, d, sp in zip(self.parts, names, self.devs, self.spans))
        return dataclasses.replace(whole, devices=each)


def record(device: Union[str, Sequence[str]], seconds: float, name: str, outdir: str, step: float,
           on_start: Optional[Callable[[], None]] = None,
           say: Callable[[str], None] = _say, live: bool = False) -> Written:
    """Record ``device`` -- or several devices at once, on one timeline -- for
    ``seconds`` and write the capture (root only); ``on_start`` is called once
    recording has begun (the capture's start mark is in the trace: I/O from
    then on is captured).  The events are analysed after the recording, or,
    ``live``, a part at a time while it records (:mod:`tkperf.rwsw.liveparts`).
    A signal stops the recording early and keeps it (:class:`StopAndKeep`)."""
    tracing.needs_root()
    names = [device] if isinstance(device, str) else list(device)
    devs = several.facts(names) if len(names) > 1 else (tracing.device_facts(names[0]),)
    xml, iolog = paths(outdir, name)
    for dev in devs:
        if tracing.on_device(outdir, dev):
            raise OutputError(f"--outdir {outdir} is on the captured disk ({dev.path}): what tkperf writes there "
                              "would be captured too; choose a directory on another disk")
    # a second signal, also while the events are analysed, leaves nothing behind
    with StopAndKeep(say) as stop, _Iolog(iolog) as log_:
        analysis = _Analysis(devs, step, log_)
        started = time.time()
        with tracing.Recorder(devs[0], devs[1:]) as rec:
            with Parts(outdir, name, lambda: analysis.stream(rec, seconds), live) as parts:
                stop.recording = True
                rec.record(seconds, parts.fileno, stop.stop, started=on_start or (lambda: None))
                stop.recording = None  # over: a first signal now lets the analysis finish
                pairer = parts.close().finish()
        meta = {"name": name, "source": "tracefs", "started": _utc(started),
                "iolog": os.path.basename(iolog), "host": os.uname().nodename}
        capture = analysis.capture(names, rec.lost, meta)
        if stop.stopped_by is not None:
            capture = dataclasses.replace(capture, stopped_at=capture.duration, stopped_by=stop.stopped_by)
        _write(log_, capture, xml)
    return Written(capture, xml, iolog, _notes(pairer.skipped, pairer.count, capture.seen.lost_events or 0
                                               if capture.seen else 0, rec.problems, capture))


def _is_blktrace(fd: int) -> bool:
    head = os.pread(fd, 4, 0)
    return len(head) == 4 and head[1:4] == _BLKTRACE_MAGIC


def _check_span(acc: steps.Accumulator, path: str, step: float) -> None:
    """A ResultFileError when the trace's I/Os span more steps than a capture
    holds (two I/Os years apart would make millions of empty steps)."""
    assert acc.t0 is not None and acc.t1 is not None
    span = acc.t1 - acc.t0
    if span / step > MAX_IMPORT_STEPS:
        raise ResultFileError(f"{path}: its I/Os span {span:.0f} s, {span / step:.0f} steps of "
                              f"{step:g} s: more than the {MAX_IMPORT_STEPS} steps a capture holds; give a "
                              f"--step of at least {span / MAX_IMPORT_STEPS:.0f} s")


def import_file(path: str, name: str, outdir: str, step: float) -> Written:
    """Read blkparse's default text output (or blktrace's binary records,
    through ``blkparse -i -``) at ``path`` and write the capture.  The file is
    opened once, without following another user's link and never a FIFO
    (:func:`tkperf.model.files.open_to_read`)."""
    src = open_to_read(path, "--import", ResultFileError)
    try:
        st = os.fstat(src)  # any size: the import streams (tkperf.rwsw.daylong)
        xml, iolog = paths(outdir, name)
        with _Iolog(iolog) as log_:
            acc = steps.Accumulator(step, log_.fh)
            if _is_blktrace(src):
                with daylong.blkparse_text(src, path) as text:  # through a pipe, not a copy
                    device, pairer = blkparse.read_blkparse(text, path, acc)
            else:
                with os.fdopen(src, "rb", closefd=False) as fh:
                    device, pairer = blkparse.read_blkparse(fh, path, acc)
            _check_span(acc, path, step)
            capture = acc.finish(name=name, device=device, size=pairer.span, source="import",
                                 started=_utc(st.st_mtime), iolog=os.path.basename(iolog))
            _write(log_, capture, xml)
    finally:
        os.close(src)
    return Written(capture, xml, iolog, _notes(pairer.skipped, pairer.count))


def combine_files(files: Sequence[str], how: str, name: str, outdir: str, replace: bool = False) -> Written:
    """Combine the captures ``files`` (``days``: one after the other; ``hosts``:
    side by side, :mod:`tkperf.rwsw.combine`) into ``DIR/NAME.xml`` with its
    iolog (where every source has one); an existing output is replaced only
    when told (``replace``, ``--force``), and never one of the sources."""
    caps = [model.load(f) for f in files]
    combine.check(files, caps, how)
    xml, iolog = paths(outdir, name, replace)
    logs = [combinelog.iolog_path(f, c) for f, c in zip(files, caps)]
    own = {os.path.realpath(p) for p in [*files, *logs] if p is not None}
    if own & {os.path.realpath(xml), os.path.realpath(iolog)}:
        raise UsageError(f"--name {name}: the combined capture would replace one of its sources")
    keep = all(logs)
    make = combine.days if how == "days" else combine.hosts
    cap = make(files, caps, name, os.path.basename(iolog) if keep else None)
    notes = [f"source {i}: {s.file} ({s.name}; host {s.host or 'not recorded'}; {s.devices}; started {s.started}, "
             f"{durations.duration(s.duration)}) at {durations.duration(s.at) if s.at else '0 s'}"
             for i, s in enumerate(cap.sources, 1)]
    notes.append(f"the combined capture's {summary.P99_NOTE}")
    if not keep:
        notes.append("no iolog: " + ", ".join(f for f, p in zip(files, logs) if p is None) + " has none beside it "
                     "(an exact replay needs one)")
        _write(None, cap, xml, overwrite=replace)
        return Written(cap, xml, "", tuple(notes))
    j, moved = 0, []
    for c in caps:
        moved.append([d.offset for d in cap.parts[j:j + len(c.parts)]])
        j += len(c.parts) if how == "hosts" else 0
    with _Iolog(iolog, replace=replace) as log_:
        combinelog.write(log_.fh, list(zip(files, caps)), moved, [s.at for s in cap.sources], how == "hosts",
                         cap.duration)
        _write(log_, cap, xml, overwrite=replace)
    return Written(cap, xml, iolog, tuple(notes))
