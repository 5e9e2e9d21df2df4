"""``tkperf check``: a result against a baseline, for nightly QA."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from typing import Callable

import jsonschema
import lxml.etree
import pytest

from tkperf.cli import main
from tkperf.errors import (EXIT_INTERNAL, EXIT_NOT_COMPARABLE, EXIT_OK, EXIT_REGRESSION,
                           EXIT_RESULT_FILE, EXIT_USAGE)
from tkperf.model import regression, store
from tkperf.model.results import RunResult, Workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "tkperf", "model", "data", "check.schema.json")
WRITE_4K = "rnd-4k-0-100"  # IOPS: the RND 4k write workload; LAT: the tracked workload


def example(name: str) -> str:
    return os.path.join(ROOT, "examples", f"{name}.xml")


@pytest.fixture(scope="module")
def ssd() -> RunResult:
    return store.load(example("example-ssd"))


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
    assert lines[0].split() == ["test", "figure", "unit", "baseline", "result", "change", "%", "verdict"]
    assert len(lines) == 1 + 11 + 1  # header, every headline figure of the four tests, summary
    assert lines[-1] == "ok: 11 figures within 10% of the baseline"
    assert "REGRESSION" not in out and err == ""


def test_an_iops_drop_in_one_cell_is_a_regression(capsys, pair, ssd):
    result, base = pair(scaled(ssd, "iops", WRITE_4K, "iops", 0.8))
    rc, out, _ = check(capsys, result, "--baseline", base)
    assert rc == EXIT_REGRESSION
    bad = [line for line in out.splitlines()[1:-1] if "REGRESSION" in line]
    assert len(bad) == 1 and bad[0].split()[:2] == ["iops", "rnd_4k_write_iops"] and "-20.0" in bad[0]
    assert out.splitlines()[-1] == "REGRESSION: 1 of 11 figures worse than 10%: iops/rnd_4k_write_iops -20.0%"


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
    improved = [line.split()[1] for line in out.splitlines()[1:-1] if line.endswith("improved")]
    assert improved == ["rnd_4k_write_iops", "rnd_4k_write_lat_mean_us"]
    assert out.splitlines()[-1].endswith(", 2 improved")


@pytest.mark.parametrize("better,change,verdict", [
    ("higher", -10.0, "ok"), ("higher", -10.01, "regression"), ("higher", 12.0, "improved"),
    ("lower", 10.5, "regression"), ("lower", -11.0, "improved"), ("", -90.0, "info"),
    ("higher", None, "info"),
])
def test_judge(better, change, verdict):
    assert regression.judge(better, change, 10.0) == verdict


def test_change_of_a_zero_baseline():
    assert regression.change_pct(0.0, 0.0) == 0.0 and regression.change_pct(0.0, 5.0) is None


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
    assert regression.not_comparable(run, other) == [
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
    (reason,) = regression.not_comparable(big, ssd)
    assert reason.startswith("capacities more than 2x apart")
    twice = copy.deepcopy(ssd)
    twice.device = dataclasses.replace(twice.device, size_bytes=ssd.device.size_bytes * 2)
    assert regression.not_comparable(twice, ssd) == []


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
    assert [line.split()[1] for line in out.splitlines()[1:-1]] == ["rnd_4k_read_iops", "seq_write_mb_s"]


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
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures")) == ("11", "2")
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("11", "2")
    cases = suite.findall("testcase")
    assert len(cases) == 11 and all(c.find("system-out") is not None for c in cases)
    failed = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failed == [("iops", "rnd_4k_write_iops"), ("lat", "rnd_4k_write_lat_mean_us")]
    message = cases[0].find("failure").get("message")
    assert "-20.0%" in message and "tolerance 10%" in message
    assert [p.get("name") for p in suite.find("properties")] == ["result", "baseline", "tolerance_pct"]
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
    assert (data["version"], data["tolerance_pct"], data["verdict"]) == (1, 5.0, "regression")
    assert (data["result"], data["baseline"]) == (result, base)
    cell = data["figures"][0]
    assert (cell["test"], cell["figure"], cell["better"], cell["verdict"]) == \
        ("iops", "rnd_4k_write_iops", "higher", "regression")
    assert cell["change_pct"] == pytest.approx(-20.0)
    assert {c["verdict"] for c in data["figures"]} == {"regression", "ok", "info"}


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
    argv = ["check", example("example-ssd"), "--baseline", example("example-ssd-2")] + extra
    code = ("import sys\n"
            "from tkperf.cli import main\n"
            f"rc = main({argv!r})\n"
            "sys.exit(99 if 'matplotlib' in sys.modules else rc)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode != 99, "check imported matplotlib"
    assert proc.returncode == EXIT_REGRESSION, proc.stderr  # example-ssd-2 is another drive
    assert ('"verdict": "regression"' if extra else "REGRESSION:") in proc.stdout
