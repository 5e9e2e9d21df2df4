"""API 3: the test type in parts (type, shape's steps, PTS rules, view),
and API 2 plug-ins run through the adapter for one release."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import List

import pytest

from conftest import needs_fio
from tkperf import api, store
from tkperf.cli import main
from tkperf.fio.jobs import FioJob
from tkperf.kit import options, registry
from tkperf.kit.adapter import API2_ENDS, Api2Type
from tkperf.kit.base import Plan, TestType
from tkperf.kit.rules import steps_of
from tkperf.kit.shapes import Sweep
from tkperf.model.results import DeviceInfo, HostInfo, IoStats, Round, RunResult, TestRun, Workload
from tkperf.report.generic import GenericView, view_of
from tkperf.verdict import conformance

HERE = Path(__file__).resolve().parents[1]
API2_PLUGIN = HERE / "data" / "plugin_api2" / "tkperf_rw4k_api2.py"
EXAMPLE = HERE.parent / "examples" / "plugin" / "tkperf_rw4k.py"
TITLE = "Random 4KiB R/W mix"
NOTE = f"rw4k: written for API 2, run through the adapter; API 2 ends with {API2_ENDS}"


def test_test_type_has_at_most_12_public_members():
    members = sorted(n for n in dir(TestType) if not n.startswith("_"))
    assert len(members) <= 12, members
    assert members == ["api_version", "blocks", "default_profiles", "headline", "name", "options", "order",
                       "plan", "pts", "short", "title", "view"]
    assert api.API_VERSION == (3, 5)  # 3.2: the ActiveRange segments in the options; 3.3: RunResult.integrity;
    # 3.4: the test range's rules in the options (range_rules, uses_test_range,
    # for_test, maps_segments); Stream.point_s; Stream.response_times; 3.5: every type
    # a recorded signature names is recorded (or opaque), the stored readers


def test_an_option_set_copies_whole():
    """A type's options and their settings class survive a copy (a tuple
    subclass rebuilt from its arguments)."""
    import copy

    kind = registry.get("iops")
    for made in (copy.copy(kind.options), copy.deepcopy(kind.options)):
        assert tuple(made) == tuple(kind.options) and made.settings is kind.options.settings


def load_plugin(monkeypatch, path: Path, module_name: str):
    """``path`` as the installed module ``module_name``, its RandomRW4kTest
    registered as the entry point ``rw4k``; the registry looked up afresh."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, module_name, module)
    spec.loader.exec_module(module)

    class EntryPoint:  # what importlib.metadata hands over for an installed plug-in
        def load(self):
            return module.RandomRW4kTest

    monkeypatch.setattr(registry, "_entry_points",
                        lambda: [("rw4k", f"{module_name}:RandomRW4kTest", EntryPoint())])
    registry.reset()
    return module


@pytest.fixture
def api2(monkeypatch):
    load_plugin(monkeypatch, API2_PLUGIN, "tkperf_rw4k_api2")
    yield registry.get("rw4k")
    registry.reset()


@pytest.fixture
def api3(monkeypatch):
    module = load_plugin(monkeypatch, EXAMPLE, "tkperf_rw4k")
    yield module
    registry.reset()


def rw4k_test(workloads: int = 1, series: bool = False) -> TestRun:
    t = TestRun(type="rw4k", key="rw4k", tracking_workload="rw4k-70-30", tracking_metric="iops",
                tracking_label="RND 4k 70/30 QD16 IOPS", status="complete", stop_reason="steady state")
    ws = tuple(Workload(f"rw4k-70-30{'-x' * i}", "randrw", 4096, 70, 1, 16, 1000,
                        read=IoStats(iops=700.0, ios=700),
                        write=IoStats(iops=300.0, ios=300)) for i in range(workloads))
    t.rounds.append(Round(1, "", 1.0, 1.0, ws))
    if series:
        t.series["intervals"] = None  # type: ignore[assignment]  # only its presence is checked
    return t


def test_an_api2_plugin_runs_through_the_adapter(api2, capsys):
    """The old example, unchanged: registered through the adapter, its members
    heard where API 3 moved them, and ``tkperf tests`` says so in one line."""
    assert isinstance(api2, Api2Type) and registry.problems() == []
    assert (api2.name, api2.title, api2.short, api2.order, api2.default_profiles) == ("rw4k", TITLE, "RW4K", 60, ())
    opts = options.build({"tests": ("rw4k",), "rw4k_mix": 65}, quick=True)
    (plan,) = api2.plan(opts, 10 ** 10)
    assert plan.shape.jobs[0].rwmixread == 65 and plan.shape.jobs[0].iodepth == 4
    assert api2.blocks(opts).largest == 4096 and api2.options.settings.__name__ == "RW4kSettings"
    assert api2.pts is None
    assert "rw4k (Random 4KiB R/W mix) is not a SNIA PTS test" in conformance.of_settings(
        opts.to_dict(), DeviceInfo("/dev/x", "/dev/x", "block", 1 << 30)).deviations
    view = view_of(api2)
    view.check_data(rw4k_test())
    with pytest.raises(ValueError, match="has 2 workloads, not 1"):
        view.check_data(rw4k_test(workloads=2))
    assert view.summary(rw4k_test()) == {} and view.instance_title(rw4k_test()) == "RW4K"
    assert steps_of(api2, rw4k_test()).unit == "round"
    assert main(["tests"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("rw4k") and TITLE in line for line in out)
    assert out[-1] == NOTE and out.count(NOTE) == 1


def test_the_api3_example_needs_no_adapter(api3, capsys):
    kind = registry.get("rw4k")
    assert type(kind) is api3.RandomRW4kTest and not isinstance(kind, Api2Type)
    assert type(view_of(kind)) is api3.RW4kView and isinstance(view_of(kind), GenericView)
    with pytest.raises(ValueError, match="keeps rounds, not series"):
        view_of(kind).check_data(rw4k_test(series=True))
    assert main(["tests"]) == 0
    assert "adapter" not in capsys.readouterr().out


@needs_fio
def test_an_api2_plugin_runs_end_to_end(api2, loopdev, tmp_path, capsys):
    """A real run of the API 2 plug-in on a loop device: its report (the
    generic sections its view leaves to tkperf) and ``show``."""
    out = tmp_path / "out"
    assert main(["ssd", "run", loopdev, "--tests", "rw4k", "--quick", "--yes", "--quiet", "--name", "a",
                 "--outdir", str(out), "--report-format", "rst"]) == 0
    (t,) = store.load(str(out / "a.xml")).tests
    assert (t.type, t.status) == ("rw4k", "complete") and 1 <= len(t.rounds) <= 5
    rst = (out / "a.rst").read_text()
    assert TITLE in rst and "RW4K: headline figures" in rst and "rw4k-70-30" in rst
    capsys.readouterr()
    assert main(["show", str(out / "a.xml")]) == 0
    shown = capsys.readouterr()
    assert "RW4K" in shown.out and "lat AVE" in shown.out and "Traceback" not in shown.err
    assert "after WIPC" not in shown.out  # API 2's default: round 1 is no first figure of its own


# --- the unit word comes from the shape --------------------------------------------------

def points(runtime: int) -> tuple:
    return tuple(FioJob(name=f"qd{d}", rw="randread", bs=4096, runtime=runtime, iodepth=d) for d in (1, 2))


class TwoPoints(TestType):
    """A sweep of two points (API 3): the shape says what a step is called."""

    name, title, short, order = "twopoints", "Two points", "TWOP", 200

    def plan(self, opts, capacity) -> List[Plan]:
        return [Plan(key=self.name, shape=Sweep(points(opts.runtime)), wipc=False)]


class TwoPointsApi2(TwoPoints):
    """The same sweep written for API 2, with its own unit word."""

    api_version = 2
    unit = "point"


def sweep_result(tmp_path: Path) -> str:
    def w(name: str, iops: float) -> Workload:
        return Workload(name, "randread", 4096, 100, 1, 1, 1000, read=IoStats(iops=iops, ios=int(iops)))

    t = TestRun(type="twopoints", key="twopoints", tracking_workload="", tracking_metric="", tracking_label="",
                status="complete", stop_reason="sweep complete")
    t.rounds.append(Round(1, "", 2.0, 2.0, (w("qd1", 100.0), w("qd2", 180.0))))
    run = RunResult(name="sw", started="", device=DeviceInfo("/dev/x", "/dev/x", "block", 1 << 30),
                    host=HostInfo(), options={"tests": "twopoints"}, status="complete", tests=[t])
    path = str(tmp_path / "sw.xml")
    store.save(run, path)
    return path


@pytest.mark.parametrize("kind", [TwoPoints, TwoPointsApi2])
def test_a_sweep_of_two_points_says_two_points(kind, tmp_path, capsys, monkeypatch):
    """A sweep is one round of two points; ``show`` counts the points (API 2
    said '1 point', counting the round); the report's table of rounds still
    has its one round."""
    path = sweep_result(tmp_path)
    registry.reset()
    monkeypatch.setitem(registry.types(), "twopoints", registry._instance(kind, "mod:TwoPoints"))
    try:
        assert steps_of(registry.get("twopoints")).unit == "point"
        assert main(["show", path]) == 0
        text = capsys.readouterr().out
        assert "2 points: sweep complete" in text and "1 point" not in text
        assert main(["report", path, "--format", "rst", "--outdir", str(tmp_path / "rep"), "-q"]) == 0
        report = " ".join((tmp_path / "rep" / "sw.rst").read_text().split())
        assert "1 point" not in report and "TWOP: every round" in report
    finally:
        registry.reset()
