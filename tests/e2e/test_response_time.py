"""Latency is response time: fio's total latency (``lat``), with completion
(``clat``) and submission (``slat``) latency kept beside it -- parsed from
fio's JSON, kept in the result file, cut into WSAT intervals, upgraded from
format 1 and measured by a real LAT run."""
import dataclasses
import glob
import json
import os

import pytest
from lxml import etree

from conftest import DATA, data_path, needs_fio
from test_run_e2e import run_cli
from test_store import sample_run
from tkperf import store
from tkperf.fio.intervals import IntervalCutter
from tkperf.fio.jobs import FioSettings
from tkperf.fio.output import json_objects, parse_jobs
from tkperf.model.results import PERCENTILES
from tkperf.store.legacy import format1 as legacy

RECORDING = "fio-3.33-lat-percentiles.json"
KINDS = ("lat", "clat", "slat")
STATS = ("mean", "min", "max", "stddev")
NEW_ATTRS = tuple(f"{k}-{s}-us" for k in ("clat", "slat") for s in STATS)
FORMAT1 = sorted(glob.glob(os.path.join(DATA, "format1", "*.xml")))


def recorded() -> dict:
    with open(data_path(RECORDING)) as fh:
        return json.load(fh)


def parse(report: dict):
    (w,) = parse_jobs(report, {"x": dict(rw="randrw", bs=4096, rwmixread=50, numjobs=1, iodepth=8)})
    return w


@pytest.mark.parametrize("direction", ["read", "write"])
def test_total_completion_and_submission_latency_are_parsed(direction):
    raw = recorded()["jobs"][0][direction]
    s = getattr(parse(recorded()), direction)
    assert s.ios == raw["total_ios"] > 0
    for kind in KINDS:
        for stat in STATS:
            assert getattr(s, f"{kind}_{stat}_us") == pytest.approx(raw[f"{kind}_ns"][stat] / 1000), (kind, stat)
    assert s.lat_mean_us > s.clat_mean_us > s.slat_mean_us > 0


@pytest.mark.parametrize("direction", ["read", "write"])
def test_percentiles_are_of_total_latency(direction):
    raw = recorded()["jobs"][0][direction]
    s = getattr(parse(recorded()), direction)
    assert [p for p, _ in s.percentiles] == list(PERCENTILES)
    for p, key in zip(PERCENTILES, ("99.000000", "99.900000", "99.990000", "99.999000")):
        # fio's value, but never above the slowest I/O (fio's is its bin's label)
        assert s.percentile(p) == pytest.approx(min(raw["lat_ns"]["percentile"][key], raw["lat_ns"]["max"]) / 1000)
    # the recording tells them apart: not the completion latency's percentiles
    assert [raw["lat_ns"]["percentile"][k] for k in raw["lat_ns"]["percentile"]] != \
        [raw["clat_ns"]["percentile"][k] for k in raw["lat_ns"]["percentile"]]


def test_a_direction_without_io_keeps_every_latency_at_zero():
    report = recorded()
    side = report["jobs"][0]["write"]
    for count in ("total_ios", "io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime"):
        side[count] = 0  # the latencies are left as they were: tkperf zeroes them itself
    s = parse(report).write
    assert all(getattr(s, f"{k}_{st}_us") == 0.0 for k in KINDS for st in STATS)
    assert s.percentiles == ()


def test_fio2_latencies_in_usec():
    side = {"total_ios": 10, "iops": 5.0, "bw": 20, "io_kbytes": 40, "runtime": 2000,
            "lat": {"min": 3, "max": 30, "mean": 12.5, "stddev": 2,
                    "percentile": {"99.000000": 29, "99.900000": 30}},
            "clat": {"min": 2, "max": 28, "mean": 11, "stddev": 1.5, "percentile": {"99.000000": 27}},
            "slat": {"min": 1, "max": 2, "mean": 1.5, "stddev": 0.5}}
    idle = {"total_ios": 0, "iops": 0.0, "bw": 0, "io_kbytes": 0, "runtime": 0}
    report = {"jobs": [{"jobname": "x", "read": side, "write": idle}]}
    s = parse(report).read
    assert (s.lat_mean_us, s.lat_min_us, s.lat_max_us, s.lat_stddev_us) == (12.5, 3, 30, 2)
    assert (s.clat_mean_us, s.clat_min_us, s.clat_max_us, s.clat_stddev_us) == (11, 2, 28, 1.5)
    assert (s.slat_mean_us, s.slat_min_us, s.slat_max_us, s.slat_stddev_us) == (1.5, 1, 2, 0.5)
    assert s.percentiles == (("99", 29.0), ("99.9", 30.0))


def test_jobs_reported_apart_merge_every_latency():
    with open(data_path("fio-3.33-numjobs-separate.json")) as fh:
        report = json.load(fh)
    (w,) = parse_jobs(report, {"rnd-4k-0-100": dict(rw="randwrite", bs=4096, rwmixread=0,
                                                    numjobs=2, iodepth=4)})
    sides = [j["write"] for j in report["jobs"]]
    ios = sum(s["total_ios"] for s in sides)
    for kind in KINDS:
        mean = sum(s[f"{kind}_ns"]["mean"] * s["total_ios"] for s in sides) / ios / 1000
        assert getattr(w.write, f"{kind}_mean_us") == pytest.approx(mean)
        assert getattr(w.write, f"{kind}_max_us") == pytest.approx(max(s[f"{kind}_ns"]["max"] for s in sides) / 1000)
        assert getattr(w.write, f"{kind}_min_us") == pytest.approx(min(s[f"{kind}_ns"]["min"] for s in sides) / 1000)


def test_new_figures_are_metrics():
    w = parse(recorded())
    assert w.metric("write.clat_mean_us") == w.write.clat_mean_us > 0
    assert w.metric("read.slat_max_us") == w.read.slat_max_us > 0
    assert w.metric("write.lat_mean_us") == w.write.lat_mean_us


def test_job_files_ask_for_total_latency_percentiles():
    lines = FioSettings("/dev/loop9").global_section()
    assert "lat_percentiles=1" in lines
    assert "percentile_list=" + ":".join(PERCENTILES) in lines


def test_intervals_use_total_latency():
    with open(data_path("fio-3.33-status-interval.json")) as fh:
        reports = [obj for obj, _ in json_objects(fh.read())]
    cutter = IntervalCutter("wsat", 1, start=0.0)
    first, second = (cutter.feed(r, float(k)) for k, r in enumerate(reports[:2], 1))
    a, b = (r["jobs"][0]["write"] for r in reports[:2])

    def weighted(kind: str) -> float:
        total = b[f"{kind}_ns"]["mean"] * b["total_ios"] - a[f"{kind}_ns"]["mean"] * a["total_ios"]
        return total / (b["total_ios"] - a["total_ios"]) / 1000

    assert first.lat_mean_us == pytest.approx(a["lat_ns"]["mean"] / 1000)
    assert second.lat_mean_us == pytest.approx(weighted("lat"))
    assert second.lat_mean_us != pytest.approx(weighted("clat"))


def sample_with_latencies():
    """The store's sample run with every clat/slat figure set apart from lat."""
    run = sample_run()
    w = parse(recorded())
    t = run.tests[0]
    t.rounds = [dataclasses.replace(r, workloads=tuple(dataclasses.replace(x, read=w.read, write=w.write)
                                                       for x in r.workloads))
                for r in t.rounds]
    return run


def test_store_round_trip_of_clat_and_slat(tmp_path):
    run = sample_with_latencies()
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    back = store.load(str(path))
    assert back == run
    el = etree.parse(str(path)).getroot().find("test/round/workload/write")
    s = run.tests[0].rounds[0].workloads[0].write
    for name in NEW_ATTRS + ("lat-mean-us",):
        assert float(el.get(name)) == getattr(s, name.replace("-", "_")), name
    assert not store.validate(run)


def test_format2_file_without_clat_and_slat_loads_as_zero(tmp_path):
    data = store.dumps(sample_with_latencies())
    head, tail = data[: data.index(b"</tkperf>") + 9], data[data.index(b"</tkperf>") + 9:]
    root = etree.fromstring(head, store.safe_parser())
    root.set("format", "2")  # as format 2 wrote it: no closing record after the rows
    tail = tail[: tail.index(b"<?tkperf-seal")]
    for el in root.iter("read", "write"):
        for name in NEW_ATTRS:
            del el.attrib[name]
    old = etree.tostring(root, xml_declaration=True, encoding="UTF-8") + tail
    assert b"clat-mean-us" not in old
    run = store.loads(old, "old.xml")
    sides = [s for r in run.tests[0].rounds for w in r.workloads for s in (w.read, w.write)]
    assert len(sides) > 0 and any(s.ios for s in sides)
    for s in sides:
        assert all(getattr(s, n.replace("-", "_")) == 0.0 for n in NEW_ATTRS)
        assert s.lat_mean_us > 0 or s.ios == 0


def _notes(run) -> list:
    return [e for e in run.events if e.message == legacy.COMPLETION_LATENCY_NOTE]


@pytest.mark.parametrize("path", FORMAT1, ids=os.path.basename)
def test_format1_latency_is_completion_latency(path, tmp_path):
    run = store.load(path)
    (note,) = _notes(run)
    assert note.kind == "note" and note.test == "" and note.round == 0
    assert "format 1" in note.message and "completion latency" in note.message
    assert "fio clat" in note.message and "not response time" in note.message
    old = etree.parse(path).getroot()
    assert any(t.rounds for t in run.tests)
    for t, el in zip(run.tests, old.iterfind("test")):
        for r, rel in zip(t.rounds, el.iterfind("round")):
            for w, wel in zip(r.workloads, rel.iterfind("workload")):
                for s, sel in ((w.read, wel.find("read")), (w.write, wel.find("write"))):
                    for stat in STATS:
                        figure = float(sel.get(f"lat-{stat}-us"))
                        assert getattr(s, f"lat_{stat}_us") == getattr(s, f"clat_{stat}_us") == figure
    # saved and loaded again: still one note, the figures kept
    out = tmp_path / "upgraded.xml"
    store.save(run, str(out))
    back = store.load(str(out))
    assert len(_notes(back)) == 1 and back == run


def test_the_note_is_once_per_file_not_per_test():
    run = store.load(FORMAT1[0])
    assert len(run.tests) > 1 and len(_notes(run)) == 1


@needs_fio
def test_lat_run_response_time_is_at_least_completion_latency(target, tmp_path):
    argv, _ = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture",
                           "0",
                           "--max-rounds", "1")
    assert rc == 0
    assert "lat_percentiles=1" in log.read_text()
    root = etree.parse(str(xml)).getroot()
    sides = [s for s in root.iterfind("test/round/workload/*") if int(s.get("ios")) > 0]
    assert sides and {s.tag for s in sides} == {"write"}
    for s in sides:
        lat, clat, slat = (float(s.get(f"{k}-mean-us")) for k in KINDS)
        assert lat >= clat > 0 and slat > 0
        assert float(s.get("lat-max-us")) >= float(s.get("lat-mean-us"))
        assert [p.get("p") for p in s.iterfind("percentile")] == list(PERCENTILES)
    run = store.load(str(xml))
    assert run.tests[0].tracking_metric == "write.lat_mean_us"
    assert "response time" in run.tests[0].tracking_label
