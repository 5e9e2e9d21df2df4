"""WSAT's per-interval response times (PTS 2.0's optional "WSAT Optional RTs
& IOPS v Drive Fills: ART, 5 9s, MRT"), the real fio on a loop device:
every interval keeps its average, five nines (only where its I/O count
supports it) and maximum, checked against fio's own reports, and the
report draws the plots.  After the stream, the PTS 2.0 implementation's
response-time capture (Alan-ADATA/SSS-PTS-TEST, BlockStorageTestWsat.php:
RND 4k 100% W at TC1/QD1) is run and stored, and its histogram is the
report's "Response-time histogram and confidence plot"."""
import gzip
import json

import numpy as np
import pytest

from conftest import MiB, needs_fio, try_loop
from tkperf import store
from tkperf.cli import main
from tkperf.fio.output import json_objects
from tkperf.model import histogram
from tkperf.model.series import round_value
from tkperf.testtypes import writesat
from tkperf.testtypes.writesat import SERIES

pytestmark = needs_fio


def test_wsat_intervals_keep_art_five_nines_and_mrt(tmp_path):
    # small: what it holds is flushed as it detaches; the 4 s time limit ends the stream (with a TGBW
    # of 2x the 64 MiB, a run beside other tests stored a single interval)
    loop, why = try_loop(64 * MiB, str(tmp_path))
    if loop is None:
        pytest.skip(why)
    out = tmp_path / "out"
    try:  # stopped by its 4 s, not by bytes: a fast host writes 2x of 64 MiB within one interval
        assert main(["ssd", "run", loop.path, "--name", "t", "--outdir", str(out), "--tests", "wsat",
                     "--wsat-time", "4", "--wsat-tgbw", "1000", "--wsat-interval", "1", "-nj", "1", "-iod", "16",
                     "--wsat-capture", "2", "--purge", "none", "--yes", "--quiet", "--no-report"]) == 0
    finally:
        loop.__exit__(None, None, None)
    xml = out / "t.xml"
    run = store.load(str(xml))
    s = run.test("wsat").series[SERIES]
    assert {"lat_p99_999_us", "lat_max_us"} <= set(s.columns) and len(s) >= 2
    for ios, avg, p5, mx in zip(s.column("ios"), s.column("lat_mean_us"), s.column("lat_p99_999_us"),
                                s.column("lat_max_us")):
        if ios == 0:  # a second in which no write completed (a stalled host): nothing to read
            assert avg == p5 == mx == 0
            continue
        assert 0 < avg <= mx
        if histogram.supported(int(ios), "99.999"):
            assert avg <= p5 <= mx
        else:  # fewer than 100,000 I/Os: no five nines
            assert p5 == 0
    # fio's own final report: its maximum is the largest interval maximum, exactly
    kept = run.facts["fio_output"]
    (entry,) = [f for f in kept["files"] if f["format"] == "json-stream"]
    with gzip.open(out / kept["dir"] / entry["file"], "rt") as fh:
        reports = [o for o, _ in json_objects(fh.read())]
    (job,) = reports[-1]["jobs"]
    assert "bins" in job["write"]["lat_ns"]  # json+ status reports
    # (as the series keeps it: 8 significant digits, model.series.round_value)
    assert float(np.max(s.column("lat_max_us"))) == round_value(job["write"]["lat_ns"]["max"] / 1000.0)
    rep = tmp_path / "rep"
    assert main(["report", str(xml), "--outdir", str(rep), "--format", "rst"]) == 0
    rst = (rep / "t.rst").read_text()
    assert "Response times per interval (optional: ART, 5 9s, MRT)" in rst
    assert "WSAT Optional RTs & IOPS v Drive Fills: ART, 5 9s, MRT" in rst
    for name in ("wsat-rt-vs-time.svg", "wsat-rt-vs-fills.svg"):
        assert (rep / "t-plots" / name).stat().st_size > 10_000, name
    # the capture after the stream: fio's own job is RND 4k W at TC1/QD1, and every I/O it counted is in
    # the stored histogram, beside (not among) the stream's intervals
    t = run.test("wsat")
    cap = writesat.capture_round(t)
    assert cap is not None and t.params["capture_s"] == "2" and t.done == len(s)
    (w,) = cap.workloads
    (entry,) = [f for f in kept["files"] if f["what"] == "wsat capture"]
    assert entry["format"] == "json+"
    with gzip.open(out / kept["dir"] / entry["file"], "rt") as fh:
        fio = json.load(fh)
    (job,) = fio["jobs"]
    opts = {**fio.get("global options", {}), **job["job options"]}
    assert opts["iodepth"] == "1" and opts.get("numjobs", "1") == "1" and opts["rw"] == "randwrite"
    assert opts["bs"] in ("4096", "4k")
    assert job["write"]["lat_ns"]["N"] == job["write"]["total_ios"] == histogram.total(w.write.bins) > 0
    assert t.stop_reason == "time limit"  # the stream's own stop, unchanged by the capture
    # the report draws LAT's histogram and confidence plot from it and names the source
    assert "Response-time histogram and confidence plot" in rst
    assert writesat.CAPTURE_SOURCE in " ".join(rst.split())
    assert f"{histogram.total(w.write.bins):,}" in rst
    for name in ("wsat-histogram-4k.svg", "wsat-confidence-4k.svg"):
        assert (rep / "t-plots" / name).stat().st_size > 10_000, name
