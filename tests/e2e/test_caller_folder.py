"""What root loads from the folder it was started in (issue 54, item 1): a
``tkperf/`` package, a ``matplotlibrc``, a ``docutils.conf`` and a
``cover.tmpl`` planted by another user in a world-writable sticky folder
(mode 1777), which tkperf is started in and writes into.

Every Python child tkperf starts (the emulated SSD's server, the runs of a
command on several targets) runs tkperf's own code: the planted package
never runs, whatever the folder; and the charts and the PDF of a report are
the same as from a clean folder, with matplotlib's settings file planted in
the folder, named by ``MATPLOTLIBRC`` or in ``MPLCONFIGDIR``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_fio
from tkperf import programs
from tkperf.cli import main
from tkperf.errors import EXIT_OK
from tkperf.simdrive import control

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
EXAMPLE = REPO / "examples" / "example-emulated.xml"  # a result with two charts
#: matplotlib settings that would show in any chart.
RED = "figure.facecolor: red\naxes.facecolor: red\nlines.linewidth: 20\nbogus.key: planted\n"
#: Runs one command of tkperf as the console script does: the checkout's
#: code, nothing from the current folder on sys.path.
ENTRY = f"import sys; sys.path.insert(0, {str(REPO)!r}); from tkperf.cli import main; sys.exit(main(sys.argv[1:]))"
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "2",
         "-nj", "1", "-iod", "4", "--wipc-loops", "1", "--yes", "--report-format", "rst"]


def _plant(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chown(path, NOBODY, NOBODY)


@pytest.fixture
def shared(tmp_path):
    """(folder, marker): a mode-1777 folder holding another user's ``tkperf``
    package, ``matplotlibrc`` and ``docutils.conf``; every planted module,
    and the Jinja code of a planted ``cover.tmpl``, appends to ``marker`` when run."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    marker = tmp_path / "planted-code-ran"
    code = f"import os, sys\nwith open({str(marker)!r}, 'a') as fh:\n    fh.write(f'{{os.getpid()}} {{sys.argv}}\\n')\n"
    for module in ("__init__.py", "__main__.py", "simdrive/__init__.py", "simdrive/__main__.py"):
        _plant(folder / "tkperf" / module, code)
    _plant(folder / "matplotlibrc", RED)
    _plant(folder / "docutils.conf", "[general]\nfile_insertion_enabled: yes\nraw_enabled: yes\n")
    _plant(folder / "cover.tmpl", "{{ self.__init__.__globals__.__builtins__"  # Jinja2 runs Python
                                  f".open({str(marker)!r}, 'a').write('cover.tmpl') }}}}\n")
    for path in folder.rglob("*"):
        os.chown(path, NOBODY, NOBODY)
    return folder, marker


def _ran(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


def test_a_python_child_runs_the_package_of_its_parent_by_path(shared, tmp_path, monkeypatch):
    """``programs.python_module``: from the planted folder, with ``PYTHONPATH``
    naming it too, the child loads the tkperf its parent runs (here a copy
    of it that says so), never the planted one nor an installed one."""
    folder, marker = shared
    copy = tmp_path / "copy" / "tkperf"
    shutil.copytree(programs.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    said = tmp_path / "copy-ran"
    with open(copy / "__init__.py", "a") as fh:
        fh.write(f"\nopen({str(said)!r}, 'w').write(__file__)\n")
    monkeypatch.setattr(programs, "PACKAGE_DIR", str(copy))
    argv = programs.python_module("tkperf", "--version")
    proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(folder)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("tkperf ")
    assert _ran(marker) == ""
    assert said.read_text() == str(copy / "__init__.py")


def test_the_emulated_ssds_server_runs_tkperfs_own_code(shared, simdrive, monkeypatch):
    folder, marker = shared
    monkeypatch.chdir(folder)  # `tkperf simdrive up` started in the shared folder
    drive = simdrive(capacity="16M")
    assert drive.stats()["fresh"] is True  # the server answers
    assert _ran(marker) == ""
    pid = int(Path(control.find(drive.path), "pid").read_text())
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[1:3] == [b"-I", os.fsencode(os.path.join(programs.PACKAGE_DIR, "bootstrap.py"))]
    assert os.readlink(f"/proc/{pid}/cwd") == "/"  # it holds no one's folder


@needs_fio
def test_the_runs_of_a_command_on_several_targets_run_tkperfs_own_code(shared, tmp_path, monkeypatch, capsys):
    """Two file targets at once, started in the shared folder: each child
    runs, measures and draws its charts with tkperf's own code and style."""
    folder, marker = shared
    monkeypatch.chdir(folder)
    out = tmp_path / "out"
    targets = [str(tmp_path / "a.img"), str(tmp_path / "b.img")]
    rc = main(["ssd", "run", *targets, *QUICK, "--size", "64m", "--outdir", str(out)])
    err = capsys.readouterr().err
    assert rc == EXIT_OK, err
    assert _ran(marker) == ""
    charts = sorted(out.glob("*/*-plots/*.svg"))
    assert {p.parts[-3] for p in charts} == {"a.img", "b.img", "comparison"}  # each child's and the parent's
    for chart in charts:
        svg = chart.read_text()
        assert "fill: #ffffff" in svg and "#ff0000" not in svg, chart  # white, not the planted red
        assert "stroke-width: 20" not in svg, chart


def _report(cwd: Path, outdir: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", ENTRY, "report", str(EXAMPLE), "--outdir", str(outdir),
                           "--format", "html,pdf"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The report's charts drawn in a clean folder with a clean environment."""
    where = tmp_path_factory.mktemp("clean")
    env = {k: v for k, v in os.environ.items() if k not in ("MATPLOTLIBRC", "MPLCONFIGDIR", "DOCUTILSCONFIG")}
    proc = _report(where, where / "out", env)
    assert proc.returncode == 0, proc.stderr
    charts = {p.name: p.read_bytes() for p in (where / "out").glob("*-plots/*.svg")}
    assert len(charts) >= 2
    return charts


@pytest.mark.parametrize("where", ["folder", "folder-fifo", "MATPLOTLIBRC", "MPLCONFIGDIR"])
def test_a_report_reads_no_settings_of_the_callers(where, shared, reference, tmp_path):
    """``tkperf report`` started in the shared folder and writing into it:
    the charts are the clean folder's, byte for byte, the PDF is written
    and the planted cover template never runs.  A FIFO for a
    ``matplotlibrc`` is not even opened (reading it would never end)."""
    folder, marker = shared
    env = {k: v for k, v in os.environ.items() if k not in ("MATPLOTLIBRC", "MPLCONFIGDIR", "DOCUTILSCONFIG")}
    if where == "folder-fifo":
        os.unlink(folder / "matplotlibrc")
        os.mkfifo(folder / "matplotlibrc")
    elif where == "MATPLOTLIBRC":
        _plant(tmp_path / "rc" / "matplotlibrc", RED)
        env["MATPLOTLIBRC"] = str(tmp_path / "rc" / "matplotlibrc")
    elif where == "MPLCONFIGDIR":
        _plant(tmp_path / "mplconfig" / "matplotlibrc", RED)
        env["MPLCONFIGDIR"] = str(tmp_path / "mplconfig")
    if where.startswith("M"):  # only the one named by the environment
        os.unlink(folder / "matplotlibrc")
    proc = _report(folder, folder, env)
    assert proc.returncode == 0, proc.stderr
    assert "planted" not in proc.stderr and "matplotlibrc" not in proc.stderr
    assert _ran(marker) == ""
    assert (folder / "example-emulated.pdf").read_bytes().startswith(b"%PDF")
    charts = {p.name: p.read_bytes() for p in folder.glob("*-plots/*.svg")}
    assert charts.keys() == reference.keys()
    for name, svg in charts.items():
        assert svg == reference[name], name
