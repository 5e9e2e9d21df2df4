"""Device facts, health snapshots, the feature matrix and the purge's
verification survive the result file, and a file with broken facts is a
clear error."""
import dataclasses
import os
import re

import pytest

from conftest import data_path
from tkperf import store
from tkperf.errors import ResultFileError
from tkperf.model.results import HealthSnapshot

EXAMPLE = data_path("../../examples/example-ssd.xml")


def test_round_trip(tmp_path):
    run = store.load(EXAMPLE)
    run.facts = {"lsblk": {"name": "loop0", "rota": False}, "missing": [{"tool": "smartctl",
                                                                        "package": "smartmontools"}]}
    run.health = [HealthSnapshot("t0", "before", "nvme smart-log", (("host_written_bytes", 1e9),
                                                                     ("temperature_c", 40.0))),
                  HealthSnapshot("t1", "sample", "nvme smart-log", (("temperature_c", 51.0),)),
                  HealthSnapshot("t2", "after", "nvme smart-log", (("host_written_bytes", 2.5e9),))]
    run.features = [("Power loss protection", "yes"), ("NAND", "TLC <3D>")]
    t = run.tests[0]
    t.purge = dataclasses.replace(t.purge, verification="read 16 regions of 1 MiB: all zeros")
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    again = store.load(str(path))
    assert again.facts == run.facts
    assert again.health == run.health and again.health[2].value("host_written_bytes") == 2.5e9
    assert again.features == run.features
    assert again.tests[0].purge.verification == "read 16 regions of 1 MiB: all zeros"


def older(tmp_path) -> str:
    """example-ssd as a tkperf from before facts, health, features and purge checks wrote it
    (format 2, before files recorded their completeness)."""
    text = open(data_path(os.path.join("format2", "example-ssd.xml")), encoding="utf-8").read()
    text = re.sub(r"<facts\b.*?</facts>", "", text, flags=re.S)
    text = re.sub(r' verification="[^"]*"', "", text)
    assert "<facts" not in text and "<health" not in text and "<features" not in text
    path = tmp_path / "older.xml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_file_without_them_reads_as_before(tmp_path):
    run = store.load(older(tmp_path))
    assert run.facts == {} and run.health == [] and run.features == []
    assert run.tests[0].purge.verification == ""


def test_broken_facts_are_a_result_file_error(tmp_path):
    text = open(older(tmp_path), encoding="utf-8").read()
    broken = text.replace("</events>", "</events><facts>{not json</facts>", 1)
    path = tmp_path / "b.xml"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ResultFileError, match="facts are not JSON"):
        store.load(str(path))
