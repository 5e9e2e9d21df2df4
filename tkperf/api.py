"""tkperf's public API: the one module a test-type plug-in imports.

Everything a test type needs is named here, and only here: the test-type
interface, its options and plans, the loop shapes, the fio job
description, read access to the result model, headline figures and the
report blocks of its own sections.  Every other module of tkperf is
internal and may change in any release; the names below change only by the
rule of :data:`API_VERSION`::

    from tkperf.api import TestType, Option, Options, Plan, Tracking, Figure, Rounds, FioJob

A type reads its own options through a frozen dataclass of their values
(its ``settings``): ``opts.of(MySettings).qd``, typed (API 2; API 1 read
them as untyped attributes, ``opts.my_qd``).

A plug-in says which MAJOR version it was written for with its type's
``api_version`` class attribute (the current MAJOR when left out); tkperf
refuses, with one line in ``tkperf tests`` and the log, a type declaring a
MAJOR it does not have.  ``docs/extending.rst`` walks through a complete
plug-in (``examples/plugin``).
"""
from __future__ import annotations

from tkperf.engine.composite import SteadyThenSweep
from tkperf.engine.options import (
    MAX_IODEPTH,
    MAX_NUMJOBS,
    MAX_RUNTIME,
    RunOptions,
    parse_block_sizes,
    parse_duration,
    parse_mix,
    parse_mixes,
    parse_size,
)
from tkperf.engine.shapes import Estimate, Phase, Phases, Rounds, Shape, Stream, Sweep
from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.model.results import IoStats, Round, RunResult, TestRun, Workload, format_bs, mix_label, now_iso
from tkperf.model.steadystate import Steady
from tkperf.render.blocks import (
    Admonition,
    BarsChart,
    ConvergenceChart,
    CurvesChart,
    Heading,
    LinesChart,
    Paragraph,
    Rubric,
    Table,
    WindowChart,
    XYChart,
    table,
)
from tkperf.testtypes.base import (
    API_VERSION,
    Figure,
    Option,
    Options,
    Plan,
    SummaryValue,
    TestType,
    Tracking,
    in_range,
    parse_count,
)
from tkperf.testtypes.dirth import SweepTest, sweep_options, sweep_plan
from tkperf.testtypes.dirth.settings import SweepSettings, captures_of
from tkperf.testtypes.settings import settings_from
from tkperf.testtypes.writesat.settings import parse_tgbw, tgbw_bytes

__all__ = [
    "API_VERSION",
    # the test-type interface
    "TestType", "Option", "Options", "Plan", "Tracking", "Steady", "Figure", "SummaryValue", "in_range",
    "parse_count", "settings_from",
    # options every test shares, and value parsers
    "RunOptions", "parse_size", "parse_block_sizes", "parse_mix", "parse_mixes", "parse_duration",
    "MAX_IODEPTH", "MAX_NUMJOBS", "MAX_RUNTIME", "UsageError",
    # what runs
    "FioJob", "Shape", "Rounds", "Stream", "Sweep", "Phases", "Phase", "SteadyThenSweep",
    # the result model, to read
    "RunResult", "TestRun", "Round", "Workload", "IoStats", "format_bs", "mix_label",
    # report blocks
    "Heading", "Rubric", "Paragraph", "Admonition", "Table", "table", "ConvergenceChart", "WindowChart",
    "LinesChart", "BarsChart", "CurvesChart", "XYChart",
    # added for the real-world workload tests (issue 38): a shape's estimate, a round's start time,
    # WSAT's total-written limit, DIRTH's TC x QD sweep and its report sections
    "Estimate", "now_iso", "parse_tgbw", "tgbw_bytes", "SweepTest", "SweepSettings", "sweep_options",
    "sweep_plan", "captures_of", "sweep_report_section", "sweep_compare_section", "sweep_header",
    "sweep_stimulus_words", "generic_report_section", "generic_compare_section",
]


def generic_report_section(kind, ctx, tests) -> list:
    """tkperf's generic report section of test type ``kind`` (header, headline figures, rounds or intervals)."""
    from tkperf.render import generic  # report parts load only when a report is built

    return generic.report_section(kind, ctx, tests)


def generic_compare_section(kind, ctx, runs, labels) -> list:
    """tkperf's generic comparison section of test type ``kind`` (headline figures side by side)."""
    from tkperf.render import generic  # report parts load only when a report is built

    return generic.compare_section(kind, ctx, runs, labels)


def sweep_report_section(ctx, tests, kind, header_of, more=None) -> list:
    """DIRTH's report section for a sweep test ``kind`` with its own header and extra blocks."""
    from tkperf.testtypes.dirth import view  # report parts load only when a report is built

    return view.report_section(ctx, tests, kind, header_of, more)


def sweep_compare_section(ctx, runs, labels, kind) -> list:
    """DIRTH's comparison section for a sweep test ``kind``."""
    from tkperf.testtypes.dirth import view  # report parts load only when a report is built

    return view.compare_section(ctx, runs, labels, kind)


def sweep_header(ctx, test, stimulus: str, wdpc: str, extra=()):
    """The SNIA header of a steady-then-sweep test (DIRTH's), ``extra`` rows after its own."""
    from tkperf.testtypes.dirth import viewheader  # report parts load only when a report is built

    return viewheader.sweep_header(ctx, test, stimulus, wdpc, extra)


def sweep_stimulus_words(test, long: str, short: str):
    """(stimulus, WDPC) words of a sweep test's header in the words of its structure."""
    from tkperf.testtypes.dirth import viewheader  # report parts load only when a report is built

    return viewheader.stimulus_words(test, long, short)
