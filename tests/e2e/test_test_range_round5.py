"""Issue 55 items 1 and 4 on real targets.

* Item 1: SNIA defines the test range's segments for IOPS, TP and LAT
  only; WSAT (and every test but those) runs over the whole active range
  on the device.  On the emulated SSD, whose model counts the LBAs mapped
  (written and not discarded since the purge), a PTS-C 1.1 WSAT with a
  small test range writes far beyond it; a result of an earlier tkperf
  (no ``range_rules``), whose WSAT ran over the test range, is named.
* Item 4: the dry run of the PTS-C 1.1 test range in its 2,048 segments
  shows the plan, the job files and the verdict on a host without
  device-mapper too, with one note that the run itself needs it (the run
  itself is still refused there: tests/e2e/test_ar_segments_device.py).
"""
from __future__ import annotations

import re

import pytest

from conftest import loop_device, needs_fio
from test_ar_segments_device import device_mapper
from tkperf import store
from tkperf.cli import main
from tkperf.report import header
from tkperf.verdict import conformance

MiB = 1 << 20
GiB = 1 << 30


def _sections(text: str) -> dict:
    """The plan's job files by test: {'iops': [global lines...], 'wsat': [...]} (the measurement's [global])."""
    out = {}
    for part in text.split("# --- ")[1:]:
        key = part.split(":", 1)[0]
        globals_ = [g.split("\n\n", 1)[0] for g in part.split("[global]\n")[1:]]
        out[key] = dict(line.split("=", 1) for line in globals_[-1].splitlines() if "=" in line)
    return out


@pytest.fixture
def loop20g(tmp_path):
    """A loop device over a sparse 20 GiB file (nothing is written to it: dry runs only)."""
    yield from loop_device(20 * GiB, tmp_path)


def test_dry_run_of_the_pts_c_1_1_segments_shows_wsat_on_the_active_range_with_or_without_device_mapper(
        loop20g, capsys):
    rc = main(["ssd", "run", loop20g, "--pts", "pts-c-1.1", "--active-range", "80", "--test-range", "8g",
               "--dry-run", "--yes", "--jobs"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    out = captured.out
    active = 20 * GiB * 80 // 100 // MiB * MiB
    jobs = _sections(out)
    assert set(jobs) == {"iops", "tp-1024k", "lat", "wsat"}
    # IOPS, TP and LAT: the map of the 2,048 segments, no size of the device's
    for key in ("iops", "tp-1024k", "lat"):
        assert re.fullmatch(r"/dev/mapper/tkperf-ar-\d+-\d+", jobs[key]["filename"]), jobs[key]
        assert "size" not in jobs[key]
    # WSAT: the device itself over the active range, stopping at 4x the device's capacity
    assert jobs["wsat"]["filename"] == loop20g and int(jobs["wsat"]["size"]) == active
    assert "stopping at 24.0 h or 85.9 GB written" in out  # 4 x 21.47 GB, as before
    assert "# wsat: over the whole active range, on the device itself" in out
    assert "# verdict on this target: NOT PTS-conformant (SNIA PTS-C 1.1)" in out
    assert "ActiveRange segments" not in "".join(line for line in out.splitlines() if line.startswith("#   - "))
    notes = [line for line in out.splitlines() if line.startswith("# note: ")]
    why = device_mapper()
    if why:  # this host cannot map: the plan all the same, and one note
        assert notes == ["# note: the run itself needs device-mapper and dmsetup to map its segments, and "
                         f"would stop: {why.replace('--ar-segments 2', '--ar-segments 2,048')}"], notes
    else:
        assert notes == []
    assert captured.err.strip() == ""


def test_dry_run_of_one_span_narrows_iops_and_not_wsat(loop20g, capsys):
    rc = main(["ssd", "run", loop20g, "--pts", "pts-c-1.1", "--active-range", "80", "--test-range", "8g",
               "--ar-segments", "1", "--tests", "iops,wsat", "--dry-run", "--yes", "--jobs"])
    out = capsys.readouterr().out
    assert rc == 0
    jobs = _sections(out)
    assert jobs["iops"]["filename"] == loop20g and jobs["iops"]["size"] == str(8 * GiB)
    assert jobs["wsat"]["filename"] == loop20g and jobs["wsat"]["size"] == str(20 * GiB * 80 // 100 // MiB * MiB)
    assert "# note: " not in out  # one span needs no map


@needs_fio
def test_pts_c_1_1_wsat_writes_beyond_its_test_range_on_the_emulated_ssd(simdrive, tmp_path):
    drive = simdrive(capacity="64M")
    capacity = 64 * MiB
    active = capacity * 80 // 100 // MiB * MiB  # 51 MiB
    tested = 8 * MiB
    out = tmp_path / "out"
    rc = main(["ssd", "run", drive.path, "--tests", "wsat", "--pts", "pts-c-1.1", "--active-range", "80",
               "--test-range", "8m", "--ar-segments", "1", "--wsat-tgbw", "1x", "--wsat-interval", "1",
               "--wsat-capture", "0",
               "--write-cache", "keep", "--numjobs", "1", "--iodepth", "16", "--name", "w", "--outdir", str(out),
               "--yes", "--quiet", "--no-report"])
    assert rc in (0, 1), rc
    stats = drive.stats()
    run = store.load(str(out / "w.xml"))
    (t,) = run.tests
    assert t.status == "complete" and run.options["range_rules"] == "2"
    # the model's own count: the LBAs WSAT wrote since its purge lie well beyond the 8 MiB test range,
    # within the active range (1x the capacity of uniform random 4 KiB writes covers about 71% of 51 MiB)
    assert stats["host_write_bytes"] >= capacity
    assert 3 * tested < stats["mapped_bytes"] <= active, stats["mapped_bytes"]
    # fio's job: the device over the active range
    log = (out / "w.log").read_text()
    assert f"filename={drive.path}" in log and f"size={active}" in log and f"size={tested}" not in log
    said = conformance.of_run(run).deviations
    assert not [d for d in said if "test range" in d], said
    fields = dict(header.setup_fields(run, t, "none: WSAT starts fresh after the purge", "none"))
    assert fields["Active range"] == ("80% (no preconditioning; the whole active range: the run's --test-range "
                                      "8,388,608 bytes is for IOPS, TP and LAT, the tests SNIA defines it for)")
    assert fields["AR Segments"] == "N/A (this test uses the whole active range)"
    # the same result as an earlier tkperf stored it (no range_rules): its WSAT ran over the test range
    del run.options["range_rules"]
    said = conformance.of_run(run).deviations
    assert ("WSAT ran over the test range (one span at the start of the LBA range), not the whole active range: "
            "SNIA defines the test range for three PTS tests only; an earlier tkperf narrowed every test") in said
    fields = dict(header.setup_fields(run, t, "none: WSAT starts fresh after the purge", "none"))
    assert fields["Active range"] == "80%, no preconditioning; this test over the first 8,388,608 bytes (--test-range)"


def test_segments_that_would_touch_are_refused_in_one_line(loop20g, capsys):
    # issue 55 item 3: a test range as large as the active range leaves no room between 2,048 segments
    rc = main(["ssd", "run", loop20g, "--pts", "pts-c-1.1", "--active-range", "80", "--test-range", "16g",
               "--dry-run", "--yes"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0] == ("tkperf: error: --ar-segments 2,048: the active range (17,179,869,184 bytes) cannot hold "
                      "2,048 segments of 8 MiB that do not touch (at least 4 KiB between neighbours: "
                      "17,188,253,696 bytes); give fewer segments, a smaller --test-range, or --ar-segments 1")
