"""The fio back end: the one small interface through which tkperf runs fio.

:class:`FioBackend` is what the engine talks to: ``run`` (jobs back to
back in one fio process, parsed workloads back) and ``stream`` (one long
job reporting every interval).  :class:`LocalFio` runs the fio of this
host; a back end for fio's client/server mode fits the same interface.
Output is always ``--output-format=json``.
"""
from __future__ import annotations

import abc
import codecs
import contextlib
import logging
import os
import select
import signal
import subprocess
import time
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import FioError, OutputError, ToolError
from tkperf.fio import live
from tkperf.fio.checks import check_stream_report
from tkperf.fio.jobs import FioJob, FioSettings, job_file, parse_version
from tkperf.fio.keep import OutputKeeper, now_utc
from tkperf.fio.live import LiveMeter
from tkperf.fio.output import first_json_object, json_objects, parse_jobs
from tkperf.model import files
from tkperf.model.results import Workload

log = logging.getLogger("tkperf")

MIN_FIO = (3, 0)
# A round may run this many times its planned fio time (plus a fixed margin
# for fio's start and stop) before tkperf calls it hung and kills it.
HANG_FACTOR = 2.0
HANG_MARGIN_S = 10.0


class FioBackend(abc.ABC):
    """Runs fio job files somewhere and returns what fio measured."""

    #: fio's ``--version`` output, e.g. ``fio-3.33``.
    version: str = ""
    settings: FioSettings
    #: Where each invocation's output is kept (:mod:`tkperf.fio.keep`); None: nowhere.
    keeper: Optional[OutputKeeper] = None
    #: Whether :meth:`stream` hands over each interval's report as fio makes
    #: it.  When False the reports come when the job ends, so a stream that
    #: stops on what it measures must also bound the job itself.
    live_intervals: bool = True

    def kept(self, what: str, fmt: str,
             started: Optional[str] = None) -> contextlib.AbstractContextManager[Callable[[str], None]]:
        """A writer of what fio prints in ``what`` into the kept output (a
        no-op without a :attr:`keeper`); ``started``: when fio started (default now)."""
        if self.keeper is None:
            return contextlib.nullcontext(_discard)
        return self.keeper.writer(what, fmt, started)

    @abc.abstractmethod
    def run(self, jobs: Sequence[FioJob], what: str,
            timeout: Optional[float] = None, histograms: bool = False) -> Tuple[List[Workload], float]:
        """Run ``jobs`` back to back in one fio process; (workloads, wall seconds).
        ``histograms``: fio reports json+ and each direction keeps its
        response-time bins (``IoStats.bins``)."""

    @abc.abstractmethod
    def stream(self, job: FioJob, interval_s: int, what: str,
               on_report: Callable[[dict], bool], timeout: float, histograms: bool = False) -> None:
        """Run one long job, handing every interval's cumulative report to
        ``on_report``, which returns True to stop the job; with
        ``histograms``, fio reports json+ (each report with the job's
        cumulative latency histogram)."""


class LocalFio(FioBackend):
    """fio on this host: job files in ``workdir``, fio started as a child process."""

    def __init__(self, settings: FioSettings, workdir: str, fio: str = "fio") -> None:
        self.settings = settings
        self.workdir = workdir
        self.fio = programs.require(fio)
        self.version = self.check_version()
        #: Called before each fio starts: raises if the target's path no
        #: longer names the device (or file) the run resolved.
        self.target_check: Optional[Callable[[], None]] = None
        #: Called as soon as each fio process has ended (an emulated SSD is
        #: told that the time until the next one is the host's, not idle).
        self.after_fio: Optional[Callable[[], None]] = None

    def check_version(self) -> str:
        try:
            out = programs.run([self.fio, "--version"], timeout=30, what="fio --version").stdout
        except (OSError, Exception) as exc:  # noqa: BLE001 - any failure means no usable fio
            raise ToolError(f"cannot run fio --version: {exc}") from exc
        version = parse_version(out)
        if version < MIN_FIO:
            raise ToolError(f"fio {version[0]}.{version[1]} is too old; tkperf needs fio >= 3.0")
        return out.strip()

    @contextlib.contextmanager
    def _job_file(self, text: str) -> Iterator[str]:
        """``text`` in a fresh job file in ``workdir`` (the run's output
        folder), removed when the block ends, however it ends: also on a
        signal as the file is made or written."""
        path = ""
        try:
            try:
                with files.temp_file(self.workdir, ".tkperf-", ".fio", perms=0o600, mode="w") as (fh, path):
                    with fh:
                        fh.write(text)
            except OSError as exc:
                raise OutputError(f"cannot write a fio job file in {self.workdir}: {exc.strerror or exc}") from None
            yield path
        finally:
            if path:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    @contextlib.contextmanager
    def _process(self, job_text: str, what: str, flags: Sequence[str], **popen: object) -> Iterator[subprocess.Popen]:
        """fio on a job file of ``text``: logged, tracked, killed with its threads
        if anything goes wrong, job file removed afterwards."""
        if self.target_check is not None:
            self.target_check()
        log.info("fio job file for %s:\n%s", what, job_text)
        with self._job_file(job_text) as path:
            fmt = [] if any(f.startswith("--output-format=") for f in flags) else ["--output-format=json"]
            proc = programs.start(self.command([*fmt, *flags], path), **popen)
            try:
                yield proc
            except BaseException:
                programs.kill(proc)
                proc.wait()
                raise
            finally:
                programs.forget(proc)
                if self.after_fio is not None:
                    self.after_fio()

    def command(self, flags: Sequence[str], job_path: str) -> List[str]:
        """fio's command line for the job file at ``job_path``."""
        return [self.fio, *flags, job_path]

    def failure_line(self, err: str, out: str) -> str:
        """What a failed fio said, in one line."""
        return _last_line(err or out)

    def jobs_report(self, report: dict) -> dict:
        """fio's JSON report with the jobs under ``jobs`` (a client's report differs)."""
        return report

    def run(self, jobs: Sequence[FioJob], what: str,
            timeout: Optional[float] = None, histograms: bool = False) -> Tuple[List[Workload], float]:
        """Run ``jobs`` back to back in one fio process; returns workloads and wall seconds."""
        planned = sum(j.planned_seconds for j in jobs)
        if timeout is None and planned:
            timeout = planned * HANG_FACTOR + HANG_MARGIN_S
        t0 = time.monotonic()
        started = now_utc()  # the kept file's start: taken before fio starts, not when it returns
        flags = ["--output-format=json+"] if histograms else []
        meter = LiveMeter(what, groups=live.groups([(j.name, j.extra) for j in jobs])) \
            if live.wanted() and self.live_intervals else None
        if meter is not None:
            flags.append(f"--status-interval={live.interval_for(len(jobs), histograms)}")
        with self._process(job_file(self.settings, jobs), what, flags, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=meter is None) as proc:
            try:
                if meter is None:
                    out, err = proc.communicate(timeout=timeout)
                else:
                    out, err = _read_live(proc, timeout, meter)
            except subprocess.TimeoutExpired:
                programs.kill(proc)
                out, err = proc.communicate()
                raise FioError(f"fio hung in {what}: no result after {timeout:.0f} s "
                               f"(planned {planned:.0f} s); killed it", stderr=_text(err)) from None
        wall = time.monotonic() - t0
        with self.kept(what, "json+" if histograms else "json", started) as keep:
            keep(out)
        if proc.returncode != 0:
            raise FioError(f"fio failed in {what} (exit {proc.returncode}): {self.failure_line(err, out)}",
                           stderr=err)
        report = self.jobs_report(first_json_object(out))
        workloads = parse_jobs(report, {j.name: j.spec() for j in jobs}, what)
        for w in workloads:
            if w.error:
                raise FioError(f"fio reported I/O error {w.error} ({os.strerror(w.error)}) in "
                               f"workload {w.name} of {what}: {_last_line(err)}", stderr=err)
        for w in workloads:
            log.info("%s: %s IOPS r/w %.0f/%.0f, MB/s r/w %.1f/%.1f, mean lat us r/w %.1f/%.1f",
                     what, w.name, w.read.iops, w.write.iops, w.read.bw_bytes / 1e6,
                     w.write.bw_bytes / 1e6, w.read.lat_mean_us, w.write.lat_mean_us)
        return workloads, wall

    def stream(self, job: FioJob, interval_s: int, what: str,
               on_report: Callable[[dict], bool], timeout: float, histograms: bool = False) -> None:
        """Run one long job printing a cumulative JSON report every ``interval_s``.

        ``on_report`` gets each report and returns True to stop the job early.
        fio is stopped (SIGTERM) when asked to, and killed when silent for
        ``HANG_FACTOR`` intervals plus the margin or when ``timeout`` passes.
        The report fio prints as it stops still goes to ``on_report`` (its
        answer no longer matters): the writes between the report that asked
        for the stop and the stop itself were made, and are counted.
        """
        silent_limit = interval_s * HANG_FACTOR + HANG_MARGIN_S
        buf = ""
        pos = 0
        stopped = False
        err_chunks: List[bytes] = []
        meter = LiveMeter(what)
        flags = (f"--status-interval={interval_s}",) + (("--output-format=json+",) if histograms else ())
        with self.kept(what, "json-stream") as keep, \
                self._process(job_file(self.settings, [job]), what, flags,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            start = last = time.monotonic()
            assert proc.stdout is not None and proc.stderr is not None  # both PIPE
            streams = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err"}
            while streams:
                ready, _, _ = select.select(list(streams), [], [], 1.0)
                now = time.monotonic()
                for fd in ready:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        del streams[fd]
                        continue
                    if streams[fd] == "err":
                        err_chunks.append(chunk)
                        continue
                    last = now
                    text = chunk.decode("utf-8", "replace")
                    keep(text)
                    buf += text
                    for obj, end in json_objects(buf, pos):
                        pos = end
                        live.publish(meter.feed(obj))
                        if isinstance(obj, dict) and on_report(check_stream_report(obj, what)) and not stopped:
                            stopped = True
                            programs.kill(proc, signal.SIGTERM)
                if not stopped and (now - last > silent_limit or now - start > timeout):
                    raise FioError(f"fio hung in {what}: no report for {now - last:.0f} s; killed it",
                                   stderr=b"".join(err_chunks).decode("utf-8", "replace"))
            proc.wait()
        err = b"".join(err_chunks).decode("utf-8", "replace")
        if proc.returncode != 0 and not stopped:
            raise FioError(f"fio failed in {what} (exit {proc.returncode}): {_last_line(err)}",
                           stderr=err)
        if pos == 0 and not stopped:
            first_json_object(buf)  # raises the right error for missing/invalid JSON


class LiveReader:
    """fio's stdout while it prints status reports: each whole report goes to
    ``meter`` and its figures are published (:mod:`tkperf.fio.live`); kept
    are only the last report (the final one, when fio ends well) and what
    fio printed before its first (warnings), so memory stays small however
    long the round.  A report is looked for only once a chunk brings a
    closing brace at the start of a line (fio ends each report so): a report
    of many json+ jobs comes in many chunks, and none is parsed twice."""

    def __init__(self, meter: LiveMeter) -> None:
        self.meter = meter
        self.head, self.buf, self.last, self.started = "", "", "", False

    def feed(self, text: str) -> None:
        ended = "\n}" in (self.buf[-1:] + text)
        self.buf += text
        if not self.started:
            if "{" not in self.buf:
                self.head, self.buf = self.head + self.buf, ""
                return
            cut = self.buf.index("{")
            self.head, self.buf, self.started = self.head + self.buf[:cut], self.buf[cut:], True
        if ended:
            self.finish()

    def finish(self) -> None:
        """Take every whole report the buffer holds."""
        ended = True
        while ended:
            found = next(json_objects(self.buf), None)
            if found is None:
                return  # the rest has not been printed yet
            obj, end = found
            live.publish(self.meter.feed(obj))
            self.last, self.buf = self.buf[self.buf.index("{"):end], self.buf[end:]
            ended = "\n}" in self.buf

    def output(self) -> str:
        """What stands for fio's stdout: the head, the last whole report and
        anything after it (an unfinished report of a failed fio)."""
        return self.head + self.last + self.buf


def _read_live(proc: subprocess.Popen, timeout: Optional[float], meter: LiveMeter) -> Tuple[str, str]:
    """fio's stdout (as :class:`LiveReader` keeps it) and stderr, read as they
    come.  Raises TimeoutExpired after ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    reader = LiveReader(meter)
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode  # a character may span chunks
    err_chunks: List[bytes] = []
    streams = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err"}  # type: ignore[union-attr]
    while streams:
        wait = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
        if wait <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout or 0.0)
        ready, _, _ = select.select(list(streams), [], [], wait)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del streams[fd]
            elif streams[fd] == "err":
                err_chunks.append(chunk)
            else:
                reader.feed(decode(chunk))
    proc.wait(timeout=None if deadline is None else max(deadline - time.monotonic(), 0.1))
    reader.feed(decode(b"", final=True))
    reader.finish()  # a last look, whatever the last chunk ended with
    return reader.output(), b"".join(err_chunks).decode("utf-8", "replace")


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


def _discard(text: str) -> None:
    """What :meth:`FioBackend.kept` writes to without a keeper."""


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
