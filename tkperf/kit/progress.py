"""Structured progress of a run, and an honest estimate of what is left.

The runner and the loop shapes tell a :class:`Progress` what happens (test
started, phase, round started and finished, interval, test finished); the
existing log lines of ``tkperf.progress`` are logged next to these calls,
unchanged.  A :class:`Progress` keeps the state and computes the remaining
time as a range (:meth:`Progress.eta`); whoever wants to show it (the
terminal renderers of :mod:`tkperf.cli.progress`) registers a listener with
:func:`add_listener` and is called after every event.  Nothing here prints.

The estimate is a range because a round loop stops at steady state: it
takes at least enough rounds to fill the window (steady state can come at
the earliest after ``window`` rounds in all, and never after a round that
was judged not steady without one more), and at most ``max_rounds``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Protocol, Sequence, Tuple

from tkperf.durations import duration
from tkperf.fio import live as fio_live
from tkperf.fio.live import LiveFigures
from tkperf.kit import writerate

#: Preconditioning speed assumed before a WIPC has been measured, for a
#: drive tkperf knows nothing of; a run starts from the dry run's rate
#: (:func:`tkperf.kit.writerate.bps`: an emulated SSD's model speed).
WIPC_RATE = writerate.DEFAULT.bps

#: A stream's ETA writes at the rate of this many last intervals.
RATE_INTERVALS = 5

Listener = Callable[["Progress", str], None]
_listeners: List[Listener] = []


def add_listener(fn: Listener) -> None:
    _listeners.append(fn)


def remove_listener(fn: Listener) -> None:
    if fn in _listeners:
        _listeners.remove(fn)


def rounds_left(done: int, window: int, max_rounds: int, steady: bool) -> Tuple[int, int]:
    """(fewest, most) rounds still to run after ``done`` completed rounds.

    Steady state needs ``window`` rounds in all, and a round judged not
    steady needs at least one more; there are never more than ``max_rounds``.
    """
    if steady or done >= max_rounds:
        return 0, 0
    most = max_rounds - done
    return min(max(window - done, 1), most), most


def round_range(done: int, window: int, max_rounds: int, steady: bool, per_round_s: float,
                running_s: Optional[float] = None) -> Tuple[float, float]:
    """Seconds left in a round loop: ``running_s`` is how long the round in
    progress (round ``done + 1``) has run, None between rounds."""
    if running_s is None:
        lo, hi = rounds_left(done, window, max_rounds, steady)
        return lo * per_round_s, hi * per_round_s
    rest = max(per_round_s - running_s, 0.0)
    lo = max(window - done - 1, 0)
    hi = max(max_rounds - done - 1, 0)
    return rest + lo * per_round_s, rest + hi * per_round_s


def stream_left(elapsed_s: float, limit_s: float, written: int = 0, stop_bytes: int = 0,
                rate_bps: float = 0.0) -> float:
    """Seconds left in a stream: its time limit or, with a bytes limit, the
    bytes still to write at the current rate, whichever comes first."""
    left = max(limit_s - elapsed_s, 0.0)
    if stop_bytes and rate_bps > 0:
        left = min(left, max(stop_bytes - written, 0) / rate_bps)
    return left


@dataclass
class PlannedTest:
    """What the estimate knows of a test before it runs."""

    key: str
    low_s: float
    high_s: float
    wipc_bytes: int = 0
    done: bool = False
    #: Its time is rounds of a planned length, which the rounds measured so
    #: far correct; a stream's time limit or a sweep's points are not corrected.
    rounds: bool = True


@dataclass
class Progress:
    """The state of a run as the engine reports it, and the ETA.

    ``clock`` is ``time.monotonic`` unless a test gives another.
    """

    window: int = 5
    max_rounds: int = 25
    clock: Callable[[], float] = time.monotonic
    tests: List[PlannedTest] = field(default_factory=list)
    started: float = 0.0
    key: str = ""
    index: int = 0
    phase: str = ""
    phase_since: float = 0.0
    kind: str = ""  # rounds, stream, once (sweep, phases), or "" before the shape
    round: int = 0  # the round in progress (0: none)
    done: int = 0  # rounds completed in this test
    per_round_s: float = 0.0
    planned_round_s: float = 0.0
    round_walls: List[float] = field(default_factory=list)
    values: List[float] = field(default_factory=list)
    label: str = ""
    steady: Any = None
    stream_limit_s: float = 0.0
    stream_bytes: int = 0
    stream_written: int = 0
    stream_rate: float = 0.0
    stream_marks: List[Tuple[float, int]] = field(default_factory=list)
    stream_iops: float = 0.0
    #: (written, clock) at the interval before the last: the rate is the last interval's
    stream_mark: Tuple[int, float] = (0, 0.0)
    once_s: float = 0.0
    once_since: float = 0.0
    #: Seconds planned after the round loop of the test running (a sweep, idle settings).
    after_rounds_s: float = 0.0
    wipc_rate: float = WIPC_RATE
    #: Rounds measured in this run against their plan: (planned s, measured s) summed.
    rounds_planned_s: float = 0.0
    rounds_measured_s: float = 0.0
    finished: bool = False
    #: The running workload's current figures (fio's status reports), or None.
    live: Optional[LiveFigures] = None

    # --- events ------------------------------------------------------------
    def _emit(self, event: str) -> None:
        for fn in list(_listeners):
            fn(self, event)

    def run_started(self, tests: Sequence[PlannedTest]) -> None:
        self.tests = list(tests)
        self.started = self.clock()
        self.wipc_rate = writerate.bps()  # the dry run's rate, until a WIPC is measured
        # fio reports its status every second only when someone shows it
        fio_live.set_sink(self.live_figures if _listeners else None)
        self._emit("run")

    def live_figures(self, figures: LiveFigures) -> None:
        """What fio measures right now (:mod:`tkperf.fio.live`)."""
        self.live = figures
        self._emit("live")

    def live_now(self, max_age_s: float = 20.0) -> Optional[LiveFigures]:
        """The live figures if fio reported them lately (none once a round's fio
        has ended; reports come every 1 to 8 s, :func:`tkperf.fio.live.interval_for`)."""
        got = self.live
        return got if got is not None and time.monotonic() - got.at <= max_age_s else None

    def test_started(self, key: str) -> None:
        self.key = key
        self.index = next((i for i, t in enumerate(self.tests, 1) if t.key == key), 0)
        self.kind, self.round, self.done, self.after_rounds_s = "", 0, 0, 0.0
        self.round_walls, self.values, self.steady, self.label = [], [], None, ""
        self.stream_written, self.stream_rate, self.stream_iops, self.stream_marks = 0, 0.0, 0.0, []
        self.live = None
        self.set_phase("start")
        self._emit("test")

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.phase_since = self.clock()

    def phase_started(self, phase: str) -> None:
        self.set_phase(phase)
        self._emit("phase")

    def wipc_finished(self, bytes_written: int, seconds: float) -> None:
        if seconds > 0 and bytes_written > 0:
            self.wipc_rate = bytes_written / seconds
        self._emit("wipc")

    def round_started(self, index: int, per_round_s: float, label: str = "") -> None:
        """Round ``index`` of the round loop; ``per_round_s`` is the plan's
        estimate of one round, used until a round has been measured."""
        self.kind = "rounds"
        self.label = label or self.label
        self.planned_round_s = per_round_s
        if not self.round_walls:  # the plan's round, as the rounds of earlier tests ran against theirs
            self.per_round_s = per_round_s * self.round_scale()
        self.round = index
        self.done = index - 1
        self.set_phase(f"round {index} of {self.max_rounds}")
        self._emit("round")

    def round_finished(self, index: int, value: float, steady: Any, wall_s: float) -> None:
        self.done = index
        self.round = 0
        self.values.append(value)
        self.steady = steady
        if wall_s > 0:
            self.round_walls.append(wall_s)
            self.per_round_s = sum(self.round_walls) / len(self.round_walls)
            if self.planned_round_s > 0:
                self.rounds_planned_s += self.planned_round_s
                self.rounds_measured_s += wall_s
        self._emit("round done")

    def stream_started(self, limit_s: float, stop_bytes: int = 0) -> None:
        self.kind = "stream"
        self.stream_limit_s, self.stream_bytes, self.stream_marks = float(limit_s), stop_bytes, []
        self.set_phase("interval 1")
        self.stream_mark = (0, self.phase_since)
        self._emit("stream")

    def interval(self, index: int, iops: float, written: int) -> None:
        """A stream's interval; the rate the ETA writes at is that of the last
        :data:`RATE_INTERVALS` intervals, so it follows a drive down its cliff."""
        now = self.clock()
        elapsed = now - self.phase_since
        self.stream_written, self.stream_iops = written, iops
        self.stream_marks = (self.stream_marks + [(now, written)])[-(RATE_INTERVALS + 1):]
        t0, w0 = self.stream_marks[0] if len(self.stream_marks) > 1 else (self.phase_since, 0)
        self.stream_rate = (written - w0) / (now - t0) if now > t0 else (written / elapsed if elapsed > 0 else 0.0)
        self.round = index
        self._emit("interval")

    def rounds_then(self, seconds: float) -> None:
        """The test's round loop is followed by ``seconds`` of other work
        (a sweep, idle settings): counted in the ETA until that starts."""
        self.after_rounds_s = max(float(seconds), 0.0)

    def once_started(self, phase: str, seconds: float) -> None:
        """A sweep or the phases: one pass planned to take ``seconds``."""
        self.after_rounds_s = 0.0
        if self.kind != "once":
            self.kind = "once"
            self.once_s = seconds
            self.once_since = self.clock()
        self.set_phase(phase)
        self._emit("phase")

    def test_finished(self, key: str, reason: str = "") -> None:
        for t in self.tests:
            if t.key == key:
                t.done = True
        self.kind, self.round, self.live = "", 0, None
        self.set_phase(f"finished ({reason})" if reason else "finished")
        self._emit("test done")

    def run_finished(self) -> None:
        self.finished = True
        self.live = None
        fio_live.set_sink(None)
        self._emit("end")

    # --- what it means ------------------------------------------------------
    def elapsed(self) -> float:
        return self.clock() - self.started if self.started else 0.0

    def current_left(self) -> Tuple[float, float]:
        """Seconds (fewest, most) left in the test now running."""
        now = self.clock()
        if self.kind == "rounds":
            running = now - self.phase_since if self.round else None
            lo, hi = round_range(self.done, self.window, self.max_rounds,
                                 bool(getattr(self.steady, "steady", False)), self.per_round_s, running)
            return lo + self.after_rounds_s, hi + self.after_rounds_s
        if self.kind == "stream":
            left = stream_left(now - self.phase_since, self.stream_limit_s, self.stream_written,
                               self.stream_bytes, self.stream_rate)
            return left, left
        if self.kind == "once":
            left = max(self.once_s - (now - self.once_since), 0.0)
            return left, left
        # purge, WIPC: the whole plan of this test is still ahead
        me = next((t for t in self.tests if t.key == self.key), None)
        if me is None or me.done:
            return 0.0, 0.0
        wipc = me.wipc_bytes / self.wipc_rate
        if self.phase.startswith("WIPC"):
            wipc = max(wipc - (now - self.phase_since), 0.0)
        k = self.round_scale() if me.rounds else 1.0
        return me.low_s * k + wipc, me.high_s * k + wipc

    def round_scale(self) -> float:
        """How long this run's rounds took against their plan (1.0 before
        any was measured): fio's start and stop, a slow drive's long
        rounds.  Later tests' round times are corrected by it."""
        if self.rounds_planned_s <= 0 or self.rounds_measured_s <= 0:
            return 1.0
        return self.rounds_measured_s / self.rounds_planned_s

    def later_left(self) -> Tuple[float, float]:
        """Seconds (fewest, most) of the tests not started yet: their rounds
        corrected by :meth:`round_scale`, their WIPC at the measured rate."""
        lo = hi = 0.0
        scale = self.round_scale()
        for t in self.tests:
            if t.done or t.key == self.key:
                continue
            wipc = t.wipc_bytes / self.wipc_rate
            k = scale if t.rounds else 1.0
            lo += t.low_s * k + wipc
            hi += t.high_s * k + wipc
        return lo, hi

    def eta(self) -> Tuple[float, float]:
        """Seconds (fewest, most) until the run ends, as far as can be told."""
        if self.finished:
            return 0.0, 0.0
        a, b = self.current_left() if self.key else (0.0, 0.0)
        c, d = self.later_left()
        return a + c, b + d

    def closeness(self) -> str:
        """How near the window is to steady: 'range 12.0% of 20%, slope 3.1% of 10%'."""
        s = self.steady
        avg = abs(getattr(s, "average", 0.0) or 0.0)
        if s is None or not avg or not hasattr(s, "range"):
            return ""
        n = len(getattr(s, "values", ()) or ())
        return (f"window {n}/{getattr(s, 'window', self.window)}: range {100 * s.range / avg:.1f}% of 20%, "
                f"slope {100 * s.slope_excursion / avg:.1f}% of 10%")


class HasProgress(Protocol):
    """Whoever runs a loop shape (:class:`tkperf.kit.context.RunContext`), as far as progress goes."""

    @property
    def progress(self) -> Progress: ...


def progress_of(ctx: HasProgress) -> Progress:
    """The run's structured progress (``ctx.progress``)."""
    return ctx.progress


def tracking_text(value: float) -> str:
    """A tracking value as the round lines and the panel show it: grouped,
    with as many decimals as a reader of a 10% band needs ('17,804',
    '79.7', '0.912')."""
    if value != value or abs(value) >= 1000:  # nan shows as itself
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"


def eta_text(lo: float, hi: float) -> str:
    """'ETA 2.3 h to 11.5 h' (or one figure when both ends agree)."""
    a, b = duration(lo, rough=True), duration(hi, rough=True)
    return f"ETA {a}" if a == b else f"ETA {a} to {b}"


def finish_clock(lo: float, hi: float, now: Optional[float] = None) -> str:
    """The finish as wall clock times: 'done 14:05 to 22:40'."""
    base = time.time() if now is None else now
    a = time.strftime("%H:%M", time.localtime(base + lo))
    b = time.strftime("%H:%M", time.localtime(base + hi))
    return f"done {a}" if a == b else f"done {a} to {b}"


# --- several runs at once (``tkperf ssd run DEV DEV ...``) ---------------------
# Each run is its own process; it sends :func:`snapshot` of its Progress to
# the parent, which keeps one :class:`RemoteRun` per target and shows them
# together (tkperf.cli.progress.CombinedPlain / CombinedLive).

def snapshot(prog: Progress) -> dict:
    """The state of ``prog`` in plain JSON values, for a process that shows several runs."""
    lo, hi = prog.eta() if prog.started else (0.0, 0.0)
    now = prog.live_now()
    return {"test": prog.key, "index": prog.index, "tests": len(prog.tests), "phase": prog.phase,
            "kind": prog.kind, "round": prog.round, "label": prog.label,
            "values": [float(v) for v in prog.values[-5:]],
            "steady": bool(getattr(prog.steady, "steady", False)), "near": prog.closeness(),
            "elapsed": prog.elapsed(), "eta": [lo, hi], "started": bool(prog.started),
            "finished": prog.finished, "live": now.as_dict() if now is not None else None}


@dataclass
class RemoteRun:
    """One of several runs as its last :func:`snapshot` (received at ``at``,
    on ``clock``) told it; ``exit_code`` is set once its process ended."""

    name: str
    device: str
    state: dict = field(default_factory=dict)
    at: float = 0.0
    exit_code: Optional[int] = None
    clock: Callable[[], float] = time.monotonic

    def update(self, state: dict) -> None:
        self.state = state
        self.at = self.clock()

    @property
    def ended(self) -> bool:
        return self.exit_code is not None

    def eta(self) -> Optional[Tuple[float, float]]:
        """Seconds (fewest, most) left, counted down since the snapshot;
        None while the run has not said (it has not planned its tests yet)."""
        if self.ended or self.state.get("finished"):
            return 0.0, 0.0
        if not self.state.get("started"):
            return None
        gone = self.clock() - self.at
        lo, hi = self.state.get("eta", (0.0, 0.0))
        return max(float(lo) - gone, 0.0), max(float(hi) - gone, 0.0)

    def elapsed(self) -> float:
        if not self.state.get("started"):
            return 0.0
        return float(self.state.get("elapsed", 0.0)) + (0.0 if self.ended else self.clock() - self.at)


def combined_eta(runs: Sequence[RemoteRun]) -> Optional[Tuple[float, float]]:
    """When the last of ``runs`` ends, as a range: the largest of their
    fewest and of their most seconds left; None while any has not said."""
    etas = [r.eta() for r in runs]
    if not etas or any(e is None for e in etas):
        return None
    return max(e[0] for e in etas if e is not None), max(e[1] for e in etas if e is not None)
