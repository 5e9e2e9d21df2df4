"""The HDD test types (``hdd-zones``, ``hdd-iops``, ``hdd-lat``): their plans
option by option (the zone sweep's offsets in the job plan), their figures
from made-up rounds, bad option values, and all three end to end on a loop
device with the real fio under ``tkperf hdd run`` (result file, job files,
report pages, show, compare)."""
from __future__ import annotations

import json
import re
from typing import List

import pytest
from lxml import etree

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_TARGET, EXIT_USAGE, TargetError
from tkperf.fio.jobs import FioSettings, job_file
from tkperf.kit import options
from tkperf.kit.shapes import FIO_GAP_S, Phases, Rounds, blank_test
from tkperf.model.results import IoStats, Round, Workload
from tkperf.pts import hdd_cell as cell_name
from tkperf.render.blocks import Header
from tkperf.report.generic import view_of
from tkperf.report.report import report_blocks
from tkperf.testtypes.hdd_iops import HddIopsTest
from tkperf.testtypes.hdd_lat import HddLatencyTest
from tkperf.testtypes.hdd_zones import HddZonesTest, zone_bounds, zone_name, zones
from tkperf.testtypes.hdd_zones.view import zone_table

MiB = 1024 * 1024
GiB = 1024 * MiB
ZONES, IOPS, LAT = HddZonesTest(), HddIopsTest(), HddLatencyTest()


def plan_of(kind, capacity: int = 4 * GiB, quick: bool = False, **given):
    opts = options.build({"tests": (kind.name,), **given}, quick=quick, profile="hdd")
    (p,) = kind.plan(opts, capacity)
    return p


# --- hdd-zones: the plan -------------------------------------------------------------------

@pytest.mark.parametrize("capacity, n", [(4 * GiB, 100), (4 * GiB + 12345, 7), (1000 * MiB + 5, 3),
                                         (256 * MiB, 256)])
def test_zone_i_starts_at_i_over_n_of_the_disk_aligned_to_1_mib(capacity, n):
    p = plan_of(ZONES, capacity, hdd_zones=n)
    assert isinstance(p.shape, Phases) and not p.wipc and p.tracking is None
    write, read = p.shape.phases
    end = capacity // MiB * MiB
    for phase, rw, side in ((write, "write", "w"), (read, "read", "r")):
        jobs = phase.jobs
        assert [j.name for j in jobs] == [zone_name(i, side) for i in range(1, n + 1)]
        assert [j.offset for j in jobs] == [i * end // n // MiB * MiB for i in range(n)]
        for a, z in zip(jobs, jobs[1:]):
            assert a.offset + a.size == z.offset  # adjoining: no gap, no overlap
        assert jobs[-1].offset + jobs[-1].size == end
        assert all(j.size >= MiB and j.offset % MiB == 0 and j.size % MiB == 0 for j in jobs)
        assert {(j.rw, j.bs, j.iodepth, j.numjobs, j.runtime) for j in jobs} == {(rw, MiB, 4, 1, 5)}
    assert phase.idle_s == 0 and write.idle_s == 0  # the sweeps run back to back
    assert p.params["zones"] == str(n) and p.params["span_bytes"] == str(end)


def test_zone_jobs_in_the_job_file_are_stonewalled_and_confined_to_their_zone():
    p = plan_of(ZONES, 8 * GiB, hdd_zones=4, hdd_zone_time=3)
    text = job_file(FioSettings(filename="/dev/loopX"), p.shape.phases[0].jobs)
    sections = re.findall(r"^\[(zone-\d+-w)\]\nstonewall\nrw=write\nbs=1024k\nnumjobs=1\niodepth=4\n"
                          r"runtime=3\ntime_based=1\n(?:offset=(\d+)\n)?size=(\d+)$", text, re.M)
    assert [(name, int(off or 0), int(size)) for name, off, size in sections] == [
        ("zone-001-w", 0, 2 * GiB), ("zone-002-w", 2 * GiB, 2 * GiB),
        ("zone-003-w", 4 * GiB, 2 * GiB), ("zone-004-w", 6 * GiB, 2 * GiB)]


def test_passes_repeat_the_write_then_read_sweeps_and_active_range_limits_the_span():
    p = plan_of(ZONES, 4 * GiB, hdd_zones=4, hdd_zone_passes=3, active_range=50)
    assert [ph.jobs[0].rw for ph in p.shape.phases] == ["write", "read"] * 3
    assert [ph.label.split(":")[0] for ph in p.shape.phases] == ["pass 1", "pass 1", "pass 2", "pass 2",
                                                                   "pass 3", "pass 3"]
    last = p.shape.phases[-1].jobs[-1]
    assert last.offset == 1536 * MiB and last.offset + last.size == 2 * GiB  # half the disk
    assert p.shape.capacity == 4 * GiB  # positions stay in percent of the whole disk


def test_zone_estimate_counts_every_zone_and_names_the_phases():
    opts = options.build({"tests": ("hdd-zones",), "hdd_zones": 10, "hdd_zone_time": 2}, profile="hdd")
    (p,) = ZONES.plan(opts, 4 * GiB)
    est = p.shape.estimate(opts, 4 * GiB)
    assert est.low_s == est.high_s == pytest.approx(20 * (2 + FIO_GAP_S))
    assert len(est.jobs) == 20 and [j.offset for j in est.jobs[:10]] == [j.offset for j in est.jobs[10:]]
    assert "# 10 zones of 409 to 410 MiB, outer (offset 0) to inner (offset 3,865,051,136)" in est.lines
    assert sum(1 for ln in est.lines if ln.startswith("# phase ")) == 2


def test_too_many_zones_for_the_disk_is_a_target_error():
    assert zone_bounds(8 * MiB, 8) == [(i * MiB, MiB) for i in range(8)]
    with pytest.raises(TargetError, match="use at most --zones 8"):
        zone_bounds(8 * MiB + 5, 9)


# --- hdd-iops and hdd-lat: the plans ---------------------------------------------------------

def test_iops_cells_are_mix_then_block_size_then_queue_depth_at_tc1():
    p = plan_of(IOPS, hdd_iops_bs=(64 * 1024, 4096), hdd_iops_mixes=(0, 100), hdd_iops_qd=(16, 1),
                hdd_iops_time=7, numjobs=4, iodepth=32)
    assert isinstance(p.shape, Rounds) and not p.wipc and not p.histograms
    assert [(j.rwmixread, j.bs, j.iodepth) for j in p.shape.jobs] == [
        (100, 65536, 1), (100, 65536, 16), (100, 4096, 1), (100, 4096, 16),
        (0, 65536, 1), (0, 65536, 16), (0, 4096, 1), (0, 4096, 16)]
    assert all(j.numjobs == 1 and j.runtime == 7 and j.rw == "randrw" for j in p.shape.jobs)
    assert [j.name for j in p.shape.jobs][:2] == ["rnd-64k-100-0-qd1", "rnd-64k-100-0-qd16"]
    assert (p.tracking.workload, p.tracking.metric) == ("rnd-4k-100-0-qd16", "read.iops")
    assert p.params["also_tracking"] == "rnd-4k-0-100-qd16:write.iops" and p.judge is not None
    assert p.params["depths"] == "1,16" and p.params["runtime"] == "7"


def test_iops_defaults_and_quick_values():
    p = plan_of(IOPS)
    assert len(p.shape.jobs) == 3 * 3 * 4 and {j.runtime for j in p.shape.jobs} == {20}
    assert {j.iodepth for j in p.shape.jobs} == {1, 4, 16, 32}
    assert {j.rwmixread for j in p.shape.jobs} == {100, 70, 0}
    assert {j.bs for j in p.shape.jobs} == {4096, 65536, MiB}
    quick = plan_of(IOPS, quick=True)
    assert [j.name for j in quick.shape.jobs] == ["rnd-4k-100-0-qd1", "rnd-4k-100-0-qd4",
                                                  "rnd-4k-0-100-qd1", "rnd-4k-0-100-qd4"]


def test_lat_is_random_read_and_write_at_qd1_with_histograms():
    p = plan_of(LAT, hdd_lat_bs=(4096, 512), hdd_lat_time=9, iodepth=32)
    assert p.histograms and not p.wipc
    assert [(j.name, j.iodepth, j.numjobs, j.runtime) for j in p.shape.jobs] == [
        ("rnd-4k-100-0-qd1", 1, 1, 9), ("rnd-512-100-0-qd1", 1, 1, 9),
        ("rnd-4k-0-100-qd1", 1, 1, 9), ("rnd-512-0-100-qd1", 1, 1, 9)]
    assert (p.tracking.workload, p.tracking.metric) == ("rnd-4k-100-0-qd1", "read.lat_mean_us")
    assert p.params["also_tracking"] == "rnd-4k-0-100-qd1:write.lat_mean_us"


def test_options_survive_the_result_file():
    values = {"hdd_zones": 37, "hdd_zone_time": 90, "hdd_zone_passes": 2, "hdd_iops_bs": (8192, MiB),
              "hdd_iops_mixes": (70, 0), "hdd_iops_qd": (32, 2), "hdd_iops_time": 45,
              "hdd_lat_bs": (512,), "hdd_lat_time": 120}
    for kind in (ZONES, IOPS, LAT):
        for opt in kind.options:
            assert opt.from_text(opt.to_text(values[opt.field])) == values[opt.field]
    opts = options.build({"tests": ("hdd-zones", "hdd-iops", "hdd-lat"), **values}, profile="hdd")
    assert options.RunOptions.from_dict(opts.to_dict()) == opts


def test_hdd_tests_are_not_run_by_ssd_run_without_tests():
    assert not {"hdd-zones", "hdd-iops", "hdd-lat"} & set(options.build({}).tests)
    assert all(k.default_profiles == ("hdd",) for k in (ZONES, IOPS, LAT))


# --- bad values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("flag, value, words", [
    ("--zones", "1", "--zones 1 is out of range (2..1000)"),
    ("--zones", "1001", "out of range"),
    ("--zones", "many", "--zones 'many' is not a whole number"),
    ("--zone-time", "0", "longer than 0"),
    ("--zone-time", "2h", "--zone-time 7200 is out of range"),
    ("--zone-passes", "0", "out of range (1..100)"),
    ("--hdd-iops-qd", "0", "'0' is not a queue depth"),
    ("--hdd-iops-qd", ",", "names no queue depth"),
    ("--hdd-iops-bs", "4k,1000", "'1000' is not a multiple of 512 bytes"),
    ("--hdd-iops-mix", "70/20", "does not add up to 100"),
    ("--hdd-iops-time", "soon", "is not a duration"),
    ("--hdd-lat-bs", "x", "is not a size"),
    ("--hdd-lat-time", "2d", "out of range"),
])
def test_bad_values_are_one_line_usage_errors(flag, value, words, loopdev, tmp_path, capsys):
    rc = main(["hdd", "run", loopdev, "--tests", "hdd-zones,hdd-iops,hdd-lat", "--quick", "--yes",
               "--no-report", "-q", "--outdir", str(tmp_path / "out"), flag, value])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == EXIT_USAGE and "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("tkperf: error: ") and words in lines[0]
    assert not (tmp_path / "out").exists()


def test_options_need_their_test():
    with pytest.raises(options.UsageError, match="--zones belongs to a test that is not among"):
        options.build({"tests": ("hdd-iops",), "hdd_zones": 8}, profile="hdd")


def test_too_many_zones_for_the_loop_device_is_refused_before_any_io(loopdev, tmp_path, capsys):
    for extra in (["--dry-run"], ["--yes", "--no-report", "-q", "--outdir", str(tmp_path / "out")]):
        rc = main(["hdd", "run", loopdev, "--tests", "hdd-zones", "--zones", "300", *extra])
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert rc == EXIT_TARGET and len(err) == 1, err
        assert "--zones 300: the target's 268,435,456 bytes make zones smaller than 1 MiB; " \
               "use at most --zones 256" in err[0]
    # refused before the run made its directory: no log, no fio job file, no result
    assert not (tmp_path / "out").exists()


# --- figures from made-up rounds ------------------------------------------------------------------

#: No I/O in a direction (a workload's default).
NO_IO = IoStats()


def workload(name: str, rw: str, bs: int, mix: int, qd: int, read: IoStats = NO_IO,
             write: IoStats = NO_IO) -> Workload:
    return Workload(name, rw, bs, mix, 1, qd, 1000, read=read, write=write)


def made_up(kind: str, *rounds, data=None):
    t = blank_test()
    t.type, t.key, t.data = kind, kind, dict(data or {})
    for i, ws in enumerate(rounds, 1):
        t.rounds.append(Round(index=i, started="", wall_s=1.0, fio_s=1.0, workloads=tuple(ws)))
    return t


def zone_test(write_mb: List[List[float]], read_mb: List[List[float]], capacity: int = 1000 * MiB):
    """Passes of made-up zone sweeps over ``len(write_mb[0])`` zones."""
    n = len(write_mb[0])
    data = {"zones.capacity": str(capacity)}
    for i, (off, size) in enumerate(zone_bounds(capacity, n), 1):
        data[f"zone.{i}.offset"], data[f"zone.{i}.size"] = str(off), str(size)
    rounds = []
    for w_pass, r_pass in zip(write_mb, read_mb):
        rounds.append([workload(zone_name(i, "w"), "write", MiB, 0, 4, write=IoStats(bw_bytes=v * 1e6))
                       for i, v in enumerate(w_pass, 1)])
        rounds.append([workload(zone_name(i, "r"), "read", MiB, 100, 4, read=IoStats(bw_bytes=v * 1e6))
                       for i, v in enumerate(r_pass, 1)])
    return made_up("hdd-zones", *rounds, data=data)


def test_zone_figures_outer_inner_ratio_mean_and_spread():
    one = zone_test([[200.0, 180.0, 150.0, 100.0]], [[210.0, 190.0, 160.0, 105.0]])
    got = {f.key: (round(f.value, 6), f.unit, f.better) for f in ZONES.headline(one)}
    assert got == {"seq_write_outer_mb_s": (200.0, "MB/s", "higher"), "seq_write_inner_mb_s": (100.0, "MB/s", "higher"),
                   "seq_write_inner_outer_pct": (50.0, "%", ""), "seq_write_zone_mean_mb_s": (157.5, "MB/s", "higher"),
                   "seq_read_outer_mb_s": (210.0, "MB/s", "higher"), "seq_read_inner_mb_s": (105.0, "MB/s", "higher"),
                   "seq_read_inner_outer_pct": (50.0, "%", ""), "seq_read_zone_mean_mb_s": (166.25, "MB/s", "higher")}
    assert [z.position_pct for z in zones(one)] == [0.0, 25.0, 50.0, 75.0]
    assert {k: v.value for k, v in view_of(ZONES).summary(one).items()} == {"seq_write_mb_s": 157.5,
                                                                            "seq_read_mb_s": 166.25}
    two = zone_test([[200.0, 100.0], [180.0, 100.0]], [[100.0, 50.0], [100.0, 60.0]])
    figures = {f.key: f.value for f in ZONES.headline(two)}
    assert figures["seq_write_outer_mb_s"] == 190.0 and figures["seq_read_inner_mb_s"] == 55.0
    assert figures["seq_write_pass_spread_pct"] == pytest.approx(20 / 190 * 100)
    assert figures["seq_read_pass_spread_pct"] == pytest.approx(10 / 55 * 100)
    table = zone_table(two, zones(two))  # the report's table of every zone, with the spreads
    assert table.headers[-2:] == ("W spread (%)", "R spread (%)") and "mean of 2 passes" in table.title
    assert table.rows == (("1", "0.00", "0.0", "190.0", "100.0", "10.5", "0"),
                          ("2", "0.52", "50.0", "100.0", "55.0", "0", "18.2"))
    assert ZONES.headline(blank_test()) == [] and view_of(ZONES).summary(blank_test()) == {}


def test_zone_check_data_refuses_what_it_does_not_write():
    view_of(ZONES).check_data(zone_test([[1.0, 2.0]], [[1.0, 2.0]]))
    bad = zone_test([[1.0, 2.0]], [[1.0, 2.0]])
    bad.rounds.append(Round(3, "", 1.0, 1.0, (workload("rnd-4k-0-100-qd1", "randrw", 4096, 0, 1),)))
    with pytest.raises(ValueError, match="does not run"):
        view_of(ZONES).check_data(bad)
    lost = zone_test([[1.0, 2.0]], [[1.0, 2.0]])
    del lost.data["zone.2.offset"]
    with pytest.raises(ValueError, match="zone 2 was measured but its offset is not stored"):
        view_of(ZONES).check_data(lost)


def iops_cell(bs: int, mix: int, qd: int, iops: float, lat: float = 1000.0) -> Workload:
    side = IoStats(iops=iops, bw_bytes=iops * bs, ios=int(iops), lat_mean_us=lat, lat_max_us=lat * 9)
    return workload(cell_name(bs, mix, qd), "randrw", bs, mix, qd,
                    read=side if mix else IoStats(), write=IoStats() if mix else side)


def test_iops_figures_qd1_and_peak_per_mix_over_the_window():
    rounds = [[iops_cell(4096, 100, 1, 100.0 + r), iops_cell(4096, 100, 32, 300.0 + r),
               iops_cell(4096, 0, 1, 250.0), iops_cell(4096, 0, 4, 400.0), iops_cell(4096, 0, 32, 380.0),
               iops_cell(MiB, 100, 1, 60.0)] for r in range(3)]
    t = made_up("hdd-iops", *rounds)
    got = {f.key: (f.label, f.value) for f in IOPS.headline(t)}
    assert got == {"rnd_4k_read_qd1_iops": ("4k R QD1", 101.0), "rnd_4k_read_peak_iops": ("4k R peak (QD32)", 301.0),
                   "rnd_4k_write_qd1_iops": ("4k W QD1", 250.0), "rnd_4k_write_peak_iops": ("4k W peak (QD4)", 400.0)}
    summary = view_of(IOPS).summary(t)
    assert summary["rnd_4k_read_iops"].value == 301.0 and summary["rnd_4k_write_iops"].value == 380.0
    assert "QD32" in summary["rnd_4k_write_iops"].source and summary["rnd_4k_write_iops"].rank > 10
    view_of(IOPS).check_data(t)
    with pytest.raises(ValueError, match="does not run"):
        view_of(IOPS).check_data(made_up("hdd-iops", [workload("rnd-4k-100-0", "randrw", 4096, 100, 4)]))


def test_lat_figures_average_percentiles_only_where_supported_and_max():
    # 1,000 reads: 985 at 5 ms, 10 at 20 ms, 5 at 80 ms; 50 writes, too few for a 99th percentile.
    reads = IoStats(iops=100, ios=1000, lat_mean_us=5200.0, lat_max_us=80000.0,
                    bins=((5_000_000, 985), (20_000_000, 10), (80_000_000, 5)))
    writes = IoStats(iops=5, ios=50, lat_mean_us=300.0, lat_max_us=900.0, bins=((300_000, 50),))
    t = made_up("hdd-lat", [workload(cell_name(4096, 100, 1), "randrw", 4096, 100, 1, read=reads),
                            workload(cell_name(4096, 0, 1), "randrw", 4096, 0, 1, write=writes)])
    got = {f.key: f.value for f in LAT.headline(t)}
    assert got == {"rnd_4k_read_lat_mean_us": 5200.0, "rnd_4k_read_lat_p99_us": 20000.0,
                   "rnd_4k_read_lat_p99_9_us": 80000.0, "rnd_4k_read_lat_max_us": 80000.0,
                   "rnd_4k_write_lat_mean_us": 300.0, "rnd_4k_write_lat_max_us": 900.0}
    assert all(f.better == "lower" for f in LAT.headline(t))
    assert {k: v.value for k, v in view_of(LAT).summary(t).items()} == {"rnd_4k_write_lat_mean_us": 300.0,
                                                                "rnd_4k_write_lat_max_us": 900.0}
    with pytest.raises(ValueError, match="not random 100% R or W at QD 1"):
        view_of(LAT).check_data(made_up("hdd-lat", [workload(cell_name(4096, 100, 4), "randrw", 4096, 100, 4)]))


# --- end to end on a loop device ----------------------------------------------------------------

HDD_TESTS = "hdd-zones,hdd-iops,hdd-lat"
FAST = ["--quick", "--max-rounds", "1", "--hdd-iops-bs", "4k,64k", "--zones", "5", "--yes", "--quiet"]


def job_files(log_text: str, key: str) -> List[str]:
    """The job file of every fio process of one test, in order."""
    return re.findall(rf"fio job file for {key} \S+ \d+:\n(.*?)\n\S+ \S+ INFO run: ", log_text, re.S)


@needs_fio
def test_end_to_end_on_a_loop_device(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    capacity = 256 * MiB
    dry = main(["hdd", "run", loopdev, "--tests", HDD_TESTS, *FAST, "--dry-run", "--jobs"])
    planned = capsys.readouterr().out
    assert dry == 0 and "# 5 zones of 51 to 52 MiB, outer (offset 0) to inner (offset 213,909,504)" in planned
    # the HDD profile is judged against no PTS revision (issue 55 item 8): the dry run, the run's closing
    # lines, show, show --json and the report say so, and no line names what a revision requires
    assert "# verdict on this target: HDD profile: not a SNIA PTS run: " in planned
    assert "requires" not in planned and "NOT PTS-conformant" not in planned
    assert planned.splitlines()[1].startswith("# HDD profile (not a SNIA PTS run): OIO TC")  # not a revision's title
    assert "SNIA PTS 2.0.2" not in planned
    offsets = [i * capacity // 5 // MiB * MiB for i in range(5)]
    assert offsets == [0, 51 * MiB, 102 * MiB, 153 * MiB, 204 * MiB]
    for side in ("w", "r"):
        shown = re.findall(rf"^\[zone-00(\d)-{side}\]\n(?:.*\n)*?(?:offset=(\d+)\n)?size=(\d+)$", planned, re.M)
        assert [int(off or 0) for _, off, _ in shown] == offsets

    assert main(["hdd", "run", loopdev, "--tests", HDD_TESTS, *FAST, "--name", "a", "--outdir", str(out),
                 "--report-format", "rst,html"]) == 0
    closing = capsys.readouterr().out
    xml = str(out / "a.xml")
    assert main(["show", xml]) == 0
    shown_text = capsys.readouterr().out
    for said in (closing, shown_text):
        assert "\n  HDD profile: not a SNIA PTS run: " in said, said
        assert "    - write cache state unknown (tkperf could not read it on this target)\n" in said
        assert "SNIA PTS 2.0.2, enterprise requires" not in said and "NOT PTS-conformant" not in said
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    assert schema.validate(etree.parse(xml)), schema.error_log
    run = store.load(xml)
    assert run.profile == "hdd" and [t.key for t in run.tests] == ["hdd-zones", "hdd-iops", "hdd-lat"]
    for t in run.tests:
        assert t.status == "complete" and t.wipc is None and t.purge.method == "none"

    # The zone sweep: as planned, in the job files fio ran and in the stored data.
    zt = run.test("hdd-zones")
    assert zt.stop_reason == "all phases run" and len(zt.rounds) == 2
    log_text = (out / "a.log").read_text()
    files = job_files(log_text, "hdd-zones")
    assert len(files) == 2  # one fio process per direction
    for text, side, rw in zip(files, ("w", "r"), ("write", "read")):
        sections = re.findall(r"^\[(zone-\d+-\w)\]\nstonewall\nrw=(\w+)\n(?:.*\n)*?(?:offset=(\d+)\n)?size=(\d+)$",
                              text, re.M)
        assert [s[0] for s in sections] == [zone_name(i, side) for i in range(1, 6)]
        assert {s[1] for s in sections} == {rw}
        assert [int(s[2] or 0) for s in sections] == offsets
        assert [int(s[3]) for s in sections] == [z - a for a, z in zip(offsets, offsets[1:] + [capacity])]
    zs = zones(zt)
    assert [z.offset for z in zs] == offsets and all(z.write and z.read for z in zs)
    assert [z.position_pct for z in zs] == [100.0 * o / capacity for o in offsets]
    for r in zt.rounds:
        assert all(w.runtime_ms >= 900 and w.bw_bytes > 0 and w.iodepth == 4 for w in r.workloads)

    it = run.test("hdd-iops")
    assert len(it.rounds) == 1 and it.stop_reason == "max rounds"
    assert [w.name for w in it.rounds[0].workloads] == [
        "rnd-64k-100-0-qd1", "rnd-64k-100-0-qd4", "rnd-4k-100-0-qd1", "rnd-4k-100-0-qd4",
        "rnd-64k-0-100-qd1", "rnd-64k-0-100-qd4", "rnd-4k-0-100-qd1", "rnd-4k-0-100-qd4"]
    assert all(w.iops > 0 and w.numjobs == 1 for r in it.rounds for w in r.workloads)
    lt = run.test("hdd-lat")
    assert all(w.iodepth == 1 and (w.read.bins or w.write.bins) for r in lt.rounds for w in r.workloads)

    capsys.readouterr()
    assert main(["show", xml, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    verdict = doc["conformance"]
    assert (verdict["conformant"], verdict["pts_run"]) == (False, False)
    assert verdict["verdict"] == f"HDD profile: not a SNIA PTS run: {len(verdict['deviations'])} disclosures"
    assert not [d for d in verdict["deviations"] if "requires" in d or "SNIA PTS 2" in d]
    shown = {t["key"]: t["headline"] for t in doc["tests"]}
    assert shown["hdd-zones"]["seq_read_outer_mb_s"] == zs[0].mb_s("r")
    assert shown["hdd-zones"]["seq_write_inner_mb_s"] == zs[-1].mb_s("w")
    assert set(shown["hdd-iops"]) == {f"rnd_4k_{s}_{q}_iops" for s in ("read", "write") for q in ("qd1", "peak")}
    assert {"rnd_4k_read_lat_mean_us", "rnd_4k_read_lat_p99_us", "rnd_4k_read_lat_max_us",
            "rnd_4k_write_lat_mean_us"} <= set(shown["hdd-lat"])

    rst = (out / "a.rst").read_text()
    assert "Conformance: HDD profile: not a SNIA PTS run: " in rst
    assert "     - none: the HDD profile is not a SNIA PTS run" in rst  # the header's PTS revision
    assert "SNIA PTS 2.0.2, enterprise requires" not in rst and "NOT PTS-conformant" not in rst
    zones_page = rst.split("\nHDD throughput by zone\n===")[1].split("\nHDD random IOPS\n===")[0]
    assert "MB/s vs position on the disk" in zones_page and "a-plots/hdd-zones-mbs-vs-position.svg" in zones_page
    table = zones_page.split("MB/s of every zone, outer to inner (one pass)")[1].split("Phases in the order run")[0]
    rows = re.findall(r"\* - (\d)\n\s+- ([\d.]+)\n\s+- ([\d.]+)\n\s+- ([\d,.]+)\n\s+- ([\d,.]+)", table)
    assert [(int(r[0]), float(r[2])) for r in rows] == [(i + 1, round(100.0 * o / capacity, 1))
                                                        for i, o in enumerate(offsets)]
    assert [r[4] for r in rows] == [f"{z.mb_s('r'):,.1f}" for z in zs]
    iops_page = rst.split("\nHDD random IOPS\n===")[1].split("\nHDD random-access latency\n===")[0]
    for qd in (1, 4):
        assert f"by block size and R/W mix % at QD{qd}" in iops_page
    assert "IOPS vs queue depth" in iops_page and "Repeatability of the rounds" in iops_page
    headers = {h.test[0][1]: dict(h.test) for h in report_blocks(run) if isinstance(h, Header)}
    assert headers["SEQ 1024k 100% W, then SEQ 1024k 100% R, zone by zone from outer to inner"][
        "Steady state"].startswith("not applicable: one sweep over positions")
    iops_header = next(h for stimulus, h in headers.items() if stimulus.startswith("RND, R/W mix 100/0,0/100"))
    assert iops_header["Steady state"].startswith("not applicable to an HDD")
    assert iops_header["Repeatability"].startswith("20/10 over 5 rounds: NOT repeatable")
    lat_page = rst.split("\nHDD random-access latency\n===")[1]
    assert "Response time at TC 1/QD 1" in lat_page and "Response-time distribution (latency QoS)" in lat_page
    pngs = sorted(p.name for p in (out / "a-plots").glob("hdd-*.svg"))
    assert {"hdd-zones-mbs-vs-position.svg", "hdd-iops-iops-by-bs-mix.svg", "hdd-iops-iops-vs-qd.svg",
            "hdd-lat-response-4k.svg", "hdd-lat-histogram-4k.svg"} <= set(pngs)
    assert all((out / "a-plots" / n).read_text()[:2000].count("<svg") == 1 for n in pngs)
    assert (out / "a.html").exists()

    assert main(["compare", xml, xml, "--format", "rst", "--outdir", str(tmp_path / "cmp")]) == 0
    cmp = (tmp_path / "cmp" / "comparison.rst").read_text()
    assert "SEQ 100% R: MB/s by position" in cmp and "RND 4k 100/0: IOPS by queue depth" in cmp
    assert "RND 4k 0/100 W: response-time percentiles by run" in cmp
