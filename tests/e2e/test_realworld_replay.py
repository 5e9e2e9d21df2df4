"""The replay's fidelity to its capture (issue 42): an exact replay checked
against its capture before it runs, replayed at the capture's peak in-flight
count with its flushes and discards, and measured at the block tracepoints as the
capture is; rwsw-wsat's refusal of a workload without writes; the replay
report's header and tables.  Real fio on loop devices the tests make; what
the drive was given is read from the loop device's own block-layer counters
(/sys/class/block/NAME/stat) and fio's report."""
from __future__ import annotations

import dataclasses
import os

import pytest

import rwsw_captures
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_RESULT_FILE, EXIT_USAGE
from tkperf.rwsw import model
from tkperf.testtypes.realworld import blockstats, exactlog
from tkperf.testtypes.realworld.delivered import BLOCK, overall
from tkperf.testtypes.realworld.delivered import steps as steps_of
from tkperf.verdict import conformance

MiB = 1 << 20


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _capture(folder, lines, duration_s: float = 6.0, size: int = 1 << 30) -> str:
    """A capture (the fixture's streams: reads of 4 and 128 KiB, writes of 8 and 64 KiB) whose iolog holds ``lines``."""
    with open(os.path.join(folder, "cap.iolog"), "w", encoding="ascii") as fh:
        fh.write("fio version 3 iolog\n0 /dev/captured add\n0 /dev/captured open\n")
        fh.writelines(f"{ln}\n" for ln in lines)
        last = max([int(ln.split()[0]) for ln in lines] + [int(duration_s * 1e6) - 1])
        fh.write(f"{last} /dev/captured close\n")
    cap = dataclasses.replace(rwsw_captures.capture(step_s=duration_s / 2, size=size), iolog="cap.iolog")
    path = os.path.join(folder, "cap.xml")
    model.save(cap, path)
    return path


def _run(target, tmp_path, *args) -> store.RunResult:
    out = tmp_path / "out"
    rc = main(["ssd", "run", target, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", "--purge", "none", *args])
    assert rc in (0, 1), rc
    return store.load(str(out / "r.xml"))


# --- the iolog against its capture --------------------------------------------------------------

@pytest.mark.parametrize("line, words", [
    ("6500000 /dev/captured write 0 65536", "beyond the capture's 6.000 s"),
    (f"1000 /dev/captured read {(1 << 30) - 4096} 8192", "ends beyond the captured device's"),
    ("1000 /dev/captured write 0 4096", "a transfer size the capture holds no write stream of"),
    ("1000 /dev/captured read 0 12288", "a transfer size the capture holds no read stream of"),
    (f"1000 /dev/captured trim {1 << 30} 4096", "ends beyond the captured device's"),
])
def test_an_iolog_that_disagrees_with_its_capture_is_one_line_exit_7(loopdev, tmp_path, capsys, line, words):
    path = _capture(str(tmp_path), ["500 /dev/captured read 0 4096", line])
    rc = main(["ssd", "run", loopdev, "--tests", "replay", "--replay", "exact", "--workload", path, "--dry-run"])
    assert rc == EXIT_RESULT_FILE
    err = _one_line(capsys)
    assert words in err and "cap.iolog" in err and "not this capture's" in err


def test_the_capture_peak_in_flight_count_sets_the_depth(tmp_path):
    cap = rwsw_captures.capture(step_s=3.0)  # step 1: QD 4 at 10,000 I/Os in 3 s -> 1,200 µs each
    assert 1e6 * cap.steps[0].qd / cap.steps[0].iops == pytest.approx(1200.0)
    assert exactlog.peak_in_flight([0, 100, 200, 300, 400], cap) == 5  # all five within 1,200 µs
    assert exactlog.peak_in_flight([0, 2000, 4000, 6000], cap) == 1  # each done before the next
    assert exactlog.peak_in_flight([0, 1000, 1100, 3000], cap) == 3  # 1000 and 1100 issued before 0 is done
    assert exactlog.peak_in_flight([0, 1300, 2600, 2700], cap) == 2
    # a burst of 50 at once in step 2 (QD 6 at 10,000 I/Os in 3 s: 1,800 µs each)
    assert exactlog.peak_in_flight([3_000_000 + i for i in range(50)], cap) == 50


def test_block_counters_are_read_from_the_devices_stat_file(loopdev):
    path = blockstats.stat_file(loopdev)
    assert path == f"/sys/class/block/{os.path.basename(loopdev)}/stat"
    got = blockstats.read(path)
    assert got is not None and got.ios >= 0
    assert blockstats.stat_file("/dev/null") is None and blockstats.read(None) is None


# --- exact replay on a loop device ------------------------------------------------------------

@needs_fio
def test_exact_replay_keeps_flushes_and_discards_at_the_captured_depth(loopdev, tmp_path):
    lines = []
    for i in range(300):
        t = 10_000 + i * 3000
        lines.append(f"{t} /dev/captured write {i * 65536} 65536" if i % 3 else
                     f"{t} /dev/captured read {(i * 7919 % 20000) * 4096} 4096")
        if i % 30 == 29:
            lines.append(f"{t + 1} /dev/captured sync 0 0")
        if i % 50 == 49:
            lines.append(f"{t + 2} /dev/captured trim {i * 65536} 65536")
    path = _capture(str(tmp_path), lines, duration_s=1.2)
    run = _run(loopdev, tmp_path, "--tests", "replay", "--replay", "exact", "--workload", path)
    (test,) = run.tests
    (w,) = test.rounds[0].workloads
    assert (w.read.ios, w.write.ios) == (100, 200) and not w.error
    assert (test.data["exact.flushes"], test.data["exact.discards"]) == ("10", "6")
    counters = blockstats.stored(test.data, 1)
    assert counters is not None
    # the loop device's own counters saw every flush the iolog held, and every I/O
    assert counters.flushes >= 10 and counters.ios >= 300
    # and every discard, or the verdict says how many were not issued (fio 3.33's iolog replay skips trims)
    deviations = conformance.of_run(run).deviations
    if counters.discards < 6:
        assert f"replay: 6 captured discards in the iolog, {counters.discards} seen at the target's block layer: " \
               "fio's iolog replay did not issue them all" + (
                   " (fio 3.33 refuses an iolog's trim actions: 'bad ddir')" if not counters.discards else "") \
               in deviations
    # never more outstanding than the capture had: 3 ms apart at 1.2 ms each is one at a time
    assert w.iodepth == int(test.data["exact.iodepth"]) == int(test.params["iodepth"]) == 1
    figures = overall(test)
    traced = blockstats.stored_traced(test.data, 1)  # the capture's definition: the data I/Os, traced
    assert figures is not None and figures.lat_source == BLOCK and traced is not None
    assert traced.ios == 300 and figures.lat_mean_us == pytest.approx(traced.lat_mean_us)
    # and in each of the capture's two steps, in its window of the capture's time (the last keeps the late ones)
    stepped = blockstats.stored_steps(test.data, 1)
    assert len(stepped) == 2 and None not in stepped, stepped
    assert sum(s.ios for s in stepped if s) == 300 and all(s.ios and s.lat_p99_us > 0 for s in stepped if s)
    # fio's own record of what it issued (its submission log) counted in the capture's two steps of 0.6 s: the
    # iolog's I/Os at 10 ms + 3 ms each are 197 and 103, and fio's log holds every read and write it reports
    assert test.data["exact.timing"] == "measured"
    steps = [tuple(int(test.data[f"exact.step.{n}.{k}"]) for k in ("captured", "replayed")) for n in (1, 2)]
    assert [c for c, _ in steps] == [197, 103] and "exact.step.3.captured" not in test.data
    assert sum(r for _, r in steps) == w.read.ios + w.write.ios == 300
    # a timing miss is named, never quiet (fio's runtime less its lead before the capture's time 0, measured)
    zero_ms = int(test.data["exact.zero_us"]) / 1000.0
    assert 0 <= zero_ms <= exactlog.LEAD_MS, zero_ms
    took = w.runtime_ms / 1000.0 - zero_ms / 1000.0
    named = [d for d in deviations if "the exact replay took" in d]
    assert bool(named) == (took > 1.2 * 1.1 + 1.0), (took, named)
    # a capture whose device answered ten times faster than this one: the verdict names both response times
    from tkperf.kit import registry as testtypes
    from tkperf.model.pts import REVISIONS

    kind = testtypes.get("replay")
    test.params.update({"capture_qd": "1.0", "capture_iops": repr(1e6 / (figures.lat_mean_us / 10))})
    words = kind.pts.result_deviations(kind, test, {}, next(iter(REVISIONS.values())), 256 * MiB)
    (named,) = [w for w in words if w.startswith("replay: the exact replay's ")]
    assert f"mean response time {figures.lat_mean_us:,.0f} µs against the captured " \
           f"{figures.lat_mean_us / 10:,.0f} µs (10.00x)" in named, named
    assert named.endswith(f"({BLOCK}): this drive serves the capture's I/Os at another speed than the captured "
                          "device"), named


@needs_fio
def test_an_exact_replay_holds_each_steps_timing_and_names_the_steps_a_slow_drive_put_behind(simdrive, tmp_path):
    """400 reads in the capture's first 0.1 s, on an emulated SSD whose controller takes 5 ms a command (at most
    200 in a second, whatever the load), then 5 reads at 3.6 s.  fio's submission log puts at most about 200 of
    the first step's reads in its second and the rest in step 2, which captured none: the verdict names both.
    The 5 reads are issued in their own step, at their captured time after the drive's backlog, not 3.6 s after
    the backlog's last issue as fio's version 3 iolog delays would put them."""
    lines = [f"{10_000 + i * 250} /dev/captured read {i * 4096} 4096" for i in range(400)]
    lines += [f"{3_600_000 + i * 1000} /dev/captured read {(1000 + i) * 4096} 4096" for i in range(5)]
    with open(tmp_path / "cap.iolog", "w", encoding="ascii") as fh:
        fh.write("fio version 3 iolog\n0 /dev/captured add\n0 /dev/captured open\n")
        fh.writelines(f"{ln}\n" for ln in lines)
        fh.write("4999000 /dev/captured close\n")
    steps = ((0.001, (("random", "read", 4096, 400),)), (0.0, ()), (0.0, ()), (0.001, (("random", "read", 4096, 5),)),
             (0.0, ()))
    path = str(tmp_path / "cap.xml")
    model.save(dataclasses.replace(rwsw_captures.capture(step_s=1.0, steps=steps, size=16 * MiB), iolog="cap.iolog"),
               path)
    drive = simdrive(capacity="16M", cmd_us=5000)
    run = _run(drive.path, tmp_path, "--tests", "replay", "--replay", "exact", "--workload", path)
    (test,) = run.tests
    (w,) = test.rounds[0].workloads
    assert w.read.ios == 405 and w.iodepth == 1 and not w.error
    counted = [tuple(int(test.data[f"exact.step.{n}.{k}"]) for k in ("captured", "replayed", "edge")) for n in
               range(1, 6)]
    assert [c for c, _, _ in counted] == [400, 0, 0, 5, 0] and sum(r for _, r, _ in counted) == 405
    assert counted[0][1] <= 205 and counted[1][1] >= 150, counted  # the drive's 200 a second, from fio's own log
    assert counted[3][1] == 5, counted  # held at their captured time: the lag did not add up
    named = [d for d in conformance.of_run(run).deviations if "the exact replay issued" in d]
    lag = int(test.data["exact.lag_max_us"]) / 1e6
    assert lag >= 0.9, lag
    assert named[:2] == [
        f"replay: step 1: the exact replay issued {counted[0][1]:,} reads and writes in the step's time against the "
        f"capture's 400 ({counted[0][1] / 400:.2f}x the captured IOPS): the replay did not keep the captured timing "
        f"(fio up to {lag:,.3f} s behind it)",
        f"replay: step 2: the exact replay issued {counted[1][1]:,} reads and writes in the step's time against the "
        f"capture's 0: the replay did not keep the captured timing (fio up to {lag:,.3f} s behind it)"]
    assert not any(d.startswith("replay: step 4:") for d in named), named


# --- rwsw-wsat without writes -------------------------------------------------------------------

def test_rwsw_wsat_refuses_a_workload_without_writes(loopdev, tmp_path, capsys):
    steps = ((2.0, (("random", "read", 4096, 900), ("sequential", "read", 131072, 100))),)
    path = os.path.join(str(tmp_path), "reads.xml")
    model.save(rwsw_captures.capture(steps=steps), path)
    rc = main(["ssd", "run", loopdev, "--tests", "rwsw-wsat", "--workload", path, "--dry-run"])
    assert rc == EXIT_USAGE
    assert _one_line(capsys).endswith("rwsw-wsat: --workload reads.xml: its dominant streams hold no writes, so "
                                      "WSAT's total-written stop could never fire; use rwsw-dirth or replay")
    assert main(["ssd", "run", loopdev, "--tests", "rwsw-dirth", "--workload", path, "--dry-run", "--quick"]) == 0


# --- the report -------------------------------------------------------------------------------

@needs_fio
def test_the_replay_report_says_what_ran_and_how_it_was_measured(loopdev, tmp_path, capsys):
    path = rwsw_captures.write(str(tmp_path), step_s=2.0)
    assert main(["ssd", "run", loopdev, "--tests", "replay", "--workload", path, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 fio runs, 5 s of I/O" in out  # 2 s steps: concurrent jobs take the time of the longest, + fio start
    _run(loopdev, tmp_path, "--tests", "replay", "--workload", path)
    assert main(["report", str(tmp_path / "out" / "r.xml"), "--format", "rst", "--outdir",
                 str(tmp_path / "rep"), "-q"]) == 0
    text = next((tmp_path / "rep").glob("*.rst")).read_text()
    assert "TC ?" not in text and "QD ?" not in text and "stopped before WIPC" not in text
    assert "none: the replay runs right after the purge" in text
    assert "one fio job per IO stream, each at its own depth" in text
    assert "Every workload's averages" not in text and "n/a | n/a" not in text
    assert "mean response time (block tracepoints, data I/Os issue to completion, as the capture measures " \
           "them)" in text
    assert "Every step, asked and delivered" in text


# --- a step's flushes (capture version 2) ---------------------------------------------------------

@needs_fio
def test_a_steps_captured_flushes_are_replayed_and_counted_at_the_block_layer(loopdev, tmp_path, capsys):
    seen_type = getattr(model, "Seen", None)
    if seen_type is None:
        pytest.skip("this tree's captures keep no flushes (capture version 2)")

    def seen(flushes: int):
        return seen_type(lat=None, read=None, write=None, flushes=flushes, fua=0, discards=0, discard_bytes=0,
                         lost_events=0)

    steps = ((1.0, (("random", "write", 8192, 600), ("random", "read", 4096, 300))),)
    cap = rwsw_captures.capture(step_s=3.0, steps=steps)
    cap = dataclasses.replace(cap, seen=seen(200), steps=tuple(dataclasses.replace(s, seen=seen(200))
                                                               for s in cap.steps))
    path = os.path.join(str(tmp_path), "flushes.xml")
    model.save(cap, path)
    assert main(["ssd", "run", loopdev, "--tests", "replay", "--workload", path, "--dry-run", "--jobs"]) == 0
    jobs = capsys.readouterr().out
    assert jobs.count("fsync=3") == 1  # 600 writes over 200 flushes, on the write stream's job only
    run = _run(loopdev, tmp_path, "--tests", "replay", "--workload", path)
    (test,) = run.tests
    counters = blockstats.stored(test.data, test.rounds[0].index)
    assert counters is not None and test.params["step.1.flushes"] == "200"
    named = [d for d in conformance.of_run(run).deviations if "flushes at the block layer" in d]
    if abs(counters.flushes / 200 - 1) > 0.25:  # fio's fsyncs, counted by the loop device itself
        assert named == [f"replay: step 1: {counters.flushes:,} flushes at the block layer against the captured 200 "
                         "(fio fsync every 3 writes)"], named
    else:
        assert not named and counters.flushes > 0


@needs_fio
def test_an_exact_replay_without_block_counters_says_its_response_time_is_fios(tmp_path):
    lines = [f"{10_000 + i * 2000} /dev/captured write {i * 65536} 65536" for i in range(100)]
    path = _capture(str(tmp_path), lines, duration_s=0.5)
    run = _run(str(tmp_path / "target.img"), tmp_path, "--size", "64m", "--tests", "replay", "--replay", "exact",
               "--workload", path)
    (test,) = run.tests
    assert blockstats.stored(test.data, 1) is None  # a file: no block-layer counters
    figures = overall(test)
    assert figures is not None and figures.lat_source != BLOCK
    assert "replay: the exact replay's response time is fio's (the target has no block-layer counters here): it " \
           "counts completed I/Os fio has not yet reaped while it keeps the captured timing, unlike the capture's" \
           in conformance.of_run(run).deviations


@needs_fio
def test_a_light_step_stays_light(loopdev, tmp_path):
    """A step of 3 I/Os in 5 s (the review's: run flat out it wrote 117 MB) is replayed at its 0.6 IOPS."""
    steps = ((0.01, (("random", "write", 65536, 3),)),)
    path = os.path.join(str(tmp_path), "light.xml")
    model.save(rwsw_captures.capture(step_s=5.0, steps=steps), path)
    run = _run(loopdev, tmp_path, "--tests", "replay", "--workload", path)
    (test,) = run.tests
    (w,) = test.rounds[0].workloads
    assert 1 <= w.write.ios <= 4 and w.iodepth == 1, (w.write.ios, w.iodepth)  # fio rate: 3 x 64 KiB in 5 s
    (got,) = steps_of(test)
    named = [d for d in conformance.of_run(run).deviations if d.startswith("replay: step 1: ran at ")]
    assert bool(named) == (got.iops > 1.1 * got.kept_iops), (got.iops, named)
