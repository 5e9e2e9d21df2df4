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
names, fio's logs), each under the name it has in its home module.  A
name that is alike in two homes (a sweep's ``report_section``, a
stream's ``Phase``) is imported from its home in this package
(:mod:`tkperf.pts.sweep.report`, :mod:`tkperf.pts.stream.phases`); the
capture files of ``tkperf capture``, which only the real-world tests
read, are :mod:`tkperf.rwsw`'s.  The names this module exported under
names of its own until tkperf 0.1 are still served, with a
``DeprecationWarning`` naming their home, until tkperf 0.2.0.

Stability: this layer follows tkperf's releases, not
:data:`tkperf.api.API_VERSION`.  A name here may change or go in any
release, without notice; a plug-in may use it at its own risk
(``docs/extending.rst``, "The PTS layer").  What a plug-in can rely
on is :mod:`tkperf.api`.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

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
from tkperf.kit.longrounds import (
    FILLS,
    MIN_FILLS,
    POINT_DEFINITION,
    POINT_S_PARAM,
    FillFloor,
    floor_bytes,
    floor_params,
    header_fields,
    last_minute,
    point_params,
    point_seconds,
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
from tkperf.pts.stream.phases import (
    ConsistencyStream,
    log_msec,
    phase_rows,
)
from tkperf.pts.sweep.header import sweep_header
from tkperf.pts.sweep.plan import (
    SweepPts,
    SweepTest,
    SweepView,
    sweep_options,
    sweep_plan,
)
from tkperf.pts.sweep.settings import (
    SweepSettings,
    captures_of,
)
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

__all__ = [
    # the test-type interface beyond the contract: OIO rules, run contexts
    "started_from_purge", "PlanLike", "RunContext",
    # more limits, value parsers and formatters; errors
    "nonempty", "parse_depths", "check_depths", "format_depths", "format_mixes", "MAX_RUNTIME", "parse_mixes",
    "parse_auto_duration", "format_auto_duration",
    "duration", "OutputError", "ResultFileError", "TargetError", "TkperfError", "open_to_read",
    # what runs: placement, shapes' parts, DIRTH's steady state then sweep, long rounds, fio's logs
    "enterprise_only",
    "advance", "continuing", "place", "duration_rough", "Estimate", "FIO_GAP_S", "record_round", "Shape",
    "steady_rounds", "RoundsThenCapture", "capture_round",
    "header_fields", "MIN_FILLS", "FILLS", "FillFloor", "floor_bytes", "floor_params",
    "round_deviation", "round_option", "UNHELD", "last_minute", "point_params", "point_seconds",
    "POINT_DEFINITION", "POINT_S_PARAM", "split_round",
    "SLOWEST_PLAUSIBLE_BPS", "MAX_NUMJOBS", "progress_of", "log_directory", "log_files", "parse_log",
    # the result model: units, percentiles; stored workload names
    "gb", "mb", "PERCENTILES", "hdd_cell", "hdd_zone", "iops_matrix_params", "iops_workload",
    "tp_workload", "WSAT_SERIES", "wsat_workload",
    # more report blocks and chart parts
    "BarsChart", "Chart", "CurvesChart", "Grid", "Header", "HeatmapChart", "LinesChart", "Panel", "Series",
    # the sections and words the built-ins' reports share
    "chart_name", "grid_table", "open_test", "test_sections", "round_fields", "snia_header", "Convergence",
    "per_round", "steady_sections", "steady_state",
    "window_source", "compare_blocks", "qos_blocks", "fmt",
    "metric_display", "NA", "oio", "plural", "shown_unit", "test_title", "tracking_label", "verdict",
    # namespaces
    "histogram", "stored",
    # the block size x R/W mix matrix (IOPS, LAT)
    "judge_all", "matrix_jobs", "parse_also", "tracking_cell", "tracking_figure", "cell_average",
    "first_test", "matrix_cells", "matrix_convergence", "matrix_grid", "matrix_header", "window_workloads",
    # the response-time capture after LAT and WSAT (the PTS 2.0 implementation's)
    "CAPTURE_S", "CAPTURE_WORKLOAD", "RESPONSE_TIME_COLUMNS", "capture_deviation", "capture_job", "capture_qos_blocks",
    "parse_capture", "stored_seconds",
    # the total-GB-written limit of a write saturation stream
    "parse_tgbw", "tgbw_bytes",
    # the HDD round tests: their cells, and what their reports say in common
    "HDD_SUMMARY_RANK", "hdd_cell_jobs", "hdd_check_cells", "hdd_repeat_plan",
    "hdd_tracked_cells", "hdd_window_cells", "side_label", "side_word", "NO_PREPARATION",
    "figures_blocks", "hdd_blocks", "hdd_comparison", "hdd_header", "repeat_source",
    # the consistency stream, shared by the recovery tests (XSR, CBW), and its time axis
    # (its columns, series and phases: tkperf.pts.stream.phases)
    "ConsistencyStream", "log_msec", "phase_rows", "clock",
    # the JEDEC enterprise workload (JESD219): the consistency test's jedec workload and CBW
    "JEDEC_BSSPLIT", "JEDEC_LARGEST", "JEDEC_ZONED", "jedec_job",
    # the TC x QD sweep (DIRTH, CBW, rwsw-dirth): its plan and settings, and its header
    # (its points, structures and sections: tkperf.pts.sweep.points, .structure, .report)
    "SweepTest", "SweepPts", "SweepView", "SweepSettings", "captures_of", "sweep_options", "sweep_plan",
    "sweep_header",
]

#: The release after which the names below are no longer served here.
_RENAMED_END = "tkperf 0.2.0"
#: Names this module exported under a name of its own until tkperf 0.1
#: (to keep apart names that are alike in their homes), which built-in
#: types imported: each is its home's name, imported from its home.
_RENAMED = {
    "DataSeries": "tkperf.model.series.Series",
    "StreamPhase": "tkperf.pts.stream.phases.Phase",
    "INTERVAL_COLUMNS": "tkperf.pts.stream.phases.COLUMNS",
    "INTERVAL_SERIES": "tkperf.pts.stream.phases.SERIES",
    "LAT_MAX_COLUMNS": "tkperf.pts.stream.phases.MAX_COLUMNS",
    "LAT_MAX_SERIES": "tkperf.pts.stream.phases.MAX_SERIES",
    "sweep_stimulus_words": "tkperf.pts.sweep.header.stimulus_words",
    "sweep_structure": "tkperf.pts.sweep.header.structure",
    "SWEEP_PREWRITE": "tkperf.pts.sweep.points.PREWRITE",
    "SweepPoint": "tkperf.pts.sweep.points.Point",
    "sweep_compare_section": "tkperf.pts.sweep.report.compare_section",
    "sweep_report_section": "tkperf.pts.sweep.report.report_section",
    "SWEEP_PTS20": "tkperf.pts.sweep.structure.PTS20",
    "Capture": "tkperf.rwsw.model.Capture",
    "CaptureStep": "tkperf.rwsw.model.Step",
    "CaptureStream": "tkperf.rwsw.model.Stream",
    "dominant_streams": "tkperf.rwsw.model.dominant",
    "load_capture": "tkperf.rwsw.model.load",
    "transfer_size_text": "tkperf.rwsw.model.size_text",
    "IOLOG_ALIGN": "tkperf.rwsw.iolog.ALIGN",
    "check_iolog": "tkperf.rwsw.iolog.check_readable",
    "iolog_path": "tkperf.rwsw.iolog.iolog_path",
    "iolog_place": "tkperf.rwsw.iolog.place",
    "scan_iolog": "tkperf.rwsw.iolog.scan",
    "TraceRecording": "tkperf.rwsw.replaytrace.Recording",
    "TracedRun": "tkperf.rwsw.replaytrace.Traced",
    "traceable": "tkperf.rwsw.replaytrace.traceable",
    "TraceDevice": "tkperf.rwsw.tracing.DeviceFacts",
}

if not TYPE_CHECKING:  # a type checker sees the names above only
    def __getattr__(name: str) -> object:
        """A name this module no longer exports: served from its home, with a
        warning naming it (an attribute Python's import machinery asks for,
        such as ``__path__``, is never one)."""
        where = _RENAMED.get(name) if not name.startswith("__") else None
        if where is None:
            raise AttributeError(f"module 'tkperf.pts' has no attribute {name!r}")
        warnings.warn(f"tkperf.pts.{name} is {where} now; tkperf.pts stops serving it under its "
                      f"former name with {_RENAMED_END}", DeprecationWarning, stacklevel=2)
        return former_home(where)


def former_home(where: str) -> object:
    """The object named by ``where`` (a dotted path of :data:`_RENAMED`),
    from modules imported here by import statements."""
    from tkperf.model import series
    from tkperf.pts.stream import phases
    from tkperf.pts.sweep import header, points, report, structure
    from tkperf.rwsw import iolog, model, replaytrace, tracing
    module, _, attr = where.rpartition(".")
    homes = {"tkperf.model.series": series, "tkperf.pts.stream.phases": phases, "tkperf.pts.sweep.header": header,
             "tkperf.pts.sweep.points": points, "tkperf.pts.sweep.report": report,
             "tkperf.pts.sweep.structure": structure, "tkperf.rwsw.iolog": iolog, "tkperf.rwsw.model": model,
             "tkperf.rwsw.replaytrace": replaytrace, "tkperf.rwsw.tracing": tracing}
    return getattr(homes[module], attr)
