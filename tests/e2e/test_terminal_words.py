"""Words on the terminal: µs where the output can show it, figures whose
report label needs the report's explanation explained, and each WSAT
interval printed once, with the figure stored."""
from __future__ import annotations

import io
import logging
import os
import re

from conftest import needs_fio
from ptyrun import run_on_pty
from tkperf import store
from tkperf.cli import main
from tkperf.durations import micro_unit
from tkperf.report import summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    printed = [(int(m.group(1)), float(m.group(2).replace(",", ""))) for ln in lines
               for m in [re.match(r"\[wsat\] interval (\d+): ([\d,.]+) IOPS", ln)] if m]
    assert len(printed) == len(lines) and not any("revised" in ln for ln in lines), lines
    (t,) = store.load(str(tmp_path / "o" / "w.xml")).tests
    stored = t.series["intervals"].column("iops")
    # each interval once, in order, with the figure stored (printed when final, fio's last report merged in)
    assert [n for n, _ in printed] == list(range(1, len(stored) + 1)), lines
    assert all(abs(v - float(w)) <= 1.0 for (_, v), w in zip(printed, stored)), (printed, stored.tolist())


# --- one unit word, on a UTF-8 terminal (issue 48 item 1) -------------------------------

def _on_pty(argv, **given):
    """Run tkperf with stdout and stderr on one pseudo-terminal under a UTF-8
    locale (``given`` overrides the environment); (exit code, what it wrote)."""
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_ALL", "LC_CTYPE")}
    env.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb", "COLUMNS": "200", "PYTHONPATH": ROOT},
               **given)
    rc, text = run_on_pty([sys.executable, "-m", "tkperf", *argv], env, stdout_too=True, timeout=300)
    return rc, text.replace("\r\n", "\n")


def _example(name):
    return os.path.join(ROOT, "examples", f"{name}.xml")


def test_check_table_says_micro_seconds_on_a_utf8_terminal():
    rc, text = _on_pty(["check", _example("example-ssd"), "--baseline", _example("example-ssd-2")])
    lat = [ln for ln in text.splitlines() if ln.startswith("lat ")]
    assert rc in (0, 1) and lat, text
    assert all(re.search(r"_us\s+µs\s", ln) for ln in lat), lat
    assert not re.search(r"\sus\s", text)
    rc, text = _on_pty(["check", _example("example-ssd"), "--baseline", _example("example-ssd-2")],
                       PYTHONIOENCODING="ascii")  # where µ cannot be shown: us
    assert "µ" not in text and all(re.search(r"_us\s+us\s", ln) for ln in text.splitlines() if ln.startswith("lat "))


def test_history_lines_say_micro_seconds_on_a_utf8_terminal(tmp_path):
    rc, text = _on_pty(["history", _example("example-ssd"), _example("example-ssd-2"), "--outdir", str(tmp_path)])
    lat = [ln for ln in text.splitlines() if ln.lstrip().startswith("lat/")]
    assert rc == 0 and lat, text
    assert all(re.search(r": last [\d,.]+ µs[ ,]", ln) for ln in lat), lat
    assert not re.search(r"\d us\b", text)
    page = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.html"))
    assert " µs" in page and not re.search(r"\d us\b", page)


def test_compare_prints_its_caveats_on_a_utf8_terminal(tmp_path):
    """issue 48 item 5: the terminal warns as the PDF does."""
    rc, text = _on_pty(["compare", _example("example-ssd"), _example("example-full"), "--outdir", str(tmp_path),
                        "--format", "rst"])
    assert rc == 0, text
    warnings = [ln for ln in text.splitlines() if ln.startswith("warning: ")]
    assert "warning: every run: --quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)" in warnings
    assert any(w.startswith("warning: No steady state reached in example-ssd (IOPS, LAT)") for w in warnings)
    assert "Response time AVE, RND 4KiB 100% W (µs)" in text and "(us)" not in text


def test_the_emulated_ssd_model_row_says_micro_seconds():
    from tkperf.report.header import emulated_model
    row = emulated_model(store.load(_example("example-emulated")))
    params = store.load(_example("example-emulated")).facts["simdrive"]["params"]
    for name in ("read_us", "program_us"):  # the model row gives each microsecond parameter in µs
        assert f"{name} {float(params[name]['value']):.1f} µs" in row, (name, row)
    assert not re.search(r"\d us\b", row)


@needs_fio
def test_lat_round_lines_and_the_panel_say_micro_seconds(loopdev, tmp_path):
    common = ["ssd", "run", loopdev, "--quick", "--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100",
              "--max-rounds", "2", "--runtime", "1", "--wipc-loops", "0", "--purge", "none", "--yes",
              "--no-report", "--name", "p"]
    rc, text = _on_pty(common + ["--outdir", str(tmp_path / "plain")])  # a dumb terminal: plain lines
    rounds = [ln for ln in text.splitlines() if "[lat] round " in ln]
    assert rc == 0 and len(rounds) == 2, text
    for ln in rounds:
        assert re.search(r"\[lat\] round \d: RND 4k 0/100 mean response time \(µs\) = [\d,]+(\.\d)? \(", ln), ln
    assert "(us)" not in text
    rc, text = _on_pty(common + ["--outdir", str(tmp_path / "panel")], TERM="xterm-256color", COLUMNS="120",
                       LINES="30")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert rc == 0 and "mean response time (µs): " in shown, shown[-3000:]  # the panel's tracking line
    assert "(us)" not in shown


@needs_fio
def test_the_wsat_summary_names_the_intervals_it_averaged(loopdev, tmp_path):
    """issue 48 item 3: a WSAT of fewer than 5 intervals says so on the terminal, as its report does."""
    from tkperf.testtypes.writesat import view as wsat_view
    out = tmp_path / "w"
    assert main(["ssd", "run", loopdev, "--quick", "--tests", "wsat", "--wsat-time", "3", "--wsat-interval", "1",
                 "--wsat-tgbw", "100", "--purge", "none", "--yes", "--no-report", "--quiet",
                 "--outdir", str(out), "--name", "w"]) == 0
    run = store.load(str(out / "w.xml"))
    (test,) = run.tests
    report = wsat_view.wsat_summary(test)
    assert 1 <= report.intervals < 5, report.intervals
    line = next(ln for ln in summary.lines(run) if ln.lstrip().startswith("WSAT"))
    assert f"mean of the {report.tail_label} " in line, (line, report.tail_label)
    assert f"last {report.intervals} interval" in line and "last 5" not in line
    assert f"{report.tail_iops:,.0f} IOPS" in line
