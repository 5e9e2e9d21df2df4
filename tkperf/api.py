"""tkperf's public API: the one module a test-type plug-in imports.

What a test type needs, and only that: the test-type interface and its
parts, the options every test shares with their value parsers, the fio
job and the loop shapes that run it, steady state, read access to the
results it stored, and the report blocks and generic sections it draws
its own section with.  Every other module of tkperf is internal and may
change in any release; the names below change only by the rule of
:data:`API_VERSION`, and ``docs/api-contract.txt`` records each with its
signature (a test fails when one changes and the record does not, and when
a recorded signature names a type the record does not hold: the names of
``_OPAQUE`` are recorded by name only, objects a plug-in passes on and
never reads)::

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
from typing import TYPE_CHECKING, Tuple

from tkperf.errors import TkperfError, UsageError
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
from tkperf.kit.context import PlanLike, RunContext

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
from tkperf.kit.shapes import Estimate, Phase, Phases, Rounds, Shape, Stream, Sweep
from tkperf.kit.steps import Headline, Steps

# the results, to read
from tkperf.model.pts import Revision
from tkperf.model.results import (
    DeviceInfo,
    Event,
    HealthSnapshot,
    HostInfo,
    IoStats,
    PurgeRecord,
    Round,
    RunResult,
    TestRun,
    WipcRecord,
    Workload,
    format_bs,
    mix_label,
)
from tkperf.model.segments import Layout
from tkperf.model.series import Series as DataSeries
from tkperf.model.steadystate import SteadyState, evaluate
from tkperf.model.stored import StoredValueError
from tkperf.model.stored import number as stored_number
from tkperf.model.stored import whole as stored_whole

# a type's report section: its blocks, its context, the generic sections
from tkperf.render.blocks import (
    Admonition,
    Block,
    Chart,
    Curve,
    Grid,
    Header,
    Heading,
    Literal,
    Paragraph,
    Rubric,
    Table,
    Title,
    XYChart,
    table,
)
from tkperf.report.generic import GenericView, compare_section, headline_table, report_section, workload_table

__all__ = [
    # the test-type interface and its parts
    "API_VERSION", "TestType", "Option", "OptionSet", "Options", "Plan", "Tracking", "Figure", "Blocks",
    "Steady", "PtsRules", "OIO_FIXED", "OIO_OPERATOR", "OIO_SWEEP", "View", "GenericView", "SummaryValue",
    "in_range", "parse_count", "stored_values", "settings_from",
    # options every test shares, value parsers and their formatters
    "RunOptions", "MAX_IODEPTH", "parse_size", "parse_duration", "parse_block_sizes",
    "format_block_sizes", "parse_mix", "UsageError", "TkperfError", "Revision", "Layout",
    # what runs
    "FioJob", "Shape", "Rounds", "Stream", "Sweep", "Phases", "Phase", "Steps", "Headline", "Estimate",
    "RunContext", "PlanLike",
    # the results, to read; steady state
    "RunResult", "TestRun", "Round", "Workload", "IoStats", "SteadyState", "evaluate", "format_bs", "mix_label",
    "DeviceInfo", "HostInfo", "Event", "HealthSnapshot", "PurgeRecord", "WipcRecord", "DataSeries",
    "stored_number", "stored_whole", "StoredValueError",
    # a type's report section
    "ReportContext", "CompareContext", "report_section", "compare_section", "headline_table", "workload_table",
    "Block", "Title", "Heading", "Rubric", "Paragraph", "Admonition", "Table", "table", "Header", "Literal",
    "Curve", "XYChart", "Chart", "Grid",
]

#: The names of the contract a plug-in only passes on, never reads: the
#: record names them and nothing of what they hold (a shape's context,
#: plan and estimate are the engine's; a chart and a grid go from a
#: context back into a section's blocks; a segment layout into the engine).
_OPAQUE = ("Estimate", "RunContext", "PlanLike", "Chart", "Grid", "Layout")

#: The release after which the names API 3.0 exported beyond ``__all__``
#: are no longer served here.
_FORMER_NAMES_END = "tkperf 0.2.0"
#: The names API 3.0 exported that the contract no longer holds, served
#: from their homes with a ``DeprecationWarning`` (:func:`__getattr__`).
_FORMER = frozenset("""
advance BarsChart Capture capture_round captures_of CaptureStep CaptureStream cell_average chart_name charts
check_depths check_iolog clock compare_blocks confidence_curve ConfidenceChart ConsistencyStream Convergence
convergence_blocks ConvergenceChart cumulative_write CurvesChart Cut direction_metric dominant_streams duration
duration_rough figures_blocks FIO_GAP_S first_test fmt format_depths format_mixes gb grid_table hdd_cell
hdd_cell_jobs hdd_check_cells hdd_header hdd_repeat_plan HDD_SUMMARY_RANK hdd_tracked_cells hdd_window_cells
hdd_zone header_fields HeatmapChart histogram histogram_curve HistogramChart INTERVAL_COLUMNS INTERVAL_SERIES
IntervalCutter IOLOG_ALIGN iolog_path iops_matrix_params iops_workload JEDEC_BSSPLIT jedec_job JEDEC_LARGEST
JEDEC_ZONED judge_all LAT_MAX_COLUMNS LAT_MAX_SERIES LinesChart load_capture log_directory log_files log_msec
map_iolog matrix_cells matrix_convergence matrix_grid matrix_header matrix_jobs MAX_NUMJOBS MAX_RUNTIME mb
metric_display micro_unit MIN_WRITTEN NA named_window_blocks NO_PREPARATION nonempty oio open_test OutputError
Panel parse_also parse_depths parse_log parse_mixes parse_tgbw per_round PERCENTILES phase_rows place plural
progress_of qos_blocks record_round repeat_blocks repeat_fields repeat_source REPEATABILITY report_time
round_deviation round_fields round_option scan_iolog Series shown_unit side_label side_word
SLOWEST_PLAUSIBLE_BPS snia_header started_from_purge steady_rounds steady_sections steady_state SteadyThenSweep
StreamPhase supported_marks sweep_compare_section sweep_header sweep_options sweep_plan sweep_points
SWEEP_PREWRITE SWEEP_PTS20 sweep_report_section SWEEP_ROUND sweep_round sweep_stimulus_words sweep_structure
SweepPoint SweepPts SweepRounds SweepSettings SweepTest SweepView TargetError test_title tgbw_bytes tp_workload
tracking_cell tracking_figure tracking_label tracking_mix transfer_size_text variable_verdicts verdict
WDPC_SERIES WDPC_STOP wdpc_verdict window_blocks window_source window_workloads WindowChart WSAT_SERIES
wsat_workload
""".split())
#: Those of them in neither :mod:`tkperf.pts` nor its former names, by the
#: module that holds them now.
_FORMER_ELSEWHERE = {
    "tkperf.durations": ("micro_unit",),
    "tkperf.kit.composite": ("SWEEP_ROUND", "WDPC_SERIES", "WDPC_STOP", "SteadyThenSweep", "SweepRounds",
                             "sweep_round", "wdpc_verdict"),
    "tkperf.kit.longrounds": ("MIN_WRITTEN",),
    "tkperf.fio.intervals": ("Cut", "IntervalCutter", "report_time"),
    "tkperf.fio.output": ("cumulative_write",),
    "tkperf.render.blocks": ("charts", "ConfidenceChart", "ConvergenceChart", "HistogramChart", "WindowChart"),
    "tkperf.report.steady": ("convergence_blocks", "named_window_blocks", "window_blocks"),
    "tkperf.report.qos": ("confidence_curve", "histogram_curve", "supported_marks"),
    "tkperf.pts.matrix.plan": ("variable_verdicts",),
    "tkperf.pts.matrix.report": ("tracking_mix",),
    "tkperf.pts.hdd.cells": ("direction_metric",),
    "tkperf.pts.hdd.report": ("REPEATABILITY", "repeat_blocks", "repeat_fields"),
    "tkperf.pts.sweep.plan": ("sweep_points",),
    "tkperf.rwsw.iolog": ("map_iolog",),
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
        from its home, with a warning naming it.  Any other name, such as
        the ``__path__`` Python's import machinery asks every ``from
        tkperf.api import ...`` for, is refused before anything is loaded."""
        if name in _FORMER_GONE:
            raise AttributeError(f"tkperf.api.{name} is gone since API 3.1; use {_FORMER_GONE[name]}")
        if name not in _FORMER:
            raise AttributeError(f"module 'tkperf.api' has no attribute {name!r}")
        value, where = _home(name)
        warnings.warn(f"tkperf.api.{name} is not part of the plug-in API since API 3.1; it is {where}; "
                      f"tkperf.api stops serving it with {_FORMER_NAMES_END}", DeprecationWarning, stacklevel=2)
        return value

    def _home(name: str) -> Tuple[object, str]:
        """(value, where it lives) of a former name: in :mod:`tkperf.pts`, in
        one of its modules under its own name, or elsewhere (internal to tkperf)."""
        from tkperf import pts
        if name in pts.__all__:
            return getattr(pts, name), f"tkperf.pts.{name} (tkperf's own PTS layer, no stability promise)"
        if name in pts._RENAMED:
            where = pts._RENAMED[name]
            return pts.former_home(where), f"{where} (internal to tkperf)"
        module = next(m for m, names in _FORMER_ELSEWHERE.items() if name in names)
        return getattr(_module(module), name), f"{module}.{name} (internal to tkperf)"

    def _module(dotted: str) -> object:
        """One of the modules of :data:`_FORMER_ELSEWHERE`, imported here
        (tkperf loads its own modules by import statements only)."""
        from tkperf import durations
        from tkperf.fio import intervals, output
        from tkperf.kit import composite, longrounds
        from tkperf.pts.hdd import cells as hdd_cells
        from tkperf.pts.hdd import report as hdd_report
        from tkperf.pts.matrix import plan as matrix_plan
        from tkperf.pts.matrix import report as matrix_report
        from tkperf.pts.sweep import plan as sweep_plan
        from tkperf.render import blocks
        from tkperf.report import qos, steady
        from tkperf.rwsw import iolog
        return {"tkperf.durations": durations, "tkperf.fio.intervals": intervals, "tkperf.fio.output": output,
                "tkperf.kit.composite": composite, "tkperf.kit.longrounds": longrounds,
                "tkperf.pts.hdd.cells": hdd_cells, "tkperf.pts.hdd.report": hdd_report,
                "tkperf.pts.matrix.plan": matrix_plan, "tkperf.pts.matrix.report": matrix_report,
                "tkperf.pts.sweep.plan": sweep_plan, "tkperf.render.blocks": blocks, "tkperf.report.qos": qos,
                "tkperf.report.steady": steady, "tkperf.rwsw.iolog": iolog}[dotted]
