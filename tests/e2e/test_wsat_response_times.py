"""WSAT's per-interval response times (PTS 2.0's optional "WSAT Optional RTs
& IOPS v Drive Fills: ART, 5 9s, MRT"), the real fio on a loop device:
every interval keeps its average, five nines (only where its I/O count
supports it) and maximum, checked against fio's own reports, and the
report draws the plots."""
import gzip

import numpy as np
import pytest
from conftest import MiB, needs_fio, try_loop

from tkperf import store
from tkperf.cli import main
from tkperf.fio.output import json_objects
from tkperf.model import histogram
from tkperf.testtypes.writesat import SERIES

pytestmark = needs_fio


def test_wsat_intervals_keep_art_five_nines_and_mrt(tmp_path):
    loop, why = try_loop(64 * MiB, str(tmp_path))  # small: what it holds is flushed as it detaches
    if loop is None:
        pytest.skip(why)
    out = tmp_path / "out"
    try:  # stopped by its 4 s, not by bytes: a fast host writes 2x of 64 MiB within one interval
        assert main(["ssd", "run", loop.path, "--name", "t", "--outdir", str(out), "--tests", "wsat",
                     "--wsat-time", "4", "--wsat-tgbw", "1000x", "--wsat-interval", "1", "-nj", "1", "-iod", "16",
                     "--purge", "none", "--yes", "--quiet", "--no-report"]) == 0
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
    assert float(np.max(s.column("lat_max_us"))) == job["write"]["lat_ns"]["max"] / 1000.0
    rep = tmp_path / "rep"
    assert main(["report", str(xml), "--outdir", str(rep), "--format", "rst"]) == 0
    rst = (rep / "t.rst").read_text()
    assert "Response times per interval (optional: ART, 5 9s, MRT)" in rst
    assert "WSAT Optional RTs & IOPS v Drive Fills: ART, 5 9s, MRT" in rst
    for name in ("wsat-rt-vs-time.svg", "wsat-rt-vs-fills.svg"):
        assert (rep / "t-plots" / name).stat().st_size > 10_000, name
