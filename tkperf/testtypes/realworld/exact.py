"""``replay --replay exact``: the captured I/Os through fio's iolog replay.

The capture's iolog (fio iolog version 3, beside its XML) is checked
against its capture when the run is planned and copied at run time into a
private temporary folder with its addresses mapped onto the target's range
and its flushes and discards kept (:mod:`.exactlog`), then replayed by one
fio job (``read_iolog``) with the capture's own timing: fio issues every
I/O at its captured time (``replay_no_stall`` is left off), so the replay
asks the drive for the capture's IOPS.  The job's queue depth is the
capture's peak in-flight count (:func:`.exactlog.peak_in_flight`), so the
drive never has more I/Os outstanding than the capture had.

Its response time is measured the way the capture measures it: at the
block layer, issue to completion, from the target's own counters around
the run (:mod:`.blockstats`).  fio's own latency is not that: while it
waits to issue the next I/O at its captured time fio does not reap the
completed ones, so their latency grows with the job's queue depth; it is
shown beside, named as fio's.  The mapped copy is deleted afterwards.  fio
on a test host cannot read the copy, so an exact replay runs on this
host's targets only.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Tuple

from tkperf.api import FioJob, Round, TestRun, UsageError
from tkperf.pts import Capture, Estimate, Shape, check_iolog, iolog_path, scan_iolog
from tkperf.testtypes.realworld import blockstats, exactlog

LABEL = "exact"


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


def job(path: str, depth: int, rwmixread: int, largest: int) -> FioJob:
    return FioJob(name="exact-replay", rw="randrw", bs=max(largest, 512), rwmixread=rwmixread, iodepth=depth,
                  extra=(("read_iolog", path),))


@dataclass(frozen=True)
class ExactReplay(Shape):
    """One fio job replaying the mapped iolog; recorded as round 1, with the
    target's block-layer counters around it (``block.1.*``)."""

    log: str
    span: int
    iodepth: int

    def run(self, ctx, plan, test: TestRun) -> None:
        if getattr(ctx.fio, "host", None):
            raise UsageError("--replay exact replays through fio on this host: not on a test host's target")
        target = ctx.fio.settings.filename
        meter = blockstats.Meter(target)
        folder = tempfile.mkdtemp(prefix="tkperf-replay-")
        try:
            mapped = os.path.join(folder, "mapped.iolog")
            with open(mapped, "w", encoding="ascii") as fh:
                m = exactlog.write_mapped(self.log, fh, target, self.span)
            share = round(100.0 * m.reads / m.ios) if m.ios else 0
            started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
            before = meter.start()
            workloads, wall = ctx.fio.run([job(mapped, self.iodepth, share, m.largest)],
                                          what=f"{plan.key} exact replay",
                                          timeout=m.last_us / 1e6 * 3.0 + 300.0)
            meter.stop(test.data, 1, before)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
        test.rounds[:] = [Round(index=1, started=started, wall_s=wall, fio_s=fio_s, workloads=tuple(workloads))]
        test.data.update({"phase.1": LABEL, "exact.reads": str(m.reads), "exact.writes": str(m.writes),
                          "exact.flushes": str(m.flushes), "exact.discards": str(m.discards),
                          "exact.moved": str(m.moved), "exact.dropped": str(m.dropped), "exact.span": str(m.span),
                          "exact.length_us": str(m.last_us), "exact.iodepth": str(self.iodepth)})
        ctx.save()
        test.stop_reason = "capture replayed"

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
                        (job(shown, self.iodepth, round(100.0 * m.reads / max(1, m.ios)), m.largest),),
                        seconds, seconds * 1.5 + 5)
