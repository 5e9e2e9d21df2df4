"""The suite's layout says what a test needs (tests/lab/suite.py): the
folder decides the marker, and a pure-Python test that reaches for a
device, a drive, a server or fio fails."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def test_every_test_file_is_in_unit_docs_e2e_or_vm():
    misplaced = [str(p.relative_to(ROOT)) for p in TESTS.rglob("test_*.py")
                 if p.relative_to(TESTS).parts[0] not in ("unit", "docs", "e2e", "vm", "data")]
    assert not misplaced, (f"move each to tests/unit (pure Python), tests/docs (pure Python building whole "
                           f"documents), tests/e2e (fio, loop devices, the emulated "
                           f"SSD, a server) or tests/vm (the QEMU guest): {misplaced}")
    helpers = [p.name for p in TESTS.glob("*.py") if p.name != "conftest.py"]
    assert not helpers, f"helpers live in tests/lab/: {helpers}"


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *args],
                          cwd=str(ROOT), capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_the_folder_decides_the_marker():
    files = ["tests/unit/test_suite_layout.py", "tests/e2e/test_suite_interrupt.py", "tests/vm/test_vm.py",
             "tests/docs"]
    for marker, expect in (("e2e", "tests/e2e/"), ("vm", "tests/vm/"), ("docs", "tests/docs/"),
                           ("not e2e and not vm and not docs", "tests/unit/")):
        out = _pytest("--collect-only", "-q", "-m", marker, *files)
        ids = [ln for ln in out.stdout.splitlines() if "::" in ln]
        assert ids and all(i.startswith(expect) for i in ids), (marker, out.stdout, out.stderr)


@pytest.fixture
def probe():
    """A test file written into tests/unit/ for one inner pytest run, then removed."""
    path = TESTS / "unit" / f"test_zz_layout_probe_{os.getpid()}.py"
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def test_a_unit_test_using_a_loop_device_fails_before_it_is_made(probe):
    probe.write_text(textwrap.dedent("""
        def test_uses_a_loop_device(loopdev):
            pass
    """))
    out = _pytest(str(probe))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "uses the fixture loopdev: move its file to tests/e2e/" in out.stdout, out.stdout


def test_a_unit_test_starting_fio_fails(probe):
    probe.write_text(textwrap.dedent("""
        import subprocess

        def test_runs_fio():
            subprocess.run(["fio", "--version"], capture_output=True)

        def test_runs_python():
            assert subprocess.run(["true"]).returncode == 0
    """))
    out = _pytest("-rA", str(probe))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "a test under tests/unit/ started fio" in out.stdout, out.stdout
    assert "1 failed, 1 passed" in out.stdout, out.stdout


def test_durations_prints_the_slowest_and_the_total(tmp_path, capsys):
    sys.path.insert(0, str(TESTS / "lab"))
    import durations
    xml = tmp_path / "suite.xml"
    xml.write_text('<?xml version="1.0"?><testsuites><testsuite name="pytest" time="90.5">'
                   '<testcase classname="tests.e2e.test_a" name="test_slow" time="60"/>'
                   '<testcase classname="tests.unit.test_b" name="test_quick[x]" time="0.5"/>'
                   '<testcase classname="tests.unit.test_b" name="test_mid" time="19.5"/>'
                   '</testsuite></testsuites>')
    assert durations.main([str(xml), "--top", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 tests, wall 1.5 min, 1.3 min of test time in all workers; the slowest 2 take 99% of it"
    assert lines[1:3] == ["    60.0 s  tests/e2e/test_a.py::test_slow", "    19.5 s  tests/unit/test_b.py::test_mid"]
    assert lines[3:] == ["tests/e2e: 1 tests, 1.0 min", "tests/unit: 2 tests, 0.3 min"]
    assert durations.main([str(tmp_path / "none.xml")]) == 2
