"""``replay --replay exact``: the captured I/Os through fio's iolog replay.

The capture's iolog (fio iolog version 3, beside its XML) is copied at run
time into a private temporary folder with its addresses mapped onto the
target's range (:func:`tkperf.api.map_iolog`) and replayed by one fio
job (``read_iolog``) with the capture's own timing: fio issues every I/O at
its captured time (``replay_no_stall`` is left off), so the replay asks the
drive for the capture's IOPS and the drive's response times decide how many
are outstanding, up to the job's queue depth (:func:`depth_for`).  The
mapped copy is deleted afterwards.  fio on a test host cannot read the
copy, so an exact replay runs on this host's targets only.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone

from tkperf.api import FioJob, Round, TestRun, UsageError
from tkperf.pts import Capture, Estimate, Shape, check_iolog, iolog_path, map_iolog, scan_iolog

LABEL = "exact"
#: The most I/Os an exact replay keeps outstanding (fio iodepth).
MAX_DEPTH = 256


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


def depth_for(cap: Capture) -> int:
    """Room for the capture's bursts: eight times its largest step queue depth, 32 to 256."""
    top = max([s.qd for s in cap.steps] + [cap.qd, 1.0])
    return int(min(MAX_DEPTH, max(32, math.ceil(8 * top))))


def job(path: str, depth: int, rwmixread: int, largest: int) -> FioJob:
    return FioJob(name="exact-replay", rw="randrw", bs=max(largest, 512), rwmixread=rwmixread, iodepth=depth,
                  extra=(("read_iolog", path),))


@dataclass(frozen=True)
class ExactReplay(Shape):
    """One fio job replaying the mapped iolog; recorded as round 1."""

    log: str
    span: int
    iodepth: int

    def run(self, ctx, plan, test: TestRun) -> None:
        if getattr(ctx.fio, "host", None):
            raise UsageError("--replay exact replays through fio on this host: not on a test host's target")
        folder = tempfile.mkdtemp(prefix="tkperf-replay-")
        try:
            mapped = os.path.join(folder, "mapped.iolog")
            with open(mapped, "w", encoding="ascii") as fh:
                m = map_iolog(self.log, fh, ctx.fio.settings.filename, self.span)
            share = round(100.0 * m.reads / m.ios) if m.ios else 0
            started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
            workloads, wall = ctx.fio.run([job(mapped, self.iodepth, share, m.largest)],
                                          what=f"{plan.key} exact replay",
                                          timeout=m.last_us / 1e6 * 3.0 + 300.0)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
        test.rounds[:] = [Round(index=1, started=started, wall_s=wall, fio_s=fio_s, workloads=tuple(workloads))]
        test.data.update({"phase.1": LABEL, "exact.reads": str(m.reads), "exact.writes": str(m.writes),
                          "exact.moved": str(m.moved), "exact.dropped": str(m.dropped), "exact.span": str(m.span),
                          "exact.length_us": str(m.last_us)})
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
                         f"with their timing, about {seconds:.0f} s, addresses mapped onto the target's range",),
                        (job(shown, self.iodepth, round(100.0 * m.reads / max(1, m.ios)), m.largest),),
                        seconds, seconds * 1.5 + 5)
