"""Numbers that are not numbers (issue 32, class 2): every figure tkperf
reads is finite and in its physical range, or the file is refused (exit 7)
naming the element and attribute; ``check`` never exits 0 on a figure it
could not judge; every JSON document tkperf prints is strict RFC 8259."""
import json
import math
import os
import re

import numpy as np
import pytest

from sealing import reseal
from tkperf import store, strictjson
from tkperf.cli import main
from tkperf.errors import EXIT_NOT_COMPARABLE, EXIT_OK, EXIT_RESULT_FILE, ResultFileError
from tkperf.store import seal
from tkperf.verdict import regression

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
FORMAT1 = os.path.join(ROOT, "tests", "data", "format1", "example-ssd.xml")
TKPERF2 = os.path.join(ROOT, "tests", "data", "tkperf2", "hdd-2.2-hdwd110.xml")


def _refuse(token):
    raise AssertionError(f"{token} in JSON output")


def strict(text):
    """The JSON ``text`` by a strict parser: NaN and Infinity are no JSON."""
    return json.loads(text, parse_constant=_refuse)


def _first(data: bytes, element: str, attribute: str, value: str) -> bytes:
    """``data`` with ``attribute`` of the first ``<element>`` set to ``value``."""
    pattern = re.compile(rb"(<" + element.encode() + rb"\b[^>]*?\s" + attribute.encode() + rb'=")[^"]*(")')
    out, n = pattern.subn(lambda m: m.group(1) + value.encode() + m.group(2), data, count=1)
    assert n == 1, (element, attribute)
    return reseal(out) if seal.find(out) >= 0 else out


def _names(message, element, attribute):
    """The error names the element and attribute: tkperf's range check
    (``<read ...> attribute iops is nan``) or the schema's (a negative
    figure where it says ``minInclusive 0``: ``Element 'read', attribute 'iops'``)."""
    return bool(re.search(rf"<{element}\b.* attribute {attribute} is ", message)
                or re.search(rf"Element '{element}', attribute '{attribute}'", message))


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


HOSTILE = [("read", "iops", "NaN"), ("read", "iops", "INF"), ("write", "iops", "-INF"),
           ("read", "lat-mean-us", "-1.5"), ("read", "bw-bytes", "nan"), ("write", "lat-max-us", "-0.001"),
           ("round", "wall-s", "NaN"), ("round", "fio-s", "-3"), ("workload", "rwmixread", "150"),
           ("percentile", "us", "INF"), ("steadystate", "average", "NaN"), ("steadystate", "slope", "INF"),
           ("point", "value", "-INF"), ("device", "size-bytes", "-1")]


@pytest.mark.parametrize("element,attribute,value", HOSTILE,
                         ids=[f"{e}-{a}-{v}" for e, a, v in HOSTILE])
def test_a_figure_out_of_range_refuses_the_file_naming_it(tmp_path, capsys, element, attribute, value):
    with open(EXAMPLE, "rb") as fh:
        data = _first(fh.read(), element, attribute, value)
    path = _write(tmp_path, "bad.xml", data)
    with pytest.raises(ResultFileError) as err:
        store.load(path)
    assert _names(str(err.value), element, attribute)
    for argv in (["show", path], ["check", path, "--baseline", EXAMPLE], ["check", EXAMPLE, "--baseline", path],
                 ["export", path, "--csv", str(tmp_path / "csv")]):
        assert main(argv) == EXIT_RESULT_FILE, argv
        err_lines = capsys.readouterr().err.strip().splitlines()
        assert len(err_lines) == 1 and _names(err_lines[0], element, attribute)


def test_a_health_value_and_a_series_row_that_are_not_finite(tmp_path):
    run = store.load(os.path.join(ROOT, "examples", "example-full.xml"))
    wsat = run.test("wsat")
    path = str(tmp_path / "full.xml")
    store.save(run, path)
    with open(path, "rb") as fh:
        data = fh.read()
    rows = data.split(b"<?tkperf-row ")
    assert len(rows) > 2
    i = data.index(b"<?tkperf-row ")
    j = data.index(b"?>", i)
    row = data[i:j].split()
    row[-1] = b"nan"
    bad = reseal(data[:i] + b" ".join(row) + data[j:])
    with pytest.raises(ResultFileError, match=r"series .* row 1 column \S+ is nan"):
        store.loads(bad, "x.xml")
    assert wsat is not None
    if run.health:
        snap = run.health[0]
        name, _ = snap.values[0]
        bad = reseal(re.sub(rb'(<value name="' + re.escape(name.encode()) + rb'" value=")[^"]*', rb"\1NaN",
                            data, count=1))
        with pytest.raises(ResultFileError, match="<health>"):
            store.loads(bad, "x.xml")


def test_a_format1_file_with_nan_is_refused(tmp_path):
    with open(FORMAT1, "rb") as fh:
        data = _first(fh.read(), "read", "iops", "NaN")
    assert main(["show", _write(tmp_path, "old.xml", data)]) == EXIT_RESULT_FILE


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-104", b"1e999"])
def test_an_original_tkperf_file_with_a_number_that_is_not_one_is_refused(tmp_path, capsys, number):
    with open(TKPERF2, "rb") as fh:
        data = fh.read()
    bad = data.replace(b"[[[104, ", b"[[[" + number + b", ", 1)
    assert bad != data
    path = _write(tmp_path, "old.xml", bad)
    assert main(["show", path]) == EXIT_RESULT_FILE
    assert main(["import", path, "-o", str(tmp_path / "new.xml")]) == EXIT_RESULT_FILE
    assert not os.path.exists(tmp_path / "new.xml")
    capsys.readouterr()


def test_check_never_passes_a_figure_it_could_not_judge(tmp_path, capsys, monkeypatch):
    """A figure a test type computed as NaN (a spread over a median of 0, say):
    before, NaN compared as neither worse nor within the tolerance, and the
    figure was 'improved' with exit 0."""
    figures = regression.figures

    def nan_first(test):
        out = figures(test)
        if out:
            out[0] = type(out[0])(**{**out[0].__dict__, "value": math.nan})
        return out

    assert main(["check", EXAMPLE, "--baseline", EXAMPLE]) == EXIT_OK
    capsys.readouterr()
    monkeypatch.setattr(regression, "figures", nan_first)
    for argv in (["check", EXAMPLE, "--baseline", EXAMPLE], ["check", EXAMPLE, "--baseline", EXAMPLE, "--json"]):
        assert main(argv) == EXIT_NOT_COMPARABLE
        out, err = capsys.readouterr()
        assert out == "" and "cannot judge" in err and len(err.strip().splitlines()) == 1


def test_unjudged_cells_are_the_ones_not_finite():
    def cell(base, result, change):
        return regression.Cell("iops", "f", "f", "IOPS", "higher", base, result, change, regression.OK)

    good, zero = cell(1.0, 2.0, 100.0), cell(0.0, 1.0, None)
    bad = [cell(math.nan, 1.0, math.nan), cell(1.0, math.inf, math.inf), cell(1.0, 1.0, math.nan)]
    comparison = regression.Comparison(10.0, (good, zero, *bad))
    assert regression.unjudged(comparison) == bad


def test_strict_json_maps_every_non_finite_value_to_null():
    doc = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (np.float64("nan"), np.float64(2.0)),
           "d": {"e": {"f": float("-inf")}}}
    text = strictjson.dumps(doc, indent=2)
    assert strict(text) == {"a": None, "b": [None, None, 1.5], "c": [None, 2.0], "d": {"e": {"f": None}}}
    with pytest.raises(ValueError):
        strictjson.loads('{"a": NaN}')
    with pytest.raises(ValueError):
        strictjson.loads("[Infinity]")
    assert strictjson.loads('{"a": 1e5}') == {"a": 1e5}


def test_every_json_output_parses_strictly(tmp_path, capsys):
    night = tmp_path / "nights"
    night.mkdir()
    for i in range(2):
        store.save(store.load(EXAMPLE), str(night / f"n{i}.xml"))
    summary = tmp_path / "summary.json"
    for argv in (["show", EXAMPLE, "--json"], ["check", EXAMPLE, "--baseline", EXAMPLE, "--json"],
                 ["history", str(night), "--json"], ["tests", "--json"]):
        assert main(argv) == EXIT_OK, argv
        out = capsys.readouterr().out
        assert isinstance(strict(out), dict)
    from tkperf import notify
    notify.write_summary(str(summary), {"iops": math.nan, "list": [math.inf]})
    assert strict(summary.read_text()) == {"iops": None, "list": [None]}


def test_history_skips_a_file_with_nan_and_counts_it(tmp_path, capsys):
    night = tmp_path / "nights"
    night.mkdir()
    store.save(store.load(EXAMPLE), str(night / "good.xml"))
    with open(EXAMPLE, "rb") as fh:
        (night / "nan.xml").write_bytes(_first(fh.read(), "read", "iops", "NaN"))
    assert main(["history", str(night), "--json"]) == EXIT_OK
    doc = strict(capsys.readouterr().out)
    assert [os.path.basename(p) for p in doc["update"]["skipped"]] == ["nan.xml"]
    assert doc["devices"][0]["runs"] == 1
