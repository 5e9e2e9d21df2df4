"""The emulated SSD's truth beside a tkperf run (issue 33).

A run of ``tkperf ssd run`` in this process on a drive of the ``simdrive``
fixture, with the model's own counters read around every purge and every
fio process the run starts, and at every status report of a continuous fio
job.  The counters are read by wrapping (never replacing) tkperf's purge
and its fio back end: the real purge and the real fio run, and the model's
``stats`` are read right before and right after each, through the drive's
control socket (a few milliseconds; ``tkperf simdrive stats`` would start
a Python process each time).  So a test can hold a verdict of tkperf (its
FOB, its steady-state window, its settle time ...) against what the model
did in exactly that stretch.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tkperf import store
from tkperf.cli import main
from tkperf.fio.backend import LocalFio
from tkperf.fio.output import cumulative_write
from tkperf.model.results import RunResult
from tkperf.simdrive import control, hostlimit
from tkperf.target import purge as purge_mod

Stats = Dict[str, Any]
_made = itertools.count(1)


def unique_name() -> str:
    """A drive name of this test process alone: ``tkperf simdrive up`` numbers
    drives simdrive0, 1 ... and other test sessions on the machine use those."""
    return f"simtruth-{os.getpid()}-{next(_made)}"


class Counters:
    """The model's counters of one drive, read through its control socket."""

    def __init__(self, drive: Any) -> None:
        self.path = drive.path
        self.rundir = control.find(drive.path)

    def __call__(self, history: bool = False) -> Stats:
        return control.stats(self.rundir, history=history)

    def param(self, name: str) -> float:
        return float(self()["params"][name]["value"])


def model_reads(c: Counters, qd: int, count: int = 4000, seed: int = 1) -> Tuple[float, float]:
    """The drive's own 4 KiB random read pace at queue depth ``qd``, worked
    out by running its model (its parameters and capacity) on the model's
    own clock: written sequentially in 128 KiB commands, then ``count``
    uniform random reads, each sent as one completes (an ideal host).  Reads
    land on the die that holds their page, so how often they meet a busy
    die is the model's and not a closed formula's.  (IOPS, mean response
    time in seconds.)"""
    import heapq
    import random

    from tkperf.simdrive.model import Drive
    s = c()
    drive = Drive(int(s["capacity_bytes"]), {k: v["value"] for k, v in s["params"].items()})
    step = 32 * drive.page
    pending = [0.0] * 8
    for i in range(drive.capacity // step):
        heapq.heappush(pending, drive.write(heapq.heappop(pending), i * step, step))
    start = drive.advance(max(max(pending), drive.busy_until))  # every program done
    rng = random.Random(seed)
    pending, total = [start] * qd, 0.0
    for _ in range(count):
        t = heapq.heappop(pending)
        end = drive.read(t, rng.randrange(drive.logical_pages) * drive.page, drive.page)
        total += end - t
        heapq.heappush(pending, end)
    return count / (max(pending) - start), total / count


@dataclass(frozen=True)
class Mark:
    """The model's counters around one step of a run: ``kind`` purge, run
    (one fio process) or stream (one continuous fio job); ``what`` the
    step's name as tkperf gives it; ``result`` what the step returned."""

    kind: str
    what: str
    before: Stats
    after: Stats
    result: Any = None
    #: For a stream: (fio's status report, the counters read as it came), in order.
    reports: Tuple[Tuple[dict, Stats], ...] = ()

    def delta(self, key: str) -> float:
        return float(self.after[key]) - float(self.before[key])

    @property
    def busy_s(self) -> float:
        """Model seconds with I/O outstanding in this step (its time less its idle time)."""
        return self.delta("model_time_s") - self.delta("idle_time_s")

    def waf(self) -> float:
        """Flash bytes programmed per host byte written in this step."""
        return self.delta("nand_write_bytes") / self.delta("host_write_bytes")


def window_rate(marks: Sequence[Mark], key: str = "host_write_ios", busy: bool = True) -> float:
    """``key``'s growth per model second over several steps together: per
    busy second (the drive's own pace), or per second of the steps' whole
    model time (``busy=False``)."""
    seconds = sum(m.busy_s if busy else m.delta("model_time_s") for m in marks)
    return sum(m.delta(key) for m in marks) / seconds


@dataclass(frozen=True)
class Slice:
    """The model between two of fio's status reports of a stream: host
    write I/Os and bytes fio counted, and the model's deltas."""

    fio_ios: float
    fio_ms: float
    ios: float
    host_bytes: float
    nand_bytes: float
    model_s: float
    idle_s: float
    gc_copies: float
    bg_gc_copies: float
    erases: float

    @property
    def busy_s(self) -> float:
        return self.model_s - self.idle_s

    def unit_s_per_page(self, c: Counters) -> float:
        """Unit time the drive spent per host page written: the pages it
        programmed (host writes and GC copies) and the blocks it erased; its
        pace with every unit busy is ``units`` over this."""
        pages = self.host_bytes / (c.param("page_kib") * 1024)
        work = (pages * c.param("program_us") + (self.gc_copies + self.bg_gc_copies) * c.param("copy_us")
                + self.erases * c.param("erase_us"))
        return work / 1e6 / pages

    @property
    def rate(self) -> float:
        """Host write I/Os per model second (idle included: what a host sees)."""
        return self.ios / self.model_s

    @property
    def busy_rate(self) -> float:
        """Host write I/Os per busy model second: the drive's own pace."""
        return self.ios / self.busy_s


def slices(mark: Mark, job: str, interval_s: float = 1.0) -> List[Slice]:
    """The model between consecutive status reports of ``mark`` (a stream)
    that carry job ``job`` with new run time, the first from the stream's
    start; a report less than half an interval after the one before (fio's
    last, as it stops) extends the slice before it, as tkperf's intervals do."""
    cuts: List[Tuple[float, float, Stats]] = [(0.0, 0.0, mark.before)]  # (I/Os, run time ms, counters)
    for report, stats in mark.reports:
        jobs = [j for j in report.get("jobs", ()) if j.get("jobname") == job]
        if not jobs:
            continue
        parts = [cumulative_write(j) for j in jobs]
        ios, ms = sum(p["ios"] for p in parts), max(p["runtime_ms"] for p in parts)
        if ms <= cuts[-1][1]:
            continue
        if len(cuts) > 1 and ms - cuts[-1][1] < interval_s * 500.0:
            cuts.pop()
        cuts.append((ios, ms, stats))
    out = []
    for (ios0, ms0, a), (ios1, ms1, z) in zip(cuts, cuts[1:]):
        d = {k: float(z[k]) - float(a[k]) for k in ("host_write_ios", "host_write_bytes", "nand_write_bytes",
                                                     "model_time_s", "idle_time_s", "gc_copies", "bg_gc_copies",
                                                     "erases")}
        out.append(Slice(ios1 - ios0, ms1 - ms0, d["host_write_ios"], d["host_write_bytes"], d["nand_write_bytes"],
                         d["model_time_s"], d["idle_time_s"], d["gc_copies"], d["bg_gc_copies"], d["erases"]))
    return out


class Watch:
    """Record :class:`Mark` s of every purge and fio process of the runs made
    while it is installed (through ``monkeypatch``: undone after the test)."""

    def __init__(self, counters: Counters, monkeypatch: Any) -> None:
        self.counters = counters
        self.marks: List[Mark] = []
        real_purge = purge_mod.purge
        real_run, real_stream = LocalFio.run, LocalFio.stream
        marks = self.marks

        def purge(requested: str, dev: Any) -> Any:
            before = counters()
            record = real_purge(requested, dev)
            marks.append(Mark("purge", requested, before, counters(), record))
            return record

        def run(fio: LocalFio, jobs: Any, what: str, timeout: Optional[float] = None,
                histograms: bool = False) -> Any:
            before = counters()
            out = real_run(fio, jobs, what, timeout=timeout, histograms=histograms)
            marks.append(Mark("run", what, before, counters(), out))
            return out

        def stream(fio: LocalFio, job: Any, interval_s: int, what: str, on_report: Callable[[dict], bool],
                   timeout: float, histograms: bool = False) -> None:
            before = counters()
            seen: List[Tuple[dict, Stats]] = []

            def report(obj: dict) -> bool:
                seen.append((obj, counters()))
                return on_report(obj)

            real_stream(fio, job, interval_s, what, report, timeout, histograms=histograms)
            marks.append(Mark("stream", what, before, counters(), reports=tuple(seen)))

        monkeypatch.setattr(purge_mod, "purge", purge)
        monkeypatch.setattr(LocalFio, "run", run)
        monkeypatch.setattr(LocalFio, "stream", stream)

    def of(self, kind: str, what: str = "") -> List[Mark]:
        """The marks of ``kind`` whose step name is ``what`` (any, when empty)."""
        return [m for m in self.marks if m.kind == kind and (not what or m.what == what)]

    def one(self, kind: str, what: str) -> Mark:
        (m,) = self.of(kind, what)
        return m


#: Every run: no report (the tests judge the result file), no questions.
COMMON = ("--no-report", "--yes", "--quiet")


def run_tkperf(drive: Any, tmp_path: Any, name: str, *argv: str, watch: Optional[Watch] = None) -> RunResult:
    """``tkperf ssd run`` on ``drive`` with ``argv``; the run must succeed.

    A run the host limited (more than :data:`hostlimit.THRESHOLD` of the
    drive's replies late: the machine's load, not the model, set part of
    its figures) is said so and run once more, when it purges the drive
    first (so the second run starts where the first did); ``watch``'s
    marks are then the second run's alone."""
    out = tmp_path / "out"
    purges = "--purge" in argv and argv[list(argv).index("--purge") + 1] != "none"
    for attempt in (1, 2):
        if watch is not None:
            watch.marks.clear()
        label = name if attempt == 1 else f"{name}-again"
        rc = main(["ssd", "run", drive.path, "--name", label, "--outdir", str(out), *COMMON, *argv])
        assert rc == 0, f"tkperf ssd run {' '.join(argv)} exited {rc}"
        run = store.load(str(out / f"{label}.xml"))
        assert run.status == "complete"
        said = hostlimit.caveat(run.facts.get(hostlimit.FACT))
        if not said or not purges or attempt == 2:
            if said:
                why = "" if purges else " (no purge: the drive has moved on)"
                print(f"simtruth {name}: {said}; not run again{why}")
            return run
        print(f"simtruth {name}: {said}; running it again")
    raise AssertionError("unreachable")


def note(what: str, **figures: float) -> None:
    """Print measured figures (``pytest -s`` shows them; docs/testing.rst quotes them)."""
    print(f"simtruth {what}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()))


def rel(a: float, b: float) -> float:
    """|a - b| relative to b."""
    return abs(a - b) / abs(b)


def busy_s(before: Stats, after: Stats) -> float:
    """The seconds of the model's own clock between two readings in which
    the drive had a command outstanding: its work, however late a loaded
    host sent it."""
    return (after["model_time_s"] - before["model_time_s"]) - (after["idle_time_s"] - before["idle_time_s"])


def hold_to_drive(figure: float, marks: Sequence[Mark], fio_s: float, tol: float, key: str = "host_write_ios") -> str:
    """Hold tkperf's rate figure over ``marks`` (fio ran ``fio_s`` seconds in
    them, by its own clock) to the model's record of the same stretch: to the
    model's count over fio's time, both ways; to the drive's own pace (its
    count per busy second) from above, always, and from below where the
    drive was busy for all but ``tol`` of fio's time.  A loaded host that
    delivers the queue late leaves the drive idle for a moment: that lowers
    what fio measures below the drive's pace, by the idle time the model
    records, and never raises it.  '' when it holds, else why not."""
    count = sum(m.delta(key) for m in marks)
    busy = sum(m.busy_s for m in marks)
    seen, pace = count / fio_s, count / busy
    if rel(figure, seen) > tol:
        return f"{figure:.1f} against the model's {count:.0f} over fio's {fio_s:.3f} s: {seen:.1f}"
    if figure > pace * (1 + tol):
        return f"{figure:.1f} above the drive's pace {pace:.1f} ({count:.0f} in {busy:.3f} busy s)"
    if figure < pace * (1 - tol) and busy >= (1 - tol) * fio_s:
        return f"{figure:.1f} below the drive's pace {pace:.1f} with the drive busy {busy:.3f} of fio's {fio_s:.3f} s"
    return ""


#: The share of a stretch the drive must have had a command outstanding for
#: its wall time to be held to a plan from above: below it the host, not the
#: drive, set the pace (the model's record says so: idle while the host paused).
KEPT_BUSY = 0.8


def hold_to_plan(planned_s: float, took_s: float, busy: float, factor: float) -> str:
    """Hold a stretch that writes a set amount to its dry-run plan, by what
    a loaded host cannot move: a loaded host only lengthens a run (from
    below, always), and from above where the host kept the drive busy (the
    model's clock: ``busy`` of ``took_s``).  Where it did not, the drive's
    idle time also changed what the model did (background GC in the
    pauses), so the plan is not held to either clock from above.  '' when
    it holds, else why not."""
    if took_s < planned_s / factor:
        return f"took {took_s:.2f} s, under the plan's {planned_s:.2f} s / {factor}"
    if busy >= KEPT_BUSY * took_s and took_s > planned_s * factor:
        return (f"took {took_s:.2f} s with the drive busy {busy:.2f} s of it, over the plan's "
                f"{planned_s:.2f} s x {factor}")
    return ""
