"""Queue-depth scaling (``qd``, seed 001): its plan checked option by option,
its figures from made-up rounds, bad option values, and the test end to end
on a loop device with the real fio (result file, report, comparison, show)."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import List

import pytest
from lxml import etree

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_USAGE
from tkperf.fio.jobs import FioSettings, job_file
from tkperf.kit import options
from tkperf.kit.shapes import FIO_GAP_S, Phases, blank_test
from tkperf.model import histogram
from tkperf.model.results import IoStats, Round, Workload
from tkperf.report.generic import view_of
from tkperf.testtypes.qd import BY_WORD, FILL_JOB, PRECONDITION_JOB, WORKLOADS, Point, QueueDepthTest, schedule
from tkperf.testtypes.qd.settings import QdSettings

MiB = 1024 * 1024
QD = QueueDepthTest()
ALL = ("rnd4k-w", "rnd4k-r", "rnd4k-70/30", "seq128k-w", "seq128k-r")


def plan(capacity: int = 1 << 30, quick: bool = False, **given):
    opts = options.build({"tests": ("qd",), **given}, quick=quick)
    (p,) = QD.plan(opts, capacity)
    return p


def sweeps(p) -> list:
    """Each sweep with all its points (a SEQ sweep runs a phase per point)."""
    out: list = []
    for ph in p.shape.phases:
        if not ph.label.startswith("sweep"):
            continue
        title = ph.label.split(": point ")[0]
        if out and out[-1].label == title:
            out[-1].jobs += ph.jobs
        else:
            out.append(SimpleNamespace(label=title, jobs=tuple(ph.jobs)))
    return out


def kinds(p) -> List[str]:
    """Each step as 'fill', 'pre' or the workload word it sweeps."""
    out = []
    for ph in p.shape.phases:
        names = [j.name for j in ph.jobs]
        if names == [FILL_JOB]:
            out.append("fill")
        elif names == [PRECONDITION_JOB]:
            out.append("pre")
        else:
            (w,) = [w for w in WORKLOADS if w.qd_of(names[0]) is not None]
            if not (ph.label.split(": point ")[0] != ph.label and out and out[-1] == w.word):
                out.append(w.word)
    return out


# --- the plan, option by option --------------------------------------------------------

def test_defaults_are_the_seeds():
    p = plan()
    assert isinstance(p.shape, Phases) and p.key == "qd" and p.wipc
    assert kinds(p) == ["pre", "rnd4k-w", "rnd4k-r", "fill", "pre", "rnd4k-70/30",
                        "fill", "pre", "seq128k-w", "seq128k-r"]
    for ph in sweeps(p):
        assert [j.iodepth for j in ph.jobs] == [1, 2, 4, 8, 16, 32, 64, 128]
        assert {j.runtime for j in ph.jobs} == {180}
    pre = [ph.jobs[0] for ph in p.shape.phases if ph.jobs[0].name == PRECONDITION_JOB]
    assert len(pre) == 3 and {(j.runtime, j.iodepth, j.rw, j.bs) for j in pre} == {(7200, 32, "randwrite", 4096)}


def test_no_idle_every_point_a_stonewalled_job_of_one_fio_process():
    p = plan(qd_depths=(1, 8, 64))
    assert all(ph.idle_s == 0 for ph in p.shape.phases)
    settings = FioSettings(filename="/dev/loopX")
    seq = [ph for ph in p.shape.phases if ph.label.startswith("sweep: SEQ")]
    assert len(seq) == 6 and all(len(ph.jobs) == 1 and ph.place is not None for ph in seq)
    for ph in [s for s in sweeps(p) if not s.label.startswith("sweep: SEQ")]:
        text = job_file(settings, ph.jobs)  # one phase, one fio process, one job file
        sections = re.findall(r"^\[([^\]]+)\]\nstonewall$", text, re.M)
        assert len(sections) == 3 and sections == [j.name for j in ph.jobs]
        assert text.count("time_based=1") == 3


@pytest.mark.parametrize("depths", [(1, 2, 4), (32, 1, 8), (128,)])
def test_qd_is_fio_iodepth_with_one_job_in_the_order_given(depths):
    p = plan(qd_depths=depths, numjobs=4, iodepth=32)  # the shared OIO does not apply
    for ph in sweeps(p):
        assert [j.iodepth for j in ph.jobs] == list(depths)
        assert [j.name.rsplit("-qd", 1)[1] for j in ph.jobs] == [str(d) for d in depths]
        for j in ph.jobs:
            assert j.numjobs == 1 and f"iodepth={j.iodepth}" in j.section() and "numjobs=1" in j.section()
    assert p.params["depths"] == ",".join(str(d) for d in depths) and p.params["numjobs"] == "1"


def test_time_per_point_and_precondition_time():
    p = plan(qd_time=7, qd_precondition_time=90, runtime=33)
    assert {j.runtime for ph in sweeps(p) for j in ph.jobs} == {7}
    pre = [ph.jobs[0] for ph in p.shape.phases if ph.jobs[0].name == PRECONDITION_JOB]
    assert {j.runtime for j in pre} == {90}
    assert p.params["runtime"] == "7" and p.params["precondition_time"] == "90"


def test_fill_runs_to_the_end_of_the_active_range():
    p = plan(qd_workloads=("rnd4k-70/30", "seq128k-w"))
    fills = [ph.jobs[0] for ph in p.shape.phases if ph.jobs[0].name == FILL_JOB]
    assert len(fills) == 1  # the first precondition's fill is the WIPC
    (fill,) = fills
    assert (fill.rw, fill.bs, fill.iodepth, fill.numjobs, fill.runtime, fill.size) == ("write", 128 * 1024, 32, 1, 0, 0)
    assert not any(line.startswith(("runtime=", "size=", "offset=")) for line in fill.section())


@pytest.mark.parametrize("chosen, wipc_loops, expected", [
    (ALL, 2, ["pre", "rnd4k-w", "rnd4k-r", "fill", "pre", "rnd4k-70/30", "fill", "pre", "seq128k-w",
              "seq128k-r"]),
    (("rnd4k-r",), 2, ["pre", "rnd4k-r"]),
    (("rnd4k-r", "seq128k-r"), 2, ["pre", "rnd4k-r", "seq128k-r"]),  # reads keep the state
    (("rnd4k-w", "seq128k-r"), 2, ["pre", "rnd4k-w", "fill", "pre", "seq128k-r"]),
    (("seq128k-r", "rnd4k-70/30"), 2, ["pre", "rnd4k-70/30", "fill", "pre", "seq128k-r"]),
    (("seq128k-w",), 0, ["fill", "pre", "seq128k-w"]),  # no WIPC: the first fill too
    (("rnd4k-w", "rnd4k-r"), 0, ["fill", "pre", "rnd4k-w", "rnd4k-r"]),
])
def test_preconditions_before_write_sweeps_and_reads_right_after(chosen, wipc_loops, expected):
    assert kinds(plan(qd_workloads=chosen, wipc_loops=wipc_loops)) == expected
    steps = schedule(chosen, first_fill=wipc_loops == 0)
    assert [w or {"precondition": "pre"}.get(k, k) for k, w in steps] == expected


def _moved(name: str, index: int, moved: int) -> Round:
    w = Workload(name=name, rw="write", bs=128 * 1024, rwmixread=0, numjobs=1, iodepth=1, runtime_ms=1000,
                 read=IoStats(), write=IoStats(io_bytes=moved))
    return Round(index=index, started="", wall_s=1.0, fio_s=1.0, workloads=(w,))


@pytest.mark.parametrize("active_range", [100, 50])
def test_sequential_points_continue_where_the_last_stopped(active_range):
    # issue 19: every SEQ point continues over the whole range, as TP does (seed 001: full LBA range)
    capacity = 1 << 30
    p = plan(capacity, qd_depths=(1, 2, 4), active_range=active_range)
    end = capacity * active_range // 100
    for ph in sweeps(p):
        if ph.jobs[0].rw not in ("read", "write"):
            assert all(j.offset == 0 and j.size == 0 for j in ph.jobs)  # random: the whole range
    phases = [ph for ph in p.shape.phases if ph.label.startswith("sweep: SEQ 128KiB 100% W")]
    assert [ph.label for ph in phases] == [f"sweep: SEQ 128KiB 100% W, QD 1,2,4: point {i} of 3, QD{d}"
                                           for i, d in ((1, 1), (2, 2), (3, 4))]
    names = [ph.jobs[0].name for ph in phases]
    pre = [_moved("rnd-4k-w-qd1", 1, 5 * MiB)]  # other workloads do not move the cursor
    first = phases[0].placed(pre)[0]
    assert (first.offset, first.size) == (0, end)  # the whole range, not a slice
    done = pre + [_moved(names[0], 2, 100 * MiB)]
    second = phases[1].placed(done)[0]
    assert (second.offset, second.size) == (100 * MiB, end - 100 * MiB)
    assert f"offset={100 * MiB}" in second.section() and f"size={end - 100 * MiB}" in second.section()
    done.append(_moved(names[1], 3, 200 * MiB))
    third = phases[2].placed(done)[0]
    assert third.offset == 300 * MiB  # after both earlier points
    # a point expected (from the last one's bytes) to run past the end starts early enough to
    # end there (TP's rule): after 100 MiB and end - 150 MiB, the cursor is 50 MiB before the end
    near = [_moved(names[0], 2, 100 * MiB), _moved(names[1], 3, end - 150 * MiB)]
    assert phases[2].placed(near)[0].offset == 150 * MiB


def test_quick_values_and_histograms_only_for_the_mix():
    opts = options.build({"tests": ("qd",)}, quick=True)
    cfg = opts.of(QdSettings)
    assert (cfg.depths, cfg.time, cfg.precondition_time, cfg.workloads) == ((1, 4, 32), 2, 3, ALL)
    assert plan(quick=True).histograms
    assert not plan(qd_workloads=("rnd4k-w", "seq128k-r")).histograms


def test_options_survive_the_result_file():
    values = {"qd_depths": (64, 1, 8), "qd_time": 45, "qd_workloads": ("rnd4k-70/30", "seq128k-r"),
              "qd_precondition_time": 5400}
    for opt in QD.options:
        assert opt.from_text(opt.to_text(values[opt.field])) == values[opt.field]
    opts = options.build({"tests": ("qd",), **values})
    assert options.RunOptions.from_dict(opts.to_dict()) == opts


def test_dry_run_estimate_names_every_phase_and_counts_the_fills():
    opts = options.build({"tests": ("qd",), "qd_depths": (1, 2), "qd_time": 10,
                          "qd_precondition_time": 100, "qd_workloads": ("rnd4k-w", "seq128k-w")})
    (p,) = QD.plan(opts, 1_000_000_000)
    est = p.shape.estimate(opts, 1_000_000_000)
    phase_lines = [ln for ln in est.lines if ln.startswith("# phase ")]
    assert len(phase_lines) == len(p.shape.phases) == 6  # a phase per SEQ point
    assert "rnd-4k-w-qd1, rnd-4k-w-qd2" in phase_lines[1]
    busy = 2 * 100 + 4 * 10 + 7 * FIO_GAP_S  # 2 preconditions, 4 points, 7 fio jobs
    fill_s = 1_000_000_000 / 500e6  # one fill (the first precondition's is the WIPC)
    assert est.low_s == est.high_s == pytest.approx(busy + fill_s)
    assert "fills of 1.0 GB in all, about 2 s at 500 MB/s" in est.lines[1]


# --- bad values ------------------------------------------------------------------------

@pytest.mark.parametrize("flag, value, words", [
    ("--qd-depths", "0", "'0' is not a queue depth from 1 to 4096"),
    ("--qd-depths", "1,8192", "'8192' is not a queue depth"),
    ("--qd-depths", "1,two", "'two' is not a queue depth"),
    ("--qd-depths", ",", "names no queue depth"),
    ("--qd-workloads", "rnd4k-w,rnd8k-w", "unknown workload 'rnd8k-w'"),
    ("--qd-workloads", ", ,", "names no workload"),
    ("--qd-time", "0", "longer than 0"),
    ("--qd-time", "2d", "out of range"),
    ("--qd-precondition-time", "soon", "is not a duration"),
])
def test_bad_values_are_one_line_usage_errors(flag, value, words, loopdev, tmp_path, capsys):
    rc = main(["ssd", "run", loopdev, "--tests", "qd", "--quick", "--yes", "--no-report", "-q",
               "--outdir", str(tmp_path / "out"), flag, value])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == EXIT_USAGE and "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("tkperf: error: ") and words in lines[0]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.xml"))


def test_qd_options_need_the_qd_test():
    with pytest.raises(options.UsageError, match="--qd-depths belongs to a test that is not among"):
        options.build({"tests": ("iops",), "qd_depths": (1,)})


# --- figures from made-up rounds ----------------------------------------------------------

def point(name: str, qd: int, iops: float, rw: str = "randread", bs: int = 4096, lat: float = 100.0,
          mix: int = 100, read: IoStats = None, write: IoStats = None) -> Workload:
    side = IoStats(iops=iops, bw_bytes=iops * bs, ios=int(iops * 10), lat_mean_us=lat,
                   percentiles=(("99.9", lat * 3),))
    read = read if read is not None else (side if mix else IoStats())
    write = write if write is not None else (IoStats() if mix else side)
    return Workload(name, rw, bs, mix, 1, qd, 10000, read=read, write=write)


def made_up(*rounds) -> object:
    t = blank_test()
    t.type, t.key = "qd", "qd"
    for i, workloads in enumerate(rounds, 1):
        t.rounds.append(Round(index=i, started="", wall_s=1.0, fio_s=1.0, workloads=tuple(workloads)))
    return t


def test_headline_peaks_and_qd1_latency():
    r = BY_WORD["rnd4k-r"]
    s = BY_WORD["seq128k-w"]
    t = made_up([point(PRECONDITION_JOB, 32, 99999.0, "randwrite", mix=0)],
                [point(r.point(1), 1, 5000.0, lat=180.0), point(r.point(32), 32, 90000.0),
                 point(r.point(128), 128, 85000.0)],
                [point(s.point(1), 1, 1000.0, "write", 128 * 1024, mix=0),
                 point(s.point(4), 4, 3000.0, "write", 128 * 1024, mix=0)])
    got = {f.key: (f.value, f.unit, f.better) for f in QD.headline(t)}
    assert got == {"rnd4k_r_peak_iops": (90000.0, "IOPS", "higher"), "rnd4k_r_peak_qd": (32.0, "", ""),
                   "rnd4k_r_qd1_lat_mean_us": (180.0, "us", "lower"),
                   "seq128k_w_peak_mb_s": (3000.0 * 128 * 1024 / 1e6, "MB/s", "higher"),
                   "seq128k_w_peak_qd": (4.0, "", "")}
    no_qd1 = made_up([point(r.point(2), 2, 5000.0)])
    assert [f.key for f in QD.headline(no_qd1)] == ["rnd4k_r_peak_iops", "rnd4k_r_peak_qd"]
    assert QD.headline(blank_test()) == [] and view_of(QD).summary(t) == {}


def test_99_9_of_a_mix_comes_from_both_histograms_added():
    # 700 reads at 100 µs, 300 writes: 298 at 200 µs and 2 at 5 ms.  Alone,
    # each direction's 99.9th percentile is its own slowest bin; together
    # the 999th of 1000 I/Os is a write at 5 ms.
    reads = IoStats(iops=700, ios=700, bins=((100_000, 700),), percentiles=(("99.9", 100.0),))
    writes = IoStats(iops=300, ios=300, bins=((200_000, 298), (5_000_000, 2)), percentiles=(("99.9", 5000.0),))
    mixed = Point(4, point("rnd-4k-70-30-qd4", 4, 0, "randrw", mix=70, read=reads, write=writes))
    assert mixed.p999_us == histogram.percentile_us(histogram.merge(reads.bins, writes.bins), 99.9) == 5000.0
    fewer = IoStats(iops=300, ios=300, bins=((200_000, 299), (5_000_000, 1)))
    assert Point(4, point("x", 4, 0, "randrw", mix=70, read=reads, write=fewer)).p999_us == 200.0
    without = Point(4, point("x", 4, 0, "randrw", mix=70, read=IoStats(ios=5), write=IoStats(ios=5)))
    assert without.p999_us is None  # no histograms: no made-up figure
    assert Point(1, point("rnd-4k-r-qd1", 1, 100.0, lat=50.0)).p999_us == 150.0  # one direction: fio's


def test_check_data_refuses_what_qd_does_not_write():
    r = BY_WORD["rnd4k-r"]
    view_of(QD).check_data(made_up([point(FILL_JOB, 32, 1.0, "write", mix=0)], [point(r.point(8), 8, 1.0)]))
    with pytest.raises(ValueError, match="does not run"):
        view_of(QD).check_data(made_up([point("rnd-4k-0-100", 8, 1.0)]))
    with pytest.raises(ValueError, match="not TC 1/QD 8"):
        view_of(QD).check_data(made_up([point(r.point(8), 4, 1.0)]))


# --- end to end on a loop device ---------------------------------------------------------------

FAST = ["--quick", "--qd-time", "1", "--qd-precondition-time", "1", "--wipc-loops", "1",
        "--yes", "--quiet", "--no-report"]


def run_qd(loopdev, outdir, name, *extra) -> str:
    assert main(["ssd", "run", loopdev, "--tests", "qd", "--name", name, "--outdir", str(outdir),
                 *FAST, *extra]) == 0
    return str(outdir / f"{name}.xml")


def job_files(log_text: str) -> List[str]:
    """The job file of every fio process of the qd test, in order."""
    return re.findall(r"fio job file for qd phase \d+:\n(.*?)\n\S+ \S+ INFO run: ", log_text, re.S)


@needs_fio
def test_end_to_end_on_a_loop_device(loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    xml = run_qd(loopdev, out, "a", "--qd-depths", "4,1")
    schema = etree.XMLSchema(etree.parse(store.SCHEMA_PATH))
    assert schema.validate(etree.parse(xml)), schema.error_log
    run = store.load(xml)
    (t,) = run.tests
    assert (t.type, t.key, t.status, t.stop_reason) == ("qd", "qd", "complete", "all phases run")
    assert t.wipc is not None and t.wipc.bytes_written == 256 * MiB
    labels = [t.data[f"phase.{r.index}"] for r in t.rounds]
    assert len(labels) == 12 and labels[0].startswith("precondition 1: RND 4KiB W QD32")
    assert labels[3].startswith("precondition 2: SEQ 128KiB W fill")
    assert labels[11] == "sweep: SEQ 128KiB 100% R, QD 4,1: point 2 of 2, QD1"
    # random sweeps: one phase each; SEQ sweeps: a phase per point
    for rounds, w in zip([(1,), (2,), (5,), (8, 9), (10, 11)], WORKLOADS):
        got = [x for i in rounds for x in t.rounds[i].workloads]
        assert [x.name for x in got] == [w.point(4), w.point(1)]  # the order given
        for x in got:
            assert x.numjobs == 1 and x.rw == w.rw and x.runtime_ms >= 900 and x.iops > 0
        assert [x.iodepth for x in got] == [4, 1]
    fill = t.rounds[3].workloads[0]
    assert fill.name == FILL_JOB and fill.write.io_bytes == 256 * MiB
    mix = t.rounds[5].workloads
    assert all(x.read.ios and x.write.ios and x.read.bins and x.write.bins for x in mix)
    assert all(Point(x.iodepth, x).p999_us for x in mix)
    # Every phase is one fio process; a sweep's points are stonewalled jobs of one job file.
    files = job_files((out / "a.log").read_text())
    assert len(files) == 12
    assert re.findall(r"^\[(\S+)\]\nstonewall$", files[1], re.M) == ["rnd-4k-w-qd4", "rnd-4k-w-qd1"]
    # SEQ: the first point over the whole range, the next where it stopped (issue 19)
    end = 256 * MiB
    assert "offset=" not in files[8] and f"size={end}" in files[8]
    from tkperf.testtypes.throughput import advance, place

    moved, bs = t.rounds[8].workloads[0].write.io_bytes, 128 * 1024
    start = int(t.data["offset.10.seq-128k-w-qd1"])
    assert start == place(advance(0, moved, end, bs), moved, end, bs)
    section = files[9].split("[seq-128k-w-qd1]")[1]
    assert (f"offset={start}\nsize={end - start}" in section) if start else \
        ("offset=" not in section and f"size={end}" in section)

    capsys.readouterr()  # the run's own summary
    assert main(["show", xml, "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["tests"]
    keys = {f"{w.key}_peak_{'mb_s' if w.sequential else 'iops'}" for w in WORKLOADS}
    keys |= {f"{w.key}_peak_qd" for w in WORKLOADS} | {"rnd4k_w_qd1_lat_mean_us", "rnd4k_r_qd1_lat_mean_us"}
    assert set(shown["headline"]) == keys
    assert shown["headline"]["rnd4k_r_peak_iops"] == max(x.iops for x in t.rounds[2].workloads)
    assert {shown["headline"][f"{w.key}_peak_qd"] for w in WORKLOADS} <= {1.0, 4.0}

    assert main(["report", xml, "--format", "rst,html", "--outdir", str(tmp_path / "rep")]) == 0
    rst = (tmp_path / "rep" / "a.rst").read_text()
    section = rst.split("\nQueue-depth scaling\n===")[1]
    assert "Phases in the order run" in section and "precondition 3: RND 4KiB W QD32, 1 s" in section
    for w in WORKLOADS:
        assert f"{w.title} at TC 1, by queue depth" in section
    pngs = sorted(p.name for p in (tmp_path / "rep" / "a-plots").glob("qd-*.svg"))
    assert len(pngs) == 10 and all(f"a-plots/{n}" in section for n in pngs)
    assert all((tmp_path / "rep" / "a-plots" / n).read_text()[:2000].count("<svg") == 1 for n in pngs)

    other = run_qd(loopdev, out, "b", "--qd-depths", "2,4", "--qd-workloads", "rnd4k-r")
    assert len(store.load(other).tests[0].rounds) == 2  # a precondition and the read sweep
    assert main(["compare", xml, other, "--format", "rst", "--outdir", str(tmp_path / "cmp")]) == 0
    cmp = (tmp_path / "cmp" / "comparison.rst").read_text().split("\nQueue-depth scaling\n===")[1]
    assert "Queue-depth scaling: headline figures, side by side" in cmp
    assert "RND 4KiB 100% R: IOPS by queue depth (TC 1)" in cmp and "SEQ 128KiB 100% W: MB/s by queue depth" in cmp
    read_table = cmp.split("RND 4KiB 100% R: IOPS by queue depth")[1].split(".. figure::")[0]
    assert [ln.strip("* -") for ln in read_table.splitlines() if re.match(r"\s+\* - \d+$", ln)] == ["1", "2", "4"]
    assert len(list((tmp_path / "cmp" / "comparison-plots").glob("qd-*-vs-qd.svg"))) == 5
