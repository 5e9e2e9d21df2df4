"""What a steps replay runs beside its 16 largest streams (the remainder,
the discards) and where its flushes go, as planned (issue 57, items 4 and
6); fio's own counts are held in tests/e2e/test_rwsw_sidejobs.py."""
from __future__ import annotations

import dataclasses

import rwsw_captures
from tkperf.rwsw import model
from tkperf.testtypes.realworld import sidejobs
from tkperf.testtypes.realworld import workload as wl
from tkperf.testtypes.realworld.replay import step_phases

MiB = 1 << 20


def _seen(flushes: int, discards: int) -> model.Seen:
    return model.Seen(lat=None, read=None, write=None, flushes=flushes, fua=0, discards=discards,
                      discard_bytes=discards * MiB, lost_events=0)


def _capture(own_flushes: bool = True, discards: int = 30) -> model.Capture:
    """One 3 s step: 18 random reads (100 .. 49 I/Os), a log writer (300 writes, 300 flushes after them)
    and a random writer (300 writes, none)."""
    spec = [("random", "read", 4096 * (i + 1), 100 - 3 * i) for i in range(18)] + [
        ("sequential", "write", 4096, 300), ("random", "write", 8192, 300)]
    cap = rwsw_captures.capture(step_s=3.0, steps=((1.0, spec),))
    (st,) = cap.steps

    def flushes(s):
        if not own_flushes or s.rw == "read":
            return None
        return 300 if s.key == "SEQ 4KiB write" else 0

    streams = tuple(dataclasses.replace(s, flushes=flushes(s)) for s in st.streams)
    whole = tuple(dataclasses.replace(s, flushes=flushes(s)) for s in cap.streams)
    return dataclasses.replace(cap, streams=whole, seen=_seen(300, discards),
                               steps=(dataclasses.replace(st, streams=streams, seen=_seen(300, discards)),))


def _options(job):
    return dict(job.extra)


def test_the_remainder_and_the_discards_run_beside_the_16_largest_at_their_captured_rates():
    cap = _capture()
    (phase,), params = step_phases(cap, 0, "captured")
    jobs = {j.name: j for j in phase.jobs}
    assert len(jobs) == 18 and "st1-rest" in jobs and "st1-trim" in jobs
    rest = sidejobs.rest_streams(cap.steps[0])
    assert sorted(s.bs for s in rest) == [61440, 65536, 69632, 73728]  # the 4 smallest reads: 58, 55, 52, 49 I/Os
    assert _options(jobs["st1-rest"])["rate"] == f"{round(sum(s.ios * s.bs for s in rest) / 3.0)},1"
    assert jobs["st1-rest"].rw == "randread" and jobs["st1-rest"].rwmixread == 100
    trim = jobs["st1-trim"]
    assert (trim.rw, trim.bs, _options(trim)["rate"]) == ("randtrim", MiB, str(round(30 * MiB / 3.0)))
    assert params["step.1.left_out"] == "0.0" and float(params["step.1.rest"]) == sum(s.share for s in rest)
    assert params["share.st1-rest"] == params["step.1.rest"]
    assert (params["step.1.discards"], params["step.1.trim_bs"]) == ("30", str(MiB))


def test_each_write_stream_flushes_as_it_did_and_a_capture_without_it_spreads_them():
    (phase,), params = step_phases(_capture(), 0, "captured")
    fsync = {j.name: _options(j).get("fsync") for j in phase.jobs if j.rw in ("write", "randwrite")}
    assert fsync == {"st1-s0-rnd-8kib-write": None, "st1-s1-seq-4kib-write": "1"}, fsync
    assert "step.1.flushes_spread" not in params and params["step.1.fsync"] == "1"
    (phase,), params = step_phases(_capture(own_flushes=False), 0, "captured")
    fsync = {j.name: _options(j).get("fsync") for j in phase.jobs if j.rw in ("write", "randwrite")}
    assert set(fsync.values()) == {"2"} and params["step.1.flushes_spread"] == "true"  # 600 writes, 300 flushes
    assert "step 1: the capture did not record which stream flushed: its flushes spread over the write streams " \
           "(fio fsync every N writes of each)" in sidejobs.not_replayed(params, {}, {1: (30, 300)})


def test_at_the_maximum_intensity_the_remainder_joins_the_flow_and_the_flushes_their_streams():
    phases, params = step_phases(_capture(), 0, "max")
    cal_a, cal_b, step = phases
    assert len(cal_a.jobs) == len(cal_b.jobs) == 17  # 16 streams and the remainder, calibrated together
    assert [j.name for j in step.jobs][-2:] == ["st1-rest", "st1-trim"]
    assert all("flow" in _options(j) for j in step.jobs[:-1]) and "flow" not in _options(step.jobs[-1])
    assert [_options(j).get("fsync") for j in step.jobs if j.rw in ("write", "randwrite")] == [None, "1"]
    named = sidejobs.not_replayed(params, {}, {1: (30, 150)})
    assert named == ["step 1: 150 flushes at the block layer against the captured 300 (fio fsync every 1 writes)"]


def test_discards_not_replayed_are_named():
    (_, params) = step_phases(_capture(), 0, "captured")
    skipped = {sidejobs.TRIM_SKIPPED: "the target is not a block device (fio trims only block devices)"}
    assert sidejobs.not_replayed(params, skipped, {1: (0, 300)}) == [
        "step 1: 30 captured discards not replayed: the target is not a block device (fio trims only block devices)"]
    assert sidejobs.not_replayed(params, {}, {1: (12, 300)}) == [
        "step 1: 12 discards at the block layer against the captured 30 (fio randtrim of 1,048,576 bytes)"]
    assert sidejobs.not_replayed(params, {}, {1: (30, 300)}) == []
    assert sidejobs.not_replayed(params, {}, {1: None}) == [
        "step 1: 30 captured discards replayed as fio trims, not counted at the block layer"]
    idle = {"step.2.idle": "true", "step.2.discards": "7"}
    assert sidejobs.not_replayed(idle, {}, {}) == [
        "step 2: 7 captured discards not replayed (a step without reads or writes runs as an idle gap)"]


def test_flushes_that_followed_no_running_stream_are_named():
    cap = _capture()
    st = cap.steps[0]
    cap = dataclasses.replace(cap, steps=(dataclasses.replace(st, seen=_seen(310, 0)),))
    (_, params) = step_phases(cap, 0, "captured")
    assert params["step.1.flushes_unplaced"] == "10"
    assert "step 1: 10 captured flushes not replayed: they followed no write of a stream the step runs" \
        in sidejobs.not_replayed(params, {}, {1: (0, 300)})


def test_a_mixed_jobs_fsync_is_set_for_fios_count():
    # fio 3.33 syncs after the N-th write and after each read before the next: writes / (N x write share) syncs
    assert sidejobs.mixed_fsync(600, 300, 63) == 5          # 2 writes a flush over a 37% write share
    assert sidejobs.mixed_fsync(600, 300, 0) == sidejobs.fsync_every(600, 300) == 2
    assert sidejobs.mixed_fsync(600, 0, 50) == 0 and sidejobs.mixed_fsync(10, 300, 90) == 1


def test_the_applied_workload_flushes_and_names_what_it_does_not_apply():
    cap = _capture()
    streams = model.dominant(cap.streams)
    mix = wl.mixed(streams, cap)
    assert (mix.fsync, mix.write_fsync) == (sidejobs.mixed_fsync(600, 300, mix.rwmixread), 2)
    assert ("fsync", str(mix.fsync)) in mix.extra()
    params = {"fsync": str(mix.fsync), "capture_flushes": "310", "flushes": "300", "flushed_writes": "600",
              "flushes_spread": "false", "capture_discards": "30", "capture_discard_bytes": str(30 * MiB)}
    said = wl.side_deviations("rwsw-wsat", params)
    assert said[1:] == [
        "rwsw-wsat: 10 of the capture's 310 flushes are not applied (they followed writes of streams outside the "
        "applied workload, or no write)",
        "rwsw-wsat: the capture's 30 discards (31.5 MB) are not applied: the applied workload is one fio job, and fio "
        "mixes no trims into a job's reads and writes"]
    assert said[0].startswith(f"rwsw-wsat: the applied workload flushes as the capture did (300 flushes over 600 "
                              f"writes; the flushes that followed the applied write streams' writes), as fio fsync "
                              f"every {mix.fsync} writes")
    assert wl.mixed(streams).fsync == 0  # without the capture: no flushes


def test_the_verdict_says_how_a_result_ran_its_flushes_remainder_and_discards_and_an_older_one_what_it_did():
    (_, params) = step_phases(_capture(), 0, "captured")
    assert sidejobs.rules(params) == [
        "each write stream's captured flushes (those that followed its writes) as a flush every N of its writes "
        "(fio fsync), N its writes over its flushes, whole",
        "the streams beyond the 16 largest of a step as one more fio job (rwmixread, bssplit and percentage_random "
        "per direction, whole percentages), at their captured bytes per second",
        "a step's captured discards as a fio randtrim job of their mean size (whole 4 KiB) at their captured rate "
        "(step 1)"]
    # a result from before: its step params only (flushes spread, streams left out, no discards run)
    older = {"intensity": "captured", "step.1.fsync": "2", "step.1.flushes": "300", "step.1.left_out": "0.11"}
    assert sidejobs.rules(older) == [
        "a step's captured flushes, where the capture recorded them, as a flush every N writes of each write stream "
        "(fio fsync), N its writes over its flushes, whole"]
    assert sidejobs.not_replayed(older, {}, {1: (0, 300)}) == []


def test_a_discard_larger_than_the_targets_range_is_replayed_at_the_range():
    (phase,), params = step_phases(_capture(), 0, "captured", span=512 * 1024 + 100)
    (trim,) = [j for j in phase.jobs if j.rw == "randtrim"]
    assert trim.bs == 512 * 1024 and _options(trim)["rate"] == str(round(30 * 512 * 1024 / 3.0))
    assert "step 1: its discards (mean 1,048,576 bytes) replayed as 30 discards of 524,288 bytes, the target's range" \
        in sidejobs.not_replayed(params, {}, {1: (30, 300)})
