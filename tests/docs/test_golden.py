"""The output of recorded result files may not drift: ``show``, ``show --json``
and the report's reST of the four ``examples/`` files and of one short real
run per other built-in test type (``tests/data/golden/inputs/``), and the
comparison's reST of the examples, are pinned as golden files.

``python tests/lab/regenerate_golden.py`` writes them again (README.rst there).
A line that names the result format version is the only kind of line
allowed to differ (the first golden files were written at format 1).
"""
import json
import os
import re

import pytest

from regenerate_golden import EXAMPLES, GOLDEN, NAMES, inputs
from tkperf import store
from tkperf.cli import main
from tkperf.kit import registry

INPUTS = dict(inputs())


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as fh:
        return fh.read()


def _lines(text: str):
    return [ln for ln in text.splitlines() if not re.search(r"\bformat[ _-]?version\b", ln, re.I)]


def test_every_built_in_test_type_has_golden_output():
    builtin = {n for n, t in registry.types().items() if type(t).__module__.startswith("tkperf.testtypes.")}
    assert len(builtin) >= 13, sorted(builtin)
    covered = {t.type for path in INPUTS.values() for t in store.load(path).tests if t.done}
    assert builtin <= covered, f"no golden input ran {sorted(builtin - covered)}"
    # every input has its three golden files, and no golden file is left from an input that is gone
    want = {f"{n}.{kind}" for n in INPUTS for kind in ("show.json", "show.txt", "report.rst")}
    have = {f for f in os.listdir(GOLDEN) if os.path.isfile(os.path.join(GOLDEN, f))}
    assert have == want | {"README.rst", "compare-all.report.rst"}
    assert all(os.path.getsize(os.path.join(GOLDEN, f)) > 0 for f in want)


@pytest.mark.parametrize("name", INPUTS)
def test_show_json_is_unchanged(name, capsys):
    assert main(["show", INPUTS[name], "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == json.loads(_golden(f"{name}.show.json"))


@pytest.mark.parametrize("name", INPUTS)
def test_show_text_is_unchanged(name, capsys):
    assert main(["show", INPUTS[name]]) == 0
    assert _lines(capsys.readouterr().out) == _lines(_golden(f"{name}.show.txt"))


@pytest.mark.parametrize("name", INPUTS)
def test_report_rst_is_unchanged(name, tmp_path):
    assert main(["report", INPUTS[name], "--format", "rst", "--outdir", str(tmp_path), "-q"]) == 0
    with open(tmp_path / f"{name}.rst", encoding="utf-8") as fh:
        assert _lines(fh.read()) == _lines(_golden(f"{name}.report.rst"))


def test_comparison_rst_is_unchanged(tmp_path):
    files = [os.path.join(EXAMPLES, f"{n}.xml") for n in NAMES]
    assert main(["compare", *files, "--format", "rst", "--outdir", str(tmp_path), "-q"]) == 0
    with open(tmp_path / "comparison.rst", encoding="utf-8") as fh:
        assert _lines(fh.read()) == _lines(_golden("compare-all.report.rst"))
