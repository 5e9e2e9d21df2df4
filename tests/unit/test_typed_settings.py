"""Typed options per test type and each plan's steady-state policy.

A test type reads its options through one frozen dataclass of typed values
(``opts.of(IopsSettings).bs``); ``RunOptions`` has no catch-all attribute
any more.  A plan states its steady-state policy, and the conformance
check and the generic views read the type's policy, not whether a
tracking figure happens to be stored.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar, Tuple

import pytest

from test_conformance_paths import result
from tkperf import api
from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.kit import options, registry
from tkperf.kit.base import OptionSet, Plan, Tracking
from tkperf.kit.policy import Steady, stored_policy
from tkperf.kit.settings import settings_fields, settings_from
from tkperf.kit.shapes import Rounds, Sweep
from tkperf.testtypes.iops import IopsSettings, IopsTest
from tkperf.testtypes.writesat.settings import WsatSettings
from tkperf.verdict import conformance

NO_STEADY = "iops: no steady state within 5 rounds"


def test_settings_are_typed_values():
    o = options.build({"tests": ("iops", "wsat"), "iops_bs": options.parse_block_sizes("4k,1m", "--bs")})
    iops = o.of(IopsSettings)
    assert iops.bs == (4096, 1 << 20) and isinstance(iops.bs, tuple)
    assert all(type(b) is int for b in iops.bs) and all(type(m) is int for m in iops.mixes)
    wsat = o.of(WsatSettings)
    assert (wsat.time, wsat.tgbw, wsat.bs, wsat.steady) == (86400, "4x", 4096, False)
    assert wsat.tgbw_bytes(1000) == 4000
    with pytest.raises(dataclasses.FrozenInstanceError):
        iops.bs = ()  # type: ignore[misc]


def test_every_installed_type_builds_its_settings_from_its_defaults():
    """Each type's settings hold only options it declares, and build from a run's values."""
    for name, kind in registry.types().items():
        if kind.options.settings is None:
            continue
        assert set(settings_fields(kind.options.settings)) <= {opt.field for opt in kind.options}, name
        o = options.build({"tests": (name,)}, profile="hdd" if name.startswith("hdd") else "ssd")
        assert isinstance(o.of(kind.options.settings), kind.options.settings)


def test_run_options_have_no_catch_all_attributes():
    o = options.build({"tests": ("iops",)})
    with pytest.raises(AttributeError):
        _ = o.iops_bs  # type: ignore[attr-defined]
    assert not hasattr(options.RunOptions, "__getattr__")
    assert not hasattr(options, "parse_tgbw") and not hasattr(options.RunOptions, "tgbw_bytes")


def test_settings_of_a_type_not_among_the_tests_is_one_line():
    o = options.build({"tests": ("iops",)})
    with pytest.raises(UsageError) as err:
        o.of(WsatSettings)
    assert str(err.value) == "no option 'wsat_time' (is its test type among --tests?)"


@pytest.mark.parametrize("given, message", [
    ({"iops_bs": (4096,), "tests": ("lat",)}, "option --bs belongs to a test that is not among --tests (lat)"),
    ({"wsat_interval": 0, "tests": ("wsat",)}, "--wsat-interval 0 is out of range (1..3600)"),
])
def test_unknown_or_wrong_options_are_one_line(given, message):
    with pytest.raises(UsageError) as err:
        options.build(given)
    assert str(err.value) == message and "\n" not in str(err.value)


def test_a_type_whose_settings_name_an_option_it_lacks_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Stray:
        option_prefix: ClassVar[str] = "iops_"
        bs: Tuple[int, ...]
        depths: Tuple[int, ...]

    class Broken(IopsTest):
        name = "broken"
        options = OptionSet(Stray, IopsTest.options)

    with pytest.raises(ValueError, match=r"hold options it does not declare \(iops_depths\)"):
        registry._instance(Broken, "mod:Broken")


def test_a_keyword_field_drops_its_trailing_underscore():
    @dataclasses.dataclass(frozen=True)
    class Hir:
        option_prefix: ClassVar[str] = "hir_"
        return_: int

    assert settings_from(Hir, {"hir_return": 7}) == Hir(7)
    assert settings_fields(Hir) == ("hir_return",)


def test_the_api_names_the_typed_interface():
    assert {"Options", "Steady"} <= set(api.__all__) and api.API_VERSION == (3, 5)


# --- steady-state policies ------------------------------------------------------------------

def test_a_plan_states_its_policy():
    job = FioJob(name="w", rw="randwrite", bs=4096, runtime=1)
    assert Plan("a", Rounds((job,)), Tracking("w", "iops", "")).policy is Steady.ONE
    assert Plan("b", Sweep((job,))).policy is Steady.NONE
    with pytest.raises(ValueError, match="needs a tracking figure"):
        Plan("c", Sweep((job,)), steady=Steady.ONE)
    with pytest.raises(ValueError, match="needs a judge"):
        Plan("d", Rounds((job,)), Tracking("w", "iops", ""), steady=Steady.SEVERAL)


def test_iops_under_pts_2_tracks_several_figures():
    o = options.build({"tests": ("iops",)}, pts="pts-e-2.0")
    (plan,) = IopsTest().plan(o, 10 ** 12)
    assert plan.policy is Steady.SEVERAL
    o = options.build({"tests": ("iops",)}, pts="pts-e-1.1")
    assert IopsTest().plan(o, 10 ** 12)[0].policy is Steady.ONE


def test_conformance_reads_the_types_policy(monkeypatch):
    """A stored test is judged on the policy its file shows (API 3); an API 2
    type that said another one itself (``steady_policy``) is heard through
    the adapter; a type not installed is judged by what the file holds."""
    run = result()
    t = run.tests[0]
    t.steady = None
    assert NO_STEADY in conformance.of_run(run).deviations

    class SeeksNone(IopsTest):
        api_version = 2

        def steady_policy(self, test):
            return Steady.NONE

    monkeypatch.setitem(registry.types(), "iops", registry._instance(SeeksNone, "mod:SeeksNone"))
    assert NO_STEADY not in conformance.of_run(run).deviations
    assert registry.steady_policy(t) is Steady.NONE
    t.type = "not-installed"
    assert registry.steady_policy(t) is Steady.ONE == stored_policy(t)
    t.tracking_workload = ""
    assert registry.steady_policy(t) is Steady.NONE


def test_the_example_plugin_reads_its_typed_settings(monkeypatch):
    """examples/plugin's rw4k loads under this API and plans from its settings."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "plugin" / "tkperf_rw4k.py"
    spec = importlib.util.spec_from_file_location("tkperf_rw4k", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(__import__("sys").modules, "tkperf_rw4k", module)
    spec.loader.exec_module(module)

    class EntryPoint:
        def load(self):
            return module.RandomRW4kTest

    monkeypatch.setattr(registry, "_entry_points", lambda: [("rw4k", "tkperf_rw4k:RandomRW4kTest", EntryPoint())])
    registry.reset()
    try:
        assert registry.problems() == [] and registry.get("rw4k") is not None
        o = options.build({"tests": ("rw4k",), "rw4k_mix": 65}, quick=True)
        assert o.of(module.RW4kSettings) == module.RW4kSettings(mix=65, qd=4)
        (plan,) = registry.get("rw4k").plan(o, 10 ** 10)
        assert plan.policy is Steady.ONE and plan.shape.jobs[0].iodepth == 4
        assert o.to_dict()["rw4k_mix"] == "65/35"
    finally:
        registry.reset()


def test_a_stored_test_tracking_several_figures_says_so():
    run = result()
    t = run.tests[0]
    assert stored_policy(t) is Steady.ONE
    t.params["also_tracking"] = "rnd-4k-100-0:read.iops"
    assert stored_policy(t) is Steady.SEVERAL and registry.steady_policy(t) is Steady.SEVERAL
