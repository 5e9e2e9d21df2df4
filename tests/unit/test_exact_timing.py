"""An exact replay holds its capture's timing per step (issue 57 item 5):
the mapped iolog waits until each captured millisecond since fio started
(fio iolog version 2 ``wait``) instead of fio's version 3 delays after the
previous issue, which add up; the timing is measured from fio's
submission log in the capture's own steps; and the verdict names every
step whose replayed I/Os are off from the captured ones."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tkperf.model.results import TestRun
from tkperf.testtypes.realworld import exact, exactlog


def _iolog(tmp_path, lines) -> str:
    path = tmp_path / "cap.iolog"
    path.write_text("fio version 3 iolog\n0 /dev/captured add\n0 /dev/captured open\n"
                    + "".join(f"{ln}\n" for ln in lines) + "9000 /dev/captured close\n", encoding="ascii")
    return str(path)


def test_the_mapped_copy_waits_until_each_captured_millisecond_since_fio_started(tmp_path):
    src = _iolog(tmp_path, ["100 /dev/captured read 4096 4096", "900 /dev/captured write 8192 8192",
                            "2500 /dev/captured sync 0 0", "2600 /dev/captured trim 0 65536",
                            "7100 /dev/captured read 0 4096"])
    out, stamps = io.StringIO(), []
    m = exactlog.write_mapped(src, out, "/dev/loop9", 1 << 20, stamps)
    lead = exactlog.LEAD_MS
    assert out.getvalue().splitlines() == [
        "fio version 2 iolog", "/dev/loop9 add", "/dev/loop9 open",
        f"/dev/loop9 wait {lead} 0", "/dev/loop9 read 4096 4096", "/dev/loop9 write 8192 8192",
        f"/dev/loop9 wait {lead + 2} 0", "/dev/loop9 sync 0 0", "/dev/loop9 trim 0 65536",
        f"/dev/loop9 wait {lead + 7} 0", "/dev/loop9 read 0 4096",
        "/dev/loop9 close"]
    assert stamps == [100, 900, 7100]  # the reads and writes fio will log, trims and flushes apart
    assert (m.reads, m.writes, m.flushes, m.discards, m.last_us) == (2, 1, 1, 1, 7100)


def test_timing_sets_fios_clock_by_its_earliest_issue_and_counts_each_step():
    # 10 I/Os in step 1 (0-1 s), none in step 2, 4 in step 3; fio's clock is 160 ms behind the capture's
    stamps = [i * 50_000 for i in range(10)] + [2_100_000, 2_200_000, 2_300_000, 2_400_000]
    issued = np.array([t / 1000.0 - 160 for t in stamps])
    issued[5:10] += 700  # the second half of step 1 is 0.7 s late: four of it fall into step 2
    t = exactlog.timing(stamps, np.sort(issued), [(0.0, 1.0), (1.0, 1.0), (2.0, 1.0)])
    assert t is not None
    assert [(s.captured, s.replayed) for s in t.steps] == [(10, 6), (0, 4), (4, 4)]
    assert t.lag_max_us == 700_000
    assert [s.edge for s in t.steps] == [1, 0, 0]  # the I/O at 0 µs is within 5 ms of step 1's start
    assert exactlog.timing([], np.array([]), [(0.0, 1.0)]) is None


def _test(data) -> TestRun:
    t = TestRun("replay", "replay", "", "", "")
    t.data.update({"exact.length_us": "3000000", **data})
    return t


def _steps(*rows):
    out = {"exact.timing": "measured", "exact.lag_max_us": "1250000", "exact.lag_p99_us": "900000"}
    for n, (c, r, e) in enumerate(rows, 1):
        out.update({f"exact.step.{n}.captured": str(c), f"exact.step.{n}.replayed": str(r),
                    f"exact.step.{n}.edge": str(e)})
    return out


def test_the_verdict_names_every_step_whose_replayed_ios_are_off():
    words = exact.timing_verdicts(_test(_steps((20000, 9311, 184), (500, 10223, 124), (8000, 8000, 73),
                                               (100, 186, 180), (0, 12, 3))))
    assert words == [
        "step 1: the exact replay issued 9,311 reads and writes in the step's time against the capture's 20,000 "
        "(0.47x the captured IOPS): the replay did not keep the captured timing (fio up to 1.250 s behind it)",
        "step 2: the exact replay issued 10,223 reads and writes in the step's time against the capture's 500 "
        "(20.45x the captured IOPS): the replay did not keep the captured timing (fio up to 1.250 s behind it)",
        "step 5: the exact replay issued 12 reads and writes in the step's time against the capture's 0: the replay "
        "did not keep the captured timing (fio up to 1.250 s behind it)"]


@pytest.mark.parametrize("captured, replayed, edge, named", [
    (1000, 1100, 0, False), (1000, 1101, 0, True), (1000, 899, 0, True),
    (1000, 1150, 50, False), (1000, 1151, 50, True), (0, 3, 3, False), (0, 4, 3, True)])
def test_a_step_is_named_beyond_the_tolerance_and_its_edges(captured, replayed, edge, named):
    assert bool(exact.timing_verdicts(_test(_steps((captured, replayed, edge))))) == named


def test_a_replay_whose_timing_was_not_measured_says_so():
    (old,) = exact.timing_verdicts(_test({}))
    assert old.startswith("the exact replay's timing in each step was not measured (a result from before tkperf "
                          "measured it: fio added up its own delays")
    (lost,) = exact.timing_verdicts(_test({"exact.timing": "unmeasured"}))
    assert lost == "the exact replay's timing in each step was not measured (fio's submission log could not be read)"
    assert exact.timing_verdicts(TestRun("replay", "replay", "", "", "")) == []  # a steps replay


def test_the_replays_length_is_fios_runtime_less_its_lead_before_the_captures_time_0():
    from tkperf.model.results import Round, Workload

    def test(data):
        t = _test(data)
        t.rounds.append(Round(index=1, started="", wall_s=11.0, fio_s=10.185,
                              workloads=(Workload("exact-replay", "randrw", 4096, 50, 1, 8, 10_185),)))
        return t

    assert exact.replayed_s(test({"exact.timing": "measured", "exact.zero_us": "181001"})) == pytest.approx(10.004)
    # a replay whose submission log could not be read: the lead asked for; a result from before the waits: fio's runtime
    assert exact.replayed_s(test({"exact.timing": "unmeasured"})) == pytest.approx(10.185 - exactlog.LEAD_MS / 1000)
    assert exact.replayed_s(test({})) == pytest.approx(10.185)


def test_an_exact_replay_says_each_captured_step_it_reaches(caplog):
    """One fio run holds every step of an exact replay: a line as each step's time is reached (off a
    terminal too), none once the run has ended."""
    import logging

    with caplog.at_level(logging.INFO, logger="tkperf.progress"):
        ticker = exact.StepTicker("replay", [(0.0, 0.02), (0.02, 0.02), (0.04, 0.02)], 0.0)
        ticker.thread.join(30.0)
        ticker.stop()
        stopped = exact.StepTicker("replay", [(0.0, 1.0), (3600.0, 1.0)], 3600.0)
        stopped.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "tkperf.progress"]
    assert lines == [f"[replay] exact replay: step {k} of 3 of the capture's time (from {t:.1f} s)"
                     for k, t in ((1, 0.0), (2, 0.02), (3, 0.04))]
    assert not stopped.thread.is_alive()
