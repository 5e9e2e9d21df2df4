"""tkperf's PTS layer: the machinery the built-in test types share.

The SNIA PTS tests tkperf ships have more in common than a plug-in
needs: the block size x R/W mix matrix of IOPS and LAT (:mod:`.matrix`),
the thread count x queue depth sweep of DIRTH, CBW and the real-world
DIRTH (:mod:`.sweep`), the HDD round tests' cells (:mod:`.hdd`), the
consistency stream of the consistency test, XSR and CBW with its latency
logs (:mod:`.stream`), the JEDEC enterprise workload (:mod:`.jedec`),
WSAT's total-GB-written limit (:mod:`.writelimit`) and where back-to-back
sequential workloads start (:mod:`.placement`).  Each concept is one
folder or module holding both its sides: what it plans and runs, and what
its report says.

This module is what the built-in types import beside :mod:`tkperf.api`:
the names of those concepts, and the building blocks of tkperf's reports
and loop shapes the built-ins use beyond the plug-in contract (more
report blocks and shared sections, the result model's stored workload
names, fio's logs, the capture files of ``tkperf capture``).

Stability: this layer follows tkperf's releases, not
:data:`tkperf.api.API_VERSION`.  A name here may change or go in any
release, without notice; a plug-in may use it at its own risk
(``docs/extending.rst``, "The PTS layer").  What a plug-in can rely
on is :mod:`tkperf.api`.
"""
from __future__ import annotations

from tkperf.durations import (
    duration,
)
from tkperf.errors import (
    OutputError,
    ResultFileError,
    TargetError,
    TkperfError,
)
from tkperf.fio.logs import (
    log_directory,
    log_files,
    parse_log,
)
from tkperf.kit.base import started_from_purge
from tkperf.kit.composite import (
    RoundsThenCapture,
    capture_round,
    steady_rounds,
)
from tkperf.kit.context import (
    PlanLike,
    RunContext,
)
from tkperf.kit.longrounds import DEFINITION as POINT_DEFINITION
from tkperf.kit.longrounds import (
    FILLS,
    MIN_FILLS,
    MIN_WRITTEN,
    POINT_S_PARAM,
    FillFloor,
    floor_bytes,
    floor_params,
    header_fields,
    last_minute,
    point_params,
    point_seconds,
    point_words,
    round_deviation,
    round_option,
    split_round,
)
from tkperf.kit.options import (
    MAX_NUMJOBS,
    MAX_RUNTIME,
    check_depths,
    format_auto_duration,
    format_depths,
    format_mixes,
    nonempty,
    parse_auto_duration,
    parse_depths,
    parse_mixes,
)
from tkperf.kit.precondition import SLOWEST_PLAUSIBLE_BPS
from tkperf.kit.progress import progress_of
from tkperf.kit.shapes import (
    FIO_GAP_S,
    RESPONSE_TIME_COLUMNS,
    UNHELD,
    Estimate,
    Shape,
    duration_rough,
    record_round,
)
from tkperf.model import histogram, stored
from tkperf.model.files import open_to_read
from tkperf.model.names import (
    WSAT_SERIES,
    hdd_cell,
    hdd_zone,
    iops_matrix_params,
    iops_workload,
    tp_workload,
    wsat_workload,
)
from tkperf.model.pts import enterprise_only
from tkperf.model.results import (
    PERCENTILES,
    gb,
    mb,
)
from tkperf.model.series import Series as DataSeries
from tkperf.pts.hdd.cells import (
    HDD_SUMMARY_RANK,
    hdd_cell_jobs,
    hdd_check_cells,
    hdd_repeat_plan,
    hdd_tracked_cells,
    hdd_window_cells,
    side_label,
    side_word,
)
from tkperf.pts.hdd.report import (
    NO_PREPARATION,
    figures_blocks,
    hdd_blocks,
    hdd_comparison,
    hdd_header,
    repeat_blocks,
    repeat_source,
)
from tkperf.pts.jedec import (
    JEDEC_BSSPLIT,
    JEDEC_LARGEST,
    JEDEC_ZONED,
    jedec_job,
)
from tkperf.pts.matrix.plan import (
    judge_all,
    matrix_jobs,
    parse_also,
    tracking_cell,
    tracking_figure,
    variable_verdicts,
)
from tkperf.pts.matrix.report import (
    cell_average,
    first_test,
    matrix_cells,
    matrix_convergence,
    matrix_grid,
    matrix_header,
    window_workloads,
)
from tkperf.pts.placement import (
    advance,
    continuing,
    place,
)
from tkperf.pts.rtcapture import (
    CAPTURE_S,
    CAPTURE_WORKLOAD,
    capture_deviation,
    capture_job,
    capture_qos_blocks,
    parse_capture,
    stored_seconds,
)
from tkperf.pts.stream.phases import COLUMNS as INTERVAL_COLUMNS
from tkperf.pts.stream.phases import MAX_COLUMNS as LAT_MAX_COLUMNS
from tkperf.pts.stream.phases import MAX_SERIES as LAT_MAX_SERIES
from tkperf.pts.stream.phases import SERIES as INTERVAL_SERIES
from tkperf.pts.stream.phases import (
    ConsistencyStream,
    log_msec,
    phase_rows,
)
from tkperf.pts.stream.phases import Phase as StreamPhase
from tkperf.pts.sweep.header import stimulus_words as sweep_stimulus_words
from tkperf.pts.sweep.header import structure as sweep_structure
from tkperf.pts.sweep.header import sweep_header
from tkperf.pts.sweep.plan import (
    SweepPts,
    SweepTest,
    SweepView,
    sweep_options,
    sweep_plan,
)
from tkperf.pts.sweep.points import PREWRITE as SWEEP_PREWRITE
from tkperf.pts.sweep.points import Point as SweepPoint
from tkperf.pts.sweep.report import compare_section as sweep_compare_section
from tkperf.pts.sweep.report import report_section as sweep_report_section
from tkperf.pts.sweep.settings import (
    SweepSettings,
    captures_of,
)
from tkperf.pts.sweep.structure import PTS20 as SWEEP_PTS20
from tkperf.pts.writelimit import (
    parse_tgbw,
    tgbw_bytes,
)
from tkperf.render.blocks import (
    BarsChart,
    Chart,
    CurvesChart,
    Grid,
    Header,
    HeatmapChart,
    LinesChart,
    Panel,
    Series,
)
from tkperf.report.context import (
    chart_name,
    grid_table,
)
from tkperf.report.header import (
    open_test,
    round_fields,
    snia_header,
    test_sections,
)
from tkperf.report.qos import (
    compare_blocks,
    qos_blocks,
)
from tkperf.report.steady import (
    Convergence,
    per_round,
    steady_sections,
    steady_state,
    window_source,
)
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
from tkperf.rwsw.iolog import ALIGN as IOLOG_ALIGN
from tkperf.rwsw.iolog import actions as iolog_actions
from tkperf.rwsw.iolog import check_readable as check_iolog
from tkperf.rwsw.iolog import (
    iolog_path,
    map_iolog,
)
from tkperf.rwsw.iolog import place as iolog_place
from tkperf.rwsw.iolog import scan as scan_iolog
from tkperf.rwsw.model import Capture
from tkperf.rwsw.model import Latency as CaptureLatency
from tkperf.rwsw.model import Seen as CaptureSeen
from tkperf.rwsw.model import Step as CaptureStep
from tkperf.rwsw.model import Stream as CaptureStream
from tkperf.rwsw.model import coverage as stream_coverage
from tkperf.rwsw.model import dominant as dominant_streams
from tkperf.rwsw.model import load as load_capture
from tkperf.rwsw.model import size_text as transfer_size_text
from tkperf.rwsw.replaytrace import Recording as TraceRecording
from tkperf.rwsw.replaytrace import Traced as TracedRun
from tkperf.rwsw.replaytrace import traceable
from tkperf.rwsw.tracing import DeviceFacts as TraceDevice

__all__ = [
    # the test-type interface beyond the contract: OIO rules, run contexts
    "started_from_purge", "PlanLike", "RunContext",
    # more limits, value parsers and formatters; errors
    "nonempty", "parse_depths", "check_depths", "format_depths", "format_mixes", "MAX_RUNTIME", "parse_mixes",
    "parse_auto_duration", "format_auto_duration",
    "duration", "OutputError", "ResultFileError", "TargetError", "open_to_read",
    # what runs: placement, shapes' parts, DIRTH's steady state then sweep, long rounds, fio's logs
    "enterprise_only",
    "advance", "continuing", "place", "duration_rough", "Estimate", "FIO_GAP_S", "record_round", "Shape",
    "steady_rounds", "RoundsThenCapture", "capture_round",
    "header_fields", "MIN_WRITTEN", "MIN_FILLS", "FILLS", "FillFloor", "floor_bytes", "floor_params",
    "round_deviation", "round_option", "UNHELD", "last_minute", "point_params", "point_seconds", "point_words",
    "POINT_DEFINITION", "POINT_S_PARAM",
    "split_round",
    "SLOWEST_PLAUSIBLE_BPS", "MAX_NUMJOBS", "progress_of", "log_directory",
    "log_files", "parse_log",
    # the result model: units, percentiles, series; stored workload names
    "gb", "mb", "PERCENTILES", "DataSeries", "hdd_cell", "hdd_zone", "iops_matrix_params", "iops_workload",
    "tp_workload", "WSAT_SERIES", "wsat_workload",
    # more report blocks and chart parts
    "BarsChart", "Chart", "CurvesChart", "Grid", "Header",
    "HeatmapChart", "LinesChart", "Panel", "Series",
    # the sections and words the built-ins' reports share
    "chart_name", "grid_table", "open_test", "test_sections", "round_fields", "snia_header", "Convergence",
    "per_round", "steady_sections", "steady_state",
    "window_source", "compare_blocks", "qos_blocks", "fmt",
    "metric_display", "NA", "oio", "plural", "shown_unit", "test_title", "tracking_label", "verdict",
    # namespaces
    "histogram", "stored",
    # the block size x R/W mix matrix (IOPS, LAT)
    "judge_all", "matrix_jobs", "parse_also", "tracking_cell", "tracking_figure", "variable_verdicts", "cell_average",
    "first_test", "matrix_cells", "matrix_convergence", "matrix_grid", "matrix_header",
    "window_workloads",
    # the response-time capture after LAT and WSAT (the PTS 2.0 implementation's)
    "CAPTURE_S", "CAPTURE_WORKLOAD", "RESPONSE_TIME_COLUMNS", "capture_deviation", "capture_job", "capture_qos_blocks",
    "parse_capture",
    "stored_seconds",
    # the total-GB-written limit of a write saturation stream
    "parse_tgbw", "tgbw_bytes",
    # the HDD round tests: their cells, and what their reports say in common
    "HDD_SUMMARY_RANK", "hdd_cell_jobs", "hdd_check_cells", "hdd_repeat_plan",
    "hdd_tracked_cells", "hdd_window_cells", "side_label", "side_word", "NO_PREPARATION",
    "figures_blocks", "hdd_blocks", "hdd_comparison", "hdd_header", "repeat_blocks", "repeat_source",
    # the consistency stream, shared by the recovery tests (XSR, CBW), and its time axis
    "ConsistencyStream", "INTERVAL_COLUMNS", "INTERVAL_SERIES", "LAT_MAX_COLUMNS", "LAT_MAX_SERIES", "log_msec",
    "phase_rows", "StreamPhase", "clock",
    # the JEDEC enterprise workload (JESD219): the consistency test's jedec workload and CBW
    "JEDEC_BSSPLIT", "JEDEC_LARGEST", "JEDEC_ZONED", "jedec_job",
    # the TC x QD sweep (DIRTH, CBW, rwsw-dirth): its plan, points and settings, and what its reports say
    "SweepTest", "SweepPts", "SweepView", "SweepSettings", "captures_of", "sweep_options", "sweep_plan",
    "SweepPoint", "SWEEP_PREWRITE", "SWEEP_PTS20", "sweep_report_section", "sweep_compare_section",
    "sweep_header", "sweep_stimulus_words", "sweep_structure",
    # capture files (tkperf capture): the capture, its steps and IO streams, and its iolog
    "Capture", "CaptureStep", "CaptureStream", "dominant_streams", "load_capture", "transfer_size_text",
    "CaptureSeen", "CaptureLatency", "stream_coverage",
    "IOLOG_ALIGN", "check_iolog", "iolog_actions", "iolog_path", "iolog_place", "map_iolog", "scan_iolog",
    # a replay recorded at the capture's block tracepoints and summed as the capture sums a step
    "TraceRecording", "TracedRun", "TraceDevice", "traceable", "TkperfError",
]
