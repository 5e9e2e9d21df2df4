"""fio jobs and the runner: FioJob -> job file -> one fio process -> Workloads.

A round is one fio process whose job sections are separated by
``stonewall``, so its workloads run back to back with no idle gap and fio
starts once per round.  Output is always ``--output-format=json``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import FioError, ToolError
from tkperf.fio_json import first_json_object, json_objects, parse_jobs
from tkperf.results import PERCENTILES, Workload, format_bs

log = logging.getLogger("tkperf")

MIN_FIO = (3, 0)
# A round may run this many times its planned fio time (plus a fixed margin
# for fio's start and stop) before tkperf calls it hung and kills it.
HANG_FACTOR = 2.0
HANG_MARGIN_S = 10.0


@dataclass(frozen=True)
class FioJob:
    """One job section: what tkperf asks fio to do for one workload."""

    name: str
    rw: str
    bs: int
    rwmixread: int = 0
    runtime: int = 0          # seconds, time based; 0 = run until size/loops are done
    numjobs: int = 1
    iodepth: int = 1
    loops: int = 1
    size: int = 0             # bytes; 0 = the whole target
    extra: Tuple[Tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", self.name):
            raise ValueError(f"job name {self.name!r} is not a plain word")
        if self.rw not in ("read", "write", "randread", "randwrite", "randrw", "rw"):
            raise ValueError(f"unknown rw {self.rw!r}")
        if self.numjobs < 1 or self.iodepth < 1 or self.bs < 1:
            raise ValueError("numjobs, iodepth and bs must be positive")

    @property
    def planned_seconds(self) -> float:
        return float(self.runtime)

    def spec(self) -> dict:
        """What the parser needs to label fio's report of this job."""
        read_share = {"read": 100, "randread": 100, "write": 0, "randwrite": 0}.get(self.rw, self.rwmixread)
        return dict(rw=self.rw, bs=self.bs, rwmixread=read_share, numjobs=self.numjobs,
                    iodepth=self.iodepth)

    def section(self) -> List[str]:
        lines = [f"[{self.name}]", "stonewall", f"rw={self.rw}", f"bs={format_bs(self.bs)}",
                 f"numjobs={self.numjobs}", f"iodepth={self.iodepth}"]
        if self.rw in ("randrw", "rw"):
            lines.append(f"rwmixread={self.rwmixread}")
        if self.runtime:
            lines += [f"runtime={self.runtime}", "time_based=1"]
        if self.loops != 1:
            lines.append(f"loops={self.loops}")
        if self.size:
            lines.append(f"size={self.size}")
        lines += [f"{k}={v}" if v != "" else k for k, v in self.extra]
        return lines


@dataclass(frozen=True)
class FioSettings:
    """Options every job of a run shares."""

    filename: str
    refill_buffers: bool = False
    extra: Tuple[Tuple[str, str], ...] = field(default_factory=tuple)

    def global_section(self) -> List[str]:
        lines = ["[global]", "ioengine=libaio", "direct=1", f"filename={self.filename}",
                 "group_reporting=1", "norandommap=1", "randrepeat=0",
                 # threads, not forked processes: one process to stop, and it dies with tkperf
                 "thread=1",
                 "percentile_list=" + ":".join(PERCENTILES)]
        if self.refill_buffers:
            lines.append("refill_buffers=1")
        lines += [f"{k}={v}" if v != "" else k for k, v in self.extra]
        return lines


def job_file(settings: FioSettings, jobs: Sequence[FioJob]) -> str:
    lines = settings.global_section()
    for job in jobs:
        lines.append("")
        lines += job.section()
    return "\n".join(lines) + "\n"


def parse_version(text: str) -> Tuple[int, int]:
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    if not m:
        raise ToolError(f"cannot tell fio's version from {text.strip()!r}")
    return int(m.group(1)), int(m.group(2))


class FioRunner:
    """Runs job files with the real fio and returns parsed workloads."""

    def __init__(self, settings: FioSettings, workdir: str, fio: str = "fio") -> None:
        self.settings = settings
        self.workdir = workdir
        self.fio = programs.require(fio)
        self.version = self.check_version()

    def check_version(self) -> str:
        try:
            out = programs.run([self.fio, "--version"], timeout=30, what="fio --version").stdout
        except (OSError, Exception) as exc:  # noqa: BLE001 - any failure means no usable fio
            raise ToolError(f"cannot run fio --version: {exc}") from exc
        version = parse_version(out)
        if version < MIN_FIO:
            raise ToolError(f"fio {version[0]}.{version[1]} is too old; tkperf needs fio >= 3.0")
        return out.strip()

    def _write_job_file(self, text: str) -> str:
        fd, path = tempfile.mkstemp(prefix=".tkperf-", suffix=".fio", dir=self.workdir)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        return path

    @contextlib.contextmanager
    def _process(self, job_text: str, what: str, flags: Sequence[str], **popen: object) -> Iterator[subprocess.Popen]:
        """fio on a job file of ``text``: logged, tracked, killed with its threads
        if anything goes wrong, job file removed afterwards."""
        log.info("fio job file for %s:\n%s", what, job_text)
        path = self._write_job_file(job_text)
        try:
            proc = programs.start([self.fio, "--output-format=json", *flags, path], **popen)
            try:
                yield proc
            except BaseException:
                programs.kill(proc)
                proc.wait()
                raise
            finally:
                programs.forget(proc)
        finally:
            os.unlink(path)

    def run(self, jobs: Sequence[FioJob], what: str,
            timeout: Optional[float] = None) -> Tuple[List[Workload], float]:
        """Run ``jobs`` back to back in one fio process; returns workloads and wall seconds."""
        planned = sum(j.planned_seconds for j in jobs)
        if timeout is None and planned:
            timeout = planned * HANG_FACTOR + HANG_MARGIN_S
        t0 = time.monotonic()
        with self._process(job_file(self.settings, jobs), what, (), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                programs.kill(proc)
                out, err = proc.communicate()
                raise FioError(f"fio hung in {what}: no result after {timeout:.0f} s "
                               f"(planned {planned:.0f} s); killed it", stderr=err) from None
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            raise FioError(f"fio failed in {what} (exit {proc.returncode}): {_last_line(err or out)}",
                           stderr=err)
        report = first_json_object(out)
        workloads = parse_jobs(report, {j.name: j.spec() for j in jobs})
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
               on_report: Callable[[dict], bool], timeout: float) -> None:
        """Run one long job printing a cumulative JSON report every ``interval_s``.

        ``on_report`` gets each report and returns True to stop the job early.
        fio is stopped (SIGTERM) when asked to, and killed when silent for
        ``HANG_FACTOR`` intervals plus the margin or when ``timeout`` passes.
        """
        silent_limit = interval_s * HANG_FACTOR + HANG_MARGIN_S
        buf = ""
        pos = 0
        stopped = False
        err_chunks: List[bytes] = []
        with self._process(job_file(self.settings, [job]), what, (f"--status-interval={interval_s}",),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            start = last = time.monotonic()
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
                    buf += chunk.decode("utf-8", "replace")
                    for obj, end in json_objects(buf, pos):
                        pos = end
                        if not stopped and isinstance(obj, dict) and on_report(obj):
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


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"
