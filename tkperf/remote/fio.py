"""fio's client/server mode: the workloads of a remote target.

:class:`RemoteFio` sends every job file with ``fio --client=HOST,PORT`` to
the ``fio --server`` on the test host and reads the client's JSON, whose
jobs are under ``client_stats`` (one entry per job and per host; with
several hosts an ``All clients`` sum, which has no histogram bins).

fio's protocol is versioned and its client and server must be the same
release, so :meth:`RemoteFio.check_server` asks the server first, with a
job of fio's ``null`` engine that touches no device, and names both
versions when they differ.

A stream's interval reports reach fio's client as they happen but it
prints them only when the job ends (fio 3.33, any output format), so
:meth:`RemoteFio.stream` hands them over then, in order, and a stream that
stops on what it measures bounds its fio job as well
(:attr:`~tkperf.fio.backend.FioBackend.live_intervals` is False).
"""
from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import tempfile
import time
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from tkperf import programs
from tkperf.errors import FioError, RemoteError
from tkperf.fio.backend import LocalFio, _last_line
from tkperf.fio.checks import check_job
from tkperf.fio.intervals import REPORT_AT
from tkperf.fio.jobs import FioJob, FioSettings, job_file
from tkperf.fio.output import first_json_object
from tkperf.model.results import Workload
from tkperf.remote import FIO_PORT, fio_host

ALL_CLIENTS = "All clients"
PROBE_JOB = "[tkperf-probe]\nioengine=null\nsize=4k\nbs=4k\nrw=read\n"
PROBE_TIMEOUT_S = 30.0


def client_jobs(report: dict, host: str = "") -> dict:
    """``report`` with its ``client_stats`` entries as ``jobs`` (without the
    ``All clients`` sum, and only ``host``'s when given), so the local
    parser reads it."""
    stats = report.get("client_stats")
    if not isinstance(stats, list):
        raise FioError("fio's client report has no client_stats")
    out = dict(report)
    out["jobs"] = [e for e in stats if isinstance(e, dict) and e.get("jobname") != ALL_CLIENTS
                   and (not host or e.get("hostname", host) == host)]
    return out


def server_version(probe_output: str) -> str:
    """The server's fio release from the client's probe line
    (``hostname=h, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1``)."""
    m = re.search(r"\bfio=(fio-[^,\s]+)", probe_output)
    return m.group(1) if m else ""


class RemoteFio(LocalFio):
    """fio's client on this host, the server on ``host``:``port``."""

    live_intervals = False

    def __init__(self, settings: FioSettings, workdir: str, host: str, port: int = FIO_PORT,
                 fio: str = "fio", session: object = None) -> None:
        self.host, self.port = fio_host(host), int(port)
        #: The run's SSH session to the host (its ``lost`` says why it ended);
        #: when it ends under a job, the job is stopped at once.
        self.session = session
        self._current: Optional[subprocess.Popen] = None
        if session is not None and hasattr(session, "on_lost"):
            session.on_lost.append(self.stop)
        super().__init__(settings, workdir, fio)
        self.server = self.check_server()

    @property
    def where(self) -> str:
        return f"{self.host} port {self.port}"

    def command(self, flags: Sequence[str], job_path: str) -> List[str]:
        return [self.fio, f"--client={self.host},{self.port}", *flags, job_path]

    def jobs_report(self, report: dict) -> dict:
        return client_jobs(report, self.host)

    @contextlib.contextmanager
    def _process(self, job_text: str, what: str, flags: Sequence[str], **popen: object) -> Iterator[subprocess.Popen]:
        with super()._process(job_text, what, flags, **popen) as proc:
            self._current = proc
            try:
                yield proc
            finally:
                self._current = None

    def stop(self) -> None:
        """Stop the job under way (from another thread): fio's client then ends
        the job on the server too."""
        proc = self._current
        if proc is not None:
            programs.kill(proc, signal.SIGTERM)

    def check_server(self) -> str:
        """The server's version; RemoteError when none answers or it differs."""
        mine = self.version.split()[0] if self.version else ""
        out, err = self._probe_aside()
        theirs = server_version(out)
        if "failed to resolve" in err:
            raise RemoteError(f"fio cannot find host {self.host} ({_last_line(err.split('failed adding')[0])}): "
                              "fio's client connects to the name itself, so give a name or address "
                              "the resolver knows, not only ssh's configuration")
        if "connect" in err and not theirs:
            raise RemoteError(f"no fio server answers on {self.where} ({_last_line(err)}); "
                              f"start one there: tkperf server {self.host} --start")
        if not theirs:
            raise RemoteError(f"the fio server on {self.where} refused {mine}'s connection: fio's "
                              f"client and server must be the same release, and a server of another "
                              f"one drops the client ({_last_line(err or out)})")
        if theirs != mine:
            raise RemoteError(f"the fio server on {self.where} is {theirs}, this host's fio is "
                              f"{mine}: fio's client and server must be the same release")
        return theirs

    def _probe_aside(self) -> Tuple[str, str]:
        """The probe's output, its job file in a folder of its own (nothing
        is written where the run's results go)."""
        workdir = self.workdir
        with tempfile.TemporaryDirectory(prefix="tkperf-probe-") as tmp:
            self.workdir = tmp
            try:
                return self._probe()
            finally:
                self.workdir = workdir

    def answers(self) -> bool:
        """Whether a fio server still answers on the host and port (a probe,
        at most :data:`PROBE_TIMEOUT_S`): after a failed job, it tells a
        server that went away from a job that failed, whatever fio's client
        printed."""
        try:
            out, _ = self._probe_aside()
        except (RemoteError, FioError, OSError):
            return False
        return bool(server_version(out))

    def _probe(self) -> Tuple[str, str]:
        with self._process(PROBE_JOB, f"probe of the fio server on {self.where}",
                           ("--output-format=normal",), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) as proc:
            try:
                return proc.communicate(timeout=PROBE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                programs.kill(proc)
                proc.communicate()
                raise RemoteError(f"the fio server on {self.where} did not answer within "
                                  f"{PROBE_TIMEOUT_S:.0f} s") from None

    def run(self, jobs: Sequence[FioJob], what: str, timeout: Optional[float] = None,
            histograms: bool = False) -> Tuple[List[Workload], float]:
        try:
            got = super().run(jobs, what, timeout, histograms)
        except FioError:
            self._check_session(what)
            raise
        self._check_session(what)  # a client stopped under it still reports (zeros), with exit 0
        return got

    def _check_session(self, what: str) -> None:
        lost = getattr(self.session, "lost", "")
        if lost:
            raise RemoteError(f"{lost}; fio was stopped in {what}") from None

    def failure_line(self, err: str, out: str) -> str:
        """Why a job failed: when no fio server answers a probe any more, that
        its server or the connection to it went away (fio's client may exit
        without a word then); else fio's own line.  fio's client says
        ``client: host=H disconnected`` when it notices."""
        line = super().failure_line(err, out)
        if not self.answers():
            return f"{line}: the fio server on {self.where} or the connection to it went away (no server answers)"
        for said in (err + "\n" + out).splitlines():
            if "disconnected" in said or "connect:" in said or "connection" in said.lower():
                return f"{said.strip()}: the fio server on {self.where} or the connection to it went away"
        return line

    def stream(self, job: FioJob, interval_s: int, what: str,
               on_report: Callable[[dict], bool], timeout: float, histograms: bool = False) -> None:
        """Run the job to its end, then hand over its interval reports in order
        (``on_report`` returning True stops the hand-over: fio's client prints
        them only when the job ends)."""
        t0 = time.monotonic()
        flags = (f"--status-interval={interval_s}",) + (("--output-format=json+",) if histograms else ())
        with self._process(job_file(self.settings, [job]), what, flags,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                programs.kill(proc)
                out, err = proc.communicate()
                raise FioError(f"fio hung in {what}: no end after {timeout:.0f} s; killed it",
                               stderr=err) from None
        if proc.returncode != 0:
            self._check_session(what)
            raise FioError(f"fio failed in {what} (exit {proc.returncode}): {self.failure_line(err, out)}",
                           stderr=err)
        self._check_session(what)
        report = client_jobs(first_json_object(out), self.host)
        for entry in report["jobs"]:
            if entry.get("jobname") != job.name:
                continue
            check_job(entry, what)  # the same checks as the local fio's reports
            ms = float(entry.get("job_runtime") or 0.0)
            if on_report({"jobs": [entry], REPORT_AT: t0 + ms / 1000.0}):
                break
