"""``--json-summary FILE``: a short real run on a loop device writes a
document that validates against tkperf/model/data/summary.schema.json;
an unwritable path is refused before anything touches the device."""
import json
import os

import jsonschema
import pytest

from conftest import needs_fio
from test_fio_failures import SCRIPTS, fake_fio
from tkperf import notify, store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, EXIT_OUTPUT
from tkperf.report import summary

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(HERE, "..", "examples")
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--max-rounds", "1",
         "--runtime", "1", "--quick", "--wipc-loops", "1", "--yes", "-q"]


def schema():
    with open(notify.SUMMARY_SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def validate(doc):
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)


def run_cli(dev, tmp_path, *extra):
    out = tmp_path / "out"
    rc = main(["ssd", "run", dev, "--name", "j", "--outdir", str(out), *QUICK, *extra])
    return rc, out


@needs_fio
def test_complete_run_writes_a_valid_summary(loopdev, tmp_path, capsys):
    path = tmp_path / "summary.json"
    rc, out = run_cli(loopdev, tmp_path, "--json-summary", str(path), "--report-format", "rst,html")
    assert rc == 0, capsys.readouterr().err
    doc = json.loads(path.read_text())
    validate(doc)
    assert doc["schema"] == "tkperf-summary" and doc["version"] == 1
    assert doc["name"] == "j" and doc["status"] == "complete" and doc["exit_code"] == 0
    assert doc["conformance"]["conformant"] is False and doc["conformance"]["deviations"]
    assert doc["device"]["path"] == loopdev and doc["device"]["size_bytes"] == 256 * 1024 * 1024
    (t,) = doc["tests"]
    assert t["key"] == "lat" and t["type"] == "lat" and t["status"] == "complete"
    assert t["figures"] and {f["key"] for f in t["figures"]} == set(t["headline"])
    assert all(f["value"] > 0 and f["better"] in ("higher", "lower", "") for f in t["figures"])
    assert doc["paths"]["result"] == str(out / "j.xml") and doc["paths"]["log"] == str(out / "j.log")
    assert sorted(os.path.splitext(p)[1] for p in doc["paths"]["reports"]) == [".html", ".rst"]
    for p in [doc["paths"]["result"], doc["paths"]["log"], *doc["paths"]["reports"]]:
        assert os.path.isfile(p), p
    # the same run as show --json sees it
    shown = json.loads(json.dumps(summary.as_dict(store.load(doc["paths"]["result"]))))
    assert {k: v for k, v in doc.items() if k in shown and k != "tests"} == \
        {k: v for k, v in shown.items() if k != "tests"}
    assert [{k: t[k] for k in s} for t, s in zip(doc["tests"], shown["tests"])] == shown["tests"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@needs_fio
def test_failed_run_writes_a_summary_with_its_exit_code(loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", fake_fio(tmp_path, SCRIPTS["exit1"]) + os.pathsep + os.environ["PATH"])
    path = tmp_path / "summary.json"
    rc, out = run_cli(loopdev, tmp_path, "--json-summary", str(path), "--no-report")
    assert rc == EXIT_FIO
    doc = json.loads(path.read_text())
    validate(doc)
    assert doc["status"] == "failed" and doc["exit_code"] == EXIT_FIO
    assert doc["tests"][0]["status"] == "failed" and doc["paths"]["reports"] == []


@pytest.mark.parametrize("where", ["missing-dir", "is-a-dir", "under-a-file"])
def test_unwritable_summary_path_is_refused_before_the_run(where, loopdev, tmp_path, capsys):
    marker = b"tkperf-json-summary-test" * 64
    with open(loopdev, "r+b") as fh:
        fh.write(marker)
    (tmp_path / "afile").write_text("x")
    path = {"missing-dir": tmp_path / "nodir" / "s.json", "is-a-dir": tmp_path,
            "under-a-file": tmp_path / "afile" / "s.json"}[where]
    rc, out = run_cli(loopdev, tmp_path, "--json-summary", str(path))
    err = capsys.readouterr().err
    assert rc == EXIT_OUTPUT
    (line,) = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    assert "--json-summary" in line and str(path) in line
    assert not out.exists()
    with open(loopdev, "rb") as fh:
        assert fh.read(len(marker)) == marker


@pytest.mark.parametrize("name", ["example-ssd", "example-client", "example-full"])
def test_document_of_an_example_validates_and_show_json_is_untouched(name, tmp_path):
    run = store.load(os.path.join(EXAMPLES, f"{name}.xml"))
    before = json.dumps(summary.as_dict(run), sort_keys=True)
    doc = summary.as_document(run, notify.paths_dict("r.xml", "r.log", ["r.pdf"]), 6)
    assert json.dumps(summary.as_dict(run), sort_keys=True) == before
    path = tmp_path / "s.json"
    notify.write_summary(str(path), doc)
    written = json.loads(path.read_text())
    validate(written)
    assert written["exit_code"] == 6 and written["paths"]["reports"] == ["r.pdf"]
    assert [t["type"] for t in written["tests"]] == [t.type for t in run.tests]


def test_non_finite_figures_become_null(tmp_path):
    path = tmp_path / "s.json"
    notify.write_summary(str(path), {"a": float("nan"), "b": [float("inf"), 1.5], "c": {"d": 2}})
    assert json.loads(path.read_text()) == {"a": None, "b": [None, 1.5], "c": {"d": 2}}
