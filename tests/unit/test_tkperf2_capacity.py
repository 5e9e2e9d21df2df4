"""Original TKperf files whose devinfo is a description text (-dsc): the
capacity is taken from what the text says where it can be known, or from
--capacity; without either the file is refused, saying how to go on
(issue 22, item 10)."""
import json
import re

import pytest

from conftest import data_path
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_USAGE
from tkperf.store.legacy import tkperf2_device
from tkperf.store.legacy.tkperf2_device import given_capacity

APACER = data_path("tkperf2/ssd-2.2-apacer.xml")


def _with_devinfo(tmp_path, text, name="dsc.xml"):
    data = open(APACER, "rb").read()
    new = b"<devinfo>" + json.dumps(text).encode() + b"</devinfo>"
    data = re.sub(rb"<devinfo>.*?</devinfo>", lambda m: new, data, count=1, flags=re.S)
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


DESCRIPTION = "Apacer AS340 120GB\nNAND: MLC\nInterface: SATA 6Gb/s\n"


@pytest.mark.parametrize("line, size, said", [
    ("Capacity: 120 GB", 120 * 10 ** 9, "the nominal capacity"),
    ("Size: 1.6TB", 1600 * 10 ** 9, "the nominal capacity"),
    ("User Capacity:    120,034,123,776 bytes [120 GB]", 120034123776, "in bytes"),
    ("LBA48  user addressable sectors:   234441648", 234441648 * 512, "LBA48 sector count x 512"),
])
def test_capacity_from_the_description_text(line, size, said, tmp_path):
    run = store.load(_with_devinfo(tmp_path, DESCRIPTION + line + "\n"))
    assert run.device.size_bytes == size
    assert said in run.facts["imported"]["capacity_from"]
    assert any(e.message.startswith("device capacity from devinfo") for e in run.events)


#: A capacity of 0 shown as a size (not '120.0 GB').
ZERO_GB = re.compile(r"(?<![\d.,])0\.0 GB")


@pytest.mark.docs  # builds whole documents: the docs tier
def test_a_description_without_capacity_is_read_with_the_capacity_unknown(tmp_path, capsys):
    """No size in the file and no --capacity: the file is read, the capacity
    said to be unknown everywhere, and what needs it (the WSAT drive fills,
    the capacity check of check) left out rather than the file refused."""
    path = _with_devinfo(tmp_path, DESCRIPTION)
    run = store.load(path)
    assert run.device.size_bytes == 0 and not run.device.capacity_known
    assert run.facts["imported"]["capacity_from"].startswith("unknown: the original TKperf file does not record it")
    assert main(["show", path]) == 0
    out = capsys.readouterr().out
    assert "unknown (not recorded; --capacity SIZE gives it)" in out and not ZERO_GB.search(out)
    assert main(["show", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"]["size_bytes"] == 0
    rep = tmp_path / "r"
    assert main(["report", path, "--outdir", str(rep), "--format", "rst", "-q"]) == 0
    text = (rep / f"{run.name}.rst").read_text()
    assert "unknown (not recorded; --capacity SIZE gives it)" in " ".join(text.split()) and not ZERO_GB.search(text)
    cmp_dir = tmp_path / "c"
    assert main(["compare", APACER, path, "--outdir", str(cmp_dir), "--format", "rst", "-q"]) == 0
    assert not ZERO_GB.search((cmp_dir / "comparison.rst").read_text())
    capsys.readouterr()
    assert main(["check", path, "--baseline", APACER, "--json"]) in (0, 1)
    assert not any("capacities" in w for w in json.loads(capsys.readouterr().out).get("differences", []))
    new = tmp_path / "new.xml"
    assert main(["import", path, "-o", str(new)]) == 0
    assert store.load(str(new)).device.size_bytes == 0  # the schema takes an unknown capacity


@pytest.mark.docs  # builds whole documents: the docs tier
def test_capacity_given_on_the_command_line(tmp_path, capsys):
    path = _with_devinfo(tmp_path, DESCRIPTION)
    with given_capacity(120 * 10 ** 9):
        run = store.load(path)
    assert run.device.size_bytes == 120 * 10 ** 9
    assert run.facts["imported"]["capacity_from"] == "--capacity (the file does not record it)"
    assert main(["show", path, "--json", "--capacity", "120g"]) == 0
    assert json.loads(capsys.readouterr().out)["device"]["size_bytes"] == 120 * 10 ** 9
    new = tmp_path / "new.xml"
    assert main(["import", path, "-o", str(new), "--capacity", "120g"]) == 0
    assert store.load(str(new)).device.size_bytes == 120 * 10 ** 9  # kept: no --capacity needed again
    for argv in (["check", path, "--baseline", APACER, "--capacity", "120g"],
                 ["compare", APACER, path, "--outdir", str(tmp_path / "c"), "--capacity", "120g", "--format", "rst"],
                 ["report", path, "--outdir", str(tmp_path / "r"), "--format", "rst", "--capacity", "120g"]):
        assert main(argv) in (0, 1), (argv, capsys.readouterr().err)


def test_the_files_own_capacity_wins(tmp_path):
    with given_capacity(10 ** 12):
        assert store.load(APACER).device.size_bytes == 120034 * 10 ** 6


@pytest.mark.parametrize("text, size", [("480g", 480 * 10 ** 9), ("1.6t", 1600 * 10 ** 9), ("447GiB", 447 * 2 ** 30),
                                        ("960197124096", 960197124096)])
def test_capacity_forms(text, size):
    assert tkperf2_device.parse_capacity(text) == size


@pytest.mark.parametrize("text", ["big", "0", "12", "-5g", "480x"])
def test_bad_capacity_is_a_usage_error(text, capsys):
    assert main(["show", APACER, "--capacity", text]) == EXIT_USAGE
    assert capsys.readouterr().err.count("\n") == 1
