"""Estimates that fit the drive (issue 48 item 4): on an emulated SSD the
dry run times set amounts of writing at the model's own speed, read from
the running server's parameters, says so, and comes within a factor of 1.5
of the run; any other drive's is the stated 500 MB/s."""
from __future__ import annotations

import datetime
import re

import pytest

from conftest import needs_fio
from tkperf.cli import main
from tkperf import store
from tkperf.engine import writerate as target_rate
from tkperf.kit import writerate
from tkperf.kit.shapes import duration_rough

FACTOR = 1.5  # the bound between estimate and run


def _model_bps(params: dict) -> float:
    """The model's sequential write speed, worked out here from its parameters:
    ``units`` dies each programming a page, and a sequential overwrite erasing
    each block once per ``block_pages`` pages."""
    v = {k: float(p["value"]) for k, p in params.items()}
    return v["units"] * v["page_kib"] * 1024 / ((v["program_us"] + v["erase_us"] / v["block_pages"]) / 1e6)


def _seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_a_model_rate_is_worked_out_from_its_parameters():
    params = {"units": {"value": 8}, "page_kib": {"value": 16}, "program_us": {"value": 1000.0},
              "erase_us": {"value": 6400.0}, "block_pages": {"value": 128}}
    rate = target_rate.model_rate(params)
    assert rate is not None and rate.bps == pytest.approx(8 * 16384 / 1050e-6)
    assert "8 units x 16 KiB pages / (1000 µs program + 6400 µs erase / 128 pages)" in rate.source
    assert target_rate.model_rate({"units": {"value": 4}}) is None  # a model of another kind: the default
    assert target_rate.of_facts({}) is None


def test_any_other_drive_is_timed_at_the_stated_default(tmp_path, capsys):
    img = tmp_path / "f.img"
    assert main(["ssd", "run", str(img), "--size", "1g", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"are timed at {writerate.DEFAULT.text()}" in out
    assert "500 MB/s, an assumed rate" in out


@needs_fio
def test_the_dry_run_of_an_emulated_ssd_fits_its_run(simdrive, tmp_path, capsys):
    drive = simdrive(capacity="64M")
    params = drive.stats()["params"]
    bps = _model_bps(params)
    argv = ["ssd", "run", drive.path, "--quick", "--tests", "iops,tp"]
    assert main(argv + ["--dry-run"]) == 0
    out = capsys.readouterr().out
    said = re.search(r"^# writes of a set amount .* are timed at ([\d.,]+) MB/s, the emulated SSD's model speed "
                     r"\((\d+) units x (\d+) KiB pages", out, re.M)
    assert said, out
    assert float(said.group(1).replace(",", "")) == pytest.approx(bps / 1e6, abs=0.05)
    assert (int(said.group(2)), int(said.group(3))) == (params["units"]["value"], params["page_kib"]["value"])
    total = re.search(r"^# total: (\S+ \S+) to (\S+ \S+)", out, re.M)
    low, high = _seconds(total.group(1)), _seconds(total.group(2))
    wipc_said = re.findall(r"^# (?:iops|tp-1024k)\s+\S+\s+([\d.]+) GB, (\S+ \S+)", out, re.M)
    assert len(wipc_said) == 2

    assert main(argv + ["--yes", "--no-report", "--quiet", "--outdir", str(tmp_path), "--name", "e"]) == 0
    capsys.readouterr()
    run = store.load(str(tmp_path / "e.xml"))
    took = (datetime.datetime.fromisoformat(run.finished) - datetime.datetime.fromisoformat(run.started)).total_seconds()
    assert low / FACTOR <= took <= high * FACTOR, (low, high, took)
    for t in run.tests:  # each WIPC as the dry run timed it
        est = t.wipc.bytes_written / bps
        assert est / FACTOR <= t.wipc.seconds <= est * FACTOR, (t.key, est, t.wipc.seconds)
        assert duration_rough(est) in [w[1] for w in wipc_said]
