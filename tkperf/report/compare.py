"""Several runs side by side: 2 to 8 result files -> one comparison report.

Assembled like the report (:mod:`tkperf.report.report`) and written by the
same publisher.  What the comparison shows:

* every run's own conformance caveats (its verdict's lines, those of a
  file imported from the original TKperf first), each naming the runs it
  is true of, beside what makes the runs less than comparable;
* the summary figures of every run side by side, and which tests reached
  steady state;
* a visible note listing every option that differs between the runs
  (:func:`tkperf.kit.options.differences`), since results from
  different settings are not comparable figure for figure; the drives and
  platforms;
* every registered test type's comparison section
  (:meth:`~tkperf.kit.base.View.compare_section`): first those
  whose tests are streams (how the drives behave over time, e.g. WSAT
  overlaid), then the round-based ones, each group in the registry's
  order; a note for test types some run has but this installation lacks.

Nothing here names a test type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.errors import UsageError
from tkperf.kit import registry
from tkperf.kit.options import REPORT_FORMATS, parse_report_formats
from tkperf.model.results import RunResult, TestRun
from tkperf.render import blocks as b
from tkperf.render.documents import ReportResult, publish, safe_name
from tkperf.report import generic, header, page, stamps
from tkperf.report.context import FULL_NAME_COLUMNS, CompareContext, difference
from tkperf.report.header import device_fields
from tkperf.report.steady import steady_state, window_ending
from tkperf.report.words import (
    NA,
    capacity_text,
    fmt,
    is_stream,
    plural,
    seeks_steady_state,
    test_title,
    unit_of,
)
from tkperf.untrusted import for_terminal
from tkperf.verdict import conformance

MIN_RUNS = 2
MAX_RUNS = 8
#: What ``compare --json`` prints: its ``schema`` name and ``version``
#: (tkperf/model/data/compare.schema.json).
JSON_SCHEMA = "tkperf-compare"
JSON_VERSION = 1
#: The words a last-rounds mean carries in its definition (page.window_definition).
LAST_ROUNDS = "NO steady state"


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


def _owners() -> Dict[str, str]:
    """Option field -> the test type that declares it."""
    return {opt.field: kind.name for kind in registry.types().values() for opt in kind.options}


def setting_differences(runs: Sequence[RunResult]) -> List[SettingDifference]:
    """Every option on which the runs differ.  A test type's option counts
    only among the runs that ran that test type: a run without TP has no TP
    block size to differ in."""
    owners = _owners()
    keys = sorted({k for r in runs for k in r.options})
    out = []
    for key in keys:
        owner = owners.get(key)
        ran = [owner is None or owner in r.options.get("tests", "").split(",") for r in runs]
        if len({r.options.get(key, "") for r, did in zip(runs, ran) if did}) > 1:
            out.append(SettingDifference(key, tuple(
                r.options.get(key, "(not set)") if did else "(test not run)" for r, did in zip(runs, ran))))
    return out


def _steady_cell(test: Optional[TestRun]) -> str:
    if test is None:
        return "not run"
    unit = unit_of(test)
    if not test.done:
        return f"{test.status or f'no {unit}s'}, no {unit}s"
    if is_stream(test):
        return f"{plural(test.done, unit)}, {test.stop_reason or test.status}"
    s = steady_state(test)
    if s is not None and s.steady:
        return f"yes, rounds {s.first_round}-{s.last_round}"
    return f"NO ({plural(test.done, 'round')})"


def _describe(run: RunResult) -> List[Tuple[str, str]]:
    """The facts of a run a reader compares: drive, platform, settings, state."""
    d, h, o = run.device, run.host, run.options
    fields = dict(device_fields(run))
    return [
        ("Model", fields["Model"]),
        ("Vendor", fields["Vendor"]),
        ("Serial", fields["Serial"]),
        ("Firmware", fields["Firmware"]),
        ("Capacity", capacity_text(d.size_bytes)),
        ("Interface", fields["Interface"]),
        ("Write cache", fields["Write cache"]),
        ("Target", d.path + (" (FILE)" if d.kind == "file" else "")),
        ("Host", h.hostname or NA),
        ("fio", h.fio_version or NA),
        ("tkperf", run.tkperf_version or NA),
        ("Class", o.get("device_class", NA)),
        ("OIO", f"TC {o.get('numjobs', '?')} x QD {o.get('iodepth', '?')}"),
        ("Quick", "yes: NOT PTS-conformant" if run.quick else "no"),
        ("Verdict", conformance.of_run(run).sentence()),
        ("Status", run.status + (", resumed" if run.resumed else "")),
        ("Started", run.started or NA),
    ]


def run_caveats(run: RunResult) -> List[str]:
    """A run's own conformance caveats: the lines of its verdict
    (:func:`tkperf.verdict.conformance.of_run`, as ``show`` and its report
    list them), what a file imported from the original TKperf measured other
    than its name says first."""
    imported = conformance.imported_caveats(run)
    return imported + [d for d in conformance.of_run(run).deviations if d not in imported]


def _relayed(runs: Sequence[RunResult], labels: Sequence[str], imported: bool) -> List[str]:
    """The runs' own caveats (:func:`run_caveats`) of the imported runs or of
    the others, each once, prefixed with the runs it is true of:
    'example-ssd, example-full: --quick smoke-test profile (...)', or
    'every run: ...' when it is true of all of them."""
    by_line: Dict[str, List[str]] = {}
    for run, label in zip(runs, labels):
        if bool(header.imported_from(run)) == imported:
            for line in run_caveats(run):
                by_line.setdefault(line, []).append(label)
    return [f"{'every run' if len(names) == len(runs) else ', '.join(names)}: {line}"
            for line, names in by_line.items()]


def comparison_caveats(runs: Sequence[RunResult], labels: Sequence[str]) -> List[str]:
    """What makes the runs less than comparable, in plain words: the caveats
    of the runs imported from the original TKperf, that the settings differ,
    every other run's own caveats (each naming its runs), and what a row of
    last-rounds means is."""
    out = _relayed(runs, labels, imported=True)
    diffs = setting_differences(runs)
    if diffs:
        names = ", ".join(d.option for d in diffs)
        out.append(f"These runs were made with different settings ({names}): their figures are "
                   "not directly comparable; the table 'Settings that differ' lists the values.")
    out += _relayed(runs, labels, imported=False)
    unsteady = [f"{label} ({', '.join(test_title(t) for t in unsteady_tests(run))})"
                for run, label in zip(runs, labels) if unsteady_tests(run)]
    if unsteady:
        out.append("No steady state reached in " + "; ".join(unsteady) + ": those tests' figures are the "
                   "means of their last rounds, not steady-state averages, and may still have been drifting; "
                   "each is labelled so ('mean of the last N rounds, NO steady state', or beside another run's "
                   "steady figure 'NOT steady, last N rounds'), and a difference to one of them says little "
                   "about the drives.")
    return out


def unsteady_tests(run: RunResult) -> List[TestRun]:
    """The round-based tests of ``run`` that sought a steady state and reached none."""
    out = []
    for t in run.tests:
        if is_stream(t) or not seeks_steady_state(t):
            continue
        s = steady_state(t)
        if s is not None and s.rounds and not s.steady:
            out.append(t)
    return out


#: The definition of a row where one test's window ended steady in some
#: runs and not in others (after the test's short name).
EITHER_WINDOW = "window average, steady or NOT as labelled"


@dataclass(frozen=True)
class FigureRow:
    """One row of the summary side by side: a figure under one definition,
    each run's value where the run measured it so (None elsewhere).
    ``labels``: per run, how its window ended ('steady', 'NOT steady, last
    5 rounds'), where the runs' windows of the test ended differently
    (empty where one definition holds for every run)."""

    figure: str
    pattern: str
    unit: str
    definition: str
    values: Tuple[Optional[float], ...]
    labels: Tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """'Steady-state IOPS, RND 4KiB 100% W (IOPS) [IOPS: steady-state window average]';
        a last-rounds mean is not called steady-state, not even in its figure's name."""
        figure = self.figure
        if self.last_rounds and figure.startswith("Steady-state "):
            figure = figure[len("Steady-state "):]
        return f"{figure}, {self.pattern} ({self.unit})" + (f" [{self.definition}]" if self.definition else "")

    @property
    def last_rounds(self) -> bool:
        """A mean of the last rounds of a test that reached no steady state (in some run)."""
        return LAST_ROUNDS in self.definition or any(x.startswith("NOT steady") for x in self.labels)

    def texts(self) -> List[str]:
        """Each run's figure as text, labelled where the row has labels: '3,283.5 (steady)'."""
        labels = self.labels or ("",) * len(self.values)
        return [fmt(v, self.unit) + (f" ({label})" if label and v is not None else "")
                for v, label in zip(self.values, labels)]


def _row_key(definition: str) -> str:
    """Which row a run's figure goes to: one per definition, but a test's
    window average one row whether its window ended steady or not (the
    short name; :func:`tkperf.report.steady.window_ending`)."""
    ending = window_ending(definition)
    return f"window:{ending[0]}" if ending is not None else definition


def _row(f: page.SummaryFigure, figures: Sequence[Sequence[page.SummaryFigure]], i: int, key: str) -> FigureRow:
    """The row ``key`` (:func:`_row_key`) of the ``i``-th summary figure ``f``."""
    mine = [fs[i].value is not None and _row_key(fs[i].definition) == key for fs in figures]
    values = tuple(fs[i].value if m else None for fs, m in zip(figures, mine))
    definitions = list(dict.fromkeys(fs[i].definition for fs, m in zip(figures, mine) if m))
    if len(definitions) <= 1:
        return FigureRow(f.group, f.pattern, f.unit, definitions[0] if definitions else key, values)
    endings = [window_ending(fs[i].definition) if m else None for fs, m in zip(figures, mine)]
    short = next(e[0] for e in endings if e is not None)
    return FigureRow(f.group, f.pattern, f.unit, f"{short}: {EITHER_WINDOW}", values,
                     tuple(e[1] if e is not None else "" for e in endings))


def figure_rows(runs: Sequence[RunResult]) -> List[FigureRow]:
    """The summary figures of the runs, like set beside like: a figure the
    runs measured under different definitions (an XSR phase level and a TP
    steady-state window) is one row per definition, each run's value only
    in the row of its own, so no difference is ever taken between them.
    A test's window average is one row whether its window ended steady or
    not, each run's figure labelled (:attr:`FigureRow.labels`): the same
    figure of the same rounds, which a reader compares, knowing that a
    last-rounds mean may still have been drifting."""
    figures = [page.summary_figures(r) for r in runs]
    out: List[FigureRow] = []
    for i, f in enumerate(figures[0]):
        keys = list(dict.fromkeys(_row_key(fs[i].definition) for fs in figures if fs[i].value is not None))
        out += [_row(f, figures, i, key) for key in keys] or [FigureRow(f.group, f.pattern, f.unit, "",
                                                                          (None,) * len(runs))]
    return out


def summary_rows(runs: Sequence[RunResult]) -> List[Tuple[str, List[Optional[float]], List[str]]]:
    """:func:`figure_rows` as table rows: (figure and its definition, the
    runs' values, their texts)."""
    return [(r.title, list(r.values), r.texts()) for r in figure_rows(runs)]


def _pct(value: Optional[float], first: Optional[float]) -> Optional[float]:
    """The difference in % as :func:`difference` takes it; None where it says n/a."""
    if value is None or first is None or difference(value, first) == NA:
        return None
    return round((value - first) / abs(first) * 100, 3)


def as_dict(runs: Sequence[RunResult], paths: Sequence[str]) -> dict:
    """What ``compare --json`` prints: the runs, the caveats the report and
    the terminal give, and the summary figures side by side (each later
    run's difference from the first in %)."""
    labels = run_labels(runs)
    rows = [r for r in figure_rows(runs) if any(v is not None for v in r.values)]
    return {
        "schema": JSON_SCHEMA, "version": JSON_VERSION,
        "runs": [{"label": label, "file": path, "name": run.name, "quick": run.quick, "status": run.status,
                  "not_steady": [t.key for t in unsteady_tests(run)],
                  "imported_from": header.imported_from(run),
                  "verdict": conformance.of_run(run).sentence(), "caveats": run_caveats(run)}
                 for run, label, path in zip(runs, labels, paths)],
        "caveats": comparison_caveats(runs, labels),
        "figures": [{"figure": r.figure, "pattern": r.pattern, "unit": r.unit, "definition": r.definition,
                     "last_rounds_mean": r.last_rounds, "values": list(r.values),
                     "value_labels": list(r.labels or ("",) * len(r.values)),
                     "difference_pct": [_pct(v, r.values[0]) for v in r.values[1:]]} for r in rows],
    }


def terminal_table(runs: Sequence[RunResult]) -> List[str]:
    """The summary figures side by side as plain lines for the terminal, as
    ``tkperf check`` prints its table: numbers right-aligned, each later
    run's difference from the first in %; figures no run measured left out;
    then the report's caveats, one 'warning:' line each.  Run names come
    from the result files: control characters are made visible."""
    labels = [for_terminal(x) for x in run_labels(runs)]
    header = ["figure"] + labels + [f"{x} %" for x in labels[1:]]
    rows = [[name] + texts + [difference(v, values[0]) for v in values[1:]]
            for name, values, texts in summary_rows(runs) if any(v is not None for v in values)]
    table = [header] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    caveats = [for_terminal(c) for c in comparison_caveats(runs, run_labels(runs))]
    return ([f"Summary figures side by side; each '%' column: that run's difference from {labels[0]}."]
            + ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
               for r in table]
            + [f"warning: {c}" for c in caveats])


def summary_blocks(ctx: CompareContext) -> list:
    runs, labels = ctx.runs, ctx.labels
    out: list = [b.Rubric("Summary")]
    if len(labels) > FULL_NAME_COLUMNS:
        rows = [[key, label, dict(_describe(run))["Model"], capacity_text(run.device.size_bytes)]
                for key, label, run in zip(ctx.column_labels(), labels, runs)]
        out.append(b.table(["Column", "Run", "Model", "Capacity"], rows, title="The runs compared",
                           widths=[10, 30, 45, 15]))
    out.append(ctx.numbers_table("Figure", summary_rows(runs), "Summary performance data, side by side"))
    keys: List[str] = []
    for r in runs:
        for t in r.tests:
            if t.key not in keys:
                keys.append(t.key)
    if keys:
        steady = [[test_title(next(t for r in runs for t in r.tests if t.key == k))]
                  + [_steady_cell(r.test(k)) for r in runs] for k in keys]
        out.append(ctx.runs_table("Test", steady, "Steady state by test"))
    return out


def settings_blocks(ctx: CompareContext) -> list:
    runs = ctx.runs
    diffs = setting_differences(runs)
    out: list = [b.Heading("Settings")]
    if diffs:
        out += [b.Paragraph("The runs differ in these options (as stored in the result files); "
                            "every other option is the same in all of them."),
                ctx.runs_table("Option", [[d.option] + list(d.values) for d in diffs], "Settings that differ")]
    else:
        out.append(b.Paragraph("All runs were made with the same options."))
    rows = [[name] + [dict(_describe(r))[name] for r in runs] for name, _ in _describe(runs[0])]
    out.append(ctx.runs_table("", rows, "Drives and platforms"))
    return out


def test_sections(ctx: CompareContext) -> list:
    """Every test type's comparison section: streams first, then the rest,
    each in the registry's order; then notes for types not installed."""
    present = [(name, kind) for name, kind in registry.types().items()
               if any(r.tests_of(name) for r in ctx.runs)]
    streams = [nk for nk in present if any(is_stream(t) for r in ctx.runs for t in r.tests_of(nk[0]))]
    out: list = []
    for name, kind in streams + [nk for nk in present if nk not in streams]:
        out += stamps.stamped(generic.view_of(kind).compare_section(ctx, ctx.runs, ctx.labels),
                              stamps.comparison_stamp(ctx.runs, ctx.labels, stamps.type_words(kind.short, name)))
    missing: List[str] = []
    for r in ctx.runs:
        missing += [t.type for t in r.tests if registry.get(t.type) is None and t.type not in missing]
    return out + generic.missing_compare(ctx, missing)


def comparison_blocks(runs: Sequence[RunResult]) -> list:
    ctx = CompareContext(tuple(runs), tuple(run_labels(runs)))
    labels = ctx.labels
    return ([b.Title(f"tkperf comparison: {', '.join(labels)}" if len(labels) <= FULL_NAME_COLUMNS
                     else f"tkperf comparison of {len(labels)} runs"),
             b.Paragraph(f"{len(runs)} tkperf result files side by side; every figure is the average over "
                         "each run's own steady-state measurement window; where a test reached none, the mean "
                         "of its last rounds, labelled so."),
             b.Admonition("warning", tuple(comparison_caveats(runs, labels)))]
            + stamps.stamped(summary_blocks(ctx) + settings_blocks(ctx), stamps.comparison_stamp(runs, labels))
            + test_sections(ctx))


def build_comparison(runs: Sequence[RunResult], outdir: str,
                     formats: Sequence[str] = REPORT_FORMATS,
                     name: str = "comparison", png: bool = False) -> ReportResult:
    """Compare 2 to 8 runs in ``outdir``: ``<name>.rst``, ``.html``, ``.pdf``
    and ``<name>-plots/``, like a single report (PNG plots too with ``png``)."""
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        raise UsageError(f"compare takes {MIN_RUNS} to {MAX_RUNS} result files, not {len(runs)}")
    formats = parse_report_formats(formats)
    return publish(comparison_blocks(runs), outdir, safe_name(name), formats, png)
