"""``replay --replay exact``: the captured I/Os through fio's iolog replay.

The capture's iolog (packed, or fio iolog version 3; beside its XML) is checked
against its capture when the run is planned and copied at run time into a
private temporary folder with its addresses mapped onto the target's range
and its flushes and discards kept (:mod:`.exactlog`), then replayed by one
fio job (``read_iolog``, read a part at a time: ``read_iolog_chunked``)
with the capture's own timing: every captured millisecond is held by a
``wait`` until its time since fio started, so fio issues every I/O in its
captured millisecond and a late fio catches up instead of adding its
delays up, and the replay asks the drive for the capture's IOPS.  The
job's queue depth is the capture's peak in-flight count
(:func:`.exactlog.peak_in_flight`), so the drive never has more I/Os
outstanding than the capture had.

How it kept the timing is measured from fio's own submission log: the
reads and writes fio issued within each of the capture's steps against
those the capture issued in it (:func:`.exactlog.timing`), stored with the
furthest and the 99th percentile of how far fio fell behind; the verdict
names every step whose replayed I/Os are off from the captured ones by
more than :data:`TOLERANCE` of them, beyond the captured I/Os within
:data:`.exactlog.EDGE_US` of its edges (:func:`timing_verdicts`).

Its queue depth and response time are measured the way the capture
measures them: the target traced at the block tracepoints around the run
(:mod:`.blockstats`), its data I/Os issue to completion, over the whole run
and in each captured step's window of the capture's time (the recording's
clock set against the capture's by its first I/Os,
:func:`tkperf.rwsw.replaytrace.stepped`); the verdict judges both against
the capture's (:func:`step_verdicts`), but for the steps the capture lost
trace events in, whose captured figures miss them.  fio's own latency is not that: while it
waits to issue the next I/O at its captured time fio does not reap the
completed ones, so their latency grows with the job's queue depth; it is
shown beside, named as fio's.  The mapped copy is deleted afterwards.  fio
on a test host cannot read the copy, so an exact replay runs on this
host's targets only.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import List, Optional, Sequence, Tuple

from tkperf.api import FioJob, Round, TestRun, UsageError
from tkperf.pts import Estimate, Shape, duration_rough, stored
from tkperf.rwsw.iolog import check_readable as check_iolog
from tkperf.rwsw.iolog import iolog_path
from tkperf.rwsw.iolog import scan as scan_iolog
from tkperf.rwsw.model import Capture
from tkperf.rwsw.replaytrace import Anchor as TraceAnchor
from tkperf.testtypes.realworld import blockstats, exactlog
from tkperf.testtypes.realworld.delivered import BLOCK, EXACT_LABEL, figures_off, not_judged, touched

LABEL = EXACT_LABEL
progress = logging.getLogger("tkperf.progress")
#: A step whose replayed reads and writes are off from the captured ones by
#: more than this share of them (beyond the captured I/Os at its edges) is
#: named in the verdict.  Measured (benchmarks/exact_timing.py, 2 shared
#: cores at load 5 to 10): with the waits, steps of 2,000 I/Os or more at
#: 0.99x to 1.05x their captured count, light steps after a busy one up to
#: 1.75x within their edges, none named; the pgbench example 0.96x to
#: 1.03x.  fio's own delays added up gave 0.01x to 61x.
TOLERANCE = 0.10


def capture_iolog(capture_path: str, cap: Capture) -> str:
    """The capture's iolog file, which must exist; else one line (exit 2)."""
    path = iolog_path(capture_path, cap.iolog)
    if path is None:
        raise UsageError(f"--replay exact: the capture {os.path.basename(capture_path)} has no iolog "
                         "(its I/Os were not kept); use --replay steps")
    if not os.path.lexists(path):
        raise UsageError(f"--replay exact: the capture's iolog {cap.iolog} is not beside "
                         f"{os.path.basename(capture_path)}")
    check_iolog(path)  # a planted link or FIFO: one line, exit 7
    return path


def checked(capture_path: str, cap: Capture) -> Tuple[str, exactlog.Checked]:
    """The capture's iolog, its format checked and then checked against the
    capture (one line, exit 7, at the first disagreement)."""
    log = capture_iolog(capture_path, cap)
    found = scan_iolog(log)  # a corrupt iolog is refused here, before the purge (exit 7)
    if not found.ios:
        raise UsageError(f"--replay exact: the capture's iolog {cap.iolog} holds no reads or writes")
    return log, exactlog.check(log, cap)


def job(path: str, depth: int, rwmixread: int, largest: int, issued: str) -> FioJob:
    """The replay's fio job: the mapped copy read a part at a time, fio's
    submission log (``issued``: its prefix) written for the timing."""
    return FioJob(name="exact-replay", rw="randrw", bs=max(largest, 512), rwmixread=rwmixread, iodepth=depth,
                  extra=(("read_iolog", path), ("read_iolog_chunked", "1"), ("write_lat_log", issued)))


class StepTicker:
    """One progress line as an exact replay reaches each captured step's time (one fio run holds
    them all, so without it a long replay said nothing from its start to its end, off a terminal
    too): ``lead`` s after it starts, then at every step's start since."""

    def __init__(self, key: str, steps: Sequence[Tuple[float, float]], lead: float) -> None:
        self.key, self.steps, self.lead = key, tuple(steps), lead
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="tkperf-exact-steps", daemon=True)
        self.began = time.monotonic()
        self.thread.start()

    def _tick(self) -> None:
        for k, (start, _) in enumerate(self.steps, 1):
            if self.done.wait(max(0.0, self.began + self.lead + start - time.monotonic())):
                return
            progress.info("[%s] exact replay: step %d of %d of the capture's time (from %.1f s)", self.key, k,
                          len(self.steps), start)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(5.0)


@dataclass(frozen=True)
class ExactReplay(Shape):
    """One fio job replaying the mapped iolog; recorded as round 1, with the
    target's block-layer counters around it (``block.1.*``)."""

    log: str
    span: int
    iodepth: int
    #: The capture's steps (start s, duration s), the windows of the timing.
    steps: Tuple[Tuple[float, float], ...] = ()

    def run(self, ctx, plan, test: TestRun) -> None:
        if getattr(ctx.fio, "host", None):
            raise UsageError("--replay exact replays through fio on this host: not on a test host's target")
        target = ctx.fio.settings.filename
        meter = blockstats.Meter(target)
        folder = tempfile.mkdtemp(prefix="tkperf-replay-")
        try:
            mapped = os.path.join(folder, "mapped.iolog")
            stamps = array("q")  # 8 bytes an I/O
            with open(mapped, "w", encoding="ascii") as fh:
                m = exactlog.write_mapped(self.log, fh, target, self.span, stamps)
            share = round(100.0 * m.reads / m.ios) if m.ios else 0
            started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
            before = meter.start()
            issued = os.path.join(folder, "issued")
            progress.info("[%s] exact replay: %s reads and writes, %s flushes, about %s of the capture's time",
                          plan.key, f"{m.ios:,}", f"{m.flushes:,}", duration_rough(m.last_us / 1e6))
            ticker = StepTicker(plan.key, self.steps, exactlog.LEAD_MS / 1000.0)
            try:
                workloads, wall = ctx.fio.run([job(mapped, self.iodepth, share, m.largest, issued)],
                                              what=f"{plan.key} exact replay",
                                              timeout=m.last_us / 1e6 * 3.0 + exactlog.LEAD_MS / 1000.0 + 300.0)
            finally:
                ticker.stop()
            meter.stop(test.data, 1, before, self.anchor(stamps))
            times = exactlog.issued_ms(issued)
            timing = exactlog.timing(stamps, times, self.steps) if times is not None else None
            del stamps
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
        test.rounds[:] = [Round(index=1, started=started, wall_s=wall, fio_s=fio_s, workloads=tuple(workloads))]
        test.data.update({"phase.1": LABEL, "exact.reads": str(m.reads), "exact.writes": str(m.writes),
                          "exact.flushes": str(m.flushes), "exact.discards": str(m.discards),
                          "exact.moved": str(m.moved), "exact.dropped": str(m.dropped), "exact.span": str(m.span),
                          "exact.length_us": str(m.last_us), "exact.iodepth": str(self.iodepth),
                          "exact.timing": "measured" if timing is not None else "unmeasured"})
        if timing is not None:
            test.data.update({"exact.lag_max_us": str(timing.lag_max_us), "exact.lag_p99_us": str(timing.lag_p99_us),
                              "exact.zero_us": str(timing.zero_us)})
            for n, st in enumerate(timing.steps, 1):
                test.data.update({f"exact.step.{n}.captured": str(st.captured),
                                  f"exact.step.{n}.replayed": str(st.replayed), f"exact.step.{n}.edge": str(st.edge)})
        ctx.save()
        test.stop_reason = "capture replayed"
        progress.info("[%s] exact replay done: %s I/Os issued in %.1f s%s", plan.key,
                      f"{sum(w.read.ios + w.write.ios for w in workloads):,}", replayed_s(test),
                      f", up to {timing.lag_max_us / 1e6:,.3f} s behind the captured timing" if timing else "")

    def anchor(self, stamps) -> Optional[TraceAnchor]:
        """How the replay's recording is cut into the capture's steps (None: no steps known)."""
        if not self.steps:
            return None
        return TraceAnchor(stamps, self.steps[0][1], self.steps[-1][0] + self.steps[-1][1])

    def largest(self) -> int:
        """The longest I/O of the log (fio's buffers must hold it)."""
        return scan_iolog(self.log).largest

    def estimate(self, opts, capacity: int) -> Estimate:
        m = scan_iolog(self.log)
        seconds = m.last_us / 1e6
        shown = f"<{os.path.basename(self.log)} mapped onto the target at run time>"
        return Estimate((f"# the capture's {m.ios:,} I/Os ({m.reads:,} reads, {m.writes:,} writes) replayed "
                         f"with their timing, about {seconds:.0f} s, addresses mapped onto the target's range, "
                         f"at most {self.iodepth} outstanding (the capture's peak in flight)",),
                        (job(shown, self.iodepth, round(100.0 * m.reads / max(1, m.ios)), m.largest,
                             "<fio's submission log, in the same temporary folder>"),),
                        seconds + exactlog.LEAD_MS / 1000.0, seconds * 1.5 + 5)


def replayed_s(test: TestRun) -> float:
    """The exact replay's length (s): fio's runtime less its lead before the
    capture's time 0 (measured, ``exact.zero_us``; else the lead asked for,
    for a result of a replay with waits; none for an older one)."""
    took = max((w.runtime_ms for w in test.rounds[0].workloads), default=0) / 1000.0 if test.rounds else 0.0
    if "exact.zero_us" in test.data:
        took -= stored.whole(test, "exact.zero_us") / 1e6
    elif "exact.timing" in test.data:
        took -= exactlog.LEAD_MS / 1000.0
    return max(0.0, took)


def timing_verdicts(test: TestRun) -> List[str]:
    """Every step of an exact replay whose replayed reads and writes are off
    from the captured ones (fio's submission log, the capture's iolog) by
    more than :data:`TOLERANCE` of them, beyond the captured I/Os at its
    edges; a replay whose timing was not measured says so."""
    if "exact.length_us" not in test.data:
        return []
    if test.data.get("exact.timing") != "measured":
        return ["the exact replay's timing in each step was not measured ("
                + ("fio's submission log could not be read" if "exact.timing" in test.data else
                   "a result from before tkperf measured it: fio added up its own delays between the iolog's "
                   "I/Os, so its steps may have run behind the capture's")
                + ")"]
    out = []
    lag = stored.whole(test, "exact.lag_max_us") / 1e6
    n = 1
    while f"exact.step.{n}.captured" in test.data:
        captured, replayed, edge = (stored.whole(test, f"exact.step.{n}.{k}") for k in ("captured", "replayed", "edge"))
        if abs(replayed - captured) > TOLERANCE * captured + edge:
            ratio: Optional[str] = f"{replayed / captured:.2f}x" if captured else None
            out.append(f"step {n}: the exact replay issued {replayed:,} reads and writes in the step's time against "
                       f"the capture's {captured:,}" + (f" ({ratio} the captured IOPS)" if ratio else "")
                       + f": the replay did not keep the captured timing (fio up to {lag:,.3f} s behind it)")
        n += 1
    return out


def step_figures(test: TestRun) -> List[Tuple[int, Optional[blockstats.TracedStep]]]:
    """(step number, the exact replay's traced figures in that step's window of the capture's time,
    None where they do not read) of every captured step; empty for a result from before they were
    kept, or a replay that was not traced."""
    return list(enumerate(blockstats.stored_steps(test.data, 1), 1)) if test.rounds else []


def step_verdicts(test: TestRun, ratio: float) -> List[str]:
    """Every captured step whose queue depth, mean or 99th percentile response time in the exact
    replay (traced, in the step's window of the capture's time) is beyond ``ratio`` of the capture's
    either way; a step the capture lost events in is not judged (said), nor one whose replay trace
    lost events."""
    out = []
    for n, got in step_figures(test):
        if touched(test, n):
            out.append(not_judged(n))
            continue
        if got is None or got.lost:
            if got is not None:
                out.append(f"step {n}: the kernel lost {got.lost:,} trace events in it during the exact replay: "
                           "not judged")
            continue
        off = figures_off(stored.number(test, f"step.{n}.qd"), got.qd, stored.number(test, f"step.{n}.lat_mean_us"),
                          got.lat_mean_us if got.ios else None, stored.number(test, f"step.{n}.lat_p99_us"),
                          got.lat_p99_us if got.ios else None, ratio)
        if off:
            out.append(f"step {n}: the exact replay's {off} ({BLOCK})")
    return out
