"""``tkperf compare``: each run's difference from the first, rows no run
measured left out, and the summary printed on the terminal."""
from __future__ import annotations

import copy
import os

from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK
from tkperf.render import blocks as b
from tkperf.render import rst
from tkperf.report import compare
from tkperf.report.context import CompareContext, difference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", f"{name}.xml")


def context(*names: str) -> CompareContext:
    runs = [store.load(example(n)) for n in names]
    return CompareContext(tuple(runs), tuple(compare.run_labels(runs)))


def test_difference_in_percent_of_the_first():
    assert difference(110.0, 100.0) == "+10.0%"
    assert difference(75.0, 100.0) == "-25.0%"
    assert difference(100.0, 100.0) == "+0.0%"
    assert difference(-5.0, -10.0) == "+50.0%"
    for value, first in ((None, 1.0), (1.0, None), (1.0, 0.0), (float("nan"), 1.0)):
        assert difference(value, first) == "n/a"


def test_numbers_table_has_a_difference_column_per_later_run_and_drops_empty_rows():
    ctx = context("example-ssd", "example-ssd-2", "example-client")
    table = ctx.numbers_table("Figure", [("a", [100.0, 150.0, None], ["100", "150", "n/a"]),
                                         ("nobody", [None, None, None], ["n/a", "n/a", "n/a"]),
                                         ("b", [None, 2.0, 4.0], ["n/a", "2", "4"])], "T")
    assert table.headers == ("Figure", "example-ssd", "example-ssd-2", "% vs first", "example-client",
                             "% vs first")
    assert table.rows == (("a", "100", "150", "+50.0", "n/a", "n/a"),
                          ("b", "n/a", "2", "n/a", "4", "n/a"))
    assert table.title == "T ('% vs first': the difference from example-ssd)"
    # More runs than fit an A4 page with their differences: values only (the terminal has them).
    many = context(*["example-ssd"] * 5).numbers_table("F", [("a", [1.0] * 5, ["1"] * 5)], "T")
    assert many.headers == ("F", "R1", "R2", "R3", "R4", "R5") and many.rows == (("a", "1", "1", "1", "1", "1"),)
    # Text tables drop a row empty for every run too, but keep one any run filled.
    plain = ctx.runs_table("Option", [["x", "", "n/a", ""], ["y", "", "", "set"]], "T")
    assert [r[0] for r in plain.rows] == ["y"]


def rnd_4k_w(name: str) -> float:
    """The steady-state RND 4KiB 100% W IOPS of an example, as its IOPS (or client WSAT-free) test figures it."""
    from tkperf import store
    from tkperf.report import summary

    run = store.load(example(name))
    return summary.headline(run.tests[0])["rnd_4k_write_iops"]


def pct(first: float, other: float) -> str:
    """The difference column's text: '+26.8' (values rounded as shown first)."""
    return f"{(round(other) / round(first) - 1) * 100:+.1f}"


def test_comparison_report_shows_the_differences():
    ctx = context("example-ssd", "example-ssd-2")
    text = rst.to_rst(compare.summary_blocks(ctx))
    first, second = (rnd_4k_w(n) for n in ("example-ssd", "example-ssd-2"))
    # every compared figure carries its definition (issue 34 item 8); these
    # quick runs reached no IOPS steady state: theirs is a last-rounds mean (issue 43 item 4)
    assert (f"   * - IOPS, RND 4KiB 100% W (IOPS) \\[IOPS: mean of the last 5 rounds, NO steady state\\]\n"
            f"     - {first:,.0f}\n     - {second:,.0f}\n"
            f"     - \\{pct(first, second)}\n") in text
    assert "     - example-ssd-2\n     - \\% vs first\n" in text
    # The LAT section writes microseconds the one way the report does.
    blocks = compare.comparison_blocks(list(ctx.runs))
    cells = [c for t in blocks if isinstance(t, b.Table) for r in t.rows + (t.headers,) for c in r]
    assert any("(µs)" in c for c in cells) and not any("(us)" in c or c.endswith(" us") for c in cells)


def test_summary_rows_leave_out_what_no_run_measured():
    # example-client ran no TP and no LAT: compared with itself, those rows go.
    ctx = context("example-client", "example-client")
    figure = next(x for x in compare.summary_blocks(ctx) if isinstance(x, b.Table)
                  and x.title.startswith("Summary"))
    names = [r[0] for r in figure.rows]
    assert names and not any(n.startswith(("Throughput", "Response time")) for n in names)
    assert all(r[-1] == "+0.0" for r in figure.rows)


def test_cli_compare_prints_the_table(tmp_path, capsys):
    argv = ["compare", example("example-ssd"), example("example-ssd-2"), example("example-client"),
            "--outdir", str(tmp_path), "--format", "rst"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert "difference from example-ssd" in out[0]
    assert out[1].split() == ["figure", "example-ssd", "example-ssd-2", "example-client",
                              "example-ssd-2", "%", "example-client", "%"]
    row = next(line for line in out if line.startswith("IOPS, RND 4KiB 100% W"))  # no steady state: not so called
    a, b2, c = (rnd_4k_w(n) for n in ("example-ssd", "example-ssd-2", "example-client"))
    assert row.split()[-5:] == [f"{a:,.0f}", f"{b2:,.0f}", f"{c:,.0f}", f"{pct(a, b2)}%", f"{pct(a, c)}%"]
    # Numbers right-aligned: every row ends at the header's last column.
    table = out[1:out.index(next(x for x in out if x.startswith("warning:")))]
    assert len({len(line) for line in table}) == 1
    warnings = [x for x in out if x.startswith("warning:")]
    runs = [store.load(example(n)) for n in ("example-ssd", "example-ssd-2", "example-client")]
    # settings differ, each run's own caveats, no steady state: as the report's box says
    assert warnings == [f"warning: {c}" for c in compare.comparison_caveats(runs, compare.run_labels(runs))]
    assert warnings[0].startswith("warning: These runs were made with different settings")
    assert "warning: every run: --quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)" in warnings
    assert warnings[-1].startswith("warning: No steady state reached in ")
    assert main(argv + ["--quiet"]) == EXIT_OK  # no table; the caveats are still said
    n = len(warnings)
    assert [x.split(":")[0] for x in capsys.readouterr().out.splitlines()] == ["warning"] * n + ["report", "report"]


def test_terminal_table_makes_control_characters_visible():
    runs = [store.load(example("example-ssd")), store.load(example("example-ssd-2"))]
    runs[1] = copy.deepcopy(runs[1])
    runs[1].name = "evil\x1b[2Jname"
    lines = compare.terminal_table(runs)
    assert "\x1b" not in "".join(lines) and "evil" in lines[1]
