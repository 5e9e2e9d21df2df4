"""The parts of a report every run has: the summary page (after Figure 3 of
the SNIA primer) and the run notes.

The summary page's figures come from the test types
(:meth:`~tkperf.kit.base.View.summary`): every installed test
type offers the lines of :data:`SUMMARY_LAYOUT` it measured, and where two
tests offer the same line the lower rank wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import __version__
from tkperf.kit import registry
from tkperf.model.results import RunResult
from tkperf.render import blocks as b
from tkperf.report.generic import view_of
from tkperf.report.header import device_or_desc, list_anchor
from tkperf.report.steady import steady_state, window_definition, window_source
from tkperf.report.words import (
    NA,
    capacity_text,
    fmt,
    is_stream,
    plural,
    seeks_steady_state,
    steps_done,
    test_title,
    unit_of,
)
from tkperf.target import description
from tkperf.verdict import conformance


@dataclass(frozen=True)
class SummaryFigure:
    """One figure of the summary page."""

    key: str
    group: str
    pattern: str
    unit: str
    value: Optional[float]
    source: str
    #: What the figure is, the same in every run measuring it so ('TP: steady-state window average',
    #: 'TP: mean of the last 5 rounds, NO steady state');
    #: '' when not measured.  A comparison sets only figures of one definition side by side.
    definition: str = ""


#: The summary page's lines: (key, figure, access pattern, unit).
SUMMARY_LAYOUT: Tuple[Tuple[str, str, str, str], ...] = (
    ("fob_iops", "FOB IOPS", "RND 4KiB 100% W", "IOPS"),
    ("rnd_4k_write_iops", "Steady-state IOPS", "RND 4KiB 100% W", "IOPS"),
    ("rnd_4k_mixed_iops", "Steady-state IOPS", "RND 4KiB 65:35 RW", "IOPS"),
    ("rnd_4k_read_iops", "Steady-state IOPS", "RND 4KiB 100% R", "IOPS"),
    ("seq_write_mb_s", "Throughput", "SEQ 1024KiB 100% W", "MB/s"),
    ("seq_read_mb_s", "Throughput", "SEQ 1024KiB 100% R", "MB/s"),
    ("rnd_4k_write_lat_mean_us", "Response time AVE", "RND 4KiB 100% W", "µs"),
    ("rnd_4k_write_lat_max_us", "Response time MAX", "RND 4KiB 100% W", "µs"),
)


def summary_figures(run: RunResult) -> List[SummaryFigure]:
    """The summary page's figures; ``value`` is None for what was not measured.

    A test's empty source means its own measurement window, worded with the
    window's rounds and whether they were steady.
    """
    found: Dict[str, Tuple[int, float, str, str]] = {}
    for t in run.tests:
        kind = registry.get(t.type)
        if kind is None:
            continue
        for key, sv in view_of(kind).summary(t).items():
            if key not in found or sv.rank < found[key][0]:
                # a test of the original TKperf is named so: a comparison sets it apart
                definition, source = conformance.imported_figure(
                    run, t, key, sv.definition or window_definition(kind.short, t), sv.source or window_source(t))
                found[key] = (sv.rank, sv.value, source, definition)
    out = []
    for key, group, pattern, unit in SUMMARY_LAYOUT:
        _, value, source, definition = found.get(key, (0, None, "not measured", ""))
        out.append(SummaryFigure(key, group, pattern, unit, value, source, definition))
    return out


def summary_table(figures: Sequence[SummaryFigure]) -> b.Table:
    rows = [[f.group, f.pattern, fmt(f.value, f.unit), f.unit, f.source] for f in figures]
    return b.table(["Figure", "Access pattern", "Value", "Unit", "Measured in"], rows,
                   title="Summary performance data", widths=[20, 22, 14, 8, 36])


@dataclass(frozen=True)
class SteadyRow:
    test: str
    status: str
    rounds: str
    window: str
    reached: str
    stop_reason: str


def steady_rows(run: RunResult) -> List[SteadyRow]:
    """Which tests reached steady state, in which rounds, and why they stopped.

    For a stream steady state is at most a stop rule (its ``steady_stop``
    parameter), so its verdict is worded without capitals.
    """
    out = []
    for t in run.tests:
        s = steady_state(t)
        if is_stream(t):
            rounds = plural(steps_done(t), unit_of(t))
            if t.params.get("steady_stop") != "true":
                reached = "not a stop rule"
            else:
                reached = "yes" if s is not None and s.steady else "no"
        elif not seeks_steady_state(t):  # a sweep or single pass: no steady state is sought
            reached, rounds = "not tracked", str(t.done)
        else:
            reached = "yes" if s is not None and s.steady else "NO"
            rounds = str(t.done)
        window = f"{s.first_round}-{s.last_round}" if s is not None and s.rounds else NA
        out.append(SteadyRow(test_title(t), t.status or NA, rounds, window, reached,
                             t.stop_reason or NA))
    return out


def steady_table(rows: Sequence[SteadyRow]) -> b.Table:
    body = [[r.test, r.status, r.rounds, r.window, r.reached, r.stop_reason] for r in rows]
    return b.table(["Test", "Status", "Rounds", "Window", "Steady state", "Stopped by"], body,
                   title="Steady state by test", widths=[12, 12, 14, 10, 24, 28])


def run_caveats(run: RunResult) -> List[str]:
    """What a reader must know before trusting a figure, in plain words."""
    out = []
    if run.quick:
        out.append("This is a --quick smoke test (short workloads, a narrowed matrix, few rounds): "
                   "its figures are NOT a PTS-conformant measurement.")
    if run.device.kind == "file":
        out.append(f"The target {run.device.path} is a FILE, not a raw block device: the figures "
                   "describe the filesystem and host as much as any drive.")
    if run.integrity:
        out.append(f"The result file: {run.integrity}.")
    if run.status != "complete":
        out.append(f"The run is {run.status or 'incomplete'}: this is a partial report of what "
                   "was measured before it stopped.")
    if run.resumed:
        n = sum(1 for e in run.events if e.kind == "resume")
        out.append(f"The run was resumed {plural(n, 'time')}; the run notes list when.")
    for t in run.tests:
        if t.status != "complete":
            out.append(f"{test_title(t)} is {t.status or 'incomplete'} after {plural(steps_done(t), unit_of(t))}.")
    out += [f"Imported result, {text}." for text in conformance.imported_caveats(run)]
    missing = sorted({t.type for t in run.tests if registry.get(t.type) is None})
    if missing:
        out.append(f"Test type{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                   f"{'are' if len(missing) > 1 else 'is'} not installed: only the common parts "
                   "of those tests are shown.")
    return out


def title_blocks(run: RunResult) -> list:
    what = ("Hard disk tests of tkperf's HDD profile (not a SNIA PTS run)" if run.profile == conformance.HDD
            else "SNIA Solid State Storage Performance Test Specification (PTS) tests")
    return [b.Title(f"tkperf report: {run.name}"),
            b.Paragraph(f"{what} run with fio by tkperf {run.tkperf_version or 'unknown version'}; "
                        f"report built by tkperf {__version__}.")]


def summary_blocks(run: RunResult) -> list:
    """The first page: the device and run in one sentence, the caveats, the
    summary figures and the steady state of every test."""
    d = run.device
    # A rubric, not a section: the PDF breaks pages before sections, and the
    # summary belongs on the first page with the title.
    model = device_or_desc(run, d.model, "model")
    out: list = [
        b.Rubric("Summary"),
        b.Paragraph(f"{model}, {capacity_text(d.size_bytes)}, tested as {d.path} on "
                    f"{run.host.hostname or 'an unnamed host'} with {run.host.fio_version or 'fio'}; "
                    f"run {run.status or 'of unknown status'}, started {run.started or NA}"
                    + (f", finished {run.finished}" if run.finished else "") + "."),
        b.Admonition("warning", tuple(run_caveats(run))),
    ]
    out.append(summary_table(summary_figures(run)))
    if run.tests:
        out.append(steady_table(steady_rows(run)))
    else:
        out.append(b.Paragraph("No test of this run has started; there are no figures yet."))
    return out + conformance_blocks(run)


def conformance_blocks(run: RunResult) -> list:
    """The verdict on the first page: conformant, or every deviation listed."""
    c = conformance.of_run(run)
    if c.conformant:
        return [b.Paragraph(f"Conformance: {c.sentence()}: every parameter matches the revision.")]
    if not c.deviations:  # a run of no PTS revision with nothing to disclose
        return [b.Paragraph(f"Conformance: {c.sentence()}.")]
    word = c.line_word.capitalize()
    # a table of two columns, not a list: half the rows of a list's items,
    # so the summary stays on the first page (tested per page with pdftotext)
    items = [(str(i), d) for i, d in enumerate(c.deviations, 1)]
    half = (len(items) + 1) // 2
    left, right = items[:half], items[half:] + [("", "")] * (2 * half - len(items))
    return [b.Paragraph(f"Conformance: {c.sentence()}, each listed here once (every test's header "
                        "links here):", anchor=list_anchor(c)),
            b.table(["#", word, "#", word], [[n, d, m, e] for (n, d), (m, e) in zip(left, right)],
                    widths=[5, 45, 5, 45])]


def two_up(pairs: Sequence[Tuple[str, str]]) -> List[List[str]]:
    """(name, value) pairs laid out in two column pairs, to halve a long table."""
    half = (len(pairs) + 1) // 2
    left, right = list(pairs[:half]), list(pairs[half:])
    right += [("", "")] * (len(left) - len(right))
    return [[a, v, c, d] for (a, v), (c, d) in zip(left, right)]


def notes_blocks(run: RunResult) -> list:
    """The run notes: status, caveats, events, the description file, every option."""
    out: list = [
        b.Heading("Run notes"),
        b.Paragraph(f"Run status: {run.status or 'unknown'}"
                    + ("; resumed (see the resume records below)" if run.resumed else "")
                    + ("; INTERRUPTED" if run.status == "interrupted" else "")
                    + ("; the caveats are in the summary's warning" if run_caveats(run) else "") + "."),
    ]
    if run.events:
        out.append(b.table(["Time", "Kind", "Test", "Round", "Message"], event_rows(run),
                           title="Events of the run (warnings, notes, interruptions, resumes)",
                           widths=[23, 9, 10, 8, 50]))  # a time stamp on one line in the PDF
    else:
        out.append(b.Paragraph("The run recorded no events."))
    if run.description.strip() or run.description_fields:
        out.append(b.Heading("Description file", 2))
        if run.description_fields:
            out.append(b.table(["Field", "Value"], _described(run.description_fields), widths=[30, 70]))
        else:
            out.append(b.Literal(run.description.strip()))
    out += [b.Heading("Run options", 2),
            b.table(["Option", "Value", "Option", "Value"], two_up(sorted(run.options.items())),
                    widths=[20, 30, 20, 30], title="Every option of the run as stored in the result file")]
    return out


def event_rows(run: RunResult) -> List[List[str]]:
    """The events table's rows, each message once: events of one kind and
    message (the same purge warning for every test) fold into the first's
    row, with the tests and rounds of all of them and their count."""
    groups: Dict[Tuple[str, str], list] = {}
    for e in run.events:
        groups.setdefault((e.kind, e.message), []).append(e)
    rows = []
    for (kind, message), events in groups.items():
        first = events[0]
        tests = ", ".join(dict.fromkeys(e.test or "run" for e in events))
        rounds = ", ".join(dict.fromkeys(str(e.round) for e in events if e.round))
        rows.append([first.time, kind, tests, rounds,
                     message + (f" ({len(events)} times)" if len(events) > 1 else "")])
    return rows


def _described(fields: Dict[str, str]) -> List[List[str]]:
    """The description file's fields in its documented order, with their
    labels; keys an older tkperf stored come after, as they are."""
    names = description.key_names()
    known = [k for k in names if k in fields]
    rest = sorted(k for k in fields if k not in names)
    return [[description.label(k), fields[k]] for k in known] + [[k, fields[k]] for k in rest]
