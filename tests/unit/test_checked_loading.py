"""A test whose stored data its own type would never write is named and
left out when a file is shown; the rest of the file still shows
(issue 25 item 4: TestType.check_data was documented but never called)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.kit.composite import SWEEP_ROUND

ROOT = Path(__file__).resolve().parents[2]


def mixed_file(tmp_path) -> str:
    """example-ssd's four tests and a DIRTH test whose sweep round names no round."""
    run = store.load(str(ROOT / "examples" / "example-ssd.xml"))
    dirth = store.load(str(ROOT / "tests" / "data" / "golden" / "inputs" / "dirth.xml")).tests[0]
    dirth.data[SWEEP_ROUND] = "99"
    dirth.raw = None  # written from .data, not the stored element read
    run.tests.append(dirth)
    path = tmp_path / "mixed.xml"
    store.save(run, str(path))
    return str(path)


def test_show_names_the_bad_test_and_shows_the_rest(tmp_path, capsys):
    path = mixed_file(tmp_path)
    assert main(["show", path, "--json"]) == 0
    out, err = capsys.readouterr()
    keys = [t["key"] for t in json.loads(out)["tests"]]
    assert keys == ["iops", "tp-1024k", "lat", "wsat"]
    (line,) = [x for x in err.splitlines() if "left out" in x]
    assert "test dirth-4k-0-100 is left out: its stored data is not what dirth writes" in line
    assert "the sweep round '99' names no round of the test" in line
    assert store.load(path).tests[-1].key == "dirth-4k-0-100"  # the file itself is untouched


@pytest.mark.docs  # builds whole documents: the docs tier
def test_report_says_it_in_the_run_notes(tmp_path, capsys):
    path = mixed_file(tmp_path)
    assert main(["report", path, "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"]) == 0
    text = " ".join((tmp_path / "r" / "example-ssd.rst").read_text().split())
    assert "test dirth-4k-0-100 is left out" in text and "Demand Intensity" not in text
    assert "IOPS" in text


def test_a_good_file_loses_nothing(capsys):
    path = str(ROOT / "tests" / "data" / "golden" / "inputs" / "dirth.xml")
    assert main(["show", path, "--json"]) == 0
    out, err = capsys.readouterr()
    assert [t["key"] for t in json.loads(out)["tests"]] == ["dirth-4k-0-100"] and "left out" not in err


@pytest.mark.docs  # builds whole documents: the docs tier
def test_a_report_says_each_phase_on_stderr_unless_quiet(tmp_path, capsys):
    # Issue 60 item 3: a report of a full run takes 10-20 s; off a terminal too it says what it is doing
    path = str(ROOT / "examples" / "example-ssd.xml")
    assert main(["report", path, "--format", "rst", "--outdir", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("tkperf report: drawing ") and " charts and writing rst in " in err[0]
    assert err[1].startswith("tkperf report: ") and " charts drawn (" in err[1] and err[1].endswith("finishing rst")
    assert main(["report", path, "--format", "rst", "--outdir", str(tmp_path / "q"), "-q"]) == 0
    assert capsys.readouterr().err == ""
