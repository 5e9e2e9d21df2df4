"""Live throughput: the progress panel shows the running workload's current
IOPS, MB/s and mean response time from fio's status reports (issue 22, item 5)."""
from __future__ import annotations

import json
import re

import pytest

from conftest import needs_fio
from test_progress import argv, on_pty
from tkperf.cli import progress as shown
from tkperf.durations import micro_unit
from tkperf.fio import live
from tkperf.fio.backend import LocalFio
from tkperf.fio.jobs import FioJob, FioSettings
from tkperf.fio.live import LiveFigures, LiveMeter
from tkperf.kit import progress as ep


def _job(name, runtime_ms, read_ios=0, write_ios=0, bs=4096, lat_us=100.0):
    def side(ios):
        return {"total_ios": ios, "io_bytes": ios * bs, "runtime": runtime_ms if ios else 0,
                "lat_ns": {"mean": lat_us * 1000.0 if ios else 0.0}}
    return {"jobname": name, "read": side(read_ios), "write": side(write_ios)}


def test_meter_measures_the_running_workload_over_the_last_interval():
    meter = LiveMeter("iops round 1", clock=lambda: 5.0)
    first = meter.feed({"jobs": [_job("a", 1000, write_ios=1000, lat_us=200.0), _job("b", 0)]})
    assert (first.workload, first.iops, first.bw_bytes) == ("a", 1000.0, 4096000.0)
    assert first.lat_mean_us == pytest.approx(200.0)
    # a has ended at 1500 ms; b ran 1000 ms: b is the one running now
    a_end = _job("a", 1500, write_ios=1600, lat_us=200.0)
    now = meter.feed({"jobs": [a_end, _job("b", 1000, read_ios=3000, write_ios=1000, lat_us=50.0)]})
    assert now.workload == "b" and now.what == "iops round 1"
    assert now.iops == pytest.approx(4000.0) and now.bw_bytes == pytest.approx(4000 * 4096.0)
    assert now.lat_mean_us == pytest.approx(50.0)
    # interval mean, not the running mean: b's latency rose to 150 us on its next 4000 I/Os
    later = meter.feed({"jobs": [a_end, _job("b", 2000, read_ios=6000, write_ios=2000, lat_us=100.0)]})
    assert later.lat_mean_us == pytest.approx((100.0 * 8000 - 50.0 * 4000) / 4000)
    assert meter.feed({"jobs": [a_end, _job("b", 2000, read_ios=6000, write_ios=2000)]}) is None
    assert meter.feed("not a report") is None


def test_figures_in_words():
    f = LiveFigures("x", "rnd-4k-65-35", 45210.4, 185.2e6, 702.44, 0.0)
    assert f.text() == f"rnd-4k-65-35: 45,210 IOPS, 185.2 MB/s, mean latency 702.4 {micro_unit()}"


def test_progress_keeps_fresh_figures_only_and_the_panel_shows_them(monkeypatch):
    prog = ep.Progress()
    seen = []
    ep.add_listener(lambda p, e: seen.append(e))
    try:
        prog.run_started([ep.PlannedTest("iops", 10.0, 20.0)])
        assert live.wanted()  # someone listens: fio is asked for status reports
        live.publish(LiveFigures("iops round 1", "rnd-4k-100-0", 1000.0, 4.1e6, 98.5, live_clock()))
        assert seen[-1] == "live" and prog.live_now().workload == "rnd-4k-100-0"
        assert ep.snapshot(prog)["live"]["iops"] == 1000.0
        renderer = shown.LiveRenderer.__new__(shown.LiveRenderer)
        renderer.state = prog
        text = _rendered(renderer.render())
        assert "now" in text and f"rnd-4k-100-0: 1,000 IOPS, 4.1 MB/s, mean latency 98.5 {micro_unit()}" in text
        prog.live = LiveFigures("iops round 1", "old", 1.0, 1.0, 1.0, live_clock() - 60)
        assert prog.live_now() is None and "old" not in _rendered(renderer.render())
        prog.run_finished()
        assert not live.wanted()
    finally:
        ep._listeners.clear()
        live.set_sink(None)


def test_combined_view_row_shows_a_runs_live_figures():
    run = ep.RemoteRun("a", "/dev/x", state={"test": "iops", "index": 1, "tests": 1, "phase": "round 2 of 25",
                                             "live": {"iops": 1234.0, "bw_bytes": 5e6, "lat_mean_us": 80.0},
                                             "started": True, "eta": [1, 2]})
    assert shown.combined_row(run)[3] == f"round 2 of 25, now 1,234 IOPS, 5.0 MB/s, 80.0 {micro_unit()}"


def live_clock():
    import time
    return time.monotonic()


def _rendered(renderable) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


@needs_fio
def test_a_real_round_reports_live_and_measures_the_same(loopdev, tmp_path):
    got = []
    live.set_sink(got.append)
    try:
        fio = LocalFio(FioSettings(filename=loopdev), str(tmp_path))
        jobs = [FioJob(name="w", rw="randwrite", bs=4096, runtime=2, iodepth=4),
                FioJob(name="r", rw="randread", bs=4096, runtime=2, iodepth=4)]
        workloads, _ = fio.run(jobs, "live round")
    finally:
        live.set_sink(None)
    assert {f.workload for f in got} == {"w", "r"}
    assert all(f.iops > 0 and f.bw_bytes > 0 and f.lat_mean_us > 0 for f in got)
    # the result is fio's final report, as without status reports
    w, r = workloads
    assert (w.name, r.name) == ("w", "r")
    assert 1900 <= w.runtime_ms <= 2200 and w.write.ios > 0 and r.read.ios > 0
    assert w.write.iops == pytest.approx(w.write.ios * 1000.0 / w.runtime_ms, rel=0.02)


@needs_fio
def test_terminal_panel_shows_current_throughput(loopdev, tmp_path):
    cmd = argv(loopdev, tmp_path / "out", max_rounds="1")
    cmd[cmd.index("--runtime") + 1] = "3"
    rc, text = on_pty(cmd, "xterm-256color")
    assert rc == 0, text
    plain = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text))
    assert re.search(r"now rnd-4k-0-100: [\d,]+ IOPS, [\d,.]+ MB/s, mean latency [\d,.]+ (?:µs|us)",
                     plain), plain[-3000:]


def test_reader_keeps_the_warnings_and_the_last_report_whatever_the_chunks():
    from tkperf.fio.backend import LiveReader

    reports = [json.dumps({"jobs": [_job("a", 1000 * r, write_ios=100 * r)]}, indent=2) for r in (1, 2, 3)]
    text = "fio: some warning\n" + "\n".join(reports) + "\n"
    for size in (1, 7, 64, len(text)):
        got = []
        live.set_sink(got.append)
        try:
            reader = LiveReader(LiveMeter("r"))
            for at in range(0, len(text), size):
                reader.feed(text[at:at + size])
            reader.finish()
        finally:
            live.set_sink(None)
        assert [f.iops for f in got] == [100.0, 100.0, 100.0], size
        out = reader.output()
        assert out.startswith("fio: some warning\n{")
        assert json.loads(out[out.index("{"):]) == json.loads(reports[-1])


def test_reader_leaves_an_unfinished_report_for_the_error():
    from tkperf.fio.backend import LiveReader

    reader = LiveReader(LiveMeter("r"))
    reader.feed(json.dumps({"jobs": []}, indent=2) + '\n{\n  "jobs": [\n')
    reader.finish()
    assert reader.output().endswith('{\n  "jobs": [\n')


@pytest.mark.parametrize("jobs, histograms, seconds", [(1, False, 1), (56, False, 1), (56, True, 2),
                                                       (9, True, 1), (600, False, 2)])
def test_status_interval_grows_with_the_round(jobs, histograms, seconds):
    assert live.interval_for(jobs, histograms) == seconds


@needs_fio
def test_jobs_running_at_once_are_shown_as_fio_counts_them_together(loopdev, tmp_path, monkeypatch):
    # Issue 60 item 2: a replay step's streams run at once (stonewall=0); the panel took the stream whose
    # I/Os grew most as "the running workload".  Every live figure is held to fio's own numbers of the
    # same interval, summed over the jobs: completions, bytes and latency sums over the interval's time.
    from tkperf.fio import backend

    reports = []

    class Kept(LiveMeter):
        def feed(self, report):
            reports.append(report)
            return super().feed(report)

    monkeypatch.setattr(backend, "LiveMeter", Kept)
    got = []
    live.set_sink(got.append)
    try:
        fio = LocalFio(FioSettings(filename=loopdev), str(tmp_path))
        beside = (("stonewall", "0"), ("new_group", ""))
        jobs = [FioJob(name="w8k", rw="randwrite", bs=8192, runtime=3, iodepth=2),
                FioJob(name="r4k", rw="randread", bs=4096, runtime=3, iodepth=4, extra=beside)]
        fio.run(jobs, "replay step 1")
    finally:
        live.set_sink(None)
    assert got and all(f.workload == "w8k and 1 other job at once" for f in got)
    reports = [r for r in reports if isinstance(r, dict) and isinstance(r.get("jobs"), list)]

    def totals(report):
        out = {}
        for job in report["jobs"]:
            sides = [job[d] for d in ("read", "write")]
            out[job["jobname"]] = (max(s["runtime"] for s in sides), sum(s["lat_ns"]["N"] for s in sides),
                                   sum(s["io_bytes"] for s in sides),
                                   sum(s["lat_ns"]["mean"] * s["lat_ns"]["N"] for s in sides) / 1000.0)
        return out

    expected = []
    before = {}
    for report in reports:
        now = totals(report)
        if any(now[n][1] > before.get(n, (0, 0, 0, 0))[1] for n in now):
            ms = max(now[n][0] - before.get(n, (0, 0, 0, 0))[0] for n in now)
            ios = sum(now[n][1] - before.get(n, (0, 0, 0, 0))[1] for n in now)
            nbytes = sum(now[n][2] - before.get(n, (0, 0, 0, 0))[2] for n in now)
            lat = sum(now[n][3] - before.get(n, (0, 0, 0, 0))[3] for n in now)
            expected.append((ios * 1000.0 / ms, nbytes * 1000.0 / ms, lat / ios))
        before = now
    assert len(got) == len(expected) >= 2
    for f, (iops, bw, lat) in zip(got, expected):
        assert (f.iops, f.bw_bytes, f.lat_mean_us) == pytest.approx((iops, bw, lat), rel=1e-9)
        assert 4096 < f.bw_bytes / f.iops < 8192  # both jobs' I/Os: the step's own mix of sizes


def test_groups_follow_the_job_file():
    assert live.groups([("a", ()), ("b", (("stonewall", "0"),)), ("c", ()), ("d", (("x", "1"),))]) == \
        {"a": 0, "b": 0, "c": 1, "d": 2}
