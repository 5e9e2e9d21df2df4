"""cron's PATH (issue 54, item 8): a root crontab runs its commands with
``PATH=/usr/bin:/bin``, which has none of the ``sbin`` folders where Debian
installs losetup, blkid, blkdiscard, dmsetup, hdparm and nvme.  tkperf
finds its tools where PATH says, then where Debian installs them, never in
the current folder; its children get that PATH; and what the README and
``examples/nightly`` suggest for cron runs under cron's environment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_fio
from tkperf import programs, store
from tkperf.errors import ToolError

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "examples" / "nightly" / "tkperf-nightly"
#: The environment cron gives a root crontab's command (cron(8), Debian's cron).
CRON_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "SHELL": "/bin/sh", "LOGNAME": "root", "LANG": "C.UTF-8"}
SBIN = ("/usr/sbin", "/sbin")


def _tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\necho planted\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("tool", ["losetup", "blkid", "blkdiscard", "dmsetup"])
def test_system_tools_are_found_under_crons_path(tool, monkeypatch):
    monkeypatch.setenv("PATH", CRON_ENV["PATH"])
    found = programs.require(tool)
    assert os.path.dirname(found) in SBIN and os.access(found, os.X_OK)


def test_paths_own_folders_come_first_and_relative_ones_are_skipped(tmp_path, monkeypatch):
    own = _tool(tmp_path / "bin", "losetup")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert programs.require("losetup") == str(own)  # PATH's choice first
    here = tmp_path / "shared"
    _tool(here, "losetup")
    _tool(here, "lsblk")
    monkeypatch.chdir(here)
    for path in ("", ":/usr/bin:/bin", ".:/usr/bin", "/usr/bin:/bin:."):  # each names the current folder
        monkeypatch.setenv("PATH", path)
        assert os.path.dirname(programs.require("losetup")) in SBIN, path
        assert programs.require("lsblk") != str(here / "lsblk"), path
    assert programs.search_path(":.:/usr/bin//:/bin:/usr/bin") == \
        "/usr/bin:/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin"


def test_a_tool_found_nowhere_still_names_its_debian_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(programs, "SYSTEM_DIRS", (str(tmp_path / "none"),))
    with pytest.raises(ToolError, match=r"^'losetup' not found on PATH; install it \(Debian package util-linux\)$"):
        programs.require("losetup")


def test_children_get_the_system_folders_on_their_path(monkeypatch):
    """A program tkperf starts finds the system's tools too (a purge command
    given by name, a tool that runs another)."""
    monkeypatch.setenv("PATH", f".:{CRON_ENV['PATH']}")
    env = programs.require("env")
    path = programs.run([env]).stdout.split("PATH=", 1)[1].splitlines()[0].split(":")
    assert path[:2] == ["/usr/bin", "/bin"] and set(SBIN) <= set(path) and "." not in path
    assert programs.run([env, "losetup", "--version"]).stdout.startswith("losetup")  # found by name


def _shim(tmp_path: Path) -> Path:
    """What README.rst tells cron to call, /opt/tkperf/bin/tkperf, for this
    checkout: tkperf's console script, by its absolute path."""
    shim = tmp_path / "venv-bin" / "tkperf"
    shim.parent.mkdir()
    shim.write_text(f"#!{sys.executable} -I\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
                    "from tkperf.cli import main\nsys.exit(main())\n")
    shim.chmod(0o755)
    return shim


@needs_fio
def test_the_nightly_job_and_the_readmes_cron_commands_run_under_crons_environment(loopdev, tmp_path):
    """examples/nightly/tkperf-nightly from a root crontab (no PATH line):
    the run on a loop device (blkid, blkdiscard, losetup's facts), its
    check and history; then ``tkperf show --json``, which README.rst offers
    cron jobs.  Nothing is "not found"; every step exits 0."""
    shim = _shim(tmp_path)
    out = tmp_path / "nightly"
    env = dict(CRON_ENV, TKPERF=str(shim), TKPERF_DEVICE=loopdev, TKPERF_OUTDIR=str(out), TKPERF_QUICK="1",
               TKPERF_TESTS="lat", TKPERF_BASELINE=str(tmp_path / "baseline.xml"))
    night = subprocess.run(["/bin/bash", str(NIGHTLY)], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=600, stdin=subprocess.DEVNULL)
    (run_dir,) = out.glob("nightly-*")
    said = night.stdout + night.stderr + "".join(p.read_text() for p in run_dir.glob("*.out"))
    assert night.returncode == 0, said
    assert "not found" not in said and "not installed" not in said
    assert "no baseline yet" in night.stdout
    assert (out / "history" / "index.html").exists()
    (result,) = run_dir.glob("nightly-*.xml")
    show = subprocess.run([str(shim), "show", str(result), "--json"], env=CRON_ENV, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert show.returncode == 0, show.stderr
    assert json.loads(show.stdout)["status"] == "complete"
    missing = {m["tool"] for m in store.load(str(result)).facts["missing"]}  # what the run found missing
    assert not {t for t in missing if programs.find(t)}, missing  # each truly is nowhere
