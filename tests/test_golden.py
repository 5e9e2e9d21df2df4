"""The output of the committed examples may not drift: ``show``, ``show --json``
and the report's and the comparison's reST are pinned as golden files.

The golden files were written by tkperf before the code was reshaped into
test types (format 1); a line that names the result format version is the
only kind of line allowed to differ.
"""
import json
import os
import re

import pytest

from tkperf.cli import main

HERE = os.path.dirname(__file__)
GOLDEN = os.path.join(HERE, "data", "golden")
EXAMPLES = os.path.join(HERE, "..", "examples")
NAMES = ["example-ssd", "example-ssd-2", "example-client", "example-full"]


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as fh:
        return fh.read()


def _lines(text: str):
    return [ln for ln in text.splitlines() if not re.search(r"\bformat[ _-]?version\b", ln, re.I)]


def _example(name: str) -> str:
    return os.path.join(EXAMPLES, f"{name}.xml")


@pytest.mark.parametrize("name", NAMES)
def test_show_json_is_unchanged(name, capsys):
    assert main(["show", _example(name), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads(_golden(f"{name}.show.json"))


@pytest.mark.parametrize("name", NAMES)
def test_show_text_is_unchanged(name, capsys):
    assert main(["show", _example(name)]) == 0
    assert _lines(capsys.readouterr().out) == _lines(_golden(f"{name}.show.txt"))


@pytest.mark.parametrize("name", NAMES)
def test_report_rst_is_unchanged(name, tmp_path):
    assert main(["report", _example(name), "--format", "rst", "--outdir", str(tmp_path), "-q"]) == 0
    with open(tmp_path / f"{name}.rst", encoding="utf-8") as fh:
        assert _lines(fh.read()) == _lines(_golden(f"{name}.report.rst"))


def test_comparison_rst_is_unchanged(tmp_path):
    files = [_example(n) for n in NAMES]
    assert main(["compare", *files, "--format", "rst", "--outdir", str(tmp_path), "-q"]) == 0
    with open(tmp_path / "comparison.rst", encoding="utf-8") as fh:
        assert _lines(fh.read()) == _lines(_golden("compare-all.report.rst"))
