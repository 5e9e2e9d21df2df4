"""WSAT's response-time capture after its stream (the PTS 2.0 implementation
Alan-ADATA/SSS-PTS-TEST, test/lib/BlockStorageTestWsat.php: 20 minutes of RND
4k W at TC1/QD1): planned by default, --quick's 2 s, skipped with
--wsat-capture 0 as a disclosed deviation under PTS 2.0; run right after the
stream (made-up fio reports here, no fio, no device), kept as the
``capture`` series beside the intervals, which it leaves alone; a file
from before it loads unchanged.  The real fio run: tests/e2e/test_wsat_response_times.py."""
from test_wsat_steady import CAPACITY, FLAT, FakeFio, FakeRunner, wsat_opts
from tkperf import store
from tkperf.fio.jobs import FioJob
from tkperf.kit import options
from tkperf.kit.registry import get
from tkperf.kit.shapes import blank_test
from tkperf.model import histogram
from tkperf.model.pts import REVISIONS
from tkperf.model.results import IoStats, Workload
from tkperf.testtypes import latency, writesat

BINS = ((20_000, 5), (40_000, 90), (1_234_567, 5))


class CapturingFio(FakeFio):
    """The made-up stream, then one fio process of the capture's job."""

    def __init__(self, iops) -> None:
        super().__init__(iops)
        self.runs: list = []

    def run(self, jobs, what, timeout=None, histograms=False):
        self.runs.append((tuple(jobs), what, histograms))
        (job,) = jobs
        write = IoStats(iops=50.0, io_bytes=100 * 4096, ios=100, lat_mean_us=61.5, lat_max_us=1234.567, bins=BINS)
        return [Workload(job.name, job.rw, job.bs, 0, job.numjobs, job.iodepth, 2000, write=write)], 2.1


def plan(quick=False, **given):
    (p,) = get("wsat").plan(options.build({"tests": ("wsat",), **given}, quick=quick), CAPACITY)
    return p


def deviations(rev, **given):
    kind = get("wsat")
    opts = options.build({"tests": ("wsat",), **given}).to_dict()
    return [d for d in kind.pts.deviations(kind, opts, REVISIONS[rev]) if "capture" in d]


def run_capture(**given):
    opts = wsat_opts(wsat_time=3600, wsat_interval=1, wsat_tgbw="1000", wsat_capture=2, **given)
    (p,) = get("wsat").plan(opts, CAPACITY)
    test = blank_test()
    test.key, test.type = "wsat", "wsat"
    test.tracking_metric = p.tracking.metric
    test.params = dict(p.params)
    runner = FakeRunner(opts, FLAT)
    runner.fio = CapturingFio(FLAT)
    p.shape.run(runner, p, test)
    return test, runner


def test_the_capture_follows_the_stream_at_tc1_qd1_for_20_minutes():
    p = plan(numjobs=8, iodepth=64)
    job = p.shape.capture
    assert (job.name, job.rw, job.bs, job.numjobs, job.iodepth, job.runtime) == (
        writesat.CAPTURE_WORKLOAD, "randwrite", 4096, 1, 1, 1200)
    assert p.params["capture_s"] == "1200"
    assert p.shape.job.numjobs == 8 and p.shape.job.iodepth == 64  # the stream keeps the operator's OIO
    est = p.shape.estimate(options.build({"tests": ("wsat",)}), CAPACITY)
    stream_only = plan(wsat_capture=0).shape.estimate(options.build({"tests": ("wsat",)}), CAPACITY)
    assert est.jobs[-1] is job and est.low_s - stream_only.low_s >= 1200
    assert any("response-time capture" in line for line in est.lines)
    assert deviations("pts-e-2.0") == []


def test_quick_captures_briefly_and_zero_skips_it_as_a_deviation_under_2_0():
    assert plan(quick=True).shape.capture.runtime == 2
    p = plan(wsat_capture=0)
    assert p.shape.capture is None and "capture_s" not in p.params
    (said,) = deviations("pts-e-2.0", wsat_capture=0)
    assert said.startswith("WSAT response-time capture skipped") and "Alan-ADATA/SSS-PTS-TEST" in said
    assert deviations("pts-c-2.0", wsat_capture=300)[0].startswith("WSAT response-time capture 5 min instead")
    assert deviations("pts-e-1.1", wsat_capture=0) == []  # the 1.1 revisions: no such implementation


def test_the_option_reads_as_lats_does():
    """--wsat-capture is read by the one parser both captures share (its cases: tests/unit/test_lat_capture.py)."""
    assert writesat.parse_capture is latency.parse_capture


def test_the_capture_runs_after_the_stream_and_is_kept_beside_its_intervals():
    t, runner = run_capture()
    ((job,), what, histograms) = runner.fio.runs[0]
    assert len(runner.fio.runs) == 1 and what == "wsat capture" and histograms
    assert (job.rw, job.bs, job.numjobs, job.iodepth, job.runtime) == ("randwrite", 4096, 1, 1, 2)
    # the stream's own figures and stop are untouched; its steps are its intervals
    assert t.stop_reason == "time limit" and len(t.series["intervals"]) == len(FLAT) == t.done
    cap = writesat.capture_round(t)
    (w,) = cap.workloads
    assert w.write.bins == BINS and histogram.total(w.write.bins) == w.write.ios == 100
    assert (w.numjobs, w.iodepth, w.rw, w.bs) == (1, 1, "randwrite", 4096)
    assert w.write.lat_mean_us == 61.5 and w.write.lat_max_us == 1234.567


def test_the_capture_reads_back_from_the_file(tmp_path):
    run = store.load("tests/data/format1/example-ssd.xml")
    old = run.test("wsat")
    assert writesat.capture_round(old) is None  # a file from before the capture: none, nothing else changes
    kind = get("wsat")
    said = kind.pts.result_deviations(kind, old, run.options, REVISIONS["pts-e-2.0"], CAPACITY)
    assert any("recorded without the PTS 2.0 implementation's 20-minute" in d for d in said)
    new, _ = run_capture()
    new.status = "complete"
    run.tests = [t if t.type != "wsat" else new for t in run.tests]
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    back = store.load(str(path)).test("wsat")
    assert writesat.capture_round(back).workloads[0].write.bins == BINS
    assert back.done == len(FLAT) and back.data["capture.lat_max_us"] == "1234.567"
    opts = {**run.options, "wsat_capture": "2"}
    assert not any("capture" in d for d in kind.pts.result_deviations(kind, back, opts, REVISIONS["pts-e-2.0"],
                                                                       CAPACITY))


def test_no_capture_without_its_job():
    job = FioJob(name=writesat.WORKLOAD, rw="randwrite", bs=4096, runtime=3600)
    assert writesat.WsatStream(job, 60).capture is None
