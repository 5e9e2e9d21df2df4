import json

import pytest

from conftest import data_path
from tkperf.errors import FioError
from tkperf.fio.output import cumulative_write, first_json_object, json_objects, parse_jobs


def load(name):
    with open(data_path(name)) as fh:
        return json.load(fh)


def spec(rw, bs, mix=0, numjobs=1, iodepth=1):
    return dict(rw=rw, bs=bs, rwmixread=mix, numjobs=numjobs, iodepth=iodepth)


def test_read_job():
    (w,) = parse_jobs(load("fio-3.33-read.json"), {"randread-4k": spec("randread", 4096, 100, 1, 8)})
    raw = load("fio-3.33-read.json")["jobs"][0]["read"]
    assert w.read.iops == pytest.approx(raw["iops"])
    assert w.read.bw_bytes == raw["bw_bytes"]
    assert w.read.clat_mean_us == pytest.approx(raw["clat_ns"]["mean"] / 1000)
    assert w.read.clat_max_us == pytest.approx(raw["clat_ns"]["max"] / 1000)
    # recorded without lat_percentiles=1: no response-time percentiles (see test_response_time)
    assert w.read.percentiles == ()
    assert w.write.iops == 0 and w.write.ios == 0 and w.write.percentiles == ()
    assert w.runtime_ms > 900


def test_write_job():
    (w,) = parse_jobs(load("fio-3.33-write.json"), {"seqwrite-128k": spec("write", 131072)})
    assert w.write.bw_bytes > 0 and w.read.bw_bytes == 0
    assert w.write.io_bytes == load("fio-3.33-write.json")["jobs"][0]["write"]["io_bytes"]
    assert w.bw_bytes == w.write.bw_bytes


def test_mixed_job_weights_latency_by_io_count():
    (w,) = parse_jobs(load("fio-3.33-mixed.json"), {"randrw-8k-65-35": spec("randrw", 8192, 65)})
    assert w.read.iops > w.write.iops > 0
    share = w.read.ios / (w.read.ios + w.write.ios)
    assert 0.6 < share < 0.7
    expected = (w.read.lat_mean_us * w.read.ios + w.write.lat_mean_us * w.write.ios) / (w.read.ios + w.write.ios)
    assert w.lat_mean_us == pytest.approx(expected)
    assert w.iops == pytest.approx(w.read.iops + w.write.iops)


def test_numjobs_group_reporting_is_one_entry():
    report = load("fio-3.33-numjobs.json")
    assert len(report["jobs"]) == 1
    (w,) = parse_jobs(report, {"randwrite-4k-nj2": spec("randwrite", 4096, 0, 2, 4)})
    assert w.numjobs == 2 and w.write.iops == pytest.approx(report["jobs"][0]["write"]["iops"])


def test_numjobs_without_group_reporting_are_summed():
    report = load("fio-3.33-numjobs-separate.json")
    assert len(report["jobs"]) == 2
    (w,) = parse_jobs(report, {"rnd-4k-0-100": spec("randwrite", 4096, 0, 2, 4)})
    assert w.write.iops == pytest.approx(sum(j["write"]["iops"] for j in report["jobs"]))
    assert w.write.clat_max_us == pytest.approx(max(j["write"]["clat_ns"]["max"] for j in report["jobs"]) / 1000)


def test_stonewall_round_keeps_job_order_and_mixes():
    report = load("fio-3.33-round-stonewall.json")
    specs = {n: spec("randrw", 4096, m, 2, 4) for n, m in
             (("rnd-4k-100-0", 100), ("rnd-4k-65-35", 65), ("rnd-4k-0-100", 0))}
    ws = parse_jobs(report, specs)
    assert [w.name for w in ws] == list(specs)
    assert ws[0].write.iops == 0 and ws[0].read.iops > 0
    assert ws[2].read.iops == 0 and ws[2].write.iops > 0
    assert ws[1].read.iops > 0 and ws[1].write.iops > 0


def test_unknown_and_missing_jobs_are_errors():
    report = load("fio-3.33-write.json")
    with pytest.raises(FioError, match="did not start"):
        parse_jobs(report, {"other": spec("write", 4096)})
    with pytest.raises(FioError, match="lacks workload"):
        parse_jobs(report, {"seqwrite-128k": spec("write", 131072), "x": spec("write", 4096)})


def test_warnings_before_json_are_skipped_and_garbage_refused():
    with open(data_path("fio-3.33-write.json")) as fh:
        text = fh.read()
    assert first_json_object("fio: some warning line\n" + text)["jobs"]
    with pytest.raises(FioError, match="no JSON"):
        first_json_object("fio: file:filesetup.c error\n")
    with pytest.raises(FioError, match="invalid JSON"):
        first_json_object(text[: len(text) // 2])


def test_status_interval_stream_is_cumulative():
    with open(data_path("fio-3.33-status-interval.json")) as fh:
        text = fh.read()
    reports = [obj for obj, _ in json_objects(text)]
    assert len(reports) == 4
    ios = [r["jobs"][0]["write"]["total_ios"] for r in reports]
    assert ios == sorted(ios) and ios[0] > 0
    # an unfinished tail yields nothing more
    assert len([o for o, _ in json_objects(text[:-50])]) == 3


def test_runtime_is_wall_time_not_summed_over_jobs():
    report = load("fio-3.33-numjobs.json")
    job = report["jobs"][0]
    assert job["job_runtime"] > 1.5 * job["write"]["runtime"]  # fio sums job_runtime over the 2 jobs
    (w,) = parse_jobs(report, {"randwrite-4k-nj2": spec("randwrite", 4096, 0, 2, 4)})
    assert w.runtime_ms == job["write"]["runtime"]


def test_status_interval_totals_with_two_jobs():
    with open(data_path("fio-3.33-status-interval-nj2.json")) as fh:
        reports = [obj for obj, _ in json_objects(fh.read())]
    cuts = [cumulative_write(r["jobs"][0]) for r in reports]
    first, second = cuts[0], cuts[1]
    interval_ms = second["runtime_ms"] - first["runtime_ms"]
    assert 900 <= interval_ms <= 1100  # one second of wall time, not numjobs seconds
    iops = (second["ios"] - first["ios"]) * 1000 / interval_ms
    # the interval's IOPS sits near fio's own cumulative figure, not at half of it
    assert 0.5 * reports[1]["jobs"][0]["write"]["iops"] < iops < 2 * reports[1]["jobs"][0]["write"]["iops"]
    assert second["lat_sum"] > first["lat_sum"] > 0
