"""The Sweep and Phases loop shapes end to end (the real fio on a loop device),
and every shape's estimate for the dry run.

The built-in test types use Rounds and Stream only, so the two other shapes
are driven here by small test types defined in this file and put into the
registry for the length of a test.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from datetime import datetime
from typing import Iterator, List

import pytest

from conftest import needs_fio
from tkperf import __version__, store
from tkperf.engine import plan
from tkperf.engine.runner import Runner
from tkperf.fio.backend import LocalFio
from tkperf.fio.jobs import FioJob, FioSettings
from tkperf.kit import options, registry
from tkperf.kit.base import Blocks, Plan, TestType
from tkperf.kit.rules import steps_of
from tkperf.kit.shapes import FIO_GAP_S, Phase, Phases, Rounds, Stream, Sweep
from tkperf.model.results import RunResult, TestRun, now_iso
from tkperf.target import device, hostinfo

MiB = 1024 * 1024
DEPTHS = (1, 2, 4)
IDLE_S = 1.0


def sweep_points(runtime: int = 1) -> tuple:
    return tuple(FioJob(name=f"randread-4k-qd{d}", rw="randread", bs=4096, runtime=runtime,
                        numjobs=1, iodepth=d) for d in DEPTHS)


def write_phases(runtime: int = 1) -> tuple:
    return (Phase((FioJob(name="write-1", rw="randwrite", bs=4096, runtime=runtime, iodepth=4),),
                  idle_s=IDLE_S, label="before idle"),
            Phase((FioJob(name="write-2", rw="randwrite", bs=4096, runtime=runtime, iodepth=4),),
                  label="after idle"))


class QdSweepTest(TestType):
    """4k random reads at QD 1, 2 and 4, one pass, 1 s a point."""

    name = "qdsweep"
    title = "QD sweep (test)"
    short = "QDS"

    def plan(self, opts, capacity: int) -> List[Plan]:
        return [Plan(key=self.name, shape=Sweep(sweep_points(opts.runtime)),
                     params={"depths": ",".join(map(str, DEPTHS))}, wipc=False)]

    def blocks(self, opts) -> Blocks:
        return Blocks(0, 4096)


class IdleGapTest(TestType):
    """Two 1 s random-write phases with a 1 s idle gap between them."""

    name = "idlegap"
    title = "Idle gap (test)"
    short = "GAP"

    def plan(self, opts, capacity: int) -> List[Plan]:
        return [Plan(key=self.name, shape=Phases(write_phases(opts.runtime)), wipc=False)]

    def blocks(self, opts) -> Blocks:
        return Blocks(0, 4096)


@contextlib.contextmanager
def registry_with(*kinds: TestType) -> Iterator[None]:
    """The registry with ``kinds`` added; looked up afresh afterwards."""
    try:
        with pytest.MonkeyPatch.context() as mp:
            found = dict(registry.types())
            found.update((k.name, k) for k in kinds)
            mp.setattr(registry, "_types", found)
            yield
    finally:
        registry.reset()


@pytest.fixture
def registered():
    """``registered(kind, ...)`` puts test types into the registry for one test."""
    with contextlib.ExitStack() as stack:
        yield lambda *kinds: stack.enter_context(registry_with(*kinds))


def run_one(loop: str, outdir: str, test_name: str) -> Runner:
    """One test through the runner, as a session builds it (without the lock,
    the confirmation and the log: the loop device is this test's own)."""
    opts = options.build({"tests": (test_name,), "runtime": 1, "purge": "none", "wipc_loops": 0})
    dev = device.resolve(loop)
    fio = LocalFio(FioSettings(filename=dev.resolved), outdir)
    run = RunResult(name="shape", started=now_iso(), device=dev, host=hostinfo.collect(fio.version),
                    options=opts.to_dict(), tkperf_version=__version__)
    runner = Runner(run=run, opts=opts, device=dev, fio=fio, xml_path=f"{outdir}/shape.xml")
    runner.execute()
    return runner


def without_raw(run: RunResult) -> RunResult:
    """The run without the stored copy of tests' ``<data>`` (``TestRun.raw``),
    which a loaded file may keep and a run being measured never has."""
    return dataclasses.replace(run, tests=[dataclasses.replace(t, raw=None) for t in run.tests])


def check_loads_back(runner: Runner) -> RunResult:
    loaded = store.load(runner.xml_path)
    assert without_raw(loaded) == runner.run
    assert store.dumps(loaded) == store.dumps(runner.run)
    return loaded


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


# --- end to end --------------------------------------------------------------

@needs_fio
def test_sweep_runs_points_in_order(loopdev, tmp_path, registered):
    registered(QdSweepTest())
    runner = run_one(loopdev, str(tmp_path), "qdsweep")
    (t,) = runner.run.tests
    assert runner.run.status == "complete"
    assert t.type == "qdsweep" and t.key == "qdsweep" and t.status == "complete"
    assert t.stop_reason == "sweep complete"
    assert t.wipc is None and t.purge is not None and t.purge.method == "none"
    (rnd,) = t.rounds
    assert rnd.index == 1
    assert [w.name for w in rnd.workloads] == [f"randread-4k-qd{d}" for d in DEPTHS]
    assert [w.iodepth for w in rnd.workloads] == list(DEPTHS)
    for w in rnd.workloads:
        assert w.rw == "randread" and w.bs == 4096 and w.numjobs == 1
        assert w.read.iops > 0 and w.write.iops == 0 and w.runtime_ms >= 900
    assert rnd.fio_s >= 2.7 and rnd.wall_s >= rnd.fio_s
    assert t.steady is None  # no tracking figure, no verdict
    loaded = check_loads_back(runner)
    assert [w.iodepth for w in loaded.tests[0].rounds[0].workloads] == list(DEPTHS)


@needs_fio
def test_phases_keep_idle_gap_and_labels(loopdev, tmp_path, registered):
    registered(IdleGapTest())
    runner = run_one(loopdev, str(tmp_path), "idlegap")
    (t,) = runner.run.tests
    assert runner.run.status == "complete"
    assert t.type == "idlegap" and t.status == "complete" and t.stop_reason == "all phases run"
    first, second = t.rounds
    assert (first.index, second.index) == (1, 2)
    assert [w.name for w in first.workloads] == ["write-1"]
    assert [w.name for w in second.workloads] == ["write-2"]
    for r in t.rounds:
        (w,) = r.workloads
        assert w.rw == "randwrite" and w.write.iops > 0 and w.read.iops == 0
    # Round start times are kept to the second: the second phase starts at
    # least the first one's wall time plus the idle gap later.
    gap = seconds(second.started) - seconds(first.started)
    assert gap >= math.floor(first.wall_s + IDLE_S) >= 2
    assert t.data["phase.1"] == "before idle" and t.data["phase.2"] == "after idle"
    assert float(t.data["idle.1"]) == IDLE_S and float(t.data["idle.2"]) == 0.0
    loaded = check_loads_back(runner)
    assert loaded.tests[0].data == t.data


@needs_fio
def test_dry_run_of_sweep_and_phases(loopdev, registered):
    registered(QdSweepTest(), IdleGapTest())
    opts = options.build({"tests": ("qdsweep", "idlegap"), "runtime": 1, "purge": "none",
                          "wipc_loops": 0})
    dev = device.resolve(loopdev)
    text = "\n".join(plan.job_files(dev, opts, FioSettings(filename=dev.resolved)))
    assert "# one sweep over 3 points" in text
    assert "# 2 phases, " in text and "1 s idle" in text
    for d in DEPTHS:
        assert f"[randread-4k-qd{d}]" in text
    assert "[write-1]" in text and "[write-2]" in text
    assert text.count("iodepth=") >= 5


# --- estimates ------------------------------------------------------------------

def estimate_opts(max_rounds: int = 7, window: int = 3):
    return options.build({"tests": ("iops",), "max_rounds": max_rounds, "window": window})


def test_rounds_estimate():
    jobs = sweep_points(runtime=10)
    est = Rounds(jobs).estimate(estimate_opts(max_rounds=7, window=3), 256 * MiB)
    per_round = 3 * (10 + FIO_GAP_S)
    assert est.jobs == jobs
    assert est.low_s == pytest.approx(3 * per_round)
    assert est.high_s == pytest.approx(7 * per_round)
    (line,) = est.lines
    assert line.startswith("# each round: 3 workloads") and "3 to 7 rounds" in line


def test_rounds_estimate_when_max_rounds_below_window():
    est = Rounds(sweep_points(runtime=10)).estimate(estimate_opts(max_rounds=2, window=5), 256 * MiB)
    assert est.low_s == est.high_s == pytest.approx(2 * 3 * (10 + FIO_GAP_S))


def test_stream_estimate():
    job = FioJob(name="wsat", rw="randwrite", bs=4096, runtime=3600)
    est = Stream(job, 60, stop_bytes=int(100e9), steady_stop=True).estimate(estimate_opts(window=5),
                                                                            256 * MiB)
    assert est.jobs == (job,)
    # 100 GB at the stated 500 MB/s: 200 s, so the interval that ends at 240 s stops it
    assert est.low_s == est.high_s == 240
    far = Stream(job, 60, stop_bytes=int(10e12), steady_stop=True).estimate(estimate_opts(window=5), 256 * MiB)
    assert far.low_s == 5 * 60 and far.high_s == 3600  # steady after 5 points at the earliest, else the time limit
    (line,) = est.lines
    assert "reported every 60 s" in line and "60 min" in line
    assert "100.0 GB written" in line and "steady state" in line
    plain = Stream(job, 60).estimate(estimate_opts(), 256 * MiB)
    assert "GB written" not in plain.lines[0] and "steady" not in plain.lines[0]


def test_sweep_estimate():
    points = sweep_points(runtime=1)
    est = Sweep(points).estimate(estimate_opts(), 256 * MiB)
    assert est.jobs == points
    assert est.low_s == est.high_s == pytest.approx(3 * (1 + FIO_GAP_S))
    assert est.lines == ("# one sweep over 3 points, about 4 s",)


def test_phases_estimate():
    phases = write_phases(runtime=30)
    est = Phases(phases).estimate(estimate_opts(), 256 * MiB)
    busy = 2 * (30 + FIO_GAP_S)
    assert est.jobs == tuple(j for p in phases for j in p.jobs)
    assert est.low_s == est.high_s == pytest.approx(busy + IDLE_S)  # no idle after the last
    assert est.lines == (f"# 2 phases, {busy:.0f} s of I/O and 1 s idle",)


def test_phases_estimate_counts_idle_between_phases_only():
    job = FioJob(name="w", rw="randwrite", bs=4096, runtime=10)
    est = Phases((Phase((job,), idle_s=600), Phase((job,), idle_s=600))).estimate(estimate_opts(), 1)
    assert est.high_s == pytest.approx(2 * (10 + FIO_GAP_S) + 600)
    assert "10 min idle" in est.lines[0]
    # the idle after the last phase is not run: said, not dropped without a word (issue 60 item 6)
    assert est.lines[1:] == ("# last 10 min (after phase 2) had no I/O: not kept (no measurement follows it)",)


def test_registry_with_adds_and_forgets():
    with registry_with(QdSweepTest(), IdleGapTest()):
        assert steps_of(registry.get("qdsweep")).unit == "point"  # the sweep's word, not the type's
        assert steps_of(registry.get("idlegap")).unit == "phase"
        assert {"qdsweep", "idlegap", "iops"} <= set(registry.names())
    assert registry.get("qdsweep") is None and registry.get("idlegap") is None
    assert "iops" in registry.names()


def test_phases_are_named_by_their_unit_and_the_unrun_idle_at_the_end_is_said(monkeypatch):
    """A shape whose phases are steps (a replay's) says 'step' where a user
    reads it: the estimate, the progress line, the stop reason; the idle
    after the last step is said (issue 60 item 6)."""
    from tkperf.kit import shapes

    class Steps(Phases):
        unit = "step"

    job = FioJob(name="w", rw="randwrite", bs=4096, runtime=5)
    steps = Steps((Phase((job,)), Phase((job,), idle_s=5)))
    est = steps.estimate(estimate_opts(), 1)
    assert est.lines == (f"# 2 steps, {2 * (5 + FIO_GAP_S):.0f} s of I/O and 0 s idle",
                         "# last 5 s (after step 2) had no I/O: not kept (no measurement follows it)")
    said, started = [], []
    monkeypatch.setattr(shapes.progress, "info", lambda fmt, *a: said.append(fmt % a))
    monkeypatch.setattr(shapes.time, "sleep", lambda s: None)

    class Prog:
        def once_started(self, phase, total):
            started.append(phase)

    monkeypatch.setattr(shapes, "progress_of", lambda ctx: Prog())

    class Ctx:
        phase = ""
        opts = estimate_opts()

        def save(self):
            pass

    test = TestRun(key="replay", type="replay", tracking_workload="", tracking_metric="", tracking_label="")
    steps._run_phases(Ctx(), test, lambda i, p, j: None, "all steps run")
    assert started == ["step 1 of 2", "step 2 of 2"]
    assert said == ["[replay] last 5 s (after step 2) had no I/O: not kept (no measurement follows it)"]
    assert test.stop_reason == "all steps run"
    assert not Phases((Phase((job,)),))._idle_at_end()
