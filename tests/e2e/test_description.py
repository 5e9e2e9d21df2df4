"""Description files (-dsc) and feature matrices (-fm): the documented
examples read as documented, every bad file is one line and exit code 2
before anything touches the target, and the report shows the features."""
import os

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_USAGE, UsageError
from tkperf.model.results import DeviceInfo, HostInfo, RunResult
from tkperf.render import blocks as b
from tkperf.render import rst
from tkperf.report.features import features_blocks
from tkperf.target import description

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples")
SMALL = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "1", "--wipc-loops", "0", "--no-report", "-q"]


def test_the_documented_description_example_reads_as_documented():
    d = description.read_description(os.path.join(EXAMPLES, "description.txt"))
    assert d.fields == {
        "vendor": "Example Co.",
        "model": "EX-3840 U.2",
        "serial": "EX0000001234",
        "firmware": "2.1.0",
        "capacity": "3.84 TB",
        "interface": "PCIe 4.0 x4, NVMe 1.4",
        "form_factor": "U.2, 2.5 inch, 15 mm",
        "nand_type": "176-layer 3D TLC",
        "controller": "Example EXC-8",
        "sponsor": "Example Labs",
        "tested_by": "J. Doe",
        "notes": "Drive taken from stock, firmware updated to 2.1.0 before the run. "
                 "Cooled by a 40 mm fan at 5000 rpm; inlet air 25 C.",
    }
    assert "NAND type: 176-layer 3D TLC" in d.text


def test_the_documented_feature_example_keeps_its_order():
    f = description.read_features(os.path.join(EXAMPLES, "features.txt"))
    assert f[0] == ("Power loss protection", "yes (capacitors)")
    assert [name for name, _ in f] == ["Power loss protection", "Encryption", "Endurance",
                                       "Over-provisioning", "Namespaces", "SR-IOV", "Warranty"]


def test_every_documented_key_is_in_the_docs():
    doc = open(os.path.join(REPO, "docs", "description.rst"), encoding="utf-8").read()
    for key in description.KEYS:
        assert f"``{key.label}``" in doc, key.name
        for alias in key.aliases:
            assert alias in doc, alias


def test_no_spelling_names_two_keys(tmp_path):
    lines = [f"{spelling}: v" for k in description.KEYS for spelling in (k.name, k.label) + k.aliases]
    for line in lines:
        p = tmp_path / "one.txt"
        p.write_text(line + "\n", encoding="utf-8")
        (key,) = description.read_description(str(p)).fields
        owner = next(k.name for k in description.KEYS
                     if line.split(":")[0] in (k.name, k.label) + k.aliases)
        assert key == owner, line


def test_spellings_of_a_key_are_one_key(tmp_path):
    p = tmp_path / "d.txt"
    p.write_bytes("\ufeffMODEL-NUMBER : X1\r\nnand type:TLC\r\n  Test_Sponsor:  Lab  \r\n"
                  "Manufacturer: M\r\nS/N: 42\r\nForm factor:\r\n".encode("utf-8"))
    d = description.read_description(str(p))
    # A BOM and CRLF line ends are accepted; a key without a value is left out.
    assert d.fields == {"model": "X1", "nand_type": "TLC", "sponsor": "Lab", "vendor": "M", "serial": "42"}
    assert d.text.startswith("MODEL-NUMBER : X1\n")


def test_values_may_contain_colons_and_notes_add_up(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text("Interface: SAS-4: 24 Gb/s\nNotes: one\n# a comment: not a key\n\nNote: two\n",
                 encoding="utf-8")
    assert description.read_description(str(p)).fields == {"interface": "SAS-4: 24 Gb/s",
                                                            "notes": "one two"}


def test_no_file_is_nothing():
    assert description.read_description(None) == description.Description("", {})
    assert description.read_features("") == []


def test_labels_of_stored_keys():
    assert description.label("nand_type") == "NAND type"
    assert description.label("sponsor") == "Test sponsor"
    # A field an older tkperf stored under another name shows as it is.
    assert description.label("model_number") == "model_number"


BIG = b"Notes: " + b"x" * 900 + b"\n"

# (id, which reader, file content (bytes, or a callable making the path), words of the message)
BAD = [
    ("dsc-binary", "dsc", b"Model: X\n\x00\x01\x02", "binary data (a NUL byte at offset 9)"),
    ("fm-binary", "fm", b"\x7fELF\x02\x01\x01\x00\x00", "binary data"),
    ("dsc-huge", "dsc", BIG * 80, "more than the 64 KiB limit"),
    ("fm-huge", "fm", b"A: b\n" * 14000, "more than the 64 KiB limit"),
    ("dsc-latin1", "dsc", "Vendor: Société Générale\n".encode("latin-1"),
     "not UTF-8 text (byte 0xe9 on line 1)"),
    ("fm-utf16", "fm", "Encryption: yes\n".encode("utf-16"), "UTF-16 text (it starts with a UTF-16 "
                                                             "byte-order mark); save it as UTF-8"),
    ("dsc-unknown-key", "dsc", b"Model: X\nColour: blue\n", "line 2: unknown key 'Colour'; known keys: vendor"),
    ("dsc-free-text", "dsc", b"Model: X\njust some words\n", "line 2 is not 'Name: value'"),
    ("fm-free-text", "fm", b"Encryption: yes\n\nfast drive\n", "line 3 is not 'Name: value'"),
    ("fm-no-name", "fm", b": yes\n", "line 1 is not 'Name: value'"),
    ("dsc-twice", "dsc", b"Model: X\nmodel number: Y\n", "line 2: Model is given twice (first on line 1)"),
    ("fm-twice", "fm", b"Encryption: yes\nENCRYPTION:  no\n", "line 2: feature 'ENCRYPTION' is given twice"),
    ("fm-no-value", "fm", b"Encryption:\n", "line 1: feature 'Encryption' has no value"),
    ("dsc-escape", "dsc", b"Model: \x1b[31mX\n", "line 1: control character U+001B"),
    ("dsc-long-value", "dsc", b"Model: " + b"x" * 1001 + b"\n", "the value is longer than 1000"),
    ("fm-long-name", "fm", b"x" * 81 + b": y\n", "the name is longer than 80"),
    ("dsc-directory", "dsc", "DIR", "is a directory"),
    ("fm-fifo", "fm", "FIFO", "not a regular file"),
    ("dsc-missing", "dsc", "MISSING", "no such file"),
]


def _bad_file(tmp_path, content):
    if content == "DIR":
        return str(tmp_path)
    if content == "MISSING":
        return str(tmp_path / "missing.txt")
    p = tmp_path / "bad.txt"
    if content == "FIFO":
        os.mkfifo(p)
    else:
        p.write_bytes(content)
    return str(p)


@pytest.mark.parametrize("which,content,words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_files_are_refused_in_one_line(tmp_path, which, content, words):
    path = _bad_file(tmp_path, content)
    reader = description.read_description if which == "dsc" else description.read_features
    with pytest.raises(UsageError) as exc:
        reader(path)
    msg = str(exc.value)
    assert words in msg
    assert "\n" not in msg
    assert msg.startswith(("description file " if which == "dsc" else "feature file ") + path)


@pytest.mark.parametrize("which,content,words", [c[1:] for c in BAD[::3]], ids=[c[0] for c in BAD[::3]])
def test_the_cli_refuses_bad_files_before_the_target(tmp_path, capsys, which, content, words):
    path = _bad_file(tmp_path, content)
    target = tmp_path / "target.img"
    flag = "-dsc" if which == "dsc" else "-fm"
    # Small options, so that a reader that let a bad file through ends in seconds.
    rc = main(["ssd", "run", str(target), "--size", "64m", "--yes", "--outdir", str(tmp_path / "o"),
               *SMALL, flag, path])
    err = capsys.readouterr().err
    assert rc == EXIT_USAGE
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tkperf: error: ") and words in lines[0], err
    assert "Traceback" not in err
    # Nothing was made: neither the file target nor the output directory.
    assert not target.exists() and not (tmp_path / "o").exists()


def _run(features):
    dev = DeviceInfo(path="/dev/loop0", resolved="/dev/loop0", kind="block", size_bytes=1 << 30,
                     logical_sector=512, physical_sector=512)
    return RunResult(name="r", started="2026-01-01T00:00:00+00:00", device=dev, host=HostInfo(),
                     options={}, features=features)


def test_no_features_no_blocks():
    assert features_blocks(_run([])) == []


def test_features_are_a_table_in_file_order():
    blocks = features_blocks(_run([("Power loss protection", "yes"), ("Encryption", "TCG Opal *2.0*")]))
    assert isinstance(blocks[0], b.Heading) and blocks[0].text == "Feature matrix"
    table = [x for x in blocks if isinstance(x, b.Table)]
    assert len(table) == 1
    assert table[0].headers == ("Feature", "Value")
    assert table[0].rows == (("Power loss protection", "yes"), ("Encryption", "TCG Opal *2.0*"))
    text = rst.to_rst(blocks)
    assert "Power loss protection" in text and "TCG Opal \\*2.0\\*" in text


@needs_fio
def test_a_run_keeps_the_description_and_the_features(tmp_path):
    out = tmp_path / "o"
    rc = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--yes", "--name", "f",
               "--outdir", str(out), *SMALL, "-dsc", os.path.join(EXAMPLES, "description.txt"),
               "-fm", os.path.join(EXAMPLES, "features.txt")])
    assert rc == 0
    run = store.load(str(out / "f.xml"))
    assert run.description_fields["nand_type"] == "176-layer 3D TLC"
    assert run.features == description.read_features(os.path.join(EXAMPLES, "features.txt"))
