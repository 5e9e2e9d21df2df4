"""The plug-in contract, recorded: every public name of :mod:`tkperf.api`
with its signature (a class's public members, a dataclass's fields, a
constant's value) in ``docs/api-contract.txt``.

A change to the contract (a name added or removed, a signature changed)
fails here until the record is written again with it, so that every such
change is a visible diff in review, and ``API_VERSION`` moves by the rule
of ``docs/extending.rst`` ("API versions"): MINOR for an addition, MAJOR
for a removal or a change of meaning.  To write the record again::

    python tests/unit/test_api_contract.py --write
"""
from __future__ import annotations

import dataclasses
import enum
import inspect
import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "api-contract.txt"
HOW = "python tests/unit/test_api_contract.py --write"
#: Every name tkperf.api exported at API 3.0.
API_30 = """
Admonition API_VERSION BarsChart Blocks Capture CaptureStep CaptureStream Chart CompareContext ConfidenceChart
ConsistencyStream Convergence ConvergenceChart Curve CurvesChart Cut DataSeries Estimate FIO_GAP_S Figure FioJob
GenericView Grid HDD_SUMMARY_RANK Header Heading Headline HeatmapChart HistogramChart INTERVAL_COLUMNS INTERVAL_SERIES
IOLOG_ALIGN IntervalCutter IoStats JEDEC_BSSPLIT JEDEC_LARGEST JEDEC_ZONED LAT_MAX_COLUMNS LAT_MAX_SERIES LinesChart
Literal MAX_IODEPTH MAX_NUMJOBS MAX_RUNTIME MIN_WRITTEN NA NO_PREPARATION OIO_FIXED OIO_OPERATOR OIO_SWEEP
OneFillFirst Option OptionSet Options OutputError PERCENTILES Panel Paragraph Phase Phases Plan PlanLike PtsRules
REPEATABILITY REVISED ReportContext Round Rounds Rubric RunContext RunOptions RunResult SLOWEST_PLAUSIBLE_BPS
SWEEP_PREWRITE SWEEP_PTS20 SWEEP_ROUND Series Shape Steady SteadyState SteadyThenSweep Steps Stream StreamPhase
SummaryValue Sweep SweepPoint SweepPts SweepRounds SweepSettings SweepTest SweepView Table TargetError TestRun
TestType Title Tracking UsageError View WDPC_SERIES WDPC_STOP WSAT_SERIES WindowChart Workload XYChart advance
capture_round captures_of cell_average chart_name charts check_depths check_iolog clock compare_blocks
compare_section confidence_curve convergence_blocks cumulative_write direction_metric dominant_streams
duration duration_rough evaluate figures_blocks first_test fmt format_block_sizes format_bs format_depths
format_mixes gb grid_table hdd_cell hdd_cell_jobs hdd_check_cells hdd_header hdd_repeat_plan hdd_tracked_cells
hdd_window_cells hdd_zone header_fields headline_table histogram histogram_curve in_range iolog_path
iops_matrix_params iops_workload jedec_job judge_all load_capture log_directory log_files log_msec map_iolog
matrix_cells matrix_convergence matrix_grid matrix_header matrix_jobs mb metric_display micro_unit mix_label
named_window_blocks nonempty oio open_test parse_also parse_block_sizes parse_count parse_depths parse_duration
parse_log parse_mix parse_mixes parse_size parse_tgbw per_round phase_rows place plural progress_of qos_blocks
record_round repeat_blocks repeat_fields repeat_source report_section report_time round_deviation round_fields
round_option scan_iolog settings_from shown_unit side_label side_word snia_header started_from_purge
steady_rounds steady_sections steady_state stored_values supported_marks sweep_compare_section sweep_header
sweep_options sweep_plan sweep_points sweep_report_section sweep_round sweep_stimulus_words sweep_structure
table test_title tgbw_bytes tp_workload tracking_cell tracking_figure tracking_label tracking_mix
transfer_size_text variable_verdicts verdict wdpc_verdict window_blocks window_source window_workloads
workload_table wsat_workload
""".split()
HEADER = ("# The plug-in contract: every public name of tkperf.api with its signature.\n"
          "# Written by `" + HOW + "`; a change here moves API_VERSION\n"
          "# (docs/extending.rst, \"API versions\").\n")


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _members(cls: type) -> List[str]:
    """A class's public members as the contract sees them: defined by the
    class or a base of tkperf's own (not object's or a library's)."""
    out = []
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(
        getattr(cls, "_fields", ()))
    seen = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("tkperf"):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen or name in fields:
                continue
            seen.add(name)
            if isinstance(value, (staticmethod, classmethod)):
                out.append(f"    {name}{_signature(value.__func__)}  [{type(value).__name__}]")
            elif isinstance(value, property):
                ann = inspect.signature(value.fget).return_annotation if value.fget else ""
                out.append(f"    {name}: {ann}  [property]")
            elif inspect.isfunction(value):
                out.append(f"    {name}{_signature(value)}")
            elif isinstance(value, enum.Enum):
                out.append(f"    {name} = {value.value!r}")
            else:
                ann = base.__dict__.get("__annotations__", {}).get(name, type(value).__name__)
                out.append(f"    {name}: {ann} = {value!r}" if _plain(value) else f"    {name}: {ann}")
    return sorted(out)


def _plain(value: Any) -> bool:
    return isinstance(value, (int, float, str, bool, tuple, type(None))) and len(repr(value)) < 100


def entry(name: str, obj: Any) -> List[str]:
    """The lines of one name."""
    if inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        kind = "dataclass" if dataclasses.is_dataclass(obj) else "enum" if issubclass(obj, enum.Enum) else "class"
        head = f"{kind} {name}({bases})" if bases else f"{kind} {name}"
        if name != obj.__name__:
            head += f"  [{obj.__name__}]"
        lines = [head]
        if hasattr(obj, "_fields"):  # a NamedTuple: its fields as written
            notes = obj.__dict__.get("__annotations__", {})
            lines += [f"    field {f}: {getattr(notes.get(f), '__forward_arg__', notes.get(f))}" for f in obj._fields]
        elif dataclasses.is_dataclass(obj):
            lines += [f"    field {f.name}: {f.type}" + ("" if f.default is dataclasses.MISSING
                                                        and f.default_factory is dataclasses.MISSING
                                                        else " = ..." if f.default is dataclasses.MISSING
                                                        else f" = {f.default!r}")
                      for f in dataclasses.fields(obj)]
        elif not issubclass(obj, enum.Enum) and not getattr(obj, "_is_protocol", False):
            lines.append(f"    __init__{_signature(obj)}")
        return lines + _members(obj)
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return [f"def {name}{_signature(obj)}"]
    if isinstance(obj, types.ModuleType):
        return [f"module {name}"]
    if _plain(obj):
        return [f"{name}: {type(obj).__name__} = {obj!r}"]
    if typing.get_origin(obj) is typing.Union:  # a type alias: its members by name
        return [f"{name} = Union[{', '.join(a.__name__ for a in typing.get_args(obj))}]"]
    return [f"{name}: {obj!r}"]  # a type alias and the like


def contract(module: types.ModuleType) -> str:
    """The record of ``module``'s public names (its ``__all__``), sorted; an
    opaque one (its ``_OPAQUE``) is its name alone: a plug-in passes it on
    and never reads it, so what it holds is not part of the contract."""
    out = [HEADER]
    opaque = getattr(module, "_OPAQUE", ())
    for name in sorted(module.__all__, key=str.lower):
        out += ([f"opaque {name}"] if name in opaque else entry(name, getattr(module, name))) + [""]
    return "\n".join(out)


def test_the_contract_is_recorded() -> None:
    from tkperf import api
    want = contract(api)
    got = RECORD.read_text(encoding="utf-8") if RECORD.exists() else ""
    assert got == want, (f"tkperf.api changed and {RECORD.relative_to(ROOT)} was not written with it: "
                         f"run `{HOW}`, review the diff, and move API_VERSION as docs/extending.rst says")


def test_extending_lists_every_name_of_the_contract() -> None:
    """docs/extending.rst's "What to import" names each name of tkperf.api
    (with a line on what it is for), and no other as part of it."""
    from tkperf import api
    text = (ROOT / "docs" / "extending.rst").read_text(encoding="utf-8")
    part = text[text.index("What to import\n"):text.index("The PTS layer: what the built-in types share")]
    named = set(re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", part))
    assert sorted(set(api.__all__) - named) == []


def test_former_names_are_served_with_a_warning() -> None:
    """Every name API 3.0 exported still imports from tkperf.api, the ones
    the contract no longer holds with a DeprecationWarning saying where they
    live now (tkperf.pts, or an internal module); an unknown name is an
    AttributeError as ever."""
    import warnings

    from tkperf import api, pts
    from tkperf.pts.sweep import report
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert api.sweep_report_section is report.report_section  # type: ignore[attr-defined]
        assert api.sweep_header is pts.sweep_header  # type: ignore[attr-defined]
    assert [w.category for w in seen] == [DeprecationWarning] * 2
    assert "tkperf.pts.sweep.report.report_section" in str(seen[0].message)
    assert "tkperf.pts.sweep_header" in str(seen[1].message)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        from tkperf.kit.composite import SteadyThenSweep
        assert api.SteadyThenSweep is SteadyThenSweep  # type: ignore[attr-defined]
    assert [w.category for w in seen] == [DeprecationWarning]
    assert "tkperf.kit.composite.SteadyThenSweep" in str(seen[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert all(hasattr(api, name) for name in set(API_30) - {"OneFillFirst", "REVISED"})
    for gone, instead in (("OneFillFirst", "FillFloor"), ("REVISED", "printed once")):  # API 3.1 replaced these
        with pytest.raises(AttributeError, match=instead):
            getattr(api, gone)
    with pytest.raises(AttributeError):
        api.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    # exactly API 3.0's names: none that tkperf.pts has and tkperf.api never had
    assert api._FORMER == set(API_30) - set(api.__all__) - {"OneFillFirst", "REVISED"}
    for never in ("TkperfError", "FillFloor", "test_sections", "stored", "CaptureSeen", "__path__"):
        if never not in api.__all__:
            with pytest.raises(AttributeError):
                getattr(api, never)


def test_every_type_a_recorded_signature_names_is_recorded() -> None:
    """The contract is closed: a type that a recorded signature, field,
    property or base names is itself recorded (or opaque), or Python's."""
    from apiclosure import unrecorded
    from tkperf import api
    assert unrecorded(api) == []


def test_an_unrecorded_type_in_a_recorded_signature_is_found(monkeypatch: Any) -> None:
    """Not vacuous: a synthetic contract whose function, field, property,
    base or alias names a type outside it fails the check, also when that
    type is imported for type checking only; recorded, it passes."""
    from apiclosure import unrecorded

    mod = types.ModuleType("tkperf.fake_api")
    mod.__file__ = str(ROOT / "tkperf" / "fake_api.py")  # not read: no TYPE_CHECKING import below
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    exec("from __future__ import annotations\n"
         "from dataclasses import dataclass\n"
         "from typing import Callable, Dict, Optional, Union\n"
         "class Hidden: pass\n"
         "class Shown: pass\n"
         "def plan(a: int, b: Optional[Hidden] = None) -> Shown: ...\n"
         "@dataclass\nclass Point:\n    x: Dict[str, Hidden]\n"
         "    @property\n    def other(self) -> Hidden: ...\n"
         "class Sub(Hidden): pass\n"
         "Alias = Union[Shown, Callable[[Hidden], int]]\n"
         "__all__ = ['plan', 'Point', 'Shown', 'Sub', 'Alias']\n", mod.__dict__)
    assert unrecorded(mod) == ["Alias: Hidden", "Point.__init__ x: Hidden", "Point.other return: Hidden",
                               "Point.x: Hidden", "Sub base: Hidden", "plan b: Hidden"]
    mod.__all__.append("Hidden")
    assert unrecorded(mod) == []
    mod._OPAQUE = ("Point",)  # an opaque name's insides are not the contract's
    mod.__all__.remove("Hidden")
    assert unrecorded(mod) == ["Alias: Hidden", "Sub base: Hidden", "plan b: Hidden"]


def test_importing_the_contract_loads_none_of_the_pts_layer() -> None:
    """``from tkperf.api import TestType`` (Python asks the module for
    ``__path__`` first) loads no module of tkperf.pts: a plug-in does not
    pay for the built-ins' layer."""
    code = ("import sys\nfrom tkperf.api import TestType, Rounds\nimport tkperf.api\n"
            "print(sorted(m for m in sys.modules if m.startswith('tkperf.pts')))")
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "[]", "")


def test_the_pts_layer_exports_names_under_their_own_names() -> None:
    """tkperf.pts re-exports each name under the name it has in its home;
    the names it exported under names of its own still import from it, with
    a DeprecationWarning naming their home."""
    import warnings

    from tkperf import pts
    from tkperf.pts.stream import phases
    renamed = []
    for name in pts.__all__:
        obj = getattr(pts, name)
        own = getattr(obj, "__name__", name) if callable(obj) or isinstance(obj, types.ModuleType) else name
        if own.rpartition(".")[2] != name:
            renamed.append(name)
    assert renamed == []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert pts.StreamPhase is phases.Phase  # type: ignore[attr-defined]
    assert [w.category for w in seen] == [DeprecationWarning]
    assert "tkperf.pts.stream.phases.Phase" in str(seen[0].message)
    with pytest.raises(AttributeError):
        pts.CaptureSeen  # type: ignore[attr-defined]  # noqa: B018  (used by no built-in: gone)


def test_the_record_sees_a_changed_signature(monkeypatch: Any) -> None:
    """Not vacuous: a parameter added, a name removed, a field's type
    changed each change the record."""
    def make(sig: str, extra: bool, field_type: str) -> types.ModuleType:
        mod = types.ModuleType("tkperf.fake")
        monkeypatch.setitem(sys.modules, mod.__name__, mod)  # where a dataclass looks its module up
        exec(f"from dataclasses import dataclass\n"
             f"def plan{sig}: pass\n"
             f"@dataclass\nclass Point:\n    x: {field_type}\n"
             f"__all__ = ['plan', 'Point'] + (['extra'] if {extra} else [])\nextra = 1\n", mod.__dict__)
        return mod
    base = contract(make("(a, b=1)", False, "int"))
    assert "def plan(a, b=1)" in base and "field x: int" in base
    assert contract(make("(a, b=1, c=2)", False, "int")) != base
    assert contract(make("(a, b=1)", True, "int")) != base
    assert contract(make("(a, b=1)", False, "float")) != base
    assert contract(make("(a, b=1)", False, "int")) == base


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        print(f"usage: {HOW}", file=sys.stderr)
        raise SystemExit(2)
    sys.path.insert(0, str(ROOT))
    from tkperf import api as _api
    RECORD.write_text(contract(_api), encoding="utf-8")
    print(f"wrote {RECORD.relative_to(ROOT)}: {len(_api.__all__)} names")
