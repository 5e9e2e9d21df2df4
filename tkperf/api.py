"""tkperf's public API: the one module a test-type plug-in imports.

What a test type needs, and only that: the test-type interface and its
parts, the options every test shares with their value parsers, the fio
job and the loop shapes that run it, steady state, read access to the
results it stored, and the report blocks and generic sections it draws
its own section with.  Every other module of tkperf is internal and may
change in any release; the names below change only by the rule of
:data:`API_VERSION`, and ``docs/api-contract.txt`` records each with its
signature (a test fails when one changes and the record does not)::

    from tkperf.api import TestType, Option, Options, Plan, Tracking, Figure, Rounds, FioJob

A type reads its own options through a frozen dataclass of their values
(its ``settings``, the first item of its :class:`OptionSet`):
``opts.of(MySettings).qd``, typed.  The type itself holds identity,
options, plan and headline; the loop shape of its plans decides its unit
word, its first figures and its steady-state tracking; its
:class:`PtsRules` (PTS tests only) and its :class:`View` are parts of
their own.

The PTS machinery tkperf's own types share (the block size x mix matrix,
the TC x QD sweep, the HDD cells, the consistency stream ...) is
:mod:`tkperf.pts`: usable, but it follows tkperf's releases, not this
contract.  The names API 3.0 exported beyond this list are still served
here, with a ``DeprecationWarning`` naming where they live now (most in
:mod:`tkperf.pts`), until tkperf 0.2.0.

A plug-in says which MAJOR version it was written for with its type's
``api_version`` class attribute (the current MAJOR when left out); tkperf
refuses, with one line in ``tkperf tests`` and the log, a type declaring a
MAJOR it does not have.  ``docs/extending.rst`` walks through a complete
plug-in (``examples/plugin``) and lists every name below with one line.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob

# the test-type interface and its parts
from tkperf.kit.base import (
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

# options every test shares, value parsers and their formatters
from tkperf.kit.options import (
    MAX_IODEPTH,
    RunOptions,
    format_block_sizes,
    parse_block_sizes,
    parse_duration,
    parse_mix,
    parse_size,
)

# what runs: the loop shapes, steady state
from tkperf.kit.policy import Steady
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.kit.settings import settings_from
from tkperf.kit.shapes import Phase, Phases, Rounds, Stream, Sweep
from tkperf.kit.steps import Headline, Steps

# the results, to read
from tkperf.model.results import IoStats, Round, RunResult, TestRun, Workload, format_bs, mix_label
from tkperf.model.steadystate import SteadyState, evaluate

# a type's report section: its blocks, its context, the generic sections
from tkperf.render.blocks import Admonition, Block, Curve, Heading, Paragraph, Table, XYChart, table
from tkperf.report.generic import GenericView, compare_section, headline_table, report_section, workload_table

__all__ = [
    # the test-type interface and its parts
    "API_VERSION", "TestType", "Option", "OptionSet", "Options", "Plan", "Tracking", "Figure", "Blocks",
    "Steady", "PtsRules", "OIO_FIXED", "OIO_OPERATOR", "OIO_SWEEP", "View", "GenericView", "SummaryValue",
    "in_range", "parse_count", "stored_values", "settings_from",
    # options every test shares, value parsers and their formatters
    "RunOptions", "MAX_IODEPTH", "parse_size", "parse_duration", "parse_block_sizes",
    "format_block_sizes", "parse_mix", "UsageError",
    # what runs
    "FioJob", "Rounds", "Stream", "Sweep", "Phases", "Phase", "Steps", "Headline",
    # the results, to read; steady state
    "RunResult", "TestRun", "Round", "Workload", "IoStats", "SteadyState", "evaluate", "format_bs", "mix_label",
    # a type's report section
    "ReportContext", "CompareContext", "report_section", "compare_section", "headline_table", "workload_table",
    "Block", "Heading", "Paragraph", "Admonition", "Table", "table", "Curve", "XYChart",
]

#: The release after which the names API 3.0 exported beyond ``__all__``
#: are no longer served here.
_FORMER_NAMES_END = "tkperf 0.2.0"
#: The names API 3.0 exported that are neither the contract's nor
#: :mod:`tkperf.pts`'s, by the module that holds them now.
_FORMER_ELSEWHERE = {
    "tkperf.durations": ("micro_unit",),
    "tkperf.kit.composite": ("SWEEP_ROUND", "WDPC_SERIES", "WDPC_STOP", "SteadyThenSweep", "SweepRounds",
                             "capture_round", "sweep_round", "wdpc_verdict"),
    "tkperf.fio.intervals": ("Cut", "IntervalCutter", "report_time"),
    "tkperf.fio.output": ("cumulative_write",),
    "tkperf.render.blocks": ("charts", "ConfidenceChart", "ConvergenceChart", "HistogramChart", "Literal", "Rubric",
                             "Title", "WindowChart"),
    "tkperf.report.steady": ("convergence_blocks", "named_window_blocks", "window_blocks"),
    "tkperf.report.qos": ("confidence_curve", "histogram_curve", "supported_marks"),
    "tkperf.pts.matrix.report": ("tracking_mix",),
    "tkperf.pts.hdd.cells": ("direction_metric",),
    "tkperf.pts.hdd.report": ("REPEATABILITY", "repeat_fields"),
    "tkperf.pts.sweep.plan": ("sweep_points",),
}

#: Names API 3.0 exported that are gone, with what took their place: the
#: steady-state floor of one drive fill became two (``FillFloor``; the SNIA
#: Primer: FOB "usually only lasts 2 SSD capacity fills"), and a WSAT
#: interval is no longer printed twice, so nothing is said to be revised.
_FORMER_GONE = {
    "OneFillFirst": "tkperf.pts.FillFloor (a floor of two drive fills, no longer one)",
    "REVISED": "nothing: each interval is printed once, when it is final",
}

if not TYPE_CHECKING:  # a type checker sees the contract only
    def __getattr__(name: str) -> object:
        """A name API 3.0 exported and the contract no longer holds: served
        from its home, with a warning naming it."""
        from tkperf import pts  # loaded only for a former name
        if name in _FORMER_GONE:
            raise AttributeError(f"tkperf.api.{name} is gone since API 3.1; use {_FORMER_GONE[name]}")
        if name in pts.__all__:
            home, where = pts, f"tkperf.pts.{name} (tkperf's own PTS layer, no stability promise)"
        else:
            module = next((m for m, names in _FORMER_ELSEWHERE.items() if name in names), None)
            if module is None:
                raise AttributeError(f"module 'tkperf.api' has no attribute {name!r}")
            home, where = _module(module), f"{module}.{name} (internal to tkperf)"
        warnings.warn(f"tkperf.api.{name} is not part of the plug-in API since API 3.1; it is {where}; "
                      f"tkperf.api stops serving it with {_FORMER_NAMES_END}", DeprecationWarning, stacklevel=2)
        return getattr(home, name)

    def _module(dotted: str) -> object:
        """One of the modules of :data:`_FORMER_ELSEWHERE`, imported here
        (tkperf loads its own modules by import statements only)."""
        from tkperf import durations
        from tkperf.fio import intervals, output
        from tkperf.kit import composite
        from tkperf.pts.hdd import cells as hdd_cells
        from tkperf.pts.hdd import report as hdd_report
        from tkperf.pts.matrix import report as matrix_report
        from tkperf.pts.sweep import plan as sweep_plan
        from tkperf.render import blocks
        from tkperf.report import qos, steady
        return {"tkperf.durations": durations, "tkperf.fio.intervals": intervals, "tkperf.fio.output": output,
                "tkperf.kit.composite": composite, "tkperf.pts.hdd.cells": hdd_cells,
                "tkperf.pts.hdd.report": hdd_report, "tkperf.pts.matrix.report": matrix_report,
                "tkperf.pts.sweep.plan": sweep_plan, "tkperf.render.blocks": blocks, "tkperf.report.qos": qos,
                "tkperf.report.steady": steady}[dotted]
