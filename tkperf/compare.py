"""Several runs side by side: 2 to 8 result files -> one comparison report.

The same three layers as :mod:`tkperf.report` (figures, reST, rendering),
and the same renderer: figures here are grids whose columns are the runs.
What the comparison shows:

* the summary figures of every run side by side, and which tests reached
  steady state;
* a visible note listing every option that differs between the runs
  (:func:`tkperf.options.differences`), since results from different
  settings are not comparable figure for figure;
* WSAT overlaid, absolute and normalised to each drive's maximum (the SNIA
  primer's Figure 5), against time and against data written;
* IOPS at the common corners, TP per block size, LAT AVE and MAX.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from tkperf import options, plots, report
from tkperf.errors import UsageError
from tkperf.options import REPORT_FORMATS, parse_report_formats
from tkperf.report import NA, ReportResult, RstDocument, fmt, list_table
from tkperf.results import RunResult, TestRun, format_bs, mb, mix_label

MIN_RUNS = 2
MAX_RUNS = 8

# The IOPS cells compared across drives, where a run measured them.
CORNERS: Tuple[Tuple[int, int, str], ...] = (
    (4096, 0, "RND 4KiB 100% W"),
    (4096, 65, "RND 4KiB 65:35"),
    (4096, 100, "RND 4KiB 100% R"),
    (8192, 65, "RND 8KiB 65:35"),
)


# --- figures -------------------------------------------------------------------

def run_labels(runs: Sequence[RunResult]) -> List[str]:
    """One label per run: its name, numbered where two runs share a name."""
    out: List[str] = []
    for run in runs:
        label = run.name or "run"
        n = 2
        while label in out:
            label = f"{run.name or 'run'} #{n}"
            n += 1
        out.append(label)
    return out


@dataclass(frozen=True)
class SettingDifference:
    """An option that is not the same in every run: its value per run."""

    option: str
    values: Tuple[str, ...]


def setting_differences(runs: Sequence[RunResult]) -> List[SettingDifference]:
    """Every option on which some run differs from the first one."""
    keys: List[str] = []
    for run in runs[1:]:
        for key in options.differences(runs[0].options, run.options):
            if key not in keys:
                keys.append(key)
    return [SettingDifference(k, tuple(r.options.get(k, "(not set)") for r in runs)) for k in sorted(keys)]


def _by_runs(rows: Sequence[Tuple[str, float]], labels: Sequence[str],
             value: Callable[[int, int], Optional[float]], unit: str, row_title: str) -> plots.Grid:
    """A grid with one row per (label, key) and one column per run."""
    values = tuple(tuple(value(i, j) for j in range(len(labels))) for i in range(len(rows)))
    return plots.Grid(rows=tuple(r[0] for r in rows), row_keys=tuple(r[1] for r in rows),
                      cols=tuple(labels), values=values, unit=unit, row_title=row_title,
                      col_title="Run")


def _cell_average(test: Optional[TestRun], bs: int, mix: int, metric: str) -> Optional[float]:
    if test is None:
        return None
    for r in test.rounds:
        for w in r.workloads:
            if w.bs == bs and w.rwmixread == mix:
                return test.window_average(w.name, metric)
    return None


def corner_grid(runs: Sequence[RunResult], labels: Sequence[str]) -> plots.Grid:
    """Window-average IOPS at the corners any run measured; n/a where a run did not."""
    tests = [r.test("iops") for r in runs]
    present = [c for c in CORNERS
               if any(_cell_average(t, c[0], c[1], "iops") is not None for t in tests)]
    return _by_runs([(c[2], float(c[0])) for c in present], labels,
                    lambda i, j: _cell_average(tests[j], present[i][0], present[i][1], "iops"),
                    "IOPS", "Corner")


def tp_grids(runs: Sequence[RunResult], labels: Sequence[str]) -> Tuple[plots.Grid, plots.Grid]:
    """SEQ write and read MB/s per block size (rows) and run (columns)."""
    sizes = sorted({report.tp_block_size(t) for r in runs for t in r.tests_named("tp") if t.rounds})

    def value(side: str) -> Callable[[int, int], Optional[float]]:
        def get(i: int, j: int) -> Optional[float]:
            t = runs[j].test(f"tp-{format_bs(sizes[i])}")
            if t is None:
                return None
            v = t.window_average(f"seq-{format_bs(sizes[i])}-{side}", "bw_bytes")
            return None if v is None else mb(v)
        return get

    rows = [(format_bs(b), float(b)) for b in sizes]
    return (_by_runs(rows, labels, value("w"), "MB/s", "Block size"),
            _by_runs(rows, labels, value("r"), "MB/s", "Block size"))


def lat_grids(runs: Sequence[RunResult], labels: Sequence[str]) -> Tuple[plots.Grid, plots.Grid]:
    """LAT AVE and MAX (µs) per cell any run measured (rows) and run (columns)."""
    tests = [r.test("lat") for r in runs]
    cells = sorted({(w.bs, w.rwmixread) for t in tests if t is not None for r in t.rounds
                    for w in r.workloads}, key=lambda c: (c[0], -c[1]))

    def ave(i: int, j: int) -> Optional[float]:
        return _cell_average(tests[j], cells[i][0], cells[i][1], "lat_mean_us")

    def worst(i: int, j: int) -> Optional[float]:
        t = tests[j]
        if t is None:
            return None
        maxes = [w.lat_max_us for r in t.window_rounds() for w in r.workloads
                 if (w.bs, w.rwmixread) == cells[i]]
        return max(maxes) if maxes else None

    rows = [(f"{format_bs(b)} {mix_label(m)}", float(b)) for b, m in cells]
    return (_by_runs(rows, labels, ave, "µs", "BS, R/W"), _by_runs(rows, labels, worst, "µs", "BS, R/W"))


def wsat_curves(runs: Sequence[RunResult], labels: Sequence[str]) -> List[plots.WsatCurve]:
    out = []
    for run, label in zip(runs, labels):
        t = run.test("wsat")
        if t is not None and t.rounds:
            d = report.wsat_data(t)
            out.append(plots.WsatCurve(label, d.seconds, d.written_gb, d.iops))
    return out


def _steady_cell(test: Optional[TestRun]) -> str:
    if test is None:
        return "not run"
    if not test.rounds:
        return f"{test.status or 'no rounds'}, no rounds"
    if test.name == "wsat":
        return f"{len(test.rounds)} intervals, {test.stop_reason or test.status}"
    s = report.steady_state(test)
    if s is not None and s.steady:
        return f"yes, rounds {s.first_round}-{s.last_round}"
    return f"NO ({len(test.rounds)} rounds)"


def _describe(run: RunResult) -> List[Tuple[str, str]]:
    """The facts of a run a reader compares: drive, platform, settings, state."""
    d, h, o = run.device, run.host, run.options
    fields = dict(report.device_fields(run))
    return [
        ("Model", fields["Model"]),
        ("Vendor", fields["Vendor"]),
        ("Serial", fields["Serial"]),
        ("Firmware", fields["Firmware"]),
        ("Capacity", f"{d.size_bytes / 1e9:,.1f} GB"),
        ("Interface", fields["Interface"]),
        ("Write cache", fields["Write cache"]),
        ("Target", d.path + (" (FILE)" if d.kind == "file" else "")),
        ("Host", h.hostname or NA),
        ("fio", h.fio_version or NA),
        ("tkperf", run.tkperf_version or NA),
        ("Class", o.get("device_class", NA)),
        ("OIO", f"TC {o.get('numjobs', '?')} x QD {o.get('iodepth', '?')}"),
        ("Quick", "yes: NOT PTS-conformant" if run.quick else "no"),
        ("Status", run.status + (", resumed" if run.resumed else "")),
        ("Started", run.started or NA),
    ]


# --- reST ----------------------------------------------------------------------------

# Beyond this many runs, table columns are headed R1, R2 ... and a key names
# the runs: eight full names in one A4 table would break in mid-word.
FULL_NAME_COLUMNS = 4


def column_labels(labels: Sequence[str]) -> List[str]:
    """Table column headings for the runs: their labels, or R1..R8 for many runs."""
    if len(labels) <= FULL_NAME_COLUMNS:
        return list(labels)
    return [f"R{i + 1}" for i in range(len(labels))]


def _key_rst(doc: RstDocument, runs: Sequence[RunResult], labels: Sequence[str]) -> None:
    if len(labels) <= FULL_NAME_COLUMNS:
        return
    rows = [[key, label, dict(_describe(run))["Model"], f"{run.device.size_bytes / 1e9:,.1f} GB"]
            for key, label, run in zip(column_labels(labels), labels, runs)]
    doc.markup(list_table(["Column", "Run", "Model", "Capacity"], rows, title="The runs compared",
                          widths=[10, 30, 45, 15]))

def _runs_table(headers_first: str, rows: Sequence[Sequence[str]], labels: Sequence[str], title: str) -> str:
    first = 30 if len(labels) <= FULL_NAME_COLUMNS else 18
    rest = max(8, (100 - first) // max(len(labels), 1))
    return list_table([headers_first] + column_labels(labels), rows, title=title,
                      widths=[first] + [rest] * len(labels), stub_columns=1)


def _grid_by_runs_rst(grid: plots.Grid, title: str) -> str:
    rows = [[r] + [fmt(v, grid.unit) for v in vals] for r, vals in zip(grid.rows, grid.values)]
    return _runs_table(f"{grid.row_title} ({grid.unit})", rows, list(grid.cols), title)


def _summary_rst(doc: RstDocument, runs: Sequence[RunResult], labels: Sequence[str]) -> None:
    doc.add(".. rubric:: Summary")
    _key_rst(doc, runs, labels)
    figures = [report.summary_figures(r) for r in runs]
    rows = [[f"{f.group}, {f.pattern} ({f.unit})"] + [fmt(fs[i].value, f.unit) for fs in figures]
            for i, f in enumerate(figures[0])]
    doc.markup(_runs_table("Figure", rows, labels, "Summary performance data, side by side"))
    keys: List[str] = []
    for r in runs:
        for t in r.tests:
            if t.key not in keys:
                keys.append(t.key)
    if keys:
        steady = [[report.test_title(next(t for r in runs for t in r.tests if t.key == k))]
                  + [_steady_cell(r.test(k)) for r in runs] for k in keys]
        doc.markup(_runs_table("Test", steady, labels, "Steady state by test"))


def comparison_caveats(runs: Sequence[RunResult], labels: Sequence[str]) -> List[str]:
    """What makes the runs less than comparable, in plain words."""
    out = []
    diffs = setting_differences(runs)
    if diffs:
        names = ", ".join(d.option for d in diffs)
        out.append(f"These runs were made with different settings ({names}): their figures are "
                   "not directly comparable; the table 'Settings that differ' lists the values.")
    quick = [label for run, label in zip(runs, labels) if run.quick]
    if quick:
        out.append(f"--quick smoke tests, NOT PTS-conformant measurements: {', '.join(quick)}.")
    files = [label for run, label in zip(runs, labels) if run.device.kind == "file"]
    if files:
        out.append(f"File targets, not raw block devices: {', '.join(files)}.")
    partial = [f"{label} ({run.status})" for run, label in zip(runs, labels) if run.status != "complete"]
    if partial:
        out.append(f"Incomplete runs, shown with what they measured: {', '.join(partial)}.")
    resumed = [label for run, label in zip(runs, labels) if run.resumed]
    if resumed:
        out.append(f"Resumed runs: {', '.join(resumed)}.")
    return out


def _settings_rst(doc: RstDocument, runs: Sequence[RunResult], labels: Sequence[str]) -> None:
    diffs = setting_differences(runs)
    doc.section("Settings")
    if diffs:
        doc.para("The runs differ in these options (as stored in the result files); "
                 "every other option is the same in all of them.")
        doc.markup(_runs_table("Option", [[d.option] + list(d.values) for d in diffs], labels,
                               "Settings that differ"))
    else:
        doc.para("All runs were made with the same options.")
    rows = [[name] + [dict(_describe(r))[name] for r in runs] for name, _ in _describe(runs[0])]
    doc.markup(_runs_table("", rows, labels, "Drives and platforms"))


def _wsat_rst(doc: RstDocument, runs: Sequence[RunResult], labels: Sequence[str]) -> None:
    curves = wsat_curves(runs, labels)
    if not curves:
        return
    doc.section("Write Saturation")
    rows = []
    for run, label in zip(runs, labels):
        t = run.test("wsat")
        if t is None or not t.rounds:
            continue
        s = report.wsat_summary(t)
        rows.append([label, str(s.intervals), fmt(s.duration_s, "s"), fmt(s.written_gb, "GB"),
                     fmt(s.first_iops), fmt(s.max_iops), fmt(s.tail_iops), t.stop_reason or NA])
    doc.markup(list_table(["Run", "Intervals", "Duration (s)", "Written (GB)", "FOB IOPS",
                           "Max IOPS", "Last 5 / SS IOPS", "Stopped by"], rows,
                          title="WSAT, RND 4KiB 100% W",
                          widths=[18, 9, 10, 10, 11, 11, 12, 19]))
    doc.figure("wsat-iops-vs-time.png",
               lambda p: plots.wsat(p, curves, "time", title="WSAT: IOPS vs time"),
               "WSAT IOPS per interval against time, every run overlaid.")
    doc.figure("wsat-normalised-vs-time.png",
               lambda p: plots.wsat(p, curves, "time", normalised=True,
                                    title="WSAT: IOPS normalised to each drive's maximum, vs time"),
               "WSAT IOPS divided by each run's own maximum interval (1.0 = the drive's peak), "
               "so the shapes compare regardless of speed.")
    doc.figure("wsat-iops-vs-tgbw.png",
               lambda p: plots.wsat(p, curves, "gb", title="WSAT: IOPS vs total GB written"),
               "WSAT IOPS per interval against the total data written (GB, decimal).")


def _bars(doc: RstDocument, filename: str, panels: Sequence[plots.Panel], caption: str) -> None:
    doc.figure(filename, lambda p: plots.grouped_bars(p, panels), caption)


def _measurements_rst(doc: RstDocument, runs: Sequence[RunResult], labels: Sequence[str]) -> None:
    corners = corner_grid(runs, labels)
    if corners.rows:
        doc.section("IOPS")
        doc.markup(_grid_by_runs_rst(corners, "Average IOPS over each run's measurement window"))
        _bars(doc, "iops-corners.png", [plots.Panel(corners, "IOPS at the common corners", "IOPS")],
              "Steady-state (window average) IOPS at the corners, one bar per run; "
              "n/a where a run did not measure the cell.")
    write, read = tp_grids(runs, labels)
    _paired_section(doc, "Throughput", "tp.png", "Throughput (MB/s)",
                    (write, "SEQ 100% W", "MB/s"), (read, "SEQ 100% R", "MB/s"),
                    "Sequential throughput in MB/s (decimal) per block size, one bar per run.")
    ave, worst = lat_grids(runs, labels)
    _paired_section(doc, "Latency", "lat.png", "Response time (µs)",
                    (ave, "AVE response time", "µs"), (worst, "MAX response time", "µs"),
                    "AVE and MAX response time (TC1/QD1) in µs per block size and R/W mix, one bar per run.")


def _paired_section(doc: RstDocument, title: str, filename: str, ylabel: str,
                    first: Tuple[plots.Grid, str, str], second: Tuple[plots.Grid, str, str],
                    caption: str) -> None:
    """Two grids of one measure (W and R, AVE and MAX): both tables, then one figure of
    two bar panels; nothing when no run measured it."""
    if not first[0].rows:
        return
    doc.section(title)
    for grid, name, unit in (first, second):
        doc.markup(_grid_by_runs_rst(grid, f"{name}, {unit}"))
    _bars(doc, filename, [plots.Panel(grid, name, ylabel) for grid, name, _ in (first, second)], caption)


def comparison_rst(runs: Sequence[RunResult], doc: RstDocument) -> str:
    labels = run_labels(runs)
    doc.title(f"tkperf comparison: {', '.join(labels)}" if len(labels) <= FULL_NAME_COLUMNS
              else f"tkperf comparison of {len(labels)} runs")
    doc.para(f"{len(runs)} tkperf result files side by side; every figure is the average over each "
             "run's own steady-state measurement window (or its last 5 rounds where it reached none).")
    doc.admonition("warning", comparison_caveats(runs, labels))
    _summary_rst(doc, runs, labels)
    _settings_rst(doc, runs, labels)
    _wsat_rst(doc, runs, labels)
    _measurements_rst(doc, runs, labels)
    return doc.text()


def build_comparison(runs: Sequence[RunResult], outdir: str,
                     formats: Sequence[str] = REPORT_FORMATS,
                     name: str = "comparison") -> ReportResult:
    """Compare 2 to 8 runs in ``outdir``: ``<name>.rst``, ``.html``, ``.pdf``
    and ``<name>-plots/``, like a single report."""
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        raise UsageError(f"compare takes {MIN_RUNS} to {MAX_RUNS} result files, not {len(runs)}")
    formats = parse_report_formats(formats)
    name = report.safe_name(name)
    plot_dirname = f"{name}-plots"
    plot_dir = report.prepare_outdir(outdir, plot_dirname)
    doc = RstDocument(plot_dir, plot_dirname)
    text = comparison_rst(runs, doc)
    return report.render_document(doc, text, outdir, name, formats)
