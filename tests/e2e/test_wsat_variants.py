"""WSAT as a disclosed variant (another access pattern or block size, seed
000's SEQ 128K W) and WSAT against drive fills as well as TGBW."""
import numpy as np
import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.kit import options
from tkperf.render import blocks as b
from tkperf.testtypes.writesat import WORKLOAD, WriteSaturationTest
from tkperf.testtypes.writesat import view as wsat_view
from tkperf.verdict import conformance

MiB = 1024 * 1024


def plan(**given):
    (p,) = WriteSaturationTest().plan(options.build({"tests": ("wsat",), **given}), 256 * MiB)
    return p


def test_the_pts_stimulus_by_default():
    p = plan()
    job = p.shape.job
    assert (job.name, job.rw, job.bs) == (WORKLOAD, "randwrite", 4096)
    assert p.params["access"] == "random" and p.params["block_size"] == "4k"
    opts = options.build({"tests": ("wsat",)}).to_dict()
    assert not any("stimulus" in d for d in WriteSaturationTest().pts.deviations(WriteSaturationTest(), opts, None))


def test_a_sequential_variant_is_planned_and_disclosed():
    p = plan(wsat_access="sequential", wsat_bs=131072)
    job = p.shape.job
    assert (job.name, job.rw, job.bs) == ("wsat-seq-128k-0-100", "write", 131072)
    assert p.tracking.workload == job.name and p.tracking.label.startswith("SEQ 128k 100% W")
    opts = options.build({"tests": ("wsat",), "wsat_access": "sequential", "wsat_bs": 131072}).to_dict()
    assert opts["wsat_access"] == "sequential" and opts["wsat_bs"] == "128k"
    assert ["WSAT stimulus SEQ 128k 100% W instead of RND 4k 100% W (a disclosed variant)"] == [
        d for d in WriteSaturationTest().pts.deviations(WriteSaturationTest(), opts, None) if "stimulus" in d]


@pytest.mark.parametrize("argv, says", [
    (["--wsat-access", "diagonal"], "--wsat-access 'diagonal': choose random or sequential"),
    (["--wsat-bs", "4k,8k"], "--wsat-bs takes one block size"),
])
def test_bad_variants_are_usage_errors(tmp_path, capsys, argv, says):
    rc = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--tests", "wsat", *argv, "--yes"])
    assert rc == 2 and says in capsys.readouterr().err


def test_tgbw_chart_has_drive_fills_along_the_top():
    c = b.Curve("x", np.array([0.5, 1.0]), np.array([10.0, 9.0]))
    _, written = wsat_view.curve_charts([c], [c], capacity_gb=0.25)
    assert written.top_axis == ("Drive fills (data written / capacity)", 0.25)
    _, plain = wsat_view.curve_charts([c], [c])
    assert plain.top_axis is None


@needs_fio
def test_variant_end_to_end_and_fills_in_a_comparison(loopdev, tmp_path, capsys):
    out = tmp_path / "seq"
    assert main(["ssd", "run", loopdev, "--tests", "wsat", "--quick", "--wsat-access", "sequential",
                 "--wsat-bs", "128k", "--yes", "--quiet", "--no-report", "--outdir", str(out), "--name", "seq"]) == 0
    run = store.load(str(out / "seq.xml"))
    (t,) = run.tests
    assert t.params["access"] == "sequential" and t.tracking_workload == "wsat-seq-128k-0-100"
    assert any("disclosed variant" in d for d in conformance.of_run(run).deviations)
    rep = tmp_path / "rep"
    # the run built no report of its own: this one is rendered in every format a run's is
    assert main(["report", str(out / "seq.xml"), "--outdir", str(rep), "--format", "rst,html,pdf", "-q"]) == 0
    assert (rep / "seq.html").stat().st_size > 0 and (rep / "seq.pdf").stat().st_size > 0
    text = (rep / "seq.rst").read_text()
    assert "SEQ 128k 100% W, continuous" in text and "Write saturation, SEQ 128k 100% W" in text
    cmp_dir = tmp_path / "cmp"
    assert main(["compare", str(out / "seq.xml"), str(out / "seq.xml"), "--outdir", str(cmp_dir),
                 "--format", "rst", "-q"]) == 0
    assert (cmp_dir / "comparison-plots" / "wsat-iops-vs-fills.svg").stat().st_size > 5_000
