"""``show --json``, ``info --json`` and ``tests --json`` carry a schema name
and version, and validate against the JSON Schemas shipped in the package
(issue 22, item 7)."""
import json
import os

import jsonschema
import pytest

import tkperf
from tkperf.cli import main

DATA = os.path.join(os.path.dirname(tkperf.__file__), "model", "data")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def _schema(name):
    with open(os.path.join(DATA, f"{name}.schema.json"), encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _printed(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _valid(doc, name):
    jsonschema.validate(doc, _schema(name), cls=jsonschema.Draft202012Validator)
    assert (doc["schema"], doc["version"]) == (f"tkperf-{name}", 1)


@pytest.mark.parametrize("example", ["example-ssd", "example-full", "example-client"])
def test_show_json(example, capsys):
    doc = _printed(["show", os.path.join(EXAMPLES, f"{example}.xml"), "--json"], capsys)
    _valid(doc, "show")
    assert list(doc)[:2] == ["schema", "version"]


def test_show_json_of_an_imported_tkperf2_file(capsys):
    doc = _printed(["show", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                                         "tkperf2", "ssd-2.2-apacer.xml"),
                    "--json"], capsys)
    _valid(doc, "show")
    assert doc["imported"]["tool"]


def test_info_json(tmp_path, capsys):
    img = tmp_path / "t.img"
    img.write_bytes(b"\0" * 8192)
    _valid(_printed(["info", str(img), "--json"], capsys), "info")


def test_info_json_of_a_block_device(loopdev, capsys):
    doc = _printed(["info", loopdev, "--json"], capsys)
    _valid(doc, "info")
    assert doc["target"]["kind"] == "block"


def test_tests_json(capsys):
    doc = _printed(["tests", "--json"], capsys)
    _valid(doc, "tests")
    assert {"iops", "tp", "lat", "wsat", "hdd-iops"} <= {t["name"] for t in doc["tests"]}


def test_a_document_of_another_schema_is_refused():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "tkperf-summary", "version": 1, "tests": []}, _schema("tests"),
                            cls=jsonschema.Draft202012Validator)


def test_schemas_ship_with_the_package():
    import tomllib
    with open(os.path.join(os.path.dirname(DATA), "..", "..", "pyproject.toml"), "rb") as fh:
        shipped = tomllib.load(fh)["tool"]["setuptools"]["package-data"]["tkperf.model"]
    assert "data/*" in shipped
    for name in ("show", "info", "tests"):
        assert os.path.isfile(os.path.join(DATA, f"{name}.schema.json"))
