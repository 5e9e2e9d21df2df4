"""tkperf's public API: the one module a test-type plug-in imports.

Everything a test type needs is named here, and only here: the test-type
interface, its options and plans, the loop shapes, the fio job
description, read access to the result model, headline figures and the
report blocks of its own sections.  Every other module of tkperf is
internal and may change in any release; the names below change only by the
rule of :data:`API_VERSION`::

    from tkperf.api import TestType, Option, Options, Plan, Tracking, Figure, Rounds, FioJob

A type reads its own options through a frozen dataclass of their values
(its ``settings``, the first item of its :class:`OptionSet`):
``opts.of(MySettings).qd``, typed (API 2; API 1 read them as untyped
attributes, ``opts.my_qd``).  API 3 splits the type in parts: the type
itself (identity, options, plan, headline), the loop shape of its plans
(its unit word, its first figures, its steady-state tracking), its
:class:`PtsRules` (PTS tests only) and its :class:`View`.

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
from tkperf.engine.shapes import Phase, Phases, Rounds, Shape, Stream, Sweep
from tkperf.engine.steps import Headline, Steps
from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.model.results import IoStats, Round, RunResult, TestRun, Workload, format_bs, mix_label
from tkperf.model.steadystate import Steady
from tkperf.render.generic import GenericView
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
    OIO_FIXED,
    OIO_OPERATOR,
    OIO_SWEEP,
    Blocks,
    Figure,
    Option,
    Options,
    OptionSet,
    Plan,
    PtsRules,
    SummaryValue,
    TestType,
    Tracking,
    View,
    in_range,
    parse_count,
    stored_values,
)
from tkperf.testtypes.settings import settings_from

__all__ = [
    "API_VERSION",
    # the test-type interface
    "TestType", "Option", "OptionSet", "Options", "Plan", "Tracking", "Steady", "Figure", "SummaryValue", "in_range",
    "parse_count", "settings_from", "Blocks", "stored_values",
    # the type's parts (API 3): its PTS rules and its view
    "PtsRules", "OIO_FIXED", "OIO_OPERATOR", "OIO_SWEEP", "View", "GenericView",
    # options every test shares, and value parsers
    "RunOptions", "parse_size", "parse_block_sizes", "parse_mix", "parse_mixes", "parse_duration",
    "MAX_IODEPTH", "MAX_NUMJOBS", "MAX_RUNTIME", "UsageError",
    # what runs
    "FioJob", "Shape", "Rounds", "Stream", "Sweep", "Phases", "Phase", "SteadyThenSweep",
    # what a shape decides of its test (a shape subclass may say its own first figures)
    "Steps", "Headline",
    # the result model, to read
    "RunResult", "TestRun", "Round", "Workload", "IoStats", "format_bs", "mix_label",
    # report blocks
    "Heading", "Rubric", "Paragraph", "Admonition", "Table", "table", "ConvergenceChart", "WindowChart",
    "LinesChart", "BarsChart", "CurvesChart", "XYChart",
]
