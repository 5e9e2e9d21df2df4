"""Hints without gaps (issue 48 item 8): a typo of the action gets the
action, a typo of a test name gets the test, and tab completion offers what
the word can be: the emulated SSDs that are up after ``simdrive down``, the
report formats after ``--format``."""
from __future__ import annotations

import os
import subprocess
import sys

from test_manual import _complete_bash, _script
from tkperf.cli import main
from tkperf.errors import EXIT_USAGE

TKPERF = os.path.join(os.path.dirname(sys.executable), "tkperf")  # the venv's, as a shell would call it


def _err(argv, capsys):
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


def test_a_typo_of_the_action_gets_the_action(capsys):
    assert _err(["ssd", "runn", "/dev/loop6"], capsys) == (
        "tkperf: error: tkperf ssd: invalid action 'runn'; did you mean run? tkperf ssd run /dev/loop6")
    assert "did you mean run? tkperf hdd run /dev/sdb --quick" in _err(["hdd", "rnu", "/dev/sdb", "--quick"], capsys)
    # TKperf 2's 'tkperf ssd NAME DEVICE' still gets --name
    assert _err(["ssd", "intel", "/dev/loop6"], capsys).endswith("tkperf ssd run /dev/loop6 --name intel")


def test_a_typo_of_a_test_name_gets_the_test(tmp_path, capsys):
    img = tmp_path / "t.img"
    base = ["ssd", "run", str(img), "--size", "64m", "--dry-run"]
    assert "unknown test 'iop': did you mean iops? (choose from iops, tp" in _err(base + ["--tests", "iop"], capsys)
    assert "unknown test 'wsta': did you mean wsat?" in _err(base + ["--tests", "iops,wsta"], capsys)
    assert "did you mean" not in _err(base + ["--tests", "xyz"], capsys)
    assert not img.exists()


def test_format_completes_to_report_formats_not_files(capsys, tmp_path, monkeypatch):
    (tmp_path / "rst-notes.txt").write_text("")
    script = _script(capsys, "bash", tmp_path)
    monkeypatch.chdir(tmp_path)  # a file starting with r is here: not offered
    assert _complete_bash(script, ["tkperf", "report", "r.xml", "--format", ""]) == ["rst", "html", "pdf"]
    assert _complete_bash(script, ["tkperf", "report", "r.xml", "--format", "r"]) == ["rst"]
    assert sorted(_complete_bash(script, ["tkperf", "compare", "a.xml", "--format", "rst,"])) == [
        "rst,html", "rst,pdf", "rst,rst"]
    assert _complete_bash(script, ["tkperf", "ssd", "run", "/dev/sdb", "--report-format", "h"]) == ["html"]


def _up() -> set:
    out = subprocess.run([TKPERF, "simdrive", "list"], capture_output=True, text=True, check=True).stdout
    return {w for w in out.split() if w != "-"}


def test_simdrive_down_completes_to_the_emulated_ssds_that_are_up(simdrive, capsys, tmp_path):
    drive = simdrive(capacity="16M", name="nchint")
    script = _script(capsys, "bash", tmp_path)
    before = _up()
    for cmd in ("down", "stats"):
        got = set(_complete_bash(script, [TKPERF, "simdrive", cmd, ""]))
        assert {"nchint", drive.path} <= got, got
        assert got <= before | _up(), got  # only what 'simdrive list' names (other drives may be up)
        assert "/dev/vda" not in got
    assert _complete_bash(script, [TKPERF, "simdrive", "down", "nch"]) == ["nchint"]
    # a device to test still completes to block devices
    assert "/dev/vda" in _complete_bash(script, [TKPERF, "ssd", "run", "/dev/vd"]) or not os.path.exists("/dev/vda")
