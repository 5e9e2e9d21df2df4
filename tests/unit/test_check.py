"""``tkperf check``: a result against a baseline, for nightly QA."""
from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import subprocess
import sys
from typing import Callable

import jsonschema
import lxml.etree
import pytest

from tkperf import store
from tkperf.cli import check as check_cli
from tkperf.cli import checkfiles, main
from tkperf.errors import EXIT_INTERNAL, EXIT_NOT_COMPARABLE, EXIT_OK, EXIT_REGRESSION, EXIT_RESULT_FILE, EXIT_USAGE
from tkperf.model import noise
from tkperf.model.results import RunResult, Workload
from tkperf.verdict import comparable, regression

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(ROOT, "tkperf", "model", "data", "check.schema.json")
WRITE_4K = "rnd-4k-0-100"  # IOPS: the RND 4k write workload; LAT: the tracked workload


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", f"{name}.xml")


@pytest.fixture(scope="module")
def noisy() -> RunResult:
    """The example as recorded: its IOPS window varies by about 45% (it did not reach steady state)."""
    return store.load(example("example-ssd"))


@pytest.fixture(scope="module")
def ssd(noisy) -> RunResult:
    """The example with calm windows for the RND 4k W IOPS and latency (the figures the tests move)."""
    return calmed(calmed(noisy, "iops", WRITE_4K, "iops"), "lat", WRITE_4K, "lat_mean_us")


def scaled(run: RunResult, test: str, workload: str, field: str, factor: float) -> RunResult:
    """A copy of ``run`` with ``write.<field>`` of one workload scaled in the window rounds."""
    run = copy.deepcopy(run)
    t = run.test(test)
    window = {r.index for r in t.window_rounds()}

    def scale(w: Workload) -> Workload:
        if w.name != workload:
            return w
        stats = dataclasses.replace(w.write, **{field: getattr(w.write, field) * factor})
        return dataclasses.replace(w, write=stats)

    t.rounds = [dataclasses.replace(r, workloads=tuple(scale(w) for w in r.workloads))
                if r.index in window else r for r in t.rounds]
    return run


CALM = (1.0, 1.01, 0.99, 1.005, 0.995)  # a window that varies by +-1%


def calmed(run: RunResult, test: str, workload: str, field: str) -> RunResult:
    """A copy of ``run`` whose window values of ``write.<field>`` of one
    workload lie within 1% of their mean: a window that shows little noise."""
    run = copy.deepcopy(run)
    t = run.test(test)
    window = [r.index for r in t.window_rounds()]
    values = [getattr(w.write, field) for r in t.window_rounds() for w in r.workloads if w.name == workload]
    mean = sum(values) / len(values)
    factor = {index: CALM[i % len(CALM)] for i, index in enumerate(window)}

    def calm(w: Workload, index: int) -> Workload:
        if w.name != workload:
            return w
        return dataclasses.replace(w, write=dataclasses.replace(w.write, **{field: mean * factor[index]}))

    t.rounds = [dataclasses.replace(r, workloads=tuple(calm(w, r.index) for w in r.workloads))
                if r.index in factor else r for r in t.rounds]
    return run


def rows(out: str) -> list:
    """The table's rows: the lines between the header and the warnings or the summary."""
    skip = ("warning: ", "night's shift: ", "extreme: ")
    return [line for line in out.splitlines()[1:-1] if not line.startswith(skip)]


def saved(tmp_path, name: str, run: RunResult) -> str:
    path = str(tmp_path / f"{name}.xml")
    store.save(run, path)
    return path


def check(capsys, *argv: str):
    """(exit code, stdout, stderr) of ``tkperf check ...`` run in this process."""
    rc = main(["check", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def pair(tmp_path, ssd) -> Callable[[RunResult], tuple]:
    """(result path, baseline path): the example as baseline, ``run`` as the result."""
    base = saved(tmp_path, "base", ssd)
    return lambda run: (saved(tmp_path, "result", run), base)


# --- verdicts ----------------------------------------------------------------------------------

def test_identical_files_pass(capsys, pair, ssd):
    result, base = pair(ssd)
    rc, out, err = check(capsys, result, "--baseline", base)
    assert rc == EXIT_OK, err
    lines = out.splitlines()
    assert lines[0].split() == ["test", "figure", "unit", "baseline", "result", "change", "%", "p", "p", "adj",
                                "verdict"]
    cells = regression.compare(ssd, ssd, 10.0).cells  # every headline figure of the four tests
    n, info = len(cells), sum(1 for c in cells if c.verdict == "info")
    assert n >= 11 and len(rows(out)) == n
    assert lines[-1].startswith(f"ok: {n} figures: {n - info} within 10%, {info} info (Welch's t-test")
    assert "REGRESSION" not in out and err == ""


def test_an_iops_drop_in_one_cell_is_a_regression(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base)
    assert rc == EXIT_REGRESSION
    bad = [line for line in rows(out) if "REGRESSION" in line]
    assert len(bad) == 1 and bad[0].split()[:2] == ["iops", "rnd_4k_write_iops"] and "-20.0" in bad[0]
    assert bad[0].split()[-3:-1] == ["<0.001", "<0.001"]  # the p value, and after Holm's correction
    cells = regression.compare(ssd, ssd, 10.0).cells
    n, info = len(cells), sum(1 for c in cells if c.verdict == "info")
    tested = sum(1 for c in cells if c.p_value is not None)
    assert out.splitlines()[-1] == (f"REGRESSION: {n} figures: {n - info - 1} within 10%, 1 regressed, "
                                    f"{info} info (Welch's t-test of the window values, Holm's correction "
                                    f"over {tested} figures, at 0.05): iops/rnd_4k_write_iops -20.0%")


def test_a_drop_within_tolerance_passes(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base, "--tolerance", "25")
    assert rc == EXIT_OK and "within 25%" in out


def test_a_latency_rise_is_a_regression(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "lat", WRITE_4K, "lat_mean_us", 1.3))
    rc, out, _ = check(capsys, result, "--baseline", base)
    assert rc == EXIT_REGRESSION
    assert "lat/rnd_4k_write_lat_mean_us +30.0%" in out.splitlines()[-1]


def test_an_improvement_passes_and_is_shown(capsys, pair, ssd):
    faster = scaled(scaled(ssd, "iops", WRITE_4K, "iops", 1.5), "lat", WRITE_4K, "lat_mean_us", 0.5)
    result, base = pair(faster)
    rc, out, _ = check(capsys, result, "--baseline", base)
    assert rc == EXIT_OK
    improved = [line.split()[1] for line in rows(out) if line.endswith("improved")]
    assert improved == ["rnd_4k_write_iops", "rnd_4k_write_lat_mean_us"]
    assert ", 2 improved, " in out.splitlines()[-1]


@pytest.mark.parametrize("better,change,verdict", [
    ("higher", -10.0, "ok"), ("higher", -10.01, "warn"), ("higher", 12.0, "improved"),
    ("lower", 10.5, "warn"), ("lower", -11.0, "improved"), ("", -90.0, "info"),
    ("higher", None, "info"),
])
def test_judge(better, change, verdict):
    """Without a p value (no noise estimate) a figure worse beyond the tolerance only warns."""
    assert regression.judge(better, change, 10.0) == verdict
    tolerance_alone = regression.judge(better, change, 10.0, None, 1.0)  # --alpha 1: the test is off
    assert tolerance_alone == ("regression" if verdict == "warn" else verdict)


def test_change_of_a_zero_baseline():
    assert regression.change_pct(0.0, 0.0) == 0.0 and regression.change_pct(0.0, 5.0) is None


# --- noise ------------------------------------------------------------------------------------

def test_a_drop_the_window_shows_as_noise_passes(capsys, pair, noisy):
    """The example's IOPS window varies by about 45%: a 20% drop of every value is noise."""
    result, base = pair(scaled(noisy, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base, "--metric", "rnd_4k_write_iops")
    assert rc == EXIT_OK
    (line,) = rows(out)
    assert line.split()[-1] == "noise" and "-20.0" in line and float(line.split()[-2]) >= 0.05
    assert out.splitlines()[-1] == ("ok: 1 figure: 1 noise (Welch's t-test of the window values, "
                                    "Holm's correction over 1 figure, at 0.05)")
    rc, out, _ = check(capsys, result, "--baseline", base, "--metric", "rnd_4k_write_iops", "--alpha", "1")
    assert rc == EXIT_REGRESSION  # the tolerance alone would have failed it


def test_two_runs_of_one_device_differ_by_noise(capsys):
    """Two recorded runs of one loop device: their RND 4k W IOPS and latency
    differ, and whatever lies beyond the tolerance their windows explain."""
    rc, out, _ = check(capsys, example("example-ssd"), "--baseline", example("example-ssd-2"),
                       "--metric", "rnd_4k_write_iops", "--metric", "rnd_4k_write_lat_mean_us")
    assert rc == EXIT_OK
    verdicts = [(line.split()[1], line.split()[-1]) for line in rows(out)]
    assert [v[0] for v in verdicts] == ["rnd_4k_write_iops", "rnd_4k_write_lat_mean_us"]
    assert all(v[1] in ("ok", "noise", "improved") for v in verdicts), verdicts
    for line in rows(out):  # beyond the tolerance means noise here, within it ok
        change = abs(float(line.split()[5]))
        assert (line.split()[-1] == "noise") == (change > 10.0 and line.split()[-1] != "improved"), line


def test_several_baselines_are_one_distribution(capsys, tmp_path, ssd):
    nights = [saved(tmp_path, f"night{i}", scaled(ssd, "iops", WRITE_4K, "iops", f))
              for i, f in enumerate((0.95, 1.0, 1.05))]
    result = saved(tmp_path, "result", scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", *nights, "--json", "--metric", "rnd_4k_write_iops")
    data = json.loads(out)
    (cell,) = data["figures"]
    assert rc == EXIT_REGRESSION and data["baseline"] == nights
    assert cell["baseline"] == pytest.approx(ssd.test("iops").window_average(WRITE_4K, "write.iops"))
    assert (cell["n_baseline"], cell["n_result"], cell["verdict"]) == (3, 5, "regression")
    assert cell["baseline_sd"] == pytest.approx(0.05 * cell["baseline"])
    # the same drop against nights that spread widely is noise
    wide = [saved(tmp_path, f"wide{i}", scaled(ssd, "iops", WRITE_4K, "iops", f))
            for i, f in enumerate((0.7, 1.0, 1.3))]
    rc, out, _ = check(capsys, result, "--baseline", *wide, "--json", "--metric", "rnd_4k_write_iops")
    assert rc == EXIT_OK and json.loads(out)["figures"][0]["verdict"] == "noise"


def test_welch_matches_a_published_example():
    """Welch's t-test, Wikipedia's example 1: t = -2.46, df = 25.0, two-sided p = 0.021."""
    from tkperf.model import noise

    a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    w = noise.welch(a, b, "higher")
    assert (round(w.t, 2), round(w.df, 1), round(2 * w.p_worse, 3)) == (-2.46, 25.0, 0.021)
    assert w.p_worse + w.p_better == pytest.approx(1.0)
    assert noise.t_sf(2.0, 10) == pytest.approx(0.0367, abs=1e-4) and noise.welch([1.0], [2.0], "higher") is None


@pytest.mark.parametrize("change,shown", [(-10.045, "-10.04"), (-10.0, "-10.0"), (-9.96, "-9.96"),
                                          (-20.0, "-20.0"), (10.0004, "+10.0004"), (3.14159, "+3.1")])
def test_a_change_next_to_the_tolerance_reads_as_judged(change, shown):
    from tkperf.cli.checktext import change_text

    assert change_text(change, 10.0).startswith(shown)


def test_a_change_just_beyond_the_tolerance_is_printed_beyond_it(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 1 - 0.10045))
    rc, out, _ = check(capsys, result, "--baseline", base, "--metric", "rnd_4k_write_iops")
    (line,) = rows(out)
    assert rc == EXIT_REGRESSION and ("-10.04" in line or "-10.05" in line)
    assert "-10.0 " not in line


# --- warnings ----------------------------------------------------------------------------------

def test_warnings_in_table_json_and_junit(capsys, tmp_path, ssd):
    other = copy.deepcopy(ssd)
    other.options["runtime"] = "10"
    other.quick = False
    base = saved(tmp_path, "base", other)
    result = saved(tmp_path, "result", ssd)
    junit = tmp_path / "junit.xml"
    rc, out, _ = check(capsys, result, "--baseline", base, "--junit", str(junit))
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert rc == EXIT_OK and len(warnings) == 3  # the same caveat of both sides is one line
    unsteady = ", ".join(t.key for t in ssd.tests if t.key in ("iops", "lat", "wsat") and not (
        t.steady and t.steady.steady))
    assert f"result and baseline did not reach steady state in {unsteady}: their window" in warnings[0]
    assert warnings[1].startswith("warning: result was a --quick run") and "verdict says little" in warnings[1]
    assert "different parameters (runtime 1 vs 10)" in warnings[2]
    assert "not the drive" in warnings[2]
    rc, out, _ = check(capsys, result, "--baseline", base, "--json")
    assert [f"warning: {w}" for w in json.loads(out)["warnings"]] == warnings
    suite = lxml.etree.parse(str(junit)).getroot().find("testsuite")
    assert [p.get("value") for p in suite.find("properties") if p.get("name") == "warning"] == \
        [w[len("warning: "):] for w in warnings]
    assert suite.find("system-out").text.splitlines() == warnings


def test_steady_runs_of_the_same_parameters_warn_of_nothing(capsys, pair, ssd):
    run = copy.deepcopy(ssd)
    run.quick = False
    for t in run.tests:
        if t.steady is not None:
            t.steady = dataclasses.replace(t.steady, steady=True)
    result, base = pair(run)
    base_run = store.load(base)
    assert regression.compare(run, base_run, 10.0).warnings != ()  # the baseline is the quick example
    rc, out, _ = check(capsys, result, "--baseline", result)
    assert rc == EXIT_OK and "warning" not in out


@pytest.mark.parametrize("alpha", ["0", "2", "x"])
def test_a_bad_alpha_is_a_usage_error(capsys, alpha):
    rc, _, err = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"), "--alpha", alpha)
    assert rc == EXIT_USAGE and len(err.splitlines()) == 1 and "--alpha" in err


# --- not comparable ----------------------------------------------------------------------------

def test_the_client_example_is_not_comparable(capsys, ssd):
    rc, _, err = check(capsys, example("example-client"), "--baseline", example("example-ssd"))
    assert rc == EXIT_NOT_COMPARABLE
    assert len(err.splitlines()) == 1 and "not comparable" in err
    assert "only in baseline: tp-1024k,lat" in err and "device class (client vs baseline enterprise)" in err


def test_a_missing_test_is_not_comparable(capsys, pair, ssd):
    run = copy.deepcopy(ssd)
    run.tests = [t for t in run.tests if t.key != "wsat"]
    result, base = pair(run)
    rc, _, err = check(capsys, result, "--baseline", base)
    assert rc == EXIT_NOT_COMPARABLE and "only in baseline: wsat" in err


def test_no_test_in_common(capsys, pair, ssd):
    run = copy.deepcopy(ssd)
    run.tests = [t for t in run.tests if t.key == "wsat"]
    other = copy.deepcopy(ssd)
    other.tests = [t for t in other.tests if t.key == "lat"]
    assert comparable.not_comparable(run, other) == [
        "no test in common (result: wsat; baseline: lat)"]


def test_other_block_sizes_are_not_comparable(capsys, pair, ssd):
    run = copy.deepcopy(ssd)
    run.test("iops").params["block_sizes"] = "4k"
    result, base = pair(run)
    rc, _, err = check(capsys, result, "--baseline", base)
    assert rc == EXIT_NOT_COMPARABLE
    assert "iops: different block sizes (4k vs baseline 128k,4k)" in err


def test_capacities_far_apart_are_not_comparable(ssd):
    big = copy.deepcopy(ssd)
    big.device = dataclasses.replace(big.device, size_bytes=ssd.device.size_bytes * 3)
    (reason,) = comparable.not_comparable(big, ssd)
    assert reason.startswith("capacities more than 2x apart")
    twice = copy.deepcopy(ssd)
    twice.device = dataclasses.replace(twice.device, size_bytes=ssd.device.size_bytes * 2)
    assert comparable.not_comparable(twice, ssd) == []


def test_a_missing_file(capsys, tmp_path):
    rc, _, err = check(capsys, str(tmp_path / "nope.xml"), "--baseline", example("example-ssd"))
    assert rc == EXIT_RESULT_FILE and "nope.xml" in err and len(err.splitlines()) == 1


def test_a_corrupt_baseline(capsys, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_bytes(b"<tkperf-result")
    rc, _, err = check(capsys, example("example-ssd"), "--baseline", str(bad))
    assert rc == EXIT_RESULT_FILE and len(err.splitlines()) == 1


# --- options -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,pct", [("10%", 10.0), ("10", 10.0), ("2.5 %", 2.5), ("0", 0.0), (".5", 0.5)])
def test_tolerance_parses(text, pct):
    from tkperf.cli.check import parse_tolerance

    assert parse_tolerance(text) == pct


@pytest.mark.parametrize("text", ["ten", "-5%", "10%%", "", "nan", "1e3", "2000"])
def test_a_bad_tolerance_is_a_usage_error(capsys, text):
    rc, out, err = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"),
                         "--tolerance", text)
    assert rc == EXIT_USAGE and out == ""
    assert len(err.splitlines()) == 1 and "--tolerance" in err


def test_metric_limits_the_check(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base, "--metric", "rnd_4k_read_iops",
                       "--metric", "seq_write_mb_s")
    assert rc == EXIT_OK  # the regressed figure is not among them
    assert [line.split()[1] for line in rows(out)] == ["rnd_4k_read_iops", "seq_write_mb_s"]


def test_an_unknown_metric_names_the_known_ones(capsys):
    rc, _, err = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"),
                       "--metric", "nosuch")
    assert rc == EXIT_USAGE and len(err.splitlines()) == 1
    assert "nosuch" in err and "rnd_4k_write_iops" in err and "gb_written" in err


# --- JUnit and JSON ----------------------------------------------------------------------------

def test_junit(capsys, tmp_path, pair, ssd):
    worse = scaled(scaled(ssd, "iops", WRITE_4K, "iops", 0.8), "lat", WRITE_4K, "lat_mean_us", 1.3)
    result, base = pair(worse)
    junit = tmp_path / "junit.xml"
    rc, _, _ = check(capsys, result, "--baseline", base, "--junit", str(junit))
    assert rc == EXIT_REGRESSION
    root = lxml.etree.parse(str(junit)).getroot()
    n = str(len(regression.compare(ssd, ssd, 10.0).cells))
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures")) == (n, "2")
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == (n, "2")
    cases = suite.findall("testcase")
    assert len(cases) == int(n) and all(c.find("system-out") is not None for c in cases)
    failed = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failed == [("iops", "rnd_4k_write_iops"), ("lat", "rnd_4k_write_lat_mean_us")]
    message = cases[0].find("failure").get("message")
    assert "-20.0%" in message and "tolerance 10%" in message
    names = [p.get("name") for p in suite.find("properties")]
    assert names[:6] == ["result", "baseline", "tolerance_pct", "alpha", "test", "correction"]
    assert set(names[6:-7]) == {"warning"} and names[-7:-4] == ["drive", "night", "host"]
    assert names[-4:] == ["red_since", "red_since_night", "red_since_result", "red_nights"]  # red since itself
    # the suite names the drive, the night and the host, as a CI dashboard shows a suite
    assert suite.get("name") == ("tkperf check: loop device over /tmp/tkperf-example-y3nmf706/tkperf-loop-"
                                 "k4fu69lo.img, night 2026-11-25 00:16, host vm") == root.get("name")
    assert (suite.get("hostname"), suite.get("timestamp")) == ("vm", "2026-11-25T00:16:44")
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_junit_of_a_pass_has_no_failures(capsys, tmp_path):
    junit = tmp_path / "junit.xml"
    rc, _, _ = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"),
                     "--junit", str(junit))
    root = lxml.etree.parse(str(junit)).getroot()
    assert rc == EXIT_OK and root.get("failures") == "0" and not root.findall(".//failure")


def test_json_validates_against_its_schema(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base, "--json", "--tolerance", "5%")
    assert rc == EXIT_REGRESSION
    data = json.loads(out)
    with open(SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert (data["version"], data["tolerance_pct"], data["alpha"], data["verdict"]) == (4, 5.0, 0.05, "regression")
    assert data["red_since"] == {"name": data["red_since"]["name"], "night": "2026-11-25 00:16", "result": result,
                                 "nights": 1}  # a red night with none before it: red since itself
    assert (data["test"], data["correction"], data["night"]) == ("welch-t-one-sided", "holm", None)
    assert (data["result"], data["baseline"]) == (result, [base])
    cell = data["figures"][0]
    assert (cell["test"], cell["figure"], cell["better"], cell["verdict"]) == \
        ("iops", "rnd_4k_write_iops", "higher", "regression")
    assert cell["change_pct"] == pytest.approx(-20.0)
    assert cell["p_value"] < 0.001 and (cell["n_result"], cell["n_baseline"]) == (5, 5)
    assert {c["verdict"] for c in data["figures"]} == {"regression", "ok", "info"}
    wsat = {c["figure"]: c for c in data["figures"] if c["test"] == "wsat"}
    assert (wsat["last_5_intervals_iops"]["n_result"], wsat["first_interval_iops"]["p_value"]) == (5, None)
    assert wsat["last_5_intervals_iops"]["p_value"] == pytest.approx(0.5)  # the same intervals: t = 0


def test_the_schema_refuses_a_wrong_verdict(capsys):
    rc, out, _ = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"), "--json")
    data = json.loads(out)
    assert rc == EXIT_OK and data["verdict"] == "ok"
    with open(SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    data["figures"][0]["verdict"] = "REGRESSION"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


# --- exit codes and imports --------------------------------------------------------------------

def test_exit_codes():
    assert (EXIT_REGRESSION, EXIT_NOT_COMPARABLE, EXIT_INTERNAL) == (1, 12, 70)


def test_an_internal_error_is_70_not_a_regression(capsys, monkeypatch):
    def boom(*_a, **_k):
        raise RuntimeError("boom")

    monkeypatch.setattr(regression, "compare", boom)
    rc, _, err = check(capsys, example("example-ssd"), "--baseline", example("example-ssd"))
    assert rc == EXIT_INTERNAL and "internal error: RuntimeError: boom" in err


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["text", "json"])
def test_check_leaves_matplotlib_out(extra):
    argv = ["check", example("example-ssd"), "--baseline", example("example-ssd-2"), "--correction", "none"] + extra
    code = ("import sys\n"
            "from tkperf.cli import main\n"
            f"rc = main({argv!r})\n"
            "sys.exit(99 if 'matplotlib' in sys.modules else rc)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode != 99, "check imported matplotlib"
    assert proc.returncode == EXIT_REGRESSION, proc.stderr  # example-ssd-2 is another drive
    assert ('"verdict": "regression"' if extra else "REGRESSION:") in proc.stdout


# --- regression.py's parts, one at a time -------------------------------------------------------

def test_not_comparable_names_what_only_one_side_has(ssd):
    fewer = copy.deepcopy(ssd)
    fewer.tests = [t for t in fewer.tests if t.key != "wsat"]
    assert comparable.not_comparable(ssd, fewer) == [
        "different tests (only in result: wsat; only in baseline: none)"]
    assert comparable.not_comparable(fewer, ssd) == [
        "different tests (only in result: none; only in baseline: wsat)"]


def test_a_parameter_missing_on_one_side_reads_as_a_dash(ssd):
    run = copy.deepcopy(ssd)
    del run.test("iops").params["block_sizes"]
    assert comparable.not_comparable(run, ssd) == ["iops: different block sizes (- vs baseline 128k,4k)"]
    assert comparable.not_comparable(ssd, run) == ["iops: different block sizes (128k,4k vs baseline -)"]


def test_a_device_class_missing_on_one_side_reads_as_a_dash(ssd):
    bare = copy.deepcopy(ssd)
    del bare.options["device_class"]
    assert comparable.not_comparable(bare, ssd) == ["different device class (- vs baseline enterprise)"]
    assert comparable.not_comparable(ssd, bare) == ["different device class (enterprise vs baseline -)"]
    assert comparable.not_comparable(bare, copy.deepcopy(bare)) == []  # missing on both: the same


def test_capacities_far_apart_are_named_in_gb(ssd):
    """1.05 GB (a float a hair above 1.05) and 0.45 GB (above 0.45) round up at one decimal."""
    big, small = copy.deepcopy(ssd), copy.deepcopy(ssd)
    big.device = dataclasses.replace(big.device, size_bytes=1_050_000_000)
    small.device = dataclasses.replace(small.device, size_bytes=450_000_000)
    assert comparable.not_comparable(big, small) == [
        "capacities more than 2x apart (1.1 GB vs baseline 0.5 GB)"]


def test_a_test_the_baseline_lacks_is_skipped_and_the_others_compared(ssd):
    base = copy.deepcopy(ssd)
    base.tests = [t for t in base.tests if t.key != "iops"]  # the result's first test
    tests = {c.test for c in regression.compare(ssd, base, 10.0).cells}
    assert tests == {"tp-1024k", "lat", "wsat"}


def test_figure_keys_are_those_of_both_once_each(noisy):
    full = store.load(example("example-full"))  # two TP tests: the same figure keys twice
    keys = regression.figure_keys(full, full)
    assert keys == ["rnd_4k_write_iops", "rnd_4k_mixed_iops", "rnd_4k_read_iops", "seq_write_mb_s",
                    "seq_read_mb_s", "rnd_4k_write_lat_mean_us", "rnd_4k_write_lat_max_us",
                    "rnd_4k_write_lat_largest_us", "rnd_4k_write_lat_p99_9_us", "rnd_4k_write_lat_p99_99_us",
                    # every latency LAT measured: the mean of each workload's reads and writes
                    "rnd_8k_read_lat_mean_us", "rnd_4k_read_lat_mean_us", "rnd_512_read_lat_mean_us",
                    "rnd_8k_65_35_read_lat_mean_us", "rnd_8k_65_35_write_lat_mean_us",
                    "rnd_4k_65_35_read_lat_mean_us", "rnd_4k_65_35_write_lat_mean_us",
                    "rnd_512_65_35_read_lat_mean_us", "rnd_512_65_35_write_lat_mean_us",
                    "rnd_8k_write_lat_mean_us", "rnd_512_write_lat_mean_us",
                    "first_interval_iops", "last_5_intervals_iops", "gb_written"]
    only_iops = copy.deepcopy(noisy)
    only_iops.tests = [t for t in only_iops.tests if t.key == "iops"]
    assert regression.figure_keys(full, only_iops) == keys[:3]


def test_a_test_type_not_installed_has_no_figures(ssd):
    assert regression.figures(dataclasses.replace(ssd.test("iops"), type="no-such-type")) == []


@pytest.mark.parametrize("better,change,tolerance,p,verdict", [
    ("higher", -12.0, 10.0, 0.05, "noise"),        # p = alpha is noise
    ("higher", -12.0, 10.0, 0.0499, "regression"),
    ("higher", 12.0, 10.0, 0.05, "noise"),
    ("higher", -0.5, 0.0, None, "warn"),     # any move is beyond a tolerance of 0
    ("higher", 0.5, 0.0, None, "improved"),
    ("lower", 0.5, 0.0, 0.01, "regression"),
    ("lower", 0.0, 0.0, 0.01, "ok"),
])
def test_judge_at_its_limits(better, change, tolerance, p, verdict):
    assert regression.judge(better, change, tolerance, p, 0.05) == verdict


def _fig(value: float, better: str = "higher"):
    from tkperf.kit.base import Figure

    return Figure("f", "the label", value, "IOPS", better)


def _cell(test, fig, base_values, mine, theirs, tolerance, alpha):
    """One figure judged alone (a family of one: Holm's correction changes nothing)."""
    from tkperf.model import family

    data = family.Figure(fig.better, tuple(base_values), fig.value, tuple(tuple(t) for t in theirs), tuple(mine))
    (cell,) = regression.assess([regression.Input(test, fig, data)], tolerance, alpha).cells
    return cell


def test_a_cell_against_several_nights_is_a_prediction_with_the_windows_as_floor():
    """Two nights at 100 (no spread of their own); every window has s^2/n = 100
    ([90, 110]: s^2 200, n 2), so the floor is 100: t = -10 / sqrt(100 x 1.5),
    df 1, p = 1/2 - atan(10 / sqrt(150)) / pi."""
    cell = _cell("iops", _fig(90.0), [100.0, 100.0], [80.0, 100.0],
                            [[90.0, 110.0], [90.0, 110.0]], 5.0, 0.05)
    assert cell.change_pct == -10.0 and cell.label == "the label"
    assert cell.p_value == pytest.approx(0.5 - math.atan(10.0 / math.sqrt(150.0)) / math.pi, rel=1e-9)
    assert cell.verdict == "noise"
    assert (cell.n_result, cell.n_baseline, cell.baseline_sd) == (2, 2, 0.0)
    assert cell.result_sd == pytest.approx(math.sqrt(200.0))


def test_a_cell_against_one_baseline_is_welchs_test():
    mine, theirs = [85.0, 90.0, 95.0], [99.0, 100.0, 101.0]
    cell = _cell("iops", _fig(90.0), [100.0], mine, [theirs], 5.0, 0.05)
    w = noise.welch(mine, theirs, "higher")
    assert cell.p_value == w.p_worse and cell.p_value < 0.05 and cell.verdict == "regression"
    assert (cell.n_result, cell.n_baseline) == (3, 3)
    assert cell.result_sd == 5.0 and cell.baseline_sd == 1.0


def test_a_cells_p_is_in_the_direction_it_moved():
    mine, theirs = [90.0, 110.0, 130.0], [99.0, 100.0, 101.0]
    w = noise.welch(mine, theirs, "higher")
    assert w.p_worse != w.p_better
    # half a percent worse: the worse tail, however small the move
    assert _cell("t", _fig(99.5), [100.0], mine, [theirs], 0.0, 0.05).p_value == w.p_worse
    # not moved at all: the better tail
    assert _cell("t", _fig(100.0), [100.0], mine, [theirs], 0.0, 0.05).p_value == w.p_better


def test_a_cell_of_single_values_has_no_spread():
    cell = _cell("t", _fig(80.0), [100.0], [80.0], [[100.0]], 10.0, 0.05)
    assert (cell.p_value, cell.result_sd, cell.baseline_sd, cell.verdict) == (None, None, None, "warn")
    pair = _cell("t", _fig(80.0), [100.0], [80.0, 80.0], [[100.0, 100.0]], 10.0, 0.05)
    assert (pair.result_sd, pair.baseline_sd, pair.p_value) == (0.0, 0.0, 0.0)


def test_a_figure_without_a_better_direction_is_only_reported():
    cell = _cell("t", _fig(50.0, ""), [100.0], [40.0, 60.0], [[99.0, 101.0]], 10.0, 0.05)
    assert (cell.verdict, cell.p_value, cell.better, cell.change_pct) == ("info", None, "", -50.0)


def test_an_unknown_capacity_is_not_a_difference(ssd):
    """An original TKperf file without a capacity reads as size 0: unknown,
    so no capacity comparison; any two known sizes, however small, are compared."""
    unknown, tiny, three = copy.deepcopy(ssd), copy.deepcopy(ssd), copy.deepcopy(ssd)
    unknown.device = dataclasses.replace(unknown.device, size_bytes=0)
    tiny.device = dataclasses.replace(tiny.device, size_bytes=1)
    three.device = dataclasses.replace(three.device, size_bytes=3)
    assert comparable.not_comparable(unknown, ssd) == comparable.not_comparable(ssd, unknown) == []
    assert comparable.not_comparable(three, tiny) == ["capacities more than 2x apart (3 bytes vs baseline 1 byte)"]


# --- a night's figures as one family (issue 35, items 1, 2, 7 and 8) -------------------------------

def _night(rng, levels, night_sd=0.06, round_sd=0.08, factors=None):
    """One simulated night: per figure (value, window values), every figure
    sharing the night's factor; latencies (better lower) divided by it."""
    from tkperf.model import family

    night = 1 + night_sd * rng.standard_normal()
    out = []
    for k, (better, level) in enumerate(levels):
        rounds = night * (1 + round_sd * rng.standard_normal(5)) * (factors[k] if factors else 1.0)
        values = level / rounds if better == "lower" else level * rounds
        out.append((float(values.mean()), tuple(float(v) for v in values)))
    return out, family


def _items(levels, nights_, result):
    from tkperf.model import family
    from tkperf.model.figures import Figure

    items = []
    for k, (better, _level) in enumerate(levels):
        value, mine = result[k]
        data = family.Figure(better, tuple(n[k][0] for n in nights_), value, tuple(n[k][1] for n in nights_), mine)
        items.append(regression.Input("t", Figure(f"f{k}", f"f{k}", value, "IOPS", better), data))
    return items


LEVELS = [("higher", 40_000.0)] * 5 + [("lower", 80.0)] * 4 + [("higher", 3_000.0)] * 4


def test_identical_nights_go_red_at_most_alpha_of_the_time():
    """Holm's correction over the night's 13 figures: of 300 simulated identical
    nights against 5 baselines at most about 5% are red; uncorrected, far more."""
    import numpy as np

    rng = np.random.default_rng(3)
    red = plain = 0
    for _ in range(300):
        sims = [_night(rng, LEVELS)[0] for _ in range(6)]
        items = _items(LEVELS, sims[:5], sims[5])
        red += regression.assess(items, 10.0).verdict == regression.REGRESSION
        plain += regression.assess(items, 10.0, correction="none").verdict == regression.REGRESSION
    assert red <= 24 and plain > red  # 8% at most: the bound is 5%, plus sampling error


def test_one_figure_thirty_percent_worse_is_red_on_its_first_night():
    """Its own move against the night's shared shift: a 30% drop of one of 13 figures is caught."""
    import numpy as np

    rng = np.random.default_rng(4)
    caught = 0
    for trial in range(40):
        k = trial % len(LEVELS)
        factors = [1.0] * len(LEVELS)
        factors[k] = 0.7
        sims = [_night(rng, LEVELS)[0] for _ in range(5)] + [_night(rng, LEVELS, factors=factors)[0]]
        comparison = regression.assess(_items(LEVELS, sims[:5], sims[5]), 10.0)
        assert comparison.method == regression.NIGHT_ADJUSTED and comparison.night is not None
        caught += [c.figure for c in comparison.regressions] == [f"f{k}"]
    assert caught >= 34


def test_a_slow_night_of_every_figure_is_the_nights_shift():
    """Every figure 40% worse on one night: the shift is tested apart, and it fails the night."""
    import numpy as np

    rng = np.random.default_rng(5)
    sims = [_night(rng, LEVELS, 0.02, 0.02)[0] for _ in range(5)]
    sims.append(_night(rng, LEVELS, 0.0, 0.02, factors=[0.6] * len(LEVELS))[0])
    comparison = regression.assess(_items(LEVELS, sims[:5], sims[5]), 10.0)
    assert comparison.night.shift_pct == pytest.approx(-40, abs=3)
    assert comparison.night.adjusted_worse < 0.05 and len(comparison.regressions) == len(LEVELS)


def test_the_method_is_named_by_what_was_run(capsys, tmp_path, ssd):
    """Welch with one baseline, the night-adjusted prediction interval with
    several (and enough figures), the plain prediction interval with fewer."""
    nights = [saved(tmp_path, f"night{i}", scaled(ssd, "iops", WRITE_4K, "iops", f))
              for i, f in enumerate((0.95, 1.0, 1.05))]
    result = saved(tmp_path, "result", ssd)
    for base, metrics, method, words in (
            (nights[:1], [], "welch-t-one-sided", "Welch's t-test of the window values"),
            (nights, [], "night-adjusted-prediction-t-one-sided", "the night's shared shift tested apart"),
            (nights, ["--metric", "rnd_4k_write_iops"], "prediction-interval-t-one-sided",
             "prediction-interval t-test against the baseline nights, Holm")):
        rc, out, _ = check(capsys, result, "--baseline", *base, *metrics, "--json")
        data = json.loads(out)
        assert data["test"] == method and data["correction"] == "holm"
        with open(SCHEMA, encoding="utf-8") as fh:
            jsonschema.validate(data, json.load(fh), cls=jsonschema.Draft202012Validator)
        rc, out, _ = check(capsys, result, "--baseline", *base, *metrics)
        assert words in out.splitlines()[-1], out.splitlines()[-1]


def test_per_figure_p_values_stay_and_the_adjusted_ones_decide(capsys, tmp_path, ssd):
    nights = [saved(tmp_path, f"night{i}", scaled(ssd, "iops", WRITE_4K, "iops", f))
              for i, f in enumerate((0.95, 1.0, 1.05))]
    result = saved(tmp_path, "result", ssd)
    rc, out, _ = check(capsys, result, "--baseline", *nights, "--json")
    figures = [f for f in json.loads(out)["figures"] if f["p_value"] is not None]
    assert figures and all(f["p_adjusted"] >= f["p_value"] for f in figures)
    assert json.loads(out)["night"]["shift_pct"] == pytest.approx(0.0, abs=1e-9)
    rc, out, _ = check(capsys, result, "--baseline", *nights, "--json", "--correction", "none")
    plain = json.loads(out)
    assert plain["correction"] == "none"
    assert all(f["p_adjusted"] <= f["p_value"] for f in plain["figures"] if f["p_value"] is not None)


def test_a_figure_without_a_noise_estimate_only_warns(capsys):
    """WSAT's first interval is one value on each side: 33.5% worse (another
    recorded run), it warns and the check passes; with --alpha 1 the
    tolerance alone fails it."""
    argv = (example("example-ssd"), "--baseline", example("example-ssd-2"), "--metric", "first_interval_iops")
    rc, out, _ = check(capsys, *argv)
    (line,) = rows(out)
    assert rc == EXIT_OK and line.split()[-1] == "warn" and line.split()[-3:-1] == ["-", "-"]
    assert "warning: wsat/first_interval_iops got worse beyond the tolerance, but without a noise estimate" in out
    assert out.splitlines()[-1].startswith("ok: 1 figure: 1 warn (")
    rc, _, _ = check(capsys, *argv, "--alpha", "1")
    assert rc == EXIT_REGRESSION


def test_the_summary_counts_each_figure_once(capsys, pair, noisy):
    result, base = pair(scaled(noisy, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base)
    counts = out.splitlines()[-1].split(" (")[0].split(": ", 1)[1]
    n = int(counts.split()[0])
    parts = counts.split(": ", 1)[1].split(", ")
    assert sum(int(p.split()[0]) for p in parts) == n  # "13 figures: 9 within 10%, 1 noise, ..."
    verdicts = [line.split()[-1] for line in rows(out)]
    assert f"{verdicts.count('ok')} within 10%" in parts


def test_one_warning_per_caveat_whatever_the_number_of_baselines(capsys, tmp_path, ssd):
    nights = [saved(tmp_path, f"night{i}", ssd) for i in range(3)]
    rc, out, _ = check(capsys, saved(tmp_path, "result", ssd), "--baseline", *nights)
    quick = [line for line in out.splitlines() if "--quick" in line]
    assert quick == ["warning: result and baselines 1, 2 and 3 were --quick runs: their rounds are too "
                     "short to stand for the drive, so any verdict says little about it"]


def test_holm_adjusts_improvements_apart_and_three_figures_are_a_night():
    """One baseline: three figures tested by Welch, all better; each
    adjusted p is Holm's over the three improvements (worse p's apart)."""
    from tkperf.model import family
    from tkperf.model.figures import Figure

    def item(k, mine, theirs, nights=None):
        data = family.Figure("higher", tuple(nights or [sum(theirs) / len(theirs)]), sum(mine) / len(mine),
                             (tuple(theirs),) if nights is None else tuple((tuple(theirs),) * len(nights)),
                             tuple(mine))
        return regression.Input("t", Figure(f"f{k}", f"f{k}", data.value, "IOPS", "higher"), data)

    items = [item(0, [130.0, 131.0, 129.0], [100.0, 101.0, 99.0]),
             item(1, [120.0, 125.0, 115.0], [100.0, 102.0, 98.0]),
             item(2, [112.0, 118.0, 106.0], [100.0, 104.0, 96.0])]
    cells = regression.assess(items, 5.0).cells
    raw = sorted(c.p_value for c in cells)
    expected = family.holm([c.p_value for c in cells])
    assert [c.p_adjusted for c in cells] == expected and raw[0] * 3 == pytest.approx(min(expected))
    assert [c.p_adjusted for c in regression.assess(items, 5.0, correction="none").cells] == \
        [c.p_value for c in cells]
    nights = [item(k, [100.0 + k, 101.0 + k], [99.0, 101.0], nights=[100.0, 104.0, 97.0]) for k in range(3)]
    assert regression.method_of(nights) == regression.NIGHT_ADJUSTED
    assert regression.method_of(nights[:2]) == regression.PREDICTION


def test_a_latency_alone_against_nights_is_tested_in_its_own_direction():
    from tkperf.model import family
    from tkperf.model.figures import Figure

    data = family.Figure("lower", (100.0, 104.0, 96.0), 130.0, ((99.0, 101.0),) * 3, (129.0, 131.0))
    (cell,) = regression.assess([regression.Input("lat", Figure("l", "l", 130.0, "us", "lower"), data)], 10.0).cells
    floor = noise.mean([noise.variance(w) / 2 for w in [[99.0, 101.0]] * 3 + [[129.0, 131.0]]])
    assert cell.p_value == noise.predict(130.0, [100.0, 104.0, 96.0], "lower", floor).p_worse < 0.05
    assert cell.verdict == "regression"


# --- another drive, JUnit of the nights not judged and of noise, the JSON summary --------------

def _other(run: RunResult, **device) -> RunResult:
    run = copy.deepcopy(run)
    run.device = dataclasses.replace(run.device, **device)
    return run


def test_a_baseline_of_another_drive_is_named_and_refused(capsys, tmp_path, ssd):
    """A swapped drive (another serial; the model the same) is named with both
    identities, and refused (exit 12) unless --allow-other-drive; then it is
    the first line of the output and a warning of the JUnit and JSON."""
    mine = saved(tmp_path, "mine", _other(ssd, vendor="ACME", model="FAST 1TB", serial="S1"))
    other = saved(tmp_path, "other", _other(ssd, vendor="ACME", model="FAST 1TB", serial="S2"))
    rc, out, err = check(capsys, mine, "--baseline", mine, other)
    assert rc == EXIT_NOT_COMPARABLE and out == ""
    assert err.startswith(f"tkperf: error: another drive: {mine} was measured on ACME FAST 1TB serial S1, "
                          f"{other} on ACME FAST 1TB serial S2 (different serial);")
    assert "--allow-other-drive" in err and len(err.splitlines()) == 1
    junit = tmp_path / "junit.xml"
    rc, out, _ = check(capsys, mine, "--baseline", mine, other, "--allow-other-drive", "--junit", str(junit))
    assert rc == EXIT_OK and out.splitlines()[0].startswith("warning: another drive: ")
    props = {p.get("name"): p.get("value") for p in lxml.etree.parse(str(junit)).iter("property")}
    assert props["drive"] == "ACME FAST 1TB serial S1"
    assert any(w.startswith("another drive:") for w in
               [p.get("value") for p in lxml.etree.parse(str(junit)).iter("property") if p.get("name") == "warning"])


def test_a_loop_devices_file_is_not_its_identity(ssd):
    """A loop device's model names its file, made anew as often as not: not another drive."""
    a = _other(ssd, model="loop device over /tmp/a.img")
    assert comparable.other_drive(a, _other(ssd, model="loop device over /tmp/b.img")) == []
    assert comparable.other_drive(a, _other(ssd, model="FAST 1TB")) == ["model"]
    assert comparable.other_drive(_other(ssd, serial="X"), _other(ssd, serial="")) == []  # not recorded


def test_a_night_not_judged_is_a_junit_of_skipped_cases(capsys, tmp_path):
    junit = tmp_path / "junit.xml"
    rc, out, _ = check(capsys, example("example-ssd"), "--not-judged", "night 1 of 3", "--junit", str(junit))
    assert rc == EXIT_OK and out.startswith("not judged: night 1 of 3 (")
    root = lxml.etree.parse(str(junit)).getroot()
    cases = root.findall("testsuite/testcase")
    assert cases and all(c.find("skipped").get("message") == "night 1 of 3" for c in cases)
    assert root.get("skipped") == str(len(cases)) and root.get("failures") == "0"
    assert root.get("name").startswith("tkperf check: loop device over ")
    rc, _, err = check(capsys, example("example-ssd"), "--not-judged", "x", "--baseline", example("example-ssd"))
    assert rc == EXIT_USAGE and "--not-judged" in err
    rc, _, err = check(capsys, example("example-ssd"))
    assert rc == EXIT_USAGE and "--baseline" in err


def test_noise_and_warn_are_visible_in_junit(capsys, tmp_path):
    """warn (no noise estimate) is a skipped case; noise a passing case with the
    property verdict=noise and its first output line saying so."""
    cells = (regression.Cell("wsat", "first_interval_iops", "first", "IOPS", "higher", 100.0, 70.0, -30.0,
                             regression.WARN),
             regression.Cell("iops", "rnd_4k_read_iops", "R", "IOPS", "higher", 100.0, 80.0, -20.0,
                             regression.NOISE, p_value=0.2, p_adjusted=0.4),
             regression.Cell("tp", "seq_read_mb_s", "R", "MB/s", "higher", 100.0, 100.0, 0.0, regression.OK))
    root = lxml.etree.fromstring(check_cli.junit_xml(regression.Comparison(10.0, cells), "r.xml", ["b.xml"]))
    warn, noisy, ok = root.findall("testsuite/testcase")
    assert warn.find("skipped").get("type") == "warn" and "no noise estimate" in warn.find("skipped").get("message")
    assert noisy.find("skipped") is None and noisy.find("failure") is None
    assert noisy.find("properties/property").attrib == {"name": "verdict", "value": "noise"}
    assert noisy.find("system-out").text.startswith("noise: R: 100 -> 80 IOPS (-20.0%")
    assert ok.find("properties") is None and root.get("skipped") == "1"
    assert "2 figures worse beyond the tolerance but not failed" in root.find("testsuite/system-out").text


def test_the_nights_shift_is_printed_with_what_p_means(capsys, tmp_path, ssd):
    nights = [saved(tmp_path, f"night{i}", scaled(ssd, "iops", WRITE_4K, "iops", f))
              for i, f in enumerate((0.95, 1.0, 1.05))]
    rc, out, _ = check(capsys, saved(tmp_path, "result", ssd), "--baseline", *nights)
    (line,) = [line for line in out.splitlines() if line.startswith("night's shift: ")]
    assert "p adj " in line and "never below p" in line and out.splitlines()[-3] == line
    assert out.splitlines()[-2].startswith("extreme: lat/rnd_4k_write_lat_largest_us, "
                                           "lat/rnd_4k_write_lat_p99_99_us (a few I/Os set each, ")
    for cells in (r.split() for r in rows(out)[1:]):
        p, adj = cells[-3], cells[-2]
        if p not in ("-", "<0.001") and adj != "<0.001":
            assert float(adj) >= float(p)


def test_the_json_summary_gets_the_checks_verdict_and_host_facts(capsys, tmp_path, pair, ssd):
    run = copy.deepcopy(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    run.facts = dict(run.facts, simdrive_host={"replies": 10, "late_replies": 1, "late_share": 0.1,
                                               "idle_share": 0.3})
    result, base = pair(run)
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"schema": "tkperf-summary", "version": 1, "name": "n"}))
    rc, _, _ = check(capsys, result, "--baseline", base, "--summary", str(summary))
    assert rc == EXIT_REGRESSION
    doc = json.loads(summary.read_text())
    assert doc["name"] == "n" and doc["check"]["verdict"] == "regression"
    assert [(r["test"], r["figure"]) for r in doc["check"]["regressions"]] == [("iops", "rnd_4k_write_iops")]
    assert doc["check"]["host"]["simdrive_host"]["idle_share"] == 0.3 and doc["check"]["host"]["hostname"] == "vm"
    with open(os.path.join(ROOT, "tkperf", "model", "data", "summary.schema.json")) as fh:
        schema = json.load(fh)
    jsonschema.validate(doc["check"], schema["properties"]["check"])
    (tmp_path / "bad.json").write_text("[1]")
    rc, _, err = check(capsys, result, "--baseline", base, "--summary", str(tmp_path / "bad.json"))
    assert rc == EXIT_USAGE and err.count("\n") == 1 and "not a tkperf --json-summary file" in err


def _reads(run: RunResult, level: float) -> RunResult:
    """A copy whose LAT 4k reads' window mean response times lie within 1% of ``level``."""
    run = copy.deepcopy(run)
    t = run.test("lat")
    window = [r.index for r in t.window_rounds()]

    def read(w: Workload, i: int) -> Workload:
        if w.name != "rnd-4k-100-0" or i not in window:
            return w
        return dataclasses.replace(w, read=dataclasses.replace(
            w.read, lat_mean_us=level * CALM[window.index(i) % len(CALM)]))
    t.rounds = [dataclasses.replace(r, workloads=tuple(read(w, r.index) for w in r.workloads)) for r in t.rounds]
    return run


def test_a_read_latency_rise_is_checked(capsys, tmp_path, ssd):
    """LAT's headline holds the 4k writes; check also judges the reads it measured."""
    base, result = saved(tmp_path, "base", _reads(ssd, 100.0)), saved(tmp_path, "result", _reads(ssd, 130.0))
    rc, out, _ = check(capsys, result, "--baseline", base)
    assert rc == EXIT_REGRESSION, out
    assert out.splitlines()[-1].endswith(": lat/rnd_4k_read_lat_mean_us +30.0%")


def test_a_significant_small_shift_fails_no_figure_its_own_noise_explains():
    """Twelve steady figures (0.2% apart night to night) all 2% lower: the
    night's shift is significant.  A noisy figure (15% apart, one value a
    night) 14% lower is beyond the tolerance, but its own nights show such
    moves: noise, not a regression; a steady figure 20% lower is one."""
    from tkperf.model import family
    from tkperf.model.figures import Figure

    steady = (1.0, 1.002, 0.998, 1.001, 0.999, 1.002, 0.998)
    noisy = (1.0, 1.15, 0.85, 1.1, 0.9, 1.2, 0.8)

    def item(k: int, nights, value: float, windows=True) -> regression.Input:
        wins = tuple((v * 0.999, v, v * 1.001) for v in nights) if windows else ()
        mine = (value * 0.999, value, value * 1.001) if windows else ()
        data = family.Figure("higher", tuple(nights), value, wins, mine)
        return regression.Input("t", Figure(f"f{k}", f"f{k}", value, "IOPS", "higher"), data)

    def night(steady_tonight: list) -> regression.Comparison:
        items = [item(k, [1000 * f for f in steady[k % 2:] + steady[:k % 2]], 1000 * t)
                 for k, t in enumerate(steady_tonight)]
        items.append(item(99, [5000 * f for f in noisy], 5000 * 0.86, windows=False))
        return regression.assess(items, 10.0)

    calm = night([0.98] * 12)
    assert calm.method == regression.NIGHT_ADJUSTED and calm.night.adjusted_worse < 0.05
    assert [c.verdict for c in calm.cells] == [regression.OK] * 12 + [regression.NOISE]
    noisy_cell = calm.cells[-1]
    assert noisy_cell.p_value is not None and noisy_cell.p_adjusted >= noisy_cell.p_value  # p adj never below p
    one = night([0.98] * 11 + [0.8])
    assert [c.figure for c in one.regressions] == ["f11"]


def host(run: RunResult, idle: float, late: float = 0.0) -> RunResult:
    """A copy with the emulated SSD's host facts: its idle share and share of late replies."""
    run = copy.deepcopy(run)
    run.facts = dict(run.facts, simdrive_host={"replies": 1000, "late_replies": int(late * 1000),
                                               "late_share": late, "idle_share": idle, "max_late_s": 0.01,
                                               "late_s": 0.001, "threshold": 0.05})
    return run


def test_a_night_the_host_limited_is_said_to_be(ssd):
    """The emulated SSD's idle share above every baseline's, or late replies
    beyond the caveat: a warning that names the shares."""
    bases = [host(ssd, v) for v in (0.22, 0.30, 0.36)]
    (line,) = comparable.host_warnings(host(ssd, 0.38 + 0.001), bases)
    assert line.startswith("host-limited night: the emulated SSD was idle 38% of the result's run, against 22%-36%")
    assert comparable.host_warnings(host(ssd, 0.37), bases) == []  # within 2 points of the busiest baseline
    assert comparable.host_warnings(ssd, bases) == []  # a run that recorded none
    (late,) = comparable.host_warnings(host(ssd, 0.30, late=0.08), bases)
    assert late.startswith("result: emulated SSD host-limited: 80 of 1,000 replies (8.0%)")
    assert comparable.host_limited(host(ssd, 0.30, late=0.08), bases)  # either makes the night host-limited
    assert not comparable.host_limited(host(ssd, 0.37), bases) and not comparable.host_limited(ssd, bases)


def _named(run: RunResult, name: str, started: str) -> RunResult:
    run = copy.deepcopy(run)
    run.name, run.started = name, started
    return run


def test_a_persisting_regression_says_since_when_in_junit_json_and_text(capsys, tmp_path, pair, ssd):
    """--red-nights (the nightly job's red nights before this one): a red night
    says it is red since the first of them, and each regressed figure since
    the first night of its own unbroken run of red nights (judged again
    against the same baseline): the JUnit suite's properties and failure
    messages, the summary's check entry, --json, and a text line."""
    slower = scaled(ssd, "iops", WRITE_4K, "iops", 0.7)
    _, base = pair(ssd)
    first = saved(tmp_path, "n1", _named(slower, "nightly-1", "2026-12-01T01:30:00+00:00"))
    second = saved(tmp_path, "n2", _named(slower, "nightly-2", "2026-12-02T01:30:00+00:00"))
    tonight = saved(tmp_path, "n3", _named(scaled(slower, "lat", WRITE_4K, "lat_mean_us", 1.5), "nightly-3",
                                           "2026-12-03T01:30:00+00:00"))
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.json"
    summary.write_text(json.dumps({"schema": "tkperf-summary", "version": 1, "name": "n"}))
    rc, out, _ = check(capsys, tonight, "--baseline", base, "--red-nights", first, second, "--junit", str(junit),
                       "--summary", str(summary))
    assert rc == EXIT_REGRESSION
    assert out.splitlines()[-2] == ("red since nightly-1 (2026-12-01 01:30), 3 nights: a regression that persists "
                                    "(iops/rnd_4k_write_iops since nightly-1 (2026-12-01 01:30), 3 nights; "
                                    "lat/rnd_4k_write_lat_mean_us since nightly-3 (2026-12-03 01:30), 1 night)")
    suite = lxml.etree.parse(str(junit)).getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert (props["red_since"], props["red_since_night"], props["red_since_result"], props["red_nights"]) == \
        ("nightly-1", "2026-12-01 01:30", first, "3")
    assert suite.find("system-out").text.startswith("red since nightly-1 (2026-12-01 01:30), 3 nights")
    failures = {c.get("name"): c.find("failure").get("message") for c in suite.findall("testcase")
                if c.find("failure") is not None}
    assert failures["rnd_4k_write_iops"].endswith("; red since nightly-1 (2026-12-01 01:30), 3 nights")
    assert failures["rnd_4k_write_lat_mean_us"].endswith("; red since nightly-3 (2026-12-03 01:30), 1 night")
    doc = json.loads(summary.read_text())["check"]
    assert doc["red_since"] == {"name": "nightly-1", "night": "2026-12-01 01:30", "result": first, "nights": 3}
    assert {r["figure"]: r["red_since"]["nights"] for r in doc["regressions"]} == \
        {"rnd_4k_write_iops": 3, "rnd_4k_write_lat_mean_us": 1}
    with open(os.path.join(ROOT, "tkperf", "model", "data", "summary.schema.json")) as fh:
        jsonschema.validate(doc, json.load(fh)["properties"]["check"])
    rc, out, _ = check(capsys, tonight, "--baseline", base, "--red-nights", first, second, "--json")
    data = json.loads(out)
    with open(SCHEMA, encoding="utf-8") as fh:
        jsonschema.validate(data, json.load(fh), cls=jsonschema.Draft202012Validator)
    assert data["red_since"]["nights"] == 3
    assert {c["figure"]: c["red_since"]["name"] for c in data["figures"] if "red_since" in c} == \
        {"rnd_4k_write_iops": "nightly-1", "rnd_4k_write_lat_mean_us": "nightly-3"}


def test_a_red_night_is_red_since_the_unbroken_run_of_its_figure(capsys, tmp_path, pair, ssd):
    """A figure that was green on the middle night is red since the last; a
    red night whose file is gone still counts for the night, named by its file;
    a green night says nothing and reads none of them."""
    slower = scaled(ssd, "iops", WRITE_4K, "iops", 0.7)
    _, base = pair(ssd)
    first = saved(tmp_path, "n1", _named(slower, "nightly-1", "2026-12-01T01:30:00+00:00"))
    other = saved(tmp_path, "n2", _named(scaled(ssd, "lat", WRITE_4K, "lat_mean_us", 1.5), "nightly-2",
                                         "2026-12-02T01:30:00+00:00"))
    gone = str(tmp_path / "nightly-0.xml")
    tonight = saved(tmp_path, "n3", _named(slower, "nightly-3", "2026-12-03T01:30:00+00:00"))
    rc, out, _ = check(capsys, tonight, "--baseline", base, "--red-nights", gone, first, other, "--json")
    data = json.loads(out)
    assert rc == EXIT_REGRESSION and data["red_since"] == {"name": "nightly-0", "night": "", "result": gone,
                                                           "nights": 4}
    (cell,) = [c for c in data["figures"] if "red_since" in c]
    assert cell["red_since"]["name"] == "nightly-3" and cell["red_since"]["nights"] == 1
    rc, out, _ = check(capsys, base, "--baseline", base, "--red-nights", gone, "--json")
    assert rc == EXIT_OK and json.loads(out)["red_since"] is None


def _read_iops(run: RunResult, factor: float) -> RunResult:
    """A copy whose IOPS test's 4k reads ran ``factor`` times as fast in the window."""
    run = copy.deepcopy(run)
    t = run.test("iops")
    window = {r.index for r in t.window_rounds()}

    def scale(w: Workload) -> Workload:
        if w.name != "rnd-4k-100-0":
            return w
        return dataclasses.replace(w, read=dataclasses.replace(w.read, iops=w.read.iops * factor))
    t.rounds = [dataclasses.replace(r, workloads=tuple(scale(w) for w in r.workloads)) if r.index in window else r
                for r in t.rounds]
    return run


def test_a_figure_the_host_path_sets_is_left_out_on_a_host_limited_night(capsys, tmp_path, ssd):
    """The 4k reads 40% slower on a night the emulated SSD was idle more than
    on every baseline night (fio starved): host-limited, shown, a skipped
    JUnit case and in the summary's host_limited, not red; the 4k writes,
    which the drive sets, 30% slower the same night are still judged.  With
    the idle share of an ordinary night the same reads are a regression."""
    nights = [saved(tmp_path, f"night{i}", host(scaled(ssd, "iops", WRITE_4K, "iops", f), idle))
              for i, (f, idle) in enumerate(((0.98, 0.22), (1.0, 0.30), (1.02, 0.36)))]
    starved = _read_iops(scaled(ssd, "iops", WRITE_4K, "iops", 0.7), 0.6)
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.json"
    summary.write_text(json.dumps({"schema": "tkperf-summary", "version": 1, "name": "n"}))
    result = saved(tmp_path, "starved", host(starved, 0.40))
    rc, out, _ = check(capsys, result, "--baseline", *nights, "--junit", str(junit), "--summary", str(summary))
    assert rc == EXIT_REGRESSION
    verdicts = {line.split()[1]: line.split()[-1] for line in rows(out)}
    assert verdicts["rnd_4k_read_iops"] == "host-limited" and verdicts["rnd_4k_write_iops"] == "REGRESSION"
    assert verdicts["first_interval_iops"] == "host-limited" and verdicts["rnd_4k_mixed_iops"] == "host-limited"
    assert out.splitlines()[-1].endswith(": iops/rnd_4k_write_iops -30.0%") and "3 host-limited" in out
    assert any(line.startswith("warning: iops/rnd_4k_mixed_iops, iops/rnd_4k_read_iops, wsat/first_interval_iops "
                               "left out of the verdict (host-limited)") for line in out.splitlines())
    cases = {c.get("name"): c for c in lxml.etree.parse(str(junit)).iter("testcase")}
    skipped = cases["rnd_4k_read_iops"].find("skipped")
    assert skipped.get("type") == "host-limited" and skipped.get("message").startswith("host-limited: ")
    assert cases["rnd_4k_write_iops"].find("failure") is not None
    doc = json.loads(summary.read_text())["check"]
    assert {h["figure"] for h in doc["host_limited"]} == {"rnd_4k_read_iops", "rnd_4k_mixed_iops",
                                                         "first_interval_iops"}
    with open(os.path.join(ROOT, "tkperf", "model", "data", "summary.schema.json")) as fh:
        jsonschema.validate(doc, json.load(fh)["properties"]["check"])
    rc, out, _ = check(capsys, result, "--baseline", *nights, "--json")
    with open(SCHEMA, encoding="utf-8") as fh:
        jsonschema.validate(json.loads(out), json.load(fh), cls=jsonschema.Draft202012Validator)
    # the same reads on a night the drive was as busy as on the others: judged, and red
    ordinary = saved(tmp_path, "ordinary", host(_read_iops(ssd, 0.6), 0.30))
    rc, out, _ = check(capsys, ordinary, "--baseline", *nights)
    assert rc == EXIT_REGRESSION and out.splitlines()[-1].endswith(": iops/rnd_4k_read_iops -40.0%")
    assert "host-limited" not in out


def test_machine_files_carry_a_figures_digits_not_float_noise():
    # Issue 60 item 6: 'result=19409.908317200003' in JUnit and 'wall_s 8.037375912000016' in CSV
    from tkperf.cli import export

    assert checkfiles._digits(19409.908317200003) == "19409.9083172" and checkfiles._digits(None) == "None"
    assert export._number(8.037375912000016) == "8.037375912"
    assert export._number(4363.163212072) == "4363.163212072"  # fio's own digits are all kept


def test_the_slowest_io_is_judged_alone_on_its_rounds_spread():
    """A night 2% slower in twelve steady figures (the night's shift is
    significant) whose largest write latency is 13% above seven nights that
    were all within 0.4%, while its rounds' maxima spread 5%: the slowest
    I/O of a night is one draw of them, so this is noise (judged alone, on a
    log scale, its spread one round's), and the table says how it was
    judged; 83% above is a regression.  The same values under a key that is
    no extreme (a mean) join the night and fail through its shift."""
    from tkperf.cli.checktext import extreme_lines
    from tkperf.model import family
    from tkperf.model.figures import Figure

    steady = (1.0, 1.002, 0.998, 1.001, 0.999, 1.002, 0.998)
    calm = (90000.0, 90500.0, 89800.0, 90200.0, 90100.0, 89900.0, 90300.0)

    def item(key: str, nights, value: float, better: str = "higher", spread: float = 0.001) -> regression.Input:
        wins = tuple((v * (1 - 2 * spread), v * (1 - spread), v) for v in nights)
        mine = (value * (1 - 2 * spread), value * (1 - spread), value)
        data = family.Figure(better, tuple(nights), value, wins, mine)
        return regression.Input("lat", Figure(key, key, value, "us", better), data)

    def night(key: str, worse: float) -> regression.Comparison:
        items = [item(f"f{k}", [1000 * f for f in steady[k % 2:] + steady[:k % 2]], 980.0) for k in range(12)]
        return regression.assess(items + [item(key, calm, 90100 * worse, "lower", spread=0.05)], 10.0)

    largest = "rnd_4k_write_lat_largest_us"
    assert regression.extreme(largest) and regression.extreme("rnd_4k_write_lat_p99_99_us")
    assert not regression.extreme("rnd_4k_write_lat_p99_9_us") and not regression.extreme("rnd_4k_write_lat_max_us")
    ordinary = night(largest, 1.134)
    assert ordinary.night is not None and ordinary.night.adjusted_worse < 0.05
    assert ordinary.cells[-1].verdict == regression.NOISE and ordinary.regressions == []
    assert extreme_lines(ordinary) == [
        f"extreme: lat/{largest} (a few I/Os set it, heavy-tailed night to night): judged on its own whole move "
        "against its nights, on a log scale, the spread at least one round's, never through the night's shift"]
    assert [c.figure for c in night(largest, 1.83).regressions] == [largest]
    assert [c.figure for c in night("rnd_4k_write_lat_p50_us", 1.134).regressions] == ["rnd_4k_write_lat_p50_us"]


def test_the_real_nights_benchmark_judges_recorded_extremes_offline(tmp_path):
    """benchmarks/nightly_real.py --judge: the recorded nights' largest latency
    (its rounds in KEY:rounds) against the nights before it, the normal
    interval and the extreme model side by side.  A night 13% above nights
    within 0.3% of each other, whose rounds spread 10%, is beyond the normal
    interval and within the extreme model; an 83% planted move beyond
    both."""
    key = "rnd_4k_write_lat_largest_us"
    calm = [90000, 90200, 89800, 90100, 89900, 90050]
    lines = [f"night,kind,exit,verdict,load_1min,idle_pct,secs,{key},{key}:rounds"]
    for i, v in enumerate(calm + [102000]):
        lines.append(f"N{i + 1:02d},identical,0,ok,1.0,20.0,90,{v},{v * 0.8:g};{v * 0.9:g};{v}")
    lines.append(f"P1,program,1,regression,1.0,20.0,90,{90000 * 1.83:g},{90000 * 1.7:g};{90000 * 1.83:g}")
    data = tmp_path / "nights.csv"
    data.write_text("# recorded\n" + "\n".join(lines) + "\n")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "nightly_real.py"), "--judge", str(data)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == f"{key}:"
    assert out[1].split()[:3] == ["identical", "normal,", "values"] and "p<0.05  1 of 4," in out[1]
    assert out[2].split()[:2] == ["identical", "log,"] and "p<0.05  0 of 4," in out[2]
    assert out[4].startswith("  planted") and "p<0.05  1 of 1, p<0.01  1;" in out[4]


def test_a_steady_figure_is_shrunk_towards_its_own_scale_not_the_noisiest():
    """A loaded host: five figures swing 30-40% night to night (their rounds
    5% apart), six stay within 0.1% (rounds 0.1% apart); one of those is
    16% slower on a night with no shift.  Its spread is shrunk towards its
    kind's at its own scale (window variance times the night's median
    ratio), so it is a regression; towards the plain mean of the figures'
    spreads it was noise.  The noisy ones moving 25% stay noise."""
    from tkperf.model import family
    from tkperf.model.figures import Figure

    swing = (1.0, 1.4, 0.7, 1.3, 0.75)
    steady = (1.0, 1.001, 0.999, 1.0005, 0.9995)

    def item(key: str, nights, value: float, spread: float) -> regression.Input:
        wins = tuple((v * (1 - spread), v, v * (1 + spread)) for v in nights)
        data = family.Figure("higher", tuple(nights), value, wins, (value * (1 - spread), value, value * (1 + spread)))
        return regression.Input("t", Figure(key, key, value, "IOPS", "higher"), data)

    items = [item(f"noisy{k}", [1000 * f for f in swing[k:] + swing[:k]], 1000 * (0.75 if k == 0 else 1.0), 0.05)
             for k in range(5)]
    items += [item(f"steady{k}", [500 * f for f in steady[k % 5:] + steady[:k % 5]], 500.0, 0.001) for k in range(5)]
    items.append(item("slower", [500 * f for f in steady], 500 * 0.84, 0.001))
    comparison = regression.assess(items, 10.0)
    assert comparison.method == regression.NIGHT_ADJUSTED
    assert [c.figure for c in comparison.regressions] == ["slower"]
    assert comparison.cells[0].verdict == regression.NOISE
