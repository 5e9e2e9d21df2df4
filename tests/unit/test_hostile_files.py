"""Result files from elsewhere are data, never instructions: no entity
expansion, no DTD, no network, size limits, schema validation."""
import os
import time

import pytest

from sealing import reseal
from test_store import sample_run
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_RESULT_FILE, EXIT_RESUME, ResultFileError

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE tkperf [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<tkperf format="1" name="&secret;"/>
"""

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<tkperf format="1" name="&lol9;"/>
"""


@pytest.mark.parametrize("data", [XXE, LAUGHS], ids=["xxe", "billion-laughs"])
def test_doctype_files_are_refused_without_expanding(data, tmp_path, capsys):
    path = tmp_path / "evil.xml"
    path.write_bytes(data)
    t0 = time.process_time()  # this process's CPU time: what expanding would cost, whatever else runs
    with pytest.raises(ResultFileError, match="DOCTYPE"):
        store.load(str(path))
    assert time.process_time() - t0 < 5
    assert main(["show", str(path)]) == EXIT_RESULT_FILE
    err = capsys.readouterr().err
    assert "DOCTYPE" in err and "root:" not in err and "lol" not in err


def test_external_entity_in_valid_file_not_resolved(tmp_path):
    data = store.dumps(sample_run()).replace(
        b"<?xml version='1.0' encoding='UTF-8'?>",
        b"<?xml version='1.0' encoding='UTF-8'?>\n<!DOCTYPE tkperf [<!ENTITY x SYSTEM \"file:///etc/hostname\">]>")
    with pytest.raises(ResultFileError, match="DOCTYPE"):
        store.loads(data, "x.xml")


def test_oversized_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.xml"
    store.save(sample_run(), str(path))
    monkeypatch.setattr(store, "MAX_FILE_BYTES", 1000)
    with pytest.raises(ResultFileError, match="larger than the 1000 byte limit"):
        store.load(str(path))


def test_future_and_foreign_versions(tmp_path, capsys):
    data = reseal(store.dumps(sample_run()).replace(b'format="3"', b'format="4"'))
    path = tmp_path / "future.xml"
    path.write_bytes(data)
    assert main(["show", str(path)]) == EXIT_RESULT_FILE
    assert "format version 4 is newer than this tkperf reads (3); upgrade tkperf" in capsys.readouterr().err


def test_schema_invalid_figures_are_refused(tmp_path):
    data = reseal(store.dumps(sample_run()).replace(b'iops="', b'iops="lots', 1))
    with pytest.raises(ResultFileError, match="not a valid tkperf result"):
        store.loads(data, "x.xml")


EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "example-ssd.xml")


def _interrupted_example(tmp_path, name, **options):
    run = store.load(EXAMPLE)
    run.status = "interrupted"
    run.options.update(options)
    path = tmp_path / name
    store.save(run, str(path))
    return path, run


def test_resume_needs_the_run_name_and_readable_options(tmp_path, capsys):
    path, run = _interrupted_example(tmp_path, "renamed.xml")
    assert main(["resume", str(path), "--yes"]) == EXIT_RESUME
    assert f"needs the file under its run name {run.name}.xml" in capsys.readouterr().err
    path, _ = _interrupted_example(tmp_path, f"{run.name}.xml", runtime="soon")
    assert main(["resume", str(path), "--yes"]) == EXIT_RESULT_FILE  # an option no run stores
    assert "option runtime" in capsys.readouterr().err


def test_resume_of_a_complete_run_does_nothing(capsys):
    path = EXAMPLE
    before = open(path, "rb").read()
    assert main(["resume", path, "--yes"]) == 0
    assert "already complete, nothing to resume" in capsys.readouterr().out
    assert open(path, "rb").read() == before


ARCHIVE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "tkperf2",
                       "ssd-2.2-apacer.xml")


def test_import_of_an_archive_with_control_characters_replaces_and_notes_them(tmp_path, capsys):
    # JSON escapes in an original TKperf file carry what XML itself could not:
    # ESC, BEL, a C1 CSI, a carriage return, a bidi override.
    data = open(ARCHIVE, "rb").read()
    data = data.replace(b"Apacer AS340 120GB", b"Apacer\\u001b]0;pwned\\u0007\\u009b2J\\r AS340")
    data = data.replace(b"NAND: MLC", b"NAND: \\u001b[2JMLC\\u202e")
    old = tmp_path / "evil.xml"
    old.write_bytes(data)
    new = tmp_path / "evil.tkperf.xml"
    assert main(["import", str(old), "-o", str(new)]) == 0
    out = capsys.readouterr().out
    assert "control characters replaced by U+FFFD in <devinfo> (4), <featmatrix> (2)" in out
    run = store.load(str(new))
    assert run.device.model.startswith("Apacer\ufffd]0;pwned\ufffd\ufffd2J")
    assert "\x1b" not in new.read_text(encoding="utf-8")
    assert any("control characters replaced" in e.message for e in run.events)
    # The old file read directly (show) is cleaned the same way.
    assert main(["show", str(old)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown and "pwned" in shown


@pytest.mark.parametrize("forge", [
    lambda run: run.options.update(test_range="1" * 5000),
    lambda run: run.facts.update(target={"target_kind": {"kind": float("nan"), "detail": []}}),
], ids=["option", "fact"])
def test_resume_refuses_a_forged_option_or_fact_in_one_line(tmp_path, capsys, forge):
    """A resume rewrites the file: an option or fact no run stores refuses it
    (exit 7, one line), not an internal error, and the file stays as it was."""
    run = store.load(EXAMPLE)
    run.status = "interrupted"
    forge(run)
    path = tmp_path / f"{run.name}.xml"
    store.save(run, str(path))
    before = path.read_bytes()
    assert main(["resume", str(path), "--yes"]) == EXIT_RESULT_FILE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("; not resumed"), err
    assert path.read_bytes() == before
