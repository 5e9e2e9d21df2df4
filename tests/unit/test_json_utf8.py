"""Names that are not text (issue 54 item 7): every JSON document tkperf
writes is valid UTF-8 once decoded.  A file name whose bytes are not UTF-8
reaches Python as lone surrogates (``os.fsdecode(b"\\xff")`` is U+DCFF);
``json`` writes them as ``\\udcff`` escapes, which no UTF-8 reader can
hold, so tkperf writes U+FFFD in their place (tkperf/strictjson.py,
docs/resilience.rst)."""
from __future__ import annotations

import json
import os
import shutil
from typing import List

from tkperf import notify, store, strictjson
from tkperf.cli import main
from tkperf.report import summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
OTHER = os.path.join(ROOT, "examples", "example-ssd-2.xml")
#: A result file's name that is not UTF-8: ``os.fsdecode`` gives '\udcff\udcfe.xml'.
NAME = b"\xff\xfe.xml"


def _strict(text: str) -> object:
    """The JSON document ``text``, which must be UTF-8 through and through:
    its text encodes strictly, and so does every string in it once decoded."""
    text.encode("utf-8")  # no surrogateescape: a lone surrogate raises
    doc = json.loads(text)
    json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return doc


def _json(argv: List[str], capsys) -> object:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1), (argv, err)
    return _strict(out)


def _odd_names(tmp_path) -> str:
    """A folder holding a result file named with bytes that are not UTF-8 (and an ordinary one)."""
    folder = os.fsencode(tmp_path / "results")
    os.mkdir(folder)
    shutil.copy(OTHER, os.path.join(folder, NAME))
    shutil.copy(EXAMPLE, os.path.join(folder, b"plain.xml"))
    return os.fsdecode(folder)


def test_every_json_document_holds_only_utf8(tmp_path, capsys):
    folder = _odd_names(tmp_path)
    odd = os.path.join(folder, os.fsdecode(NAME))
    plain = os.path.join(folder, "plain.xml")
    assert "\udcff" in odd  # what Python makes of the name
    replaced = strictjson.text(odd)
    assert replaced.endswith("/\ufffd\ufffd.xml")

    shown = _json(["show", odd, "--json"], capsys)
    assert shown["name"]  # type: ignore[index]
    compared = _json(["compare", plain, odd, "--json", "--format", "rst", "--outdir", str(tmp_path / "c")], capsys)
    assert replaced in json.dumps(compared, ensure_ascii=False)
    checked = _json(["check", odd, "--baseline", plain, "--json"], capsys)
    assert checked["result"] == replaced  # type: ignore[index]
    history = _json(["history", folder, "--json"], capsys)
    assert replaced in json.dumps(history, ensure_ascii=False)


def test_history_indexes_a_name_that_is_not_utf8(tmp_path, capsys):
    """The index keeps such a file (SQLite's text holds no lone surrogate),
    as it keeps others: a second look finds it unchanged."""
    folder = _odd_names(tmp_path)
    first = _json(["history", folder, "--json"], capsys)
    again = _json(["history", folder, "--json"], capsys)
    assert first["update"]["added"] == 2 and again["update"]["unchanged"] == 2  # type: ignore[index]
    assert {k: v for k, v in first.items() if k != "update"} == {k: v for k, v in again.items() if k != "update"}
    assert os.path.isfile(os.path.join(folder, ".tkperf-history.sqlite"))
    text = json.dumps(first, ensure_ascii=False)
    assert "\ufffd\ufffd.xml" in text and "plain.xml" in text


def test_the_json_summary_holds_only_utf8(tmp_path):
    """``--json-summary`` of a run whose result file's name is not UTF-8."""
    odd = os.fsdecode(os.fsencode(tmp_path) + b"/" + NAME)
    run = store.load(EXAMPLE)
    doc = summary.as_document(run, {"result": odd, "log": odd[:-4] + ".log", "reports": [odd[:-4] + ".html"]}, 0)
    out = tmp_path / "summary.json"
    notify.write_summary(str(out), doc)
    got = _strict(out.read_bytes().decode("utf-8"))
    assert got["paths"]["result"] == strictjson.text(odd)  # type: ignore[index]


def test_strict_json_replaces_lone_surrogates_in_names_and_values():
    text = strictjson.dumps({"\udcff": ["a\udcfeb", {"x": "\ud800"}], "ok": "caf\u00e9 \U0001f600"})
    assert json.loads(text) == {"\ufffd": ["a\ufffdb", {"x": "\ufffd"}], "ok": "caf\u00e9 \U0001f600"}
    assert strictjson.dumps({"p": os.fsdecode(b"/x/\xff")}, default=str) == '{"p": "/x/\\ufffd"}'
