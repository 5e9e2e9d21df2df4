"""fio's own output kept beside the result file, and ``tkperf export
--csv`` (issue 22, item 6)."""
import csv
import gzip
import json
import os

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import export, main
from tkperf.errors import EXIT_RESULT_FILE, EXIT_USAGE
from tkperf.fio import keep

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
FULL = os.path.join(EXAMPLES, "example-full.xml")
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--max-rounds", "2",
         "--runtime", "1", "--quick", "--wipc-loops", "1", "--yes", "-q", "--no-report"]


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_export_writes_one_file_per_kind(tmp_path, capsys):
    out = tmp_path / "csv"
    assert main(["export", FULL, "--csv", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(os.listdir(out)) == ["intervals.csv", "rounds.csv", "workloads.csv"]
    assert printed.count("csv:") == 3
    run = store.load(FULL)

    rounds = _read(out / "rounds.csv")
    assert len(rounds) == sum(len(t.rounds) for t in run.tests)
    iops = run.test("iops")
    first = rounds[0]
    assert (first["test"], first["type"], first["round"]) == ("iops", "iops", "1")
    assert first["wall_s"] == format(iops.rounds[0].wall_s, ".14g")  # fourteen digits, no float noise
    assert float(first["wall_s"]) == pytest.approx(iops.rounds[0].wall_s, rel=1e-11)
    assert int(first["workloads"]) == len(iops.rounds[0].workloads)
    assert sum(r["in_steady_window"] == "1" for r in rounds if r["test"] == "iops") == len(iops.steady.rounds)

    workloads = _read(out / "workloads.csv")
    assert len(workloads) == sum(len(r.workloads) for t in run.tests for r in t.rounds)
    w = iops.rounds[0].workloads[0]
    row = workloads[0]
    assert row["workload"] == w.name and int(row["bs"]) == w.bs
    assert float(row["read_iops"]) == w.read.iops and float(row["read_lat_mean_us"]) == w.read.lat_mean_us
    assert float(row["read_p99.9_us"]) == dict(w.read.percentiles)["99.9"]
    assert float(row["write_iops"]) == w.write.iops

    intervals = _read(out / "intervals.csv")
    wsat = run.test("wsat").series["intervals"]
    assert len(intervals) == len(wsat)
    assert [float(r["iops"]) for r in intervals] == list(wsat.column("iops"))
    assert intervals[0]["series"] == "intervals" and intervals[0]["row"] == "1"


def test_text_from_the_file_never_becomes_a_formula(tmp_path):
    run = store.load(FULL)
    run.tests[0].key = "=HYPERLINK(\"http://x\")"
    export.export_csv(run, str(tmp_path))
    assert _read(tmp_path / "rounds.csv")[0]["test"] == "'=HYPERLINK(\"http://x\")"


def test_export_needs_csv_and_a_result(tmp_path, capsys):
    assert main(["export", FULL]) == EXIT_USAGE
    assert main(["export", str(tmp_path / "none.xml"), "--csv", str(tmp_path)]) == EXIT_RESULT_FILE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("tkperf: error:") for line in err)


def test_keeper_numbers_on_after_resume_and_starts_afresh(tmp_path):
    class Backend:
        keeper = None

    facts = {}
    fio = Backend()
    keep.attach(fio, facts, str(tmp_path), "r", fresh=True)
    with fio.keeper.writer("iops round 1", "json") as write:
        write('{"jobs": []}')
    with fio.keeper.writer("never started", "json"):
        pass  # nothing written: nothing kept
    keep.attach(fio, facts, str(tmp_path), "r", fresh=False)  # resumed
    with fio.keeper.writer("iops round 2", "json") as write:
        write('{"jobs": [1]}')
    names = [f["file"] for f in facts["fio_output"]["files"]]
    assert names == ["0001-iops-round-1.json.gz", "0002-iops-round-2.json.gz"]
    assert sorted(os.listdir(tmp_path / "r.fio-json")) == names
    entry = facts["fio_output"]["files"][1]
    assert keep.read_kept(keep.kept_path(str(tmp_path / "r.xml"), facts, entry)) == b'{"jobs": [1]}'
    keep.attach(fio, facts, str(tmp_path), "r", fresh=True)  # --overwrite: a new run
    assert facts["fio_output"] == {"dir": "r.fio-json", "files": []}
    assert os.listdir(tmp_path / "r.fio-json") == []


def test_a_planted_link_is_not_followed(tmp_path):
    class Backend:
        keeper = None

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "r.fio-json")
    facts = {}
    fio = Backend()
    keep.attach(fio, facts, str(tmp_path), "r", fresh=True)
    with fio.keeper.writer("iops round 1", "json") as write:
        write("{}")
    assert os.listdir(elsewhere) == [] and facts["fio_output"]["files"] == []


@needs_fio
def test_a_run_keeps_each_fio_output(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["ssd", "run", loopdev, "--name", "k", "--outdir", str(out), *QUICK]) == 0
    run = store.load(str(out / "k.xml"))
    kept = run.facts["fio_output"]
    assert kept["dir"] == "k.fio-json"
    whats = [f["what"] for f in kept["files"]]
    # LAT's response-time capture (--quick: 2 s) follows its rounds, its own fio run
    assert whats == ["lat WIPC", "lat round 1", "lat round 2", "lat capture"]
    assert len(run.test("lat").rounds) == 3
    for entry, rnd in zip(kept["files"][1:], run.test("lat").rounds):
        report = json.loads(keep.read_kept(keep.kept_path(str(out / "k.xml"), run.facts, entry)))
        assert entry["format"] == "json+"  # LAT keeps its histograms
        job = report["jobs"][0]
        assert job["jobname"] == rnd.workloads[0].name
        assert job["write"]["total_ios"] == rnd.workloads[0].write.ios
    with gzip.open(out / "k.fio-json" / kept["files"][0]["file"]) as fh:
        assert "jobs" in json.load(fh)
    capsys.readouterr()
    assert main(["export", str(out / "k.xml"), "--csv", str(tmp_path / "csv")]) == 0
    assert len(_read(tmp_path / "csv" / "workloads.csv")) == 3  # two rounds and the capture


@needs_fio
def test_a_stream_keeps_its_status_reports(loopdev, tmp_path):
    from tkperf.fio.backend import LocalFio
    from tkperf.fio.jobs import FioJob, FioSettings

    fio = LocalFio(FioSettings(filename=loopdev), str(tmp_path))
    facts = {}
    keep.attach(fio, facts, str(tmp_path), "s", fresh=True)
    seen = []
    job = FioJob(name="stream", rw="randwrite", bs=4096, runtime=2, iodepth=4)
    fio.stream(job, 1, "s stream", lambda report: seen.append(report) and False, timeout=30)
    (entry,) = facts["fio_output"]["files"]
    assert entry["format"] == "json-stream" and entry["what"] == "s stream"
    text = keep.read_kept(keep.kept_path(str(tmp_path / "s.xml"), facts, entry)).decode()
    decoder, pos, kept = json.JSONDecoder(), 0, []
    while text[pos:].strip():
        pos += len(text[pos:]) - len(text[pos:].lstrip())
        obj, pos = decoder.raw_decode(text, pos)
        kept.append(obj)
    assert len(kept) == len(seen) >= 2


@needs_fio
def test_a_kept_file_says_when_its_fio_run_started(loopdev, tmp_path):
    """``started`` is taken before fio starts (docs/export.rst), not when it
    returned (which is the next round's start)."""
    from datetime import datetime, timezone

    from tkperf.fio.backend import LocalFio
    from tkperf.fio.jobs import FioJob, FioSettings

    fio = LocalFio(FioSettings(filename=loopdev), str(tmp_path))
    facts = {}
    keep.attach(fio, facts, str(tmp_path), "s", fresh=True)
    before = datetime.now(timezone.utc).replace(microsecond=0)
    fio.run([FioJob(name="r", rw="randread", bs=4096, runtime=3, iodepth=4)], "s round 1")
    after = datetime.now(timezone.utc)
    (entry,) = facts["fio_output"]["files"]
    started = datetime.fromisoformat(entry["started"])
    assert before <= started <= before.replace(second=before.second) + (after - before) / 3
    assert (after - started).total_seconds() >= 2.5  # fio ran 3 s after it
