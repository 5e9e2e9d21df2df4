"""Words on the terminal: µs where the output can show it, figures whose
report label needs the report's explanation explained, and each WSAT
interval printed once, with the figure stored."""
from __future__ import annotations

import io
import logging
import os
import re

from conftest import needs_fio
from tkperf.cli import main
from tkperf.durations import micro_unit
from tkperf import store
from tkperf.report import summary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_micro_sign_only_where_the_output_can_show_it():
    assert micro_unit(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == "µs"
    assert micro_unit(io.TextIOWrapper(io.BytesIO(), encoding="ascii")) == "us"
    assert micro_unit(io.TextIOWrapper(io.BytesIO(), encoding="latin-1")) == "µs"  # µ is in Latin-1
    assert micro_unit(io.StringIO()) == "µs"  # no encoding: any character


def test_summary_explains_max_and_the_last_intervals():
    run = store.load(os.path.join(ROOT, "examples", "example-ssd.xml"))
    text = "\n".join(summary.lines(run))
    lat = next(ln for ln in text.splitlines() if ln.lstrip().startswith("LAT"))
    assert "MAX (mean of round maxima) " in lat and "largest single I/O " in lat and " µs" in lat
    assert " us" not in lat
    wsat = next(ln for ln in text.splitlines() if ln.lstrip().startswith("WSAT"))
    assert "mean of the last 5 intervals " in wsat and "last 5 2" not in wsat
    ascii_lat = next(ln for ln in summary.lines(run, "us") if ln.lstrip().startswith("LAT"))
    assert " us" in ascii_lat and "µ" not in ascii_lat
    # --quick is said once, as the verdict's first deviation
    assert text.count("--quick") == 1


@needs_fio
def test_wsat_prints_each_interval_once(loopdev, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tkperf.progress")
    assert main(["ssd", "run", loopdev, "--quick", "--tests", "wsat", "--yes", "--no-report",
                 "--outdir", str(tmp_path / "o"), "--name", "w"]) == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("[wsat] interval")]
    printed = [(int(m.group(1)), float(m.group(2))) for ln in lines
               for m in [re.match(r"\[wsat\] interval (\d+): ([\d.]+) IOPS", ln)] if m]
    assert len(printed) == len(lines) and not any("revised" in ln for ln in lines), lines
    (t,) = store.load(str(tmp_path / "o" / "w.xml")).tests
    stored = t.series["intervals"].column("iops")
    # each interval once, in order, with the figure stored (printed when final, fio's last report merged in)
    assert [n for n, _ in printed] == list(range(1, len(stored) + 1)), lines
    assert all(abs(v - float(w)) <= 1.0 for (_, v), w in zip(printed, stored)), (printed, stored.tolist())
