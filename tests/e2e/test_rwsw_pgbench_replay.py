"""The shipped capture of a real application (examples/rwsw/pgbench.xml:
PostgreSQL's pgbench on ext4, recorded by ``tkperf capture``) run by the
replay test: step by step on a loop device, with every step's dominant
streams held at their captured shares; and its captured I/Os themselves
(``--replay exact``) on the emulated SSD, whose own counters show that the
drive was given every captured write and read (issue 38, part 3)."""
from __future__ import annotations

import os

import pytest
from conftest import needs_fio

from tkperf import store
from tkperf.cli import main
from tkperf.rwsw import model
from tkperf.testtypes.realworld.delivered import steps
from tkperf.verdict import conformance

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "rwsw",
                       "pgbench.xml")


def _run(target: str, tmp_path, *args) -> store.RunResult:
    out = tmp_path / "out"
    rc = main(["ssd", "run", target, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", "--tests", "replay", "--workload", EXAMPLE, *args])
    assert rc in (0, 1), rc  # 1: not conformant (the RWSW PTS, shortened), which the run says
    return store.load(str(out / "r.xml"))


@needs_fio
def test_the_pgbench_capture_replays_step_by_step_on_a_loop_device(loopdev, tmp_path):
    cap = model.load(EXAMPLE)
    run = _run(loopdev, tmp_path, "--replay-step-time", "2")
    (test,) = run.tests
    got = steps(test)
    assert len(got) == len(cap.steps) and test.status == "complete"
    deviations = conformance.of_run(run).deviations
    for step, figures in zip(cap.steps, got):
        replayed = {s.key: s.share for s in figures.streams}
        for stream in model.dominant(step.streams, 0.8):  # each dominant stream within 3 points of the capture
            raw = next(s.share for s in step.streams if s.key == stream.key)
            named = [d for d in deviations if d.startswith(f"replay: step {figures.step}: {stream.key} made ")]
            # A replayed share is a measurement: 2 s steps on two shared cores were once 6.3 points off
            # (load average 6-9).  What tkperf controls is that the verdict names every such miss.
            if abs(replayed[stream.key] - raw) > 0.03:
                assert len(named) == 1, (figures.step, stream.key, replayed[stream.key], raw, deviations)
        assert figures.iops > 0


@needs_fio
def test_the_pgbench_capture_replays_exactly_on_the_emulated_ssd(simdrive, tmp_path):
    cap = model.load(EXAMPLE)
    drive = simdrive(capacity="64M")
    before = drive.stats()
    run = _run(drive.path, tmp_path, "--replay", "exact", "--purge", "none")
    after = drive.stats()
    (test,) = run.tests
    (w,) = test.rounds[0].workloads
    captured = {rw: sum(s.ios for s in cap.streams if s.rw == rw) for rw in ("read", "write")}
    issued = int(test.params["iolog_ios"])
    assert w.read.ios + w.write.ios == issued and not w.error
    assert issued >= 0.95 * (captured["read"] + captured["write"])  # trims and syncs are left out
    # the drive's own model saw every write and read fio reports: nothing served by a cache in between
    assert after["host_write_ios"] - before["host_write_ios"] >= w.write.ios
    assert after["host_read_ios"] - before["host_read_ios"] >= w.read.ios
    assert w.write.ios == pytest.approx(captured["write"], rel=0.05)
