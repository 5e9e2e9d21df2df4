"""fio's JSON output at its edges: every figure of jobs reported apart
merged, a job fio ended with an error, objects that are not a report, fio
2.x's units, the CPU warning at its threshold -- and the messages a user
reads, whole.  Recorded reports are from real fio runs (tests/data/README.rst)."""
import json

import pytest

from conftest import data_path
from tkperf.errors import FioError
from tkperf.fio.output import (
    CPU_BOUND_MARK,
    _merge,
    cpu_bound_warning,
    cumulative_write,
    first_json_object,
    iostats,
    json_objects,
    parse_jobs,
)
from tkperf.model import histogram
from tkperf.model.results import PERCENTILES, IoStats, Workload

APART = "fio-3.33-randrw-2jobs-apart.json"
ERROR = "fio-3.33-error-einval.out"


def text(name: str) -> str:
    with open(data_path(name)) as fh:
        return fh.read()


def spec(rw, bs, mix=0, numjobs=1, iodepth=1):
    return dict(rw=rw, bs=bs, rwmixread=mix, numjobs=numjobs, iodepth=iodepth)


def fio_key(p: str) -> str:
    return f"{float(p):f}"


@pytest.mark.parametrize("side", ["read", "write"])
def test_jobs_reported_apart_merge_every_figure(side):
    report = json.loads(text(APART))
    a, b = (job[side] for job in report["jobs"])
    (w,) = parse_jobs(report, {"rw": spec("randrw", 4096, 70, 2, 4)})
    s = getattr(w, side)
    ios = a["total_ios"] + b["total_ios"]
    assert a["total_ios"] > 0 and b["total_ios"] > 0
    assert s.ios == ios
    assert s.iops == pytest.approx(a["iops"] + b["iops"])
    assert s.bw_bytes == a["bw_bytes"] + b["bw_bytes"]
    assert s.io_bytes == a["io_bytes"] + b["io_bytes"]
    for kind in ("lat", "clat", "slat"):
        na, nb = a[f"{kind}_ns"], b[f"{kind}_ns"]
        mean = (na["mean"] * a["total_ios"] + nb["mean"] * b["total_ios"]) / ios / 1000.0
        assert getattr(s, f"{kind}_mean_us") == pytest.approx(mean, rel=1e-12), kind
        assert getattr(s, f"{kind}_min_us") == min(na["min"], nb["min"]) / 1000.0, kind
        assert getattr(s, f"{kind}_max_us") == max(na["max"], nb["max"]) / 1000.0, kind
        assert getattr(s, f"{kind}_stddev_us") == max(na["stddev"], nb["stddev"]) / 1000.0, kind
    # the larger of the two jobs' percentiles (a bound), each no more than its
    # job's largest I/O (fio's value is its bin's label); fio wrote no 99.999 here
    pa, pb = a["lat_ns"]["percentile"], b["lat_ns"]["percentile"]
    kept = [p for p in PERCENTILES if fio_key(p) in pa]
    assert kept == ["99", "99.9", "99.99"]
    ma, mb = a["lat_ns"]["max"], b["lat_ns"]["max"]
    assert s.percentiles == tuple((p, max(min(pa[fio_key(p)], ma), min(pb[fio_key(p)], mb)) / 1000.0)
                                  for p in kept)
    assert all(v <= s.lat_max_us for _, v in s.percentiles)
    assert s.bins == ()  # json, not json+: no histogram
    assert w.runtime_ms == max(j[side]["runtime"] for j in report["jobs"])
    assert w.cpu_pct == max(j["usr_cpu"] + j["sys_cpu"] for j in report["jobs"])
    assert w.error == 0
    assert (w.name, w.rw, w.bs, w.rwmixread, w.numjobs, w.iodepth) == ("rw", "randrw", 4096, 70, 2, 4)


def test_jobs_reported_apart_without_io_in_a_direction_stay_zero():
    report = json.loads(text("fio-3.33-jsonplus-randread-2jobs.json"))
    (w,) = parse_jobs(report, {"x": spec("randrw", 4096, 100, 2, 1)})
    assert w.write == IoStats()
    assert w.read.bins == histogram.merge(*(histogram.clamp(histogram.from_fio(j["read"]["lat_ns"]["bins"]),
                                                            j["read"]["lat_ns"]["max"] / 1000.0)
                                            for j in report["jobs"]))


def test_the_minimum_is_of_the_jobs_with_io():
    idle = IoStats(lat_max_us=0.0)
    busy = IoStats(ios=10, iops=5.0, lat_mean_us=4.0, lat_min_us=3.0, lat_max_us=9.0,
                   lat_stddev_us=1.0, percentiles=(("99", 8.0),), bins=((3000, 10),))
    for merged in (_merge(idle, busy), _merge(busy, idle)):
        assert merged.lat_min_us == 3.0 and merged.lat_mean_us == 4.0
        assert merged.lat_max_us == 9.0 and merged.lat_stddev_us == 1.0
        assert merged.percentiles == (("99", 8.0),) and merged.bins == ((3000, 10),)
        assert merged.ios == 10 and merged.iops == 5.0
    assert _merge(idle, idle) == IoStats()
    # a percentile only one job has is kept as it is, however small
    other = IoStats(ios=1, percentiles=(("99", 9.0), ("99.9", 0.5)))
    assert _merge(busy, other).percentiles == (("99", 9.0), ("99.9", 0.5))
    assert _merge(other, busy).percentiles == (("99", 9.0), ("99.9", 0.5))


def test_a_job_that_fio_ended_with_an_error():
    raw = text(ERROR)
    assert raw.startswith("fio: pid=")  # fio's error line comes before the JSON
    report = first_json_object(raw)
    (w,) = parse_jobs(report, {"unaligned": spec("randread", 1000, 100)})
    job = report["jobs"][0]
    assert w.error == job["error"] == 22  # EINVAL: 1000-byte direct I/O
    assert job["read"]["runtime"] == 0 and w.runtime_ms == job["job_runtime"]
    assert w.read.ios == job["read"]["total_ios"]
    assert job["usr_cpu"] == job["sys_cpu"] == 0.0 and w.cpu_pct == 0.0


def test_the_error_of_either_job_of_a_workload_is_kept():
    ok = json.loads(text(APART))["jobs"][0]
    failed = dict(first_json_object(text(ERROR))["jobs"][0], jobname="rw")  # two recorded jobs as one workload's
    for jobs in ([ok, failed], [failed, ok]):
        (w,) = parse_jobs({"jobs": jobs}, {"rw": spec("randrw", 4096, 70, 2, 4)})
        assert w.error == 22


@pytest.mark.parametrize("obj", ['{"fio version": "fio-3.33"}', '{"jobs": {}}', '{"client_stats": "x"}',
                                 '{"jobs": null}'])
def test_an_object_without_jobs_is_refused_in_words(obj):
    with pytest.raises(FioError) as exc:
        first_json_object("fio: warning\n" + obj)
    assert str(exc.value) == "fio's JSON has no 'jobs' list (nor a client's 'client_stats')"


def test_a_client_report_is_accepted():
    assert first_json_object('{"client_stats": []}') == {"client_stats": []}
    assert first_json_object('[{"jobs": []}]') == {"jobs": []}  # the first object


def test_no_json_and_broken_json_in_words():
    with pytest.raises(FioError) as exc:
        first_json_object("fio: file:filesetup.c error\n")
    assert str(exc.value) == "fio printed no JSON"
    assert exc.value.stderr == "fio: file:filesetup.c error\n"
    with pytest.raises(FioError) as exc:
        first_json_object('x {"jobs": [1,')
    assert str(exc.value) == "fio printed invalid JSON (Expecting value at char 14)"
    for long in ("w" * 3000, "w" * 3000 + "{"):  # fio's last 2000 characters are kept
        with pytest.raises(FioError) as exc:
            first_json_object(long)
        assert exc.value.stderr == long[-2000:]


def test_unknown_and_missing_jobs_in_words():
    report = json.loads(text("fio-3.33-write.json"))
    with pytest.raises(FioError) as exc:
        parse_jobs(report, {"other": spec("write", 4096)})
    assert str(exc.value) == "fio reported a job tkperf did not start: 'seqwrite-128k'"
    with pytest.raises(FioError) as exc:
        parse_jobs(report, {"seqwrite-128k": spec("write", 131072), "x": spec("write", 4096),
                            "y": spec("write", 4096)})
    assert str(exc.value) == "fio's report lacks workload x"
    assert parse_jobs({"jobs": []}, {}) == []
    assert parse_jobs({"client_stats": []}, {}) == []
    with pytest.raises(FioError) as exc:
        parse_jobs({"client_stats": []}, {"x": spec("write", 4096)})
    assert str(exc.value) == "fio's report lacks workload x"


def test_a_job_without_cpu_figures_used_none():
    # the recording less its CPU figures: fio always writes usr_cpu and sys_cpu;
    # a missing or null one counts as 0
    job = json.loads(text("fio-3.33-write.json"))["jobs"][0]
    del job["usr_cpu"], job["sys_cpu"]
    for cpu in ({}, {"usr_cpu": 2.0}, {"sys_cpu": 3.0}, {"usr_cpu": None, "sys_cpu": None}):
        (w,) = parse_jobs({"jobs": [{**job, **cpu}]}, {"seqwrite-128k": spec("write", 131072)})
        assert w.cpu_pct == float(cpu.get("usr_cpu") or 0.0) + float(cpu.get("sys_cpu") or 0.0)
        assert w.read == IoStats() and w.write.ios == job["write"]["total_ios"] and w.error == 0


def test_a_job_without_a_name_is_not_one_tkperf_started():
    with pytest.raises(FioError) as exc:
        parse_jobs({"jobs": [{"read": {}}]}, {"x": spec("write", 4096)})
    assert str(exc.value) == "fio reported a job tkperf did not start: ''"


def test_a_job_keeps_what_tkperf_asked_for_and_fios_cpu_use():
    report = json.loads(text("fio-3.33-write.json"))
    job = report["jobs"][0]
    (w,) = parse_jobs(report, {"seqwrite-128k": spec("write", 131072, 0, 1, 32)})
    assert (w.name, w.rw, w.bs, w.rwmixread, w.numjobs, w.iodepth) == ("seqwrite-128k", "write", 131072, 0, 1, 32)
    assert w.cpu_pct == job["usr_cpu"] + job["sys_cpu"]
    assert w.runtime_ms == job["write"]["runtime"]


def test_fio_2_units():
    # fio 2.x's shape (usec, KiB), written by hand: there is no fio 2 here to record with
    side = {"total_ios": 4, "iops": 2.0, "bw": 8, "io_kbytes": 16,
            "lat": {"mean": 1.5, "min": 1, "max": 3, "stddev": 0.5,
                    "percentile": {"99.000000": 2.5, "50.000000": 1.0}},
            "clat": {"mean": 1.25}}
    s = iostats(side)
    assert s.bw_bytes == 8192.0 and s.io_bytes == 16384 and s.ios == 4 and s.iops == 2.0
    assert (s.lat_mean_us, s.lat_min_us, s.lat_max_us, s.lat_stddev_us) == (1.5, 1.0, 3.0, 0.5)
    assert (s.clat_mean_us, s.clat_min_us, s.clat_max_us) == (1.25, 0.0, 0.0)
    assert (s.slat_mean_us, s.slat_max_us) == (0.0, 0.0)
    assert s.percentiles == (("99", 2.5),)
    # fio 3 writes both; io_bytes is the exact one
    assert iostats({"io_bytes": 1000, "io_kbytes": 0}).io_bytes == 1000


def test_a_direction_without_io_has_no_figures():
    side = {"total_ios": 0, "lat_ns": {"mean": 5000.0, "max": 9000, "percentile": {"99.000000": 7000},
                                        "bins": {"7000": 1}}}
    assert iostats(side) == IoStats()
    assert iostats({}) == IoStats()


def test_percentiles_sorted_and_only_those_kept():
    side = {"total_ios": 1, "lat_ns": {"percentile": {"99.990000": 30000, "99.000000": 10000, "50.000000": 1,
                                                      "99.900000": 20000, "99.999000": 40000}}}
    assert iostats(side).percentiles == (("99", 10.0), ("99.9", 20.0), ("99.99", 30.0), ("99.999", 40.0))
    assert iostats({"total_ios": 1, "lat_ns": {"percentile": None}}).percentiles == ()


def wl(name: str, cpu: float) -> Workload:
    return Workload(name, "randwrite", 4096, 0, 1, 1, 1000, cpu_pct=cpu)


@pytest.mark.parametrize("cpu, warned", [(89.9, False), (90.0, True), (90.1, True)])
def test_the_cpu_warning_from_90_percent(cpu, warned):
    got = cpu_bound_warning([wl("a", 10.0), wl("b", cpu)])
    assert got == (f"fio used {cpu:.1f}% of one CPU per job (usr+sys) in workload b: "
                   "the host CPU, not the drive, may have limited the result" if warned else "")


def test_the_cpu_warning_threshold_and_sharing():
    loads = [wl("a", 50.0), wl("b", 20.0)]
    assert cpu_bound_warning([]) == ""
    assert cpu_bound_warning(loads, threshold=50.0) == (
        f"fio used 50.0% of one CPU per job (usr+sys) in workload a: {CPU_BOUND_MARK}")
    assert cpu_bound_warning(loads, threshold=50.1) == ""
    assert cpu_bound_warning(loads, threshold=0.0).endswith(f"workload a: {CPU_BOUND_MARK}")
    base = f"fio used 50.0% of one CPU per job (usr+sys) in workload a: {CPU_BOUND_MARK}"
    assert cpu_bound_warning(loads, {"runs": 3, "host_cpus": 2},
                             40.0) == base + "; 3 runs shared the host and its 2 CPUs"
    assert cpu_bound_warning(loads, {"runs": 2}, 40.0) == base + "; 2 runs shared the host"
    for sharing in ({"runs": 1, "host_cpus": 2}, {"runs": "3"}, None, [("runs", 3)]):
        assert cpu_bound_warning(loads, sharing, 40.0) == base


def test_cumulative_write_totals():
    job = json.loads(text("fio-3.33-write.json"))["jobs"][0]
    wr = job["write"]
    # the I/Os are the completions: the response times fio sampled, or the bytes over the one block size
    assert cumulative_write(job) == dict(runtime_ms=float(wr["runtime"]), ios=float(wr["lat_ns"]["N"]),
                                         io_bytes=float(wr["io_bytes"]),
                                         lat_sum=wr["lat_ns"]["mean"] * wr["lat_ns"]["N"] / 1000.0,
                                         lat_n=float(wr["lat_ns"]["N"]))
    assert cumulative_write(job, 4096)["ios"] == wr["io_bytes"] // 4096
    assert cumulative_write({"job_runtime": 1500}) == dict(runtime_ms=1500.0, ios=0.0, io_bytes=0.0, lat_sum=0.0,
                                                           lat_n=0.0)
    # I/Os but no latency reported: no latency summed (hand-written, as fio never writes it)
    assert cumulative_write({"write": {"runtime": 10, "total_ios": 10}})["lat_sum"] == 0.0


def test_a_running_jobs_ios_are_its_completions_not_its_issues():
    # recorded from fio 3.33 (randwrite 4k): while it runs, total_ios is ahead of the completions
    reports = [obj for obj, _ in json_objects(text("fio-3.33-status-interval-nj2.json"))]  # iodepth 4, 2 jobs
    ahead = 0
    for report in reports:
        job = report["jobs"][0]
        wr = job["write"]
        got = cumulative_write(job)
        assert got["ios"] == wr["lat_ns"]["N"] <= wr["total_ios"]
        ahead += wr["total_ios"] > wr["lat_ns"]["N"]
        bs = 4096
        assert cumulative_write(job, bs)["ios"] * bs == wr["io_bytes"] - wr["io_bytes"] % bs
    assert ahead  # the recording does show the difference the change is about


def test_the_run_time_is_the_longest_direction():
    # hand-written: tkperf runs no trim workload, so no recording has a trim time
    assert cumulative_write({"read": {"runtime": 5}, "write": {"runtime": 7}, "trim": {"runtime": 9},
                             "job_runtime": 30})["runtime_ms"] == 9.0
    assert cumulative_write({"read": {"runtime": 11}, "write": {"runtime": 7}})["runtime_ms"] == 11.0


def test_json_objects_resume_where_asked():
    stream = 'fio: x\n{"a": 1}\n{"b": [2]}{"c'
    found = list(json_objects(stream))
    assert found == [({"a": 1}, 15), ({"b": [2]}, 26)]
    assert list(json_objects(stream, 15)) == [({"b": [2]}, 26)]
    assert list(json_objects(stream, 26)) == []
    assert list(json_objects("no json")) == []
