"""Several independent runs at once: ``tkperf ssd run DEV DEV ...``.

Every target runs as its own process, ``python -m tkperf ssd run DEV
--request FILE`` (FILE: its :class:`~tkperf.engine.request.RunRequest` as
JSON), so that its fio children, its log, its device lock
and its signal handling are its own, exactly as when it runs alone.
:class:`ParallelRuns` starts them, reads what they print and what they send
on their progress channel, forwards a stop signal to each of them exactly
once and collects an :class:`Outcome` per target.  Nothing here prints: a
:class:`Listener` is told what happens.

A child learns that it is one of several from two environment variables
(read and removed by :class:`tkperf.engine.child.ChildHooks`):

``TKPERF_PROGRESS_FD``
    a pipe's file descriptor: the child writes one JSON object a line,
    ``{"t": "state", ...}`` (:func:`tkperf.kit.progress.snapshot`),
    ``{"t": "msg", "text": ...}`` (its progress lines), when an error
    stopped it ``{"t": "error", "text": ..., "exit": N}`` (why, as the
    target's reason), and at its end
    ``{"t": "end", "cpu_self_s": ..., "cpu_children_s": ...}``.  What it
    prints is shown as output, never read for meaning.
``TKPERF_HOST_SHARING``
    ``{"runs": N, "host_cpus": C, "targets": [{"name", "device"}, ...]}``,
    kept in the result as ``facts["host_sharing"]``.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import programs, store
from tkperf.errors import EXIT_NO_RESULT, EXIT_OK
from tkperf.remote import fio_host
from tkperf.target.identity import split_target

PROGRESS_FD_ENV = "TKPERF_PROGRESS_FD"
HOST_SHARING_ENV = "TKPERF_HOST_SHARING"
#: The combined ``--json-summary`` document of several targets (docs/parallel.rst).
SUMMARY_SCHEMA = "tkperf-multi-summary"
SUMMARY_VERSION = 1
#: How often the listener's ``tick`` runs while the children run (seconds).
TICK_S = 0.5
#: The signals a parallel run forwards to its children (once each).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class Target(store.RunFiles):
    """One child run: the device argument as given, its run name and
    output directory, the child's command line and where it writes its
    ``--json-summary``."""

    name: str
    device: str
    outdir: str
    argv: Tuple[str, ...]
    summary_path: str


@dataclass
class Outcome:
    """What became of one target.  ``exit_code`` is the child's (128 + N
    when signal N ended it; None while it runs or if it never started;
    14 when it exited 0 without a complete run, :func:`judge`);
    ``cpu_self_s`` is the child's own CPU time (tkperf, not fio),
    ``cpu_children_s`` that of the programs it ran (fio above all); both
    None when the child could not say.  ``error`` is why it stopped, as
    its channel said (or its exit code or signal when it could not say),
    ``summary`` its ``--json-summary`` document (None if it wrote none)."""

    target: Target
    exit_code: Optional[int] = None
    started: float = 0.0
    wall_s: float = 0.0
    cpu_self_s: Optional[float] = None
    cpu_children_s: Optional[float] = None
    error: str = ""
    summary: Optional[dict] = None
    proc: Optional[subprocess.Popen] = field(default=None, repr=False)

    @property
    def status(self) -> str:
        """The run's status as its summary says, or why there is none."""
        if self.summary is not None:
            return str(self.summary.get("status", "unknown"))
        if self.exit_code is None:
            return "not started"
        return "no result"


class Listener:
    """What a :class:`ParallelRuns` tells as it goes; every method may be left as is."""

    def started(self, outcome: Outcome) -> None:
        """The child of ``outcome`` runs."""

    def state(self, outcome: Outcome, state: dict) -> None:
        """The child sent a progress snapshot."""

    def message(self, outcome: Outcome, text: str) -> None:
        """The child sent one of its progress lines."""

    def output(self, outcome: Outcome, line: str, stream: str) -> None:
        """The child printed ``line`` on ``stream`` ("out" or "err")."""

    def ended(self, outcome: Outcome) -> None:
        """The child exited; ``outcome`` is complete."""

    def signalled(self, signum: int) -> None:
        """A stop signal arrived and was forwarded to every running child."""

    def tick(self) -> None:
        """Called every :data:`TICK_S` while children run."""


def worst_exit(codes: Sequence[int]) -> int:
    """The exit code of several runs: the highest of theirs (0 if all were 0).

    The order is the codes' numbers (docs/exit-codes.rst): a stop by a
    signal (129-143) outranks an internal error (70), which outranks the
    errors of one kind (2-14); 0 only when every target exited 0 with a
    complete run (:func:`judge` gives one that exited 0 without it 14).
    Targets that all failed alike give their code."""
    return max(codes, default=0)


def exit_code_of_returncode(returncode: int) -> int:
    """Popen's returncode as a shell would show it: -N (killed by signal N) is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _host_of(target: Target) -> str:
    where = split_target(target.device)
    return fio_host(where[0]) if where else ""


def host_sharing(targets: Sequence[Target], of: Optional[Target] = None) -> dict:
    """What a child records in ``facts["host_sharing"]``: the runs whose fio
    works on the same host as ``of``'s (this one, or the same test host)."""
    here = "" if of is None else _host_of(of)
    same = [t for t in targets if of is None or _host_of(t) == here]
    return {"runs": len(same), "host_cpus": (os.cpu_count() or 0) if not here else 0,
            **({"host": here} if here else {}),
            "targets": [{"name": t.name, "device": t.device} for t in same]}


def merge_sharing(old: object, new: dict) -> dict:
    """A resumed run that shared the host again: the most runs that ever
    shared it, the targets of every session (by name, first seen first)."""
    if not isinstance(old, dict):
        return new
    seen = [t for t in old.get("targets", []) if isinstance(t, dict)]
    names = {t.get("name") for t in seen}
    return {"runs": max(int(old.get("runs", 0) or 0), int(new["runs"])),
            "host_cpus": new.get("host_cpus", old.get("host_cpus", 0)),
            **({"host": new["host"]} if new.get("host") else {}),
            "targets": seen + [t for t in new["targets"] if t.get("name") not in names]}


def parse_sharing(text: str) -> dict:
    """The value of ``TKPERF_HOST_SHARING``; ValueError says what is wrong."""
    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get("runs"), int) or value["runs"] < 1:
        raise ValueError('expected a JSON object {"runs": N, "targets": [...]} with N >= 1')
    targets = value.get("targets", [])
    if not isinstance(targets, list) or not all(isinstance(t, dict) for t in targets):
        raise ValueError('"targets" must be a list of objects')
    return {"runs": value["runs"], "host_cpus": int(value.get("host_cpus", 0) or 0),
            **({"host": str(value["host"])} if value.get("host") else {}),
            "targets": [{"name": str(t.get("name", "")), "device": str(t.get("device", ""))}
                        for t in targets]}


class ParallelRuns:
    """Run every target's child at once and wait for all of them."""

    def __init__(self, targets: Sequence[Target], listener: Optional[Listener] = None) -> None:
        self.outcomes = [Outcome(t) for t in targets]
        self.listener = listener or Listener()
        self.signum: Optional[int] = None
        self._untold = False
        self._signalled: set = set()
        self._sel = selectors.DefaultSelector()
        self._open: Dict[int, int] = {}  # outcome index -> pipes not at EOF yet
        self._buffers: Dict[int, bytes] = {}

    # --- signals -------------------------------------------------------------
    def _on_signal(self, signum: int, frame: object) -> None:
        """Forward the first stop signal to every running child (each stops
        as if it ran alone: saves, writes its report, exits 128 + N); later
        ones are ignored, as a single run ignores them while it cleans up."""
        if self.signum is not None:
            return
        self.signum = signum
        for o in self.outcomes:
            self._forward(o)
        # The listener is told from the loop: a signal handler must not
        # write to a stream it may have interrupted.
        self._untold = True

    def _forward(self, o: Outcome) -> None:
        """The stop signal to ``o``'s child, once (also to one that started
        while the signal was being handled)."""
        if self.signum is not None and o.proc is not None and id(o) not in self._signalled \
                and o.proc.poll() is None:
            self._signalled.add(id(o))
            programs.kill(o.proc, self.signum)

    # --- the run ---------------------------------------------------------------
    def run(self) -> List[Outcome]:
        """Start every child, show what they say, wait for all; the outcomes
        in the targets' order.  ``self.signum`` says if a signal stopped them."""
        previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
        for s in STOP_SIGNALS:
            signal.signal(s, self._on_signal)
        try:
            for i, o in enumerate(self.outcomes):
                if self.signum is not None:
                    o.exit_code = 128 + self.signum  # stopped before it began
                    o.error = "stopped before it started"
                    continue
                self._start(i, o)
                self._forward(o)
            while self._open:
                for key, _ in self._sel.select(TICK_S):
                    self._read(key)
                self._tell()
                self.listener.tick()
            self._tell()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            self._stop_all()
        return self.outcomes

    def _tell(self) -> None:
        if self._untold and self.signum is not None:
            self._untold = False
            self.listener.signalled(self.signum)

    def _start(self, i: int, o: Outcome) -> None:
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env[PROGRESS_FD_ENV] = str(write_fd)
        env[HOST_SHARING_ENV] = json.dumps(host_sharing([x.target for x in self.outcomes], o.target))
        try:
            o.started = time.monotonic()
            o.proc = programs.start(list(o.target.argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(write_fd,), env=env)
        except OSError as exc:
            os.close(read_fd)
            o.exit_code, o.error = 127, f"cannot start tkperf: {exc.strerror or exc}"
            self.listener.ended(o)
            return
        finally:
            os.close(write_fd)  # the child holds it now: EOF when the child ends
        for fileobj, kind in ((o.proc.stdout, "out"), (o.proc.stderr, "err"), (read_fd, "chan")):
            if fileobj is None:
                continue  # not a pipe (never: both are PIPE)
            fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
            self._sel.register(fd, selectors.EVENT_READ, (i, kind))
        self._open[i] = 3
        self.listener.started(o)

    def _read(self, key: selectors.SelectorKey) -> None:
        i, kind = key.data
        fd = key.fd
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            chunk = b""
        buf = self._buffers.get(fd, b"") + chunk
        lines = buf.split(b"\n")
        self._buffers[fd] = lines.pop() if chunk else b""
        if not chunk and lines[-1:] == [b""]:
            lines.pop()
        for raw in lines:
            self._line(self.outcomes[i], kind, raw.decode("utf-8", "replace").rstrip("\r"))
        if not chunk:
            self._sel.unregister(fd)
            if kind == "chan":
                os.close(fd)
            self._open[i] -= 1
            if self._open[i] == 0:
                del self._open[i]
                self._finish(self.outcomes[i])

    def _line(self, o: Outcome, kind: str, line: str) -> None:
        if kind == "chan":
            try:
                msg = json.loads(line)
            except ValueError:
                return  # a torn line (the child was killed mid-write): nothing to show
            if not isinstance(msg, dict):
                return
            if msg.get("t") == "state" and isinstance(msg.get("state"), dict):
                self.listener.state(o, msg["state"])
            elif msg.get("t") == "msg":
                self.listener.message(o, str(msg.get("text", "")))
            elif msg.get("t") == "error":
                o.error = str(msg.get("text", ""))
            elif msg.get("t") == "end":
                o.cpu_self_s = _number(msg.get("cpu_self_s"))
                o.cpu_children_s = _number(msg.get("cpu_children_s"))
            return
        self.listener.output(o, line, kind)

    def _finish(self, o: Outcome) -> None:
        assert o.proc is not None
        o.proc.wait()
        programs.forget(o.proc)
        o.wall_s = time.monotonic() - o.started
        o.exit_code = exit_code_of_returncode(o.proc.returncode)
        if o.exit_code != 0 and not o.error:
            o.error = died_reason(o.proc.returncode)
        o.summary = read_summary(o.target.summary_path)
        judge(o)
        self.listener.ended(o)

    def _stop_all(self) -> None:
        """Only on the way out of an exception (the loop ends when every child
        has): stop the children still running, as a single run stops fio."""
        for o in self.outcomes:
            if o.proc is not None and o.proc.poll() is None:
                programs.kill(o.proc, signal.SIGTERM)
                try:
                    o.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    programs.kill(o.proc)
                    o.proc.wait()
                programs.forget(o.proc)
        for key in list(self._sel.get_map().values()):
            self._sel.unregister(key.fd)
            if key.data[1] == "chan":
                os.close(key.fd)
        self._sel.close()


def judge(o: Outcome) -> None:
    """What the child achieved, not only how it exited: one that exited 0
    without a complete run in its ``--json-summary`` (none written, or a
    run that is not complete) produced nothing it was asked for; its code
    becomes :data:`~tkperf.errors.EXIT_NO_RESULT` and its error says why."""
    if o.exit_code != EXIT_OK or o.status == "complete":
        return
    o.exit_code = EXIT_NO_RESULT
    o.error = ("its process exited 0 without a result" if o.summary is None
               else f"its process exited 0, but its run is {o.status}")


def died_reason(returncode: int) -> str:
    """Why a child stopped that did not say (killed, or died before its channel)."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


def _number(value: object) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_summary(path: str) -> Optional[dict]:
    """A child's ``--json-summary`` document, None if it wrote none (it stopped
    before its run existed) or it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def summary_document(command: str, outcomes: Sequence[Outcome], exit_code: int,
                     comparison: Sequence[str], comparison_note: str, signum: Optional[int],
                     wall_s: float, cpu_s: float) -> dict:
    """The combined ``--json-summary`` of several targets (docs/parallel.rst)."""
    return {
        "schema": SUMMARY_SCHEMA, "version": SUMMARY_VERSION, "command": command,
        "host_sharing": host_sharing([o.target for o in outcomes]),
        "stopped_by": signal.Signals(signum).name if signum else None,
        "wall_s": wall_s, "cpu_s": cpu_s,
        "targets": [{"name": o.target.name, "device": o.target.device, "host": _host_of(o.target),
                     "outdir": o.target.outdir,
                     "result": o.target.xml_path, "log": o.target.log_path, "status": o.status,
                     "exit_code": o.exit_code, "error": o.error, "wall_s": o.wall_s,
                     "cpu": {"tkperf_s": o.cpu_self_s, "programs_s": o.cpu_children_s},
                     "summary": o.summary} for o in outcomes],
        "comparison": {"reports": list(comparison), "note": comparison_note},
        "exit_code": exit_code,
    }
