"""Each command loads what it needs (issue 59 item 4): a command that builds
no report imports no plotting (matplotlib) and none of the report's document
builders, and ``--version`` no command module and no test type; ``show`` of
a result loads the test types of its tests alone.  What is loaded is read in
a fresh interpreter's ``sys.modules`` after the command ran (behaviour, not
time: ``benchmarks/frontdoor.py --starts`` prints the times)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "example-ssd.xml")
#: Plotting and the report's document builders (reST, HTML, PDF), which only report, compare, history and a run use.
HEAVY = ("matplotlib", "tkperf.report.report", "tkperf.render.documents", "tkperf.render.pdf",
         "tkperf.render.rst", "tkperf.render.charts", "tkperf.render.parallel", "docutils", "reportlab")
#: Runs tkperf's main on argv in this interpreter, then says what it loaded.
PROBE = """
import json, sys
from tkperf.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = sorted(sys.modules)
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def _loaded(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=300,
                          cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    out = json.loads(done.stderr.strip().splitlines()[-1])
    assert out["code"] == 0, done.stderr
    return out


def _types(loaded: list) -> set:
    return {m.split(".")[2] for m in loaded if m.startswith("tkperf.testtypes.")}


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("help",), ("completion", "bash"), ("show", EXAMPLE),
                                  ("show", EXAMPLE, "--json"), ("check", EXAMPLE, "--baseline", EXAMPLE),
                                  ("check", "--help")],
                         ids=["version", "help-flag", "help", "completion", "show", "show-json", "check",
                              "check-help"])
def test_a_command_that_builds_no_report_loads_no_plotting_and_no_report_builder(argv):
    loaded = _loaded(*argv)["loaded"]
    assert [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY] == []


def test_version_loads_no_command_module_and_no_test_type():
    loaded = _loaded("--version")["loaded"]
    assert [m for m in loaded if m.startswith("tkperf")] == ["tkperf", "tkperf.cli", "tkperf.errors",
                                                             "tkperf.untrusted"]


@pytest.mark.parametrize("command", [("show",), ("check", "--baseline", EXAMPLE)], ids=["show", "check"])
def test_a_result_loads_the_test_types_of_its_tests_alone(command):
    """example-ssd.xml holds IOPS, TP, LAT and WSAT: their packages load, none of the 12 other types'."""
    loaded = _loaded(command[0], EXAMPLE, *command[1:])["loaded"]
    assert _types(loaded) == {"iops", "throughput", "latency", "writesat"}
