"""A replay measured as the capture measures (issue 57, item 1): the target
recorded at the capture's block tracepoints while the replay runs, its data
I/Os apart from its flushes, with the 99th percentile.  Real fio on a loop
device the test makes; ``tkperf capture`` of the same device records the
replay beside it, so both sides' figures are of the same I/Os."""
from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import time

import pytest

import rwsw_captures
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.kit import registry as testtypes
from tkperf.model.pts import REVISIONS
from tkperf.rwsw import model
from tkperf.testtypes.realworld import blockstats
from tkperf.testtypes.realworld.delivered import BLOCK, COUNTERS, overall
from tkperf.testtypes.realworld.delivered import steps as steps_of
from tkperf.verdict import conformance

pytestmark = [needs_fio, pytest.mark.skipif(os.geteuid() != 0, reason="tracing the replay needs root")]

MiB = 1 << 20


def _flushing_capture(folder: str) -> str:
    """One 3 s step: random 4 KiB writes, each followed by a flush (an fsync
    per write, as a database's log), beside random 4 KiB reads; its captured
    response times far from any loop device's (50 ms mean, 500 ms p99)."""
    steps = ((0.5, (("random", "write", 4096, 450), ("random", "read", 4096, 450))),)
    cap = rwsw_captures.capture(step_s=3.0, steps=steps)
    lat = model.Latency(ios=900, mean_us=50_000.0, p99_us=500_000.0, max_us=600_000.0)
    seen = model.Seen(lat=lat, read=lat, write=lat, flushes=450, fua=0, discards=0, discard_bytes=0,
                      lost_events=0)
    cap = dataclasses.replace(cap, seen=seen, steps=tuple(dataclasses.replace(s, seen=seen) for s in cap.steps))
    path = os.path.join(folder, "flushing.xml")
    model.save(cap, path)
    return path


def _instances(pid: int):
    out = []
    for point in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        d = os.path.join(point, "instances")
        if os.path.isdir(d):
            out += [n for n in os.listdir(d) if n.startswith(f"tkperf-capture-{pid}-")]
    return out


class _Beside:
    """``tkperf capture`` of the target, started as the replay's meter starts
    (once tkperf's own checks of the target are done) and stopped as it stops."""

    def __init__(self, dev: str, folder) -> None:
        self.dev, self.folder, self.proc = dev, folder, None

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        self.proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", self.dev, "--duration", "600",
                                      "--name", "re", "--outdir", str(self.folder), "--step", "600s", "-q"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not _instances(self.proc.pid) and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _instances(self.proc.pid), "the capture did not start"
        time.sleep(0.5)  # its start mark follows the instance at once

    def stop(self) -> str:
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # stop and keep what was recorded
        _, err = self.proc.communicate(timeout=120)
        assert self.proc.returncode == 0, err.decode(errors="replace")
        return err.decode(errors="replace")


def test_a_flushing_replay_is_measured_as_its_capture_measures_it(loopdev, tmp_path, monkeypatch):
    path = _flushing_capture(str(tmp_path))
    # tkperf capture records the same device while the replay's fio runs: both sides see the same I/Os
    cap_dir = tmp_path / "cap"
    cap_dir.mkdir()
    beside = _Beside(loopdev, cap_dir)
    start, stop = blockstats.Meter.start, blockstats.Meter.stop

    def started(meter):
        beside.start()
        return start(meter)

    def stopped(meter, data, index, before):
        stop(meter, data, index, before)
        beside.stop()

    monkeypatch.setattr(blockstats.Meter, "start", started)
    monkeypatch.setattr(blockstats.Meter, "stop", stopped)
    out = tmp_path / "out"
    try:
        rc = main(["ssd", "run", loopdev, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
                   "--write-cache", "keep", "--no-report", "--purge", "none", "--tests", "replay",
                   "--workload", path])
    finally:
        beside.stop()
    assert rc in (0, 1), rc
    run = store.load(str(out / "r.xml"))
    (test,) = run.tests
    (rnd,) = test.rounds
    traced = blockstats.stored_traced(test.data, rnd.index)
    counters = blockstats.stored(test.data, rnd.index)
    assert traced is not None and counters is not None and traced.lost == 0
    fio_ios = sum(w.read.ios + w.write.ios for w in rnd.workloads)
    fio_writes = sum(w.write.ios for w in rnd.workloads)
    assert fio_writes > 0 and test.params["step.1.fsync"] == "1"
    # the data I/Os are fio's reads and writes, to the I/O; the flushes are counted apart
    assert traced.ios == fio_ios, (traced, fio_ios)
    assert traced.flushes >= fio_writes * 0.9 and counters.flushes == traced.flushes
    # the block-layer counters count each flush's empty write as a write: another definition
    assert counters.ios == traced.ios + traced.flushes, (counters, traced)

    # one definition on both sides: the capture of the replay holds the same I/Os and the same figures
    re = model.load(str(cap_dir / "re.xml"))
    assert re.seen is not None and re.seen.lat is not None and re.seen.lost_events == 0
    assert sum(s.ios for s in re.streams) == traced.ios
    assert re.seen.flushes == traced.flushes
    # (each tracefs instance stamps an event with its own reading of the clock, apart by the time the kernel
    # takes to write it to the other buffer: within 1%, and the 99th percentile within one bin of the
    # capture's histogram, 2^(1/32), and 1%)
    assert re.seen.lat.mean_us == pytest.approx(traced.lat_mean_us, rel=0.01)
    assert re.seen.lat.max_us == pytest.approx(traced.lat_max_us, rel=0.01)
    assert abs(math.log2(re.seen.lat.p99_us / traced.lat_p99_us)) <= 1 / 32 + math.log2(1.01)
    assert re.qd * re.duration * 1e6 == pytest.approx(traced.busy_us, rel=0.01)

    # the step's figures are the traced ones, each data I/O's time inside fio's own for it
    (got,) = steps_of(test)
    seconds = max(w.runtime_ms for w in rnd.workloads) / 1000.0
    assert got.source == BLOCK
    assert (got.lat_mean_us, got.lat_p99_us) == (traced.lat_mean_us, traced.lat_p99_us)
    assert got.qd == pytest.approx(traced.busy_us / 1e6 / seconds)
    fio_lat = sum(w.lat_mean_us * (w.read.ios + w.write.ios) for w in rnd.workloads) / fio_ios
    assert got.lat_mean_us <= fio_lat and got.qd <= got.fio_qd, (got, fio_lat)
    whole = overall(test)
    assert whole is not None and whole.lat_source == BLOCK and whole.lat_mean_us == pytest.approx(got.lat_mean_us)

    # the verdict compares the step's queue depth, mean and 99th percentile with the capture's
    deviations = conformance.of_run(run).deviations
    named = [d for d in deviations if d.startswith("replay: step 1: ") and "99th percentile" in d]
    assert len(named) == 1, deviations
    assert f"mean response time {got.lat_mean_us:,.0f} µs against the captured 50,000 µs" in named[0]
    assert f"99th percentile response time {got.lat_p99_us:,.0f} µs against the captured 500,000 µs" in named[0]
    assert named[0].endswith(f"({BLOCK})")

    # a result from before replays were traced keeps loading, on its counters, and says what they are
    old = dataclasses.replace(test, data={k: v for k, v in test.data.items() if not k.startswith("trace.")})
    (was,) = steps_of(old)
    assert was.source == COUNTERS and was.lat_p99_us is None
    assert was.lat_mean_us == pytest.approx(1000.0 * counters.busy_ms / counters.ios)
    kind = testtypes.get("replay")
    words = kind.pts.result_deviations(kind, old, {}, next(iter(REVISIONS.values())), 256 * MiB)
    assert any(f"queue depth and response time from the {COUNTERS}" in w and "cannot be known" in w
               for w in words), words
    assert not any("99th percentile response time" in w for w in words), words


def test_a_run_that_fails_while_traced_leaves_no_tracing_behind(loopdev):
    """fio failing between the meter's start and stop: the recording ends
    with the meter (abandoned, or dropped with the failed run's frame)."""
    import gc
    import threading

    def traced_now():
        return _instances(os.getpid()), [t for t in threading.enumerate() if t.name == "tkperf-replay-trace"]

    meter = blockstats.Meter(loopdev)
    meter.start()
    instances, threads = traced_now()
    assert len(instances) == 1 and len(threads) == 1
    meter.abandon()
    assert traced_now() == ([], [])
    meter.start()
    assert len(traced_now()[0]) == 1
    del meter
    gc.collect()
    assert traced_now() == ([], [])


# --- a capture whose trace lost events; progress off a terminal ---------------------------------

def test_a_replay_off_a_terminal_prints_each_step_and_leaves_out_a_step_the_capture_lost_events_in(
        loopdev, tmp_path, capsys):
    """Two 1 s steps of the fixture's streams, the second marked touched by lost trace events (as the
    capture writes ``touched-by-loss``).  Run with stderr a pipe (not a terminal, as under cron or nohup):
    one progress line per step; the verdict, ``show`` and ``show --json`` say the second step is not
    judged, and the overall figures leave it out."""
    cap = rwsw_captures.capture(step_s=1.0)
    assert len(cap.steps) == 2
    lossy = model.Seen(lat=None, read=None, write=None, flushes=0, fua=0, discards=0, discard_bytes=0,
                       lost_events=0, loss_touched=True)
    cap = dataclasses.replace(cap, steps=(cap.steps[0], dataclasses.replace(cap.steps[1], seen=lossy)))
    path = os.path.join(str(tmp_path), "lossy.xml")
    model.save(cap, path)
    assert model.load(path).steps_touched_by_loss == (2,)
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", "r", "--outdir", str(out), "--yes", "--quick", "--write-cache",
               "keep", "--no-report", "--purge", "none", "--tests", "replay", "--workload", path])
    assert rc in (0, 1)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "[replay] step " in ln]
    assert [ln.split("[replay] ")[1].split(":")[0] for ln in lines] == ["step 1 (1 of 2)", "step 2 (2 of 2)"], err
    assert all(" IOPS (captured " in ln and "mean response time" in ln for ln in lines), lines
    run = store.load(str(out / "r.xml"))
    (test,) = run.tests
    words = "replay: step 2: not judged, the capture lost events in it (its captured figures miss the I/Os " \
            "whose events were lost)"
    deviations = conformance.of_run(run).deviations
    assert words in deviations
    assert not [d for d in deviations if d.startswith("replay: step 2:") and d != words], deviations
    figures = overall(test)
    assert figures is not None and figures.left_out == (2,)
    assert main(["show", str(out / "r.xml")]) in (0, 1)
    assert "step 2: not judged, the capture lost events in it" in capsys.readouterr().out
    assert main(["show", str(out / "r.xml"), "--json"]) in (0, 1)
    assert "step 2: not judged, the capture lost events in it" in capsys.readouterr().out
