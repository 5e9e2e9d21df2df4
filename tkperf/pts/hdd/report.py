"""What the reports of the HDD tests say in common: rounds on a drive with
no write history are a repeatability check (its header fields, its section,
where the figures were measured), the header of a test with no preparation,
and the figures table."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from tkperf.kit.base import TestType
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.model.results import RunResult, TestRun
from tkperf.render.blocks import Header, Heading, Paragraph
from tkperf.report.generic import compare_section, headline_table
from tkperf.report.header import snia_header
from tkperf.report.steady import Convergence, convergence_blocks, steady_state, window_blocks
from tkperf.report.words import NA, test_title, tracking_label

#: What the report and the docs say of rounds on an HDD.
REPEATABILITY = ("An HDD has no write history to settle (no flash translation layer, no garbage "
                 "collection), so there is no steady state to reach: every round repeats the same "
                 "measurement, and the SNIA 20/10 rule over the last rounds (range within 20% of "
                 "their average, least-squares excursion within 10%) checks that the rounds agree. "
                 "It is a repeatability check; the figures are the averages over those rounds.")
#: The header's "preparation" of a test on an HDD.
NO_PREPARATION = "none: an HDD needs no preconditioning (no flash translation layer)"


def repeat_source(test: TestRun) -> str:
    """Where a test's figures were measured: 'HDD-IOPS rounds 1-5, repeatable'."""
    s = test.steady if test.steady is not None else (test.evaluate() if test.rounds else None)
    title = test_title(test)
    if s is None or not s.rounds:
        return f"{title}: no rounds"
    return f"{title} rounds {s.first_round}-{s.last_round}, " + ("repeatable (20/10)" if s.steady
                                                                 else "NOT repeatable within 20/10")


def repeat_fields(ctx: ReportContext, test: TestRun, first: Sequence[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The middle of the header of a round test on an HDD: ``first``, then the
    rounds, the tracked figures and the repeatability verdict (not a steady state)."""
    s = steady_state(test, ctx.window)
    also = [x.split(":", 1)[0] for x in test.params.get("also_tracking", "").split(",") if ":" in x]
    if s is None or not s.rounds:
        verdict = "no rounds measured"
    elif s.steady:
        verdict = f"the rounds agree (repeatable) in rounds {s.first_round}-{s.last_round}"
    else:
        verdict = f"NOT repeatable within 20/10 in rounds {s.first_round}-{s.last_round}"
    return list(first) + [
        ("Rounds run", f"{len(test.rounds)} of at most {ctx.run.options.get('max_rounds', NA)}"),
        ("Tracking", tracking_label(test) + (f"; also {', '.join(also)}" if also else "")),
        ("Steady state", "not applicable to an HDD (no write history to settle); the rounds are "
                         "judged for repeatability"),
        ("Repeatability", f"20/10 over {s.window if s else ctx.window} rounds: {verdict}"),
    ]


def hdd_header(ctx: ReportContext, test: TestRun, stimulus: str, first: Sequence[Tuple[str, str]]) -> Header:
    """The SNIA header of a round test on an HDD: no preparation, rounds judged for repeatability."""
    return snia_header(ctx.run, test, stimulus, repeat_fields(ctx, test, first),
                              without_wipc=NO_PREPARATION, wdpc="none: the rounds repeat the test loop itself")


def repeat_blocks(ctx: ReportContext, test: TestRun, conv: Convergence) -> list:
    """Repeatability: what the rounds mean on an HDD, every round's figures
    (the convergence chart and table) and the 20/10 check of the last rounds."""
    return ([Heading("Repeatability of the rounds", 2), Paragraph(REPEATABILITY)]
            + convergence_blocks(ctx, test, conv, 3) + window_blocks(ctx, test, 3))


def figures_blocks(kind, test: TestRun) -> list:
    """A "Figures" heading over the type's headline table (where it has one)."""
    table = headline_table(kind, test)
    return [Heading("Figures", 2)] + ([table] if table is not None else [])


def hdd_comparison(kind: TestType, ctx: CompareContext, runs: Sequence[RunResult],
                   labels: Sequence[str]) -> Tuple[list, List[Optional[TestRun]]]:
    """The generic comparison section of an HDD type (nothing when no run
    has a test of it), and each run's first test of it (None where a run
    has none), for the type's own tables and charts."""
    out = compare_section(kind, ctx, runs, labels)
    return out, [next(iter(r.tests_of(kind.name)), None) for r in ctx.runs] if out else []


def hdd_blocks(ctx: ReportContext, kind: TestType, test: TestRun, body: list, conv: Convergence) -> list:
    """What an HDD round test's report shows of one measured test: its
    headline figures, ``body`` (the type's own tables and charts), then its
    repeatability over the rounds (:func:`repeat_blocks`)."""
    return figures_blocks(kind, test) + body + repeat_blocks(ctx, test, conv)
