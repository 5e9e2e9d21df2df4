"""`tkperf ssd run` end to end: the real fio on a real loop device."""
import json

from lxml import etree

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main

pytestmark = needs_fio

MiB = 1024 * 1024
FAST = ["--runtime", "1", "--wipc-loops", "1", "-nj", "1", "-iod", "4", "--yes", "--quiet"]


def run_cli(target, tmp_path, *extra, report=False):
    """A run with FAST's settings; without its report unless ``report`` (the
    report of a run on a loop device is built end to end by test_iops here)."""
    out = tmp_path / "out"
    argv = ["ssd", "run", *target, "--name", "t", "--outdir", str(out), *FAST, *extra]
    rc = main(argv + ([] if report else ["--no-report"]))
    return rc, out / "t.xml", out / "t.log"


def check_common(xml, log, kind):
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    assert schema.validate(etree.parse(str(xml))), schema.error_log
    run = store.load(str(xml))
    assert run.status == "complete"
    assert run.device.size_bytes == 256 * MiB
    assert run.device.kind == kind
    assert run.host.fio_version.startswith("fio-3")
    text = log.read_text()
    assert "run: " in text and "--output-format=json" in text
    assert "ioengine=libaio" in text and "direct=1" in text
    return run, text


def test_iops(target, tmp_path, capsys):
    argv, kind = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "iops", "--bs", "4k,64k",
                           "--mix", "65/35,0/100", "--max-rounds", "5", report=True)
    assert rc == 0
    run, text = check_common(xml, log, kind)
    (t,) = run.tests
    assert t.key == "iops" and t.status == "complete"
    assert 1 <= len(t.rounds) <= 5
    for r in t.rounds:
        assert [w.name for w in r.workloads] == ["rnd-64k-65-35", "rnd-4k-65-35",
                                                   "rnd-64k-0-100", "rnd-4k-0-100"]
        assert all(w.iops > 0 and w.runtime_ms >= 900 for w in r.workloads)
        assert r.fio_s >= 3.6 and r.wall_s >= r.fio_s
        assert r.workloads[3].read.iops == 0 and r.workloads[2].write.iops > 0
    assert t.tracking_workload == "rnd-4k-0-100"
    assert t.steady is not None and t.steady.rounds == tuple(r.index for r in t.rounds[-5:])
    assert t.steady.steady == (t.stop_reason == "steady state")
    assert t.purge.method == "discard" and not t.purge.pts_purge
    assert t.wipc.bytes_written == 256 * MiB and t.wipc.bw_bytes > 0
    # one fio process per round, with stonewall sections: the job file is in the log
    assert text.count("stonewall") >= 4 * len(t.rounds)
    out = capsys.readouterr().out
    assert "IOPS" in out and ("steady state in rounds" in out or "NO steady state" in out)
    assert all((xml.parent / f"t.{ext}").stat().st_size > 0 for ext in ("rst", "html", "pdf"))  # its report


def test_tp(target, tmp_path):
    argv, kind = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "tp", "--tp-bs", "1024k,128k", "--max-rounds", "2")
    assert rc == 0
    run, _ = check_common(xml, log, kind)
    assert [t.key for t in run.tests] == ["tp-1024k", "tp-128k"]
    for t in run.tests:
        assert t.purge is not None and t.wipc is not None  # each block size starts afresh
        assert len(t.rounds) == 2
        w, r = t.rounds[0].workloads
        assert w.rw == "write" and r.rw == "read"
        assert w.write.bw_bytes > 0 and r.read.bw_bytes > 0


def test_lat(target, tmp_path):
    argv, kind = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "lat", "--lat-bs", "4k", "--max-rounds", "2",
                               "--lat-capture", "0")
    assert rc == 0
    run, _ = check_common(xml, log, kind)
    (t,) = run.tests
    assert len(t.rounds[0].workloads) == 3
    for w in t.rounds[0].workloads:
        assert w.numjobs == 1 and w.iodepth == 1  # OIO 1 whatever -nj/-iod say
        side = w.write if w.rwmixread == 0 else w.read
        assert side.lat_mean_us > 0 and side.lat_max_us >= side.lat_mean_us
        assert [p for p, _ in side.percentiles] == ["99", "99.9", "99.99", "99.999"]
    assert t.tracking_metric == "write.lat_mean_us"


def test_wsat_stops_by_time(target, tmp_path):
    argv, kind = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "wsat", "--wsat-time", "4s", "--wsat-capture", "0",
                           "--wsat-interval", "1s", "--wsat-tgbw", "1000", "-nj", "2")
    assert rc == 0
    run, _ = check_common(xml, log, kind)
    (t,) = run.tests
    assert t.wipc is None and t.purge is not None
    # Intervals are rows of the test's series (format 2), not rounds; WSAT
    # writes only, so its series has no read column.
    assert not t.rounds
    s = t.series["intervals"]
    assert 3 <= len(s) <= 5
    assert t.stop_reason == "time limit"
    assert t.params["numjobs"] == "2"
    for i in range(len(s)):
        row = dict(zip(s.columns, s.row(i)))
        assert row["iops"] > 0 and row["io_bytes"] > 0
        assert 0.5 <= row["fio_s"] <= 1.6  # wall time per interval, not summed over the 2 jobs


def test_wsat_runs_to_its_time_limit_by_default(target, tmp_path):
    """No steady-state stop unless asked for: 8 intervals of the 256 MiB
    target are several drive fills, past where the old default (5 adjacent
    intervals after one fill) could stop."""
    argv, _ = target
    rc, xml, _ = run_cli(argv, tmp_path, "--tests", "wsat", "--wsat-time", "8s", "--wsat-capture", "0",
                         "--wsat-interval", "1s", "--wsat-tgbw", "1000")
    assert rc == 0
    run = store.load(str(xml))
    (t,) = run.tests
    assert run.options["wsat_steady"] == "false"
    assert t.params["steady_stop"] == "false" and t.params["steady_spacing"] == "1800"
    assert t.stop_reason == "time limit"
    assert 7 <= len(t.series["intervals"]) <= 9


def test_wsat_stops_by_tgbw(target, tmp_path):
    argv, kind = target
    rc, xml, _ = run_cli(argv, tmp_path, "--tests", "wsat", "--wsat-time", "60s", "--wsat-capture", "0",
                         "--wsat-interval", "1s", "--wsat-tgbw", "0.05")
    assert rc == 0
    (t,) = store.load(str(xml)).tests
    s = t.series["intervals"]
    written = s.column("io_bytes").sum()
    assert written >= 0.05e9
    assert t.stop_reason.startswith("TGBW reached")
    assert s.column("fio_s").sum() < 30


def test_show_prints_summary_and_json(target, tmp_path, capsys):
    argv, _ = target
    rc, xml, _ = run_cli(argv, tmp_path, "--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0",
                         "--max-rounds", "1")
    assert rc == 0
    capsys.readouterr()
    assert main(["show", str(xml)]) == 0
    out = capsys.readouterr().out
    assert "LAT" in out and "4k W lat AVE" in out
    assert main(["show", str(xml), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tests"][0]["key"] == "lat" and data["tests"][0]["rounds"] == 1
    assert data["tests"][0]["headline"]["rnd_4k_write_lat_mean_us"] > 0


def test_quick_results_say_not_conformant(target, tmp_path, capsys):
    argv, _ = target
    rc, xml, _ = run_cli(argv, tmp_path, "--quick", "--tests", "lat", "--max-rounds", "1")
    assert rc == 0
    run = store.load(str(xml))
    assert run.quick
    assert any("not a PTS-conformant" in e.message for e in run.events)
    out = capsys.readouterr().out
    assert "NOT PTS-conformant" in out and out.count("--quick smoke-test profile") == 1  # said once


def job_offsets(log_text, job):
    """(round, offset, size) of every job section named ``job`` in the job
    files the log shows, in order (offset 0 is fio's default, not written)."""
    import re

    out = []
    for block in re.split(r"fio job file for ", log_text)[1:]:
        m = re.match(r"\S+ round (\d+):", block)
        section = re.search(rf"^\[{re.escape(job)}\]\n((?:[^\n\[]+\n)+)", block, re.M)
        if m and section:
            opts = dict(line.split("=", 1) for line in section.group(1).splitlines() if "=" in line)
            out.append((int(m.group(1)), int(opts.get("offset", 0)), int(opts["size"])))
    return out


def test_tp_sweeps_the_active_range(target, tmp_path, monkeypatch):
    """Each SEQ workload starts where the one of its kind in the round before
    stopped.  fio is held to 64 MiB/s so that a 1 s round covers a quarter of
    the 256 MiB target instead of wrapping round it several times."""
    from tkperf.engine import session
    from tkperf.fio.jobs import FioSettings

    plain = session.fio_settings

    def slow(dev, opts) -> FioSettings:
        s = plain(dev, opts)
        return FioSettings(filename=s.filename, refill_buffers=s.refill_buffers, size=s.size,
                           extra=s.extra + (("rate", "64m"),))

    monkeypatch.setattr(session, "fio_settings", slow)
    argv, kind = target
    rc, xml, log = run_cli(argv, tmp_path, "--tests", "tp", "--tp-bs", "1024k", "--max-rounds", "3",
                           "--wipc-loops", "0", "--purge", "none")
    assert rc == 0
    run, text = check_common(xml, log, kind)
    (t,) = run.tests
    assert len(t.rounds) == 3 and "rate=64m" in text
    for side, job in (("write", "seq-1024k-w"), ("read", "seq-1024k-r")):
        placed = job_offsets(text, job)
        assert [r for r, _, _ in placed] == [1, 2, 3]
        offsets = [o for _, o, _ in placed]
        assert offsets[0] == 0 < offsets[1] < offsets[2] < 256 * MiB
        assert all(o + size == 256 * MiB and o % MiB == 0 for _, o, size in placed)
        for rnd, offset in zip(t.rounds, offsets):
            assert t.data[f"offset.{rnd.index}.{job}"] == str(offset)  # kept in the result file
        moved = [getattr(r.workload(job), side).io_bytes for r in t.rounds]
        assert offsets[1] == moved[0] // MiB * MiB  # continues where round 1 stopped
        cursor = (offsets[1] + moved[1]) // MiB * MiB
        if cursor + moved[1] <= 256 * MiB:
            assert offsets[2] == cursor
        else:  # round 2's bytes would not fit after it: round 3 ends at the range's end
            assert offsets[2] == (256 * MiB - moved[1]) // MiB * MiB
