"""The shipped capture of a real application (examples/rwsw/pgbench.xml:
PostgreSQL's pgbench on ext4, recorded by ``tkperf capture``) run by the
replay test: step by step on a loop device at its captured intensity (each
stream at its captured rate: 0.8x to 1.25x the captured IOPS, or the step
the drive could not serve, or served above its rate, named), with every step's dominant streams held
at their captured shares; and its captured I/Os themselves (``--replay
exact``) on the emulated SSD, whose own counters show that the drive was
given every captured write and read, at most the capture's peak in flight,
with the response time measured at the block layer as the capture's
(issues 38 and 42)."""
from __future__ import annotations

import os

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.rwsw import model
from tkperf.testtypes.realworld.delivered import BLOCK, overall, steps
from tkperf.testtypes.realworld.replay import captured_rt_us
from tkperf.verdict import conformance

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "rwsw",
                       "pgbench.xml")


def _run(target: str, tmp_path, *args: str) -> store.RunResult:
    out = tmp_path / "out"
    rc = main(["ssd", "run", target, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", "--tests", "replay", "--workload", EXAMPLE, *args])
    assert rc in (0, 1), rc  # 1: not conformant (the RWSW PTS, shortened), which the run says
    return store.load(str(out / "r.xml"))


@needs_fio
def test_the_pgbench_capture_replays_step_by_step_at_its_captured_intensity(loopdev, tmp_path):
    cap = model.load(EXAMPLE)
    run = _run(loopdev, tmp_path)
    (test,) = run.tests
    got = steps(test)
    assert len(got) == len(cap.steps) and test.status == "complete"
    deviations = conformance.of_run(run).deviations
    missed = []
    for step, figures in zip(cap.steps, got):
        assert figures.source == BLOCK and figures.iops > 0
        # each step at its captured rate: within 10%, or the verdict names the step with both figures
        # (below: the drive could not serve it; above: fio caught up on a late step beside a loaded host)
        under = [d for d in deviations if d.startswith(f"replay: step {figures.step}: the drive served ")]
        over = [d for d in deviations if d.startswith(f"replay: step {figures.step}: ran at ")]
        if figures.iops < 0.9 * figures.kept_iops:
            assert len(under) == 1 and f"against the captured {figures.kept_iops:,.1f}" in under[0], under
            assert not over
            missed.append(figures.step)
        elif figures.iops > 1.1 * figures.kept_iops:
            assert over == [f"replay: step {figures.step}: ran at {figures.iops:,.1f} IOPS, above the captured "
                            f"{figures.kept_iops:,.1f}"], over
            assert not under
            missed.append(figures.step)
        else:
            assert not under and not over, (figures.step, figures.iops, under, over)
        replayed = {s.key: s.share for s in figures.streams}
        for stream in model.dominant(step.streams, 0.8):  # each dominant stream within 3 points, or named
            asked = next(s.asked_share for s in figures.streams if s.key == stream.key)
            if abs(replayed[stream.key] - asked) > 0.03:
                assert any(d.startswith(f"replay: step {figures.step}: {stream.key} made ") for d in deviations)
    # the measure: 0.8x to 1.25x the captured IOPS over the whole capture (176 IOPS), unless a step
    # off its rate is named above
    whole = overall(test)
    assert whole is not None
    if not missed:
        assert 0.8 <= whole.iops / cap.iops <= 1.25, (whole.iops, cap.iops)


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
    assert issued >= 0.95 * (captured["read"] + captured["write"])
    # the drive's own model saw every write and read fio reports: nothing served by a cache in between
    assert after["host_write_ios"] - before["host_write_ios"] >= w.write.ios
    assert after["host_read_ios"] - before["host_read_ios"] >= w.read.ios
    assert w.write.ios == pytest.approx(captured["write"], rel=0.05)
    # never more outstanding than the capture's peak, and the response time measured as the capture's: at the
    # block layer; within 3x of the captured one (2.9 ms), or the verdict names both figures
    assert w.iodepth == int(test.params["iodepth"]) and 1 <= w.iodepth <= 256
    whole = overall(test)
    assert whole is not None and whole.lat_source == BLOCK
    captured_rt = captured_rt_us(test)
    named = [d for d in conformance.of_run(run).deviations
             if d.startswith("replay: the exact replay's ") and "at another speed" in d]
    if not 1 / 3 <= whole.lat_mean_us / captured_rt <= 3:
        assert len(named) == 1 and f"mean response time {whole.lat_mean_us:,.0f} µs against the captured " \
               f"{captured_rt:,.0f} µs" in named[0] and f"({BLOCK}): this drive serves the capture's I/Os at " \
               "another speed than the captured device" in named[0], named
