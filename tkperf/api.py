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

from tkperf.durations import duration, micro_unit
from tkperf.errors import OutputError, TargetError, UsageError
from tkperf.fio.intervals import Cut, IntervalCutter, report_time
from tkperf.fio.jobs import FioJob
from tkperf.fio.logs import log_directory, log_files, parse_log
from tkperf.fio.output import cumulative_write

# the test-type interface (API 3: the type, its PTS rules, its view)
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
    started_from_purge,
    stored_values,
)
from tkperf.kit.composite import (
    SWEEP_ROUND,
    WDPC_SERIES,
    WDPC_STOP,
    SteadyThenSweep,
    SweepRounds,
    capture_round,
    steady_rounds,
    sweep_round,
    wdpc_verdict,
)
from tkperf.kit.context import PlanLike, RunContext
from tkperf.kit.hddcells import (
    HDD_SUMMARY_RANK,
    direction_metric,
    hdd_cell_jobs,
    hdd_check_cells,
    hdd_repeat_plan,
    hdd_tracked_cells,
    hdd_window_cells,
    side_label,
    side_word,
)
from tkperf.kit.jedec import JEDEC_BSSPLIT, JEDEC_LARGEST, JEDEC_ZONED, jedec_job
from tkperf.kit.longrounds import (
    FILLS,
    MIN_FILLS,
    MIN_WRITTEN,
    FillFloor,
    floor_bytes,
    floor_params,
    header_fields,
    round_deviation,
    round_option,
)
from tkperf.kit.matrix import judge_all, matrix_jobs, parse_also, tracking_cell, tracking_figure, variable_verdicts

# options every test shares, value parsers and their formatters
from tkperf.kit.options import (
    MAX_IODEPTH,
    MAX_NUMJOBS,
    MAX_RUNTIME,
    RunOptions,
    check_depths,
    format_block_sizes,
    format_depths,
    format_mixes,
    nonempty,
    parse_block_sizes,
    parse_depths,
    parse_duration,
    parse_mix,
    parse_mixes,
    parse_size,
)

# what runs: loop shapes, precondition, fio jobs, fio's logs
from tkperf.kit.phasestream import COLUMNS as INTERVAL_COLUMNS
from tkperf.kit.phasestream import MAX_COLUMNS as LAT_MAX_COLUMNS
from tkperf.kit.phasestream import MAX_SERIES as LAT_MAX_SERIES
from tkperf.kit.phasestream import SERIES as INTERVAL_SERIES
from tkperf.kit.phasestream import ConsistencyStream, log_msec, phase_rows
from tkperf.kit.phasestream import Phase as StreamPhase
from tkperf.kit.placement import advance, place
from tkperf.kit.policy import Steady
from tkperf.kit.precondition import SLOWEST_PLAUSIBLE_BPS
from tkperf.kit.progress import progress_of
from tkperf.kit.settings import settings_from
from tkperf.kit.shapes import (
    FIO_GAP_S,
    UNHELD,
    Estimate,
    Phase,
    Phases,
    Rounds,
    Shape,
    Stream,
    Sweep,
    duration_rough,
    record_round,
)
from tkperf.kit.steps import Headline, Steps

# the TC x QD sweep (DIRTH, CBW, rwsw-dirth): its plan, points and settings
from tkperf.kit.sweep import SweepPts, SweepTest, SweepView, sweep_options, sweep_plan, sweep_points
from tkperf.kit.sweeppoints import PREWRITE as SWEEP_PREWRITE
from tkperf.kit.sweeppoints import Point as SweepPoint
from tkperf.kit.sweepsettings import SweepSettings, captures_of
from tkperf.kit.sweepstructure import PTS20 as SWEEP_PTS20
from tkperf.kit.writelimit import parse_tgbw, tgbw_bytes

# modules a type reads as a namespace
from tkperf.model import histogram
from tkperf.model.names import (
    WSAT_SERIES,
    hdd_cell,
    hdd_zone,
    iops_matrix_params,
    iops_workload,
    tp_workload,
    wsat_workload,
)

# the result model, to read; stored workload names; steady state
from tkperf.model.results import PERCENTILES, IoStats, Round, RunResult, TestRun, Workload, format_bs, gb, mb, mix_label
from tkperf.model.series import Series as DataSeries
from tkperf.model.steadystate import SteadyState, evaluate

# report blocks and chart parts
from tkperf.render.blocks import (
    Admonition,
    BarsChart,
    Chart,
    ConfidenceChart,
    ConvergenceChart,
    Curve,
    CurvesChart,
    Grid,
    Header,
    Heading,
    HeatmapChart,
    HistogramChart,
    LinesChart,
    Literal,
    Panel,
    Paragraph,
    Rubric,
    Series,
    Table,
    Title,
    WindowChart,
    XYChart,
    charts,
    table,
)

# the report's contexts, the generic view and the sections the built-ins share
from tkperf.report.context import CompareContext, ReportContext, chart_name, grid_table
from tkperf.report.generic import GenericView, compare_section, headline_table, report_section, workload_table
from tkperf.report.hdd import (
    NO_PREPARATION,
    REPEATABILITY,
    figures_blocks,
    hdd_header,
    repeat_blocks,
    repeat_fields,
    repeat_source,
)
from tkperf.report.header import open_test, round_fields, snia_header
from tkperf.report.matrix import (
    cell_average,
    first_test,
    matrix_cells,
    matrix_convergence,
    matrix_grid,
    matrix_header,
    tracking_mix,
    window_workloads,
)
from tkperf.report.qos import compare_blocks, confidence_curve, histogram_curve, qos_blocks, supported_marks
from tkperf.report.steady import (
    Convergence,
    convergence_blocks,
    named_window_blocks,
    per_round,
    steady_sections,
    steady_state,
    window_blocks,
    window_source,
)
from tkperf.report.sweep import compare_section as sweep_compare_section
from tkperf.report.sweep import report_section as sweep_report_section
from tkperf.report.sweepheader import stimulus_words as sweep_stimulus_words
from tkperf.report.sweepheader import structure as sweep_structure
from tkperf.report.sweepheader import sweep_header
from tkperf.report.words import (
    NA,
    clock,
    fmt,
    metric_display,
    oio,
    plural,
    shown_unit,
    test_title,
    tracking_label,
    verdict,
)

# capture files (tkperf capture): what a real-world test reads of them
from tkperf.rwsw.iolog import ALIGN as IOLOG_ALIGN  # noqa: E402
from tkperf.rwsw.iolog import check_readable as check_iolog  # noqa: E402
from tkperf.rwsw.iolog import iolog_path, map_iolog  # noqa: E402
from tkperf.rwsw.iolog import scan as scan_iolog  # noqa: E402
from tkperf.rwsw.model import Capture  # noqa: E402
from tkperf.rwsw.model import Step as CaptureStep  # noqa: E402
from tkperf.rwsw.model import Stream as CaptureStream  # noqa: E402
from tkperf.rwsw.model import dominant as dominant_streams  # noqa: E402
from tkperf.rwsw.model import load as load_capture  # noqa: E402
from tkperf.rwsw.model import size_text as transfer_size_text  # noqa: E402

__all__ = [
    # the test-type interface (API 3: the type, its PTS rules, its view)
    "API_VERSION", "Blocks", "Figure", "in_range", "OIO_FIXED", "OIO_OPERATOR", "OIO_SWEEP", "Option",
    "Options", "OptionSet", "parse_count", "Plan", "PtsRules", "started_from_purge", "stored_values",
    "SummaryValue", "TestType", "Tracking", "View", "Steady", "settings_from", "PlanLike", "RunContext",
    "Headline", "Steps",
    # options every test shares, value parsers and their formatters
    "format_block_sizes", "nonempty", "parse_depths", "check_depths",
    "format_depths", "format_mixes", "MAX_IODEPTH", "MAX_NUMJOBS", "MAX_RUNTIME", "parse_block_sizes",
    "parse_duration", "parse_mix", "parse_mixes", "parse_size", "RunOptions", "duration", "micro_unit",
    "OutputError", "TargetError", "UsageError",
    # what runs: loop shapes, precondition, fio jobs, fio's logs
    "advance", "place",
    "duration_rough", "Estimate", "FIO_GAP_S", "Phase", "Phases", "record_round", "Rounds", "UNHELD",
    "Shape", "Stream", "Sweep", "capture_round", "steady_rounds", "SteadyThenSweep", "SWEEP_ROUND",
    "sweep_round", "SweepRounds", "WDPC_SERIES", "WDPC_STOP", "wdpc_verdict", "header_fields", "MIN_WRITTEN",
    "MIN_FILLS", "FILLS", "FillFloor", "floor_bytes", "floor_params", "round_deviation", "round_option",
    "SLOWEST_PLAUSIBLE_BPS", "progress_of", "FioJob",
    "Cut", "IntervalCutter", "report_time", "log_directory", "log_files", "parse_log", "cumulative_write",
    # the result model, to read; stored workload names; steady state
    "format_bs", "gb", "IoStats", "mb", "mix_label", "PERCENTILES", "Round", "RunResult", "TestRun",
    "Workload", "DataSeries", "evaluate", "SteadyState", "hdd_cell", "hdd_zone", "iops_matrix_params",
    "iops_workload", "tp_workload", "WSAT_SERIES", "wsat_workload",
    # report blocks and chart parts
    "Admonition", "BarsChart", "Chart", "charts", "ConfidenceChart", "ConvergenceChart", "Curve",
    "CurvesChart", "Grid", "Header", "Heading", "HeatmapChart", "HistogramChart", "LinesChart", "Literal",
    "Panel", "Paragraph", "Rubric", "Series", "Table", "table", "Title", "WindowChart", "XYChart",
    # the report's contexts, the generic view and the sections the built-ins share
    "chart_name", "CompareContext", "grid_table", "ReportContext", "compare_section", "GenericView",
    "headline_table", "report_section", "workload_table", "open_test", "round_fields", "snia_header",
    "Convergence", "convergence_blocks", "named_window_blocks", "per_round", "steady_sections",
    "steady_state", "window_blocks", "window_source", "compare_blocks", "confidence_curve",
    "histogram_curve", "qos_blocks", "supported_marks", "fmt", "metric_display", "NA", "oio", "plural",
    "shown_unit", "test_title", "tracking_label", "verdict",
    # namespaces
    "histogram",
    # the PTS machinery the built-ins share: the block size x R/W mix matrix
    "judge_all", "matrix_jobs", "parse_also", "tracking_cell", "tracking_figure", "variable_verdicts",
    "cell_average", "first_test", "matrix_cells", "matrix_convergence", "matrix_grid", "matrix_header",
    "tracking_mix", "window_workloads",
    # the total-GB-written limit of a write saturation stream
    "parse_tgbw", "tgbw_bytes",
    # the HDD round tests: their cells, and what their reports say in common
    "HDD_SUMMARY_RANK", "direction_metric", "hdd_cell_jobs", "hdd_check_cells", "hdd_repeat_plan",
    "hdd_tracked_cells", "hdd_window_cells", "side_label", "side_word", "NO_PREPARATION", "REPEATABILITY",
    "figures_blocks", "hdd_header", "repeat_blocks", "repeat_fields", "repeat_source",
    # the consistency stream, shared by the recovery tests (XSR, CBW), and its time axis
    "ConsistencyStream", "INTERVAL_COLUMNS", "INTERVAL_SERIES", "LAT_MAX_COLUMNS", "LAT_MAX_SERIES",
    "log_msec", "phase_rows", "StreamPhase", "clock",
    # the JEDEC enterprise workload (JESD219): the consistency test's jedec workload and CBW
    "JEDEC_BSSPLIT", "JEDEC_LARGEST", "JEDEC_ZONED", "jedec_job",
    # the TC x QD sweep (DIRTH, CBW, rwsw-dirth): its plan, points and settings, and what its reports say
    "SweepTest", "SweepPts", "SweepView", "SweepSettings", "captures_of", "sweep_options", "sweep_plan",
    "sweep_points", "SweepPoint", "SWEEP_PREWRITE", "SWEEP_PTS20", "sweep_report_section",
    "sweep_compare_section", "sweep_header", "sweep_stimulus_words", "sweep_structure",
    # capture files (tkperf capture): the capture, its steps and IO streams, and its iolog
    "Capture", "CaptureStep", "CaptureStream", "dominant_streams", "load_capture", "transfer_size_text",
    "IOLOG_ALIGN", "check_iolog", "iolog_path", "map_iolog", "scan_iolog",
]
