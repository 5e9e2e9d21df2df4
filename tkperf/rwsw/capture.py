"""``tkperf capture``: record a device's block I/O, or import a blktrace
capture, and write ``DIR/NAME.xml`` (the streams and steps,
:mod:`tkperf.rwsw.model`) with ``DIR/NAME.iolog`` (the I/Os, fio iolog
version 3) beside it.

Neither file replaces an existing one.  The raw events of a recording go
to an unnamed temporary file in the output directory (``O_TMPFILE``),
which must therefore not be on the captured disk.  Nothing is read or
written through a link another user could plant there
(:func:`tkperf.model.files.open_to_read`, docs/rwsw.rst).
"""
from __future__ import annotations

import logging
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import OutputError, ResultFileError, ToolError
from tkperf.model.files import foreign_link, open_to_read
from tkperf.rwsw import analysis, model, rawtrace, trace, tracing
from tkperf.target import guard

log = logging.getLogger("tkperf")

#: The first bytes of blktrace's binary records (``BLK_IO_TRACE_MAGIC``, the version byte aside).
_BLKTRACE_MAGIC = b"\x74\x61\x65"
#: An imported file larger than this is refused (a blkparse text of ~10**7 I/Os).
MAX_IMPORT_BYTES = 4 << 30
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


def paths(outdir: str, name: str) -> Tuple[str, str]:
    """``DIR/NAME.xml`` and ``DIR/NAME.iolog``, after checking that the
    directory exists and neither file does (OutputError otherwise)."""
    why = foreign_link(outdir)
    if why:
        raise OutputError(f"--outdir {outdir}: {why}; tkperf does not write through it")
    if not os.path.isdir(outdir):
        raise OutputError(f"--outdir {outdir}: no such directory")
    xml, iolog = os.path.join(outdir, f"{name}.xml"), os.path.join(outdir, f"{name}.iolog")
    for p in (xml, iolog):
        if os.path.lexists(p):
            raise OutputError(f"{p} exists; tkperf capture does not replace it (give another --name or remove it)")
    return xml, iolog


def _write_iolog(trace_: trace.IoTrace, path: str) -> None:
    """The iolog, written piece by piece into a temporary file that becomes
    ``path`` when complete (a long capture's log does not fit in memory at once)."""
    try:  # a fresh name (O_EXCL, mode 0600): nothing planted in the directory is written through
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o644 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            for piece in analysis.iolog_lines(trace_):
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.lexists(path):
            raise OutputError(f"{path} exists; tkperf capture does not replace it")
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _write(trace_: trace.IoTrace, capture: model.Capture, xml: str, iolog: str) -> None:
    if os.path.lexists(iolog):
        raise OutputError(f"{iolog} exists; tkperf capture does not replace it")
    _write_iolog(trace_, iolog)
    try:
        model.save(capture, xml)
        model.load(xml)  # what was written reads back
    except BaseException:  # nothing is left where a capture fails: a retry under the name works
        for path in (xml, iolog):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise


def _notes(trace_: trace.IoTrace, lost: int = 0, problems: Sequence[str] = ()) -> Tuple[str, ...]:
    out: List[str] = list(problems)
    if lost:
        out.append(f"the kernel's trace buffer overflowed: {lost} events were lost; the shares are of the "
                   "events recorded (a shorter capture or a less busy device loses none)")
    for why, n in sorted(trace_.skipped.items()):
        out.append(f"{n} events left out: {why}")
    if len(trace_) == 0:
        out.append("no I/O was seen on the device during the capture")
    return tuple(out)


def record(device: str, seconds: float, name: str, outdir: str, step: float,
           on_start: Optional[Callable[[], None]] = None) -> Written:
    """Record ``device`` for ``seconds`` and write the capture (root only);
    ``on_start`` is called once every check has passed, as recording begins."""
    tracing.needs_root()
    dev = tracing.device_facts(device)
    xml, iolog = paths(outdir, name)
    if tracing.on_device(outdir, dev):
        raise OutputError(f"--outdir {outdir} is on the captured disk: what tkperf writes there would be "
                          "captured too; choose a directory on another disk")
    try:  # unnamed where the kernel can (O_TMPFILE), else a fresh name removed at once: no link to plant
        raw = tempfile.TemporaryFile(dir=outdir, prefix=f".{name}.", suffix=".trace.tmp")
    except OSError as exc:
        raise OutputError(f"cannot create a temporary file in {outdir}: {exc.strerror}") from None
    with guard.signals_raise():  # a signal, also while the events are analysed, leaves nothing behind
        with raw:
            if on_start is not None:
                on_start()
            started = time.time()
            with tracing.Recorder(dev) as rec:
                rec.record(seconds, raw.fileno())
            assert rec.layout is not None
            raw.seek(0)
            events = rawtrace.read_raw(raw, rec.layout, dev.kernel_dev, dev.first_sector,
                                       dev.sectors if dev.first_sector else None)
        capture = analysis.analyse(events, step, name=name, device=device, size=dev.size, source="tracefs",
                                   started=_utc(started), iolog=os.path.basename(iolog))
        _write(events, capture, xml, iolog)
    return Written(capture, xml, iolog, _notes(events, rec.lost, rec.problems))


def _is_blktrace(fd: int) -> bool:
    head = os.pread(fd, 4, 0)
    return len(head) == 4 and head[1:4] == _BLKTRACE_MAGIC


def _blkparse(src: int, path: str, out: int) -> None:
    """blktrace's binary records (the descriptor ``src`` of ``path``) into
    blkparse's text on the descriptor ``out``: blkparse is given no file name
    to open, so it follows no link."""
    argv = [programs.require("blkparse"), "-i", "-"]
    proc = programs.start(argv, stdin=src, stdout=out, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=3600)
    finally:
        programs.forget(proc)
    if proc.returncode != 0:
        last = (err or b"").decode(errors="replace").strip().splitlines()
        raise ToolError(f"blkparse failed on {path}: {last[-1] if last else f'exit code {proc.returncode}'}")


def import_file(path: str, name: str, outdir: str, step: float) -> Written:
    """Read blkparse's default text output (or blktrace's binary records,
    through ``blkparse -i -``) at ``path`` and write the capture.  The file is
    opened once, without following another user's link and never a FIFO
    (:func:`tkperf.model.files.open_to_read`)."""
    src = open_to_read(path, "--import", ResultFileError)
    try:
        st = os.fstat(src)
        if st.st_size > MAX_IMPORT_BYTES:
            raise ResultFileError(f"{path}: {st.st_size} bytes, larger than the {MAX_IMPORT_BYTES} byte "
                                  "import limit")
        xml, iolog = paths(outdir, name)
        if _is_blktrace(src):
            with tempfile.TemporaryFile(dir=outdir) as text:  # unnamed: nothing to plant a link at
                _blkparse(src, path, text.fileno())
                text.seek(0)
                events, device = trace.read_blkparse(text, path)
        else:
            with os.fdopen(src, "rb", closefd=False) as fh:
                events, device = trace.read_blkparse(fh, path)
    finally:
        os.close(src)
    steps = (events.t1 - events.t0) / step
    if steps > MAX_IMPORT_STEPS:
        raise ResultFileError(f"{path}: its I/Os span {events.t1 - events.t0:.0f} s, {steps:.0f} steps of "
                              f"{step:g} s: more than the {MAX_IMPORT_STEPS} steps a capture holds; give a "
                              f"--step of at least {(events.t1 - events.t0) / MAX_IMPORT_STEPS:.0f} s")
    size = int((events.offset + events.length).max()) if len(events) else 0
    capture = analysis.analyse(events, step, name=name, device=device, size=size, source="import",
                               started=_utc(st.st_mtime), iolog=os.path.basename(iolog))
    _write(events, capture, xml, iolog)
    return Written(capture, xml, iolog, _notes(events))
