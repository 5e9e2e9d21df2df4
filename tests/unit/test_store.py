import json
import os

import pytest
from lxml import etree

from conftest import data_path
from sealing import reseal
from tkperf import store
from tkperf.errors import ResultFileError
from tkperf.fio.output import parse_jobs
from tkperf.model.results import DeviceInfo, Event, HostInfo, PurgeRecord, Round, RunResult, TestRun, WipcRecord


def sample_run() -> RunResult:
    with open(data_path("fio-3.33-round-stonewall.json")) as fh:
        report = json.load(fh)
    specs = {n: dict(rw="randrw", bs=4096, rwmixread=m, numjobs=2, iodepth=4)
             for n, m in (("rnd-4k-100-0", 100), ("rnd-4k-65-35", 65), ("rnd-4k-0-100", 0))}
    workloads = tuple(parse_jobs(report, specs))
    t = TestRun(type="iops", key="iops", tracking_workload="rnd-4k-0-100",
                tracking_metric="write.iops", tracking_label="RND 4k 0/100 IOPS",
                status="complete", started="2026-11-22T03:00:00+00:00",
                finished="2026-11-22T03:10:00+00:00", stop_reason="steady state",
                params={"block_sizes": "4k", "mixes": "100/0,65/35,0/100"},
                purge=PurgeRecord("auto", "discard", 0.25, False, "blkdiscard /dev/loop0", "not a PTS PURGE"),
                wipc=WipcRecord(2, 131072, 32, 1, 536870912, 0.31, 1.7e9))
    for i in range(1, 7):
        t.rounds.append(Round(index=i, started=f"2026-11-22T03:0{i}:00+00:00", wall_s=3.4 + i / 10,
                              fio_s=3.0, workloads=workloads))
    t.steady = t.evaluate()
    run = RunResult(
        name="sample", started="2026-11-22T03:00:00+00:00", finished="2026-11-22T03:10:00+00:00",
        status="complete", quick=True, tkperf_version="0.1.0",
        device=DeviceInfo(path="/dev/loop0", resolved="/dev/loop0", kind="block", size_bytes=268435456,
                          model="loop device", rotational=False, transport="loop",
                          write_cache="write back"),
        host=HostInfo(hostname="h", kernel="6.1", os="Debian", cpu="x", cores=2,
                      memory_bytes=24 << 30, fio_version="fio-3.33", tkperf_version="0.1.0",
                      python="3.11.7"),
        options={"runtime": "1", "tests": "iops"},
        description="Vendor: ACME\nsome <free> & text",
        description_fields={"vendor": "ACME"},
        events=[Event("2026-11-22T03:00:00+00:00", "note", "quick profile", "iops", 0)],
    )
    run.tests.append(t)
    return run


def test_round_trip_is_exact(tmp_path):
    run = sample_run()
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    back = store.load(str(path))
    assert back == run
    assert back.tests[0].steady == run.tests[0].steady
    assert back.tests[0].rounds[2].workloads[1].read.percentiles == run.tests[0].rounds[2].workloads[1].read.percentiles


def test_written_file_validates_against_shipped_schema(tmp_path):
    path = tmp_path / "r.xml"
    store.save(sample_run(), str(path))
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    doc = etree.parse(str(path))
    assert schema.validate(doc), schema.error_log
    root = doc.getroot()
    assert root.get("format") == "3"
    # real elements and attributes, not blobs
    w = root.find("test/round/workload")
    assert float(w.find("write").get("iops")) >= 0
    assert root.find("test/steadystate").get("steady") in ("true", "false")
    assert not store.validate(sample_run())


def test_schema_rejects_a_broken_tree(tmp_path):
    data = store.dumps(sample_run()).replace(b'kind="block"', b'kind="tape"')
    with pytest.raises(ResultFileError, match="x.xml: damaged: "):
        store.loads(data, "x.xml")
    with pytest.raises(ResultFileError, match="not a valid tkperf result"):
        store.loads(reseal(data), "x.xml")


def test_atomic_write_leaves_no_temp_files(tmp_path):
    path = tmp_path / "r.xml"
    for _ in range(3):
        store.save(sample_run(), str(path))
    assert os.listdir(tmp_path) == ["r.xml"]


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"hello, not xml", "not valid XML"),
    (b"<?xml version='1.0'?><html><body/></html>", "XML of another kind"),
    (b"<tkperf format='99'/>", "newer than this tkperf reads"),
    (b"<tkperf/>", "no format version"),
])
def test_bad_files(data, message):
    with pytest.raises(ResultFileError, match=message):
        store.loads(data, "f.xml")


def test_truncated_file(tmp_path):
    data = store.dumps(sample_run())
    path = tmp_path / "t.xml"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ResultFileError, match=r"cut short: the document has no end tag </tkperf> "
                       r"\(the file ends at byte [0-9,]+\)"):
        store.load(str(path))
