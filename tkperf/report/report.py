"""The report of one run: its blocks, then reST, HTML, PDF and charts.

The report is assembled, not written here: the title and summary page and
the run notes (:mod:`tkperf.report.page`), then, for every registered test
type in order (:func:`tkperf.testtypes.types`), that type's section of the
run's tests of it (:meth:`~tkperf.kit.base.View.report_section`),
then the tests whose type is not installed (:mod:`tkperf.report.generic`).
:func:`tkperf.render.documents.publish` draws the charts and writes the
files.  Nothing here names a test type.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

from tkperf.kit import registry
from tkperf.kit.options import REPORT_FORMATS, parse_report_formats
from tkperf.model.results import RunResult, TestRun
from tkperf.render import parallel
from tkperf.render.documents import ReportResult, publish, safe_name
from tkperf.report import features, generic, page, qos, stamps
from tkperf.report import health as health_part
from tkperf.report.context import ReportContext
from tkperf.report.page import SUMMARY_LAYOUT

__all__ = ["ReportResult", "SUMMARY_LAYOUT", "build_report", "ready_drawers", "report_blocks"]


def test_sections(ctx: ReportContext) -> list:
    """Every test type's section, in the registry's order, then the tests
    whose type is not installed."""
    out: list = []
    for name, kind in registry.types().items():
        tests = ctx.run.tests_of(name)
        if tests:
            view = generic.view_of(kind)
            stamp = stamps.run_stamp(ctx.run, stamps.type_words(kind.short, name))
            out += stamps.stamped(view.report_section(ctx, tests), stamp)
            if not view.shows_histograms:
                for t in tests:  # --latency-histograms
                    out += stamps.stamped(qos.qos_blocks(ctx, t, f"{t.key}, {_where(t)}"), stamp)
    missing: Dict[str, List[TestRun]] = {}
    for t in ctx.run.tests:
        if registry.get(t.type) is None:
            missing.setdefault(t.type, []).append(t)
    for name, tests in missing.items():
        out += stamps.stamped(generic.missing_section(ctx, name, tests),
                              stamps.run_stamp(ctx.run, stamps.type_words(None, name)))
    return out


def _where(test: TestRun) -> str:
    return "the measurement window" if test.steady is not None and test.steady.rounds else "all rounds"


def report_blocks(run: RunResult) -> list:
    """The whole report as blocks."""
    return stamps.stamped(page.title_blocks(run) + page.summary_blocks(run) + page.notes_blocks(run)
                          + health_part.health_blocks(run) + features.features_blocks(run)
                          + test_sections(ReportContext(run)), stamps.run_stamp(run))


def build_report(run: RunResult, outdir: str, formats: Sequence[str] = REPORT_FORMATS,
                 png: bool = False, drawers: Optional[parallel.Drawers] = None,
                 tell: Optional[Callable[[str], None]] = None) -> ReportResult:
    """Build the report of ``run`` in ``outdir``: ``<name>.rst``, ``.html``,
    ``.pdf`` and the plots in ``<name>-plots/`` (SVG; PNG as well with
    ``png``, and the reST refers to those); rebuilding replaces them.

    A missing PDF toolchain is a warning in the result, not an error; an
    output directory that cannot be written raises :class:`OutputError`.
    ``drawers``: drawing processes made ready while ``run`` was loaded
    (:func:`ready_drawers`).  ``tell``: where each phase is said.
    """
    formats = parse_report_formats(formats)
    return publish(report_blocks(run), outdir, safe_name(run.name), formats, png, drawers, tell)


def ready_drawers() -> parallel.Drawers:
    """Drawing processes for a report made ready now (the first imports
    matplotlib meanwhile), for :func:`build_report`; a context manager that
    stops them if they are not used."""
    return parallel.Drawers()
