"""The README's install path: a fresh virtual environment made from the
system Python (``/usr/bin/python3`` where there is one, as on a stock
Debian or Ubuntu box), ``pip install -c constraints.txt .`` of a copy of
this source tree, and a working ``tkperf`` command from it.  And CI runs
the README's own test command.  The install fetches tkperf's dependencies
from the package index (pip's cache makes a second run quick).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tkperf import __version__

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"


def readme_commands() -> list:
    """The indented command lines of the README's first screen."""
    text = (REPO / "README.rst").read_text()
    head = text[: text.index("Testing a drive")]
    return [ln.strip() for ln in head.splitlines() if ln.startswith("    ") and "apt-get" in ln]


def test_ci_runs_the_readme_test_command():
    install_demo, test_cmd, offline = readme_commands()
    assert install_demo.endswith("tkperf demo") and " /usr/bin/python3 -m venv " in install_demo  # the system's
    assert "pytest" in test_cmd
    # both install the versions of constraints.txt (docs/install.rst)
    assert "/opt/tkperf/bin/pip install -c constraints.txt . && " in install_demo
    assert "/opt/tkperf/bin/pip install -c constraints.txt '.[test]' && " in test_cmd
    # the tests are linted as the code is (pyproject.toml's [tool.ruff])
    assert "/opt/tkperf/bin/ruff check tkperf examples tests && " in test_cmd
    # the remote-host lab (tests/lab/remote_lab.py) runs a real sshd and ssh client
    assert {"openssh-server", "openssh-client"} <= set(test_cmd.split())
    ci = (REPO / ".ci" / "run").read_text()
    assert test_cmd in ci.splitlines()


def _base_python() -> str:
    if os.path.exists(SYSTEM_PYTHON):
        return SYSTEM_PYTHON
    return getattr(sys, "_base_executable", sys.executable)


def test_readme_install_in_a_fresh_venv_from_the_system_python(tmp_path):
    python = _base_python()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    venv = tmp_path / "venv"
    made = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True, env=env)
    if made.returncode != 0:
        pytest.skip(f"{python} -m venv failed (apt-get install python3-venv): {made.stderr.strip()[-200:]}")
    # A copy of the tree, so the build leaves nothing in the repository.
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                            ".pytest_cache"))
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(src / "constraints.txt"),
                          str(src)], capture_output=True, text=True, env=env, timeout=900)
    assert pip.returncode == 0, pip.stderr[-2000:]
    # every package installed is the version constraints.txt pins
    frozen = subprocess.run([str(venv / "bin" / "pip"), "freeze", "--exclude", "tkperf"], capture_output=True,
                            text=True, env=env)
    pinned = set((src / "constraints.txt").read_text().splitlines())
    assert frozen.returncode == 0 and frozen.stdout.split(), frozen.stderr
    assert set(frozen.stdout.splitlines()) <= pinned, sorted(set(frozen.stdout.splitlines()) - pinned)
    tkperf = venv / "bin" / "tkperf"
    version = subprocess.run([str(tkperf), "--version"], capture_output=True, text=True, env=env)
    assert version.stdout.strip() == f"tkperf {__version__}"
    listed = subprocess.run([str(tkperf), "tests"], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert [ln.split()[0] for ln in listed.stdout.splitlines()] == [
        "iops", "tp", "lat", "wsat", "consistency", "qd", "dirth", "cbw", "hir", "xsr",
        "hdd-zones", "hdd-iops", "hdd-lat", "replay", "rwsw-wsat", "rwsw-dirth"]
    # The schema files travel with the package: a result file can be checked.
    show = subprocess.run([str(tkperf), "show", str(REPO / "examples" / "example-ssd.xml")],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert show.returncode == 0, show.stderr
    assert re.match(r"example-ssd: ", show.stdout)
    # The documents travel with the package (setup.py's build step): help
    # works away from the source tree, and so do the man page and completion.
    helped = subprocess.run([str(tkperf), "help", "exit-codes"], capture_output=True, text=True, env=env,
                            cwd=str(tmp_path))
    assert helped.returncode == 0 and helped.stdout.startswith("Exit codes\n"), helped.stderr
    man1 = tmp_path / "man" / "man1"
    man1.mkdir(parents=True)
    page = subprocess.run([str(tkperf), "help", "--man"], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path))
    assert page.returncode == 0, page.stderr
    (man1 / "tkperf.1").write_text(page.stdout)
    if shutil.which("man"):
        shown = subprocess.run(["man", "-M", str(tmp_path / "man"), "tkperf"], capture_output=True, text=True,
                               env=dict(env, MANPAGER="cat", PAGER="cat", MANWIDTH="120"))
        assert shown.returncode == 0 and "EXIT STATUS" in shown.stdout, shown.stderr
    completion = subprocess.run([str(tkperf), "completion", "bash"], capture_output=True, text=True, env=env,
                                cwd=str(tmp_path))
    assert completion.returncode == 0 and "complete -o filenames -F _tkperf tkperf" in completion.stdout


DEBIAN_PACKAGES = ("python3-numpy", "python3-matplotlib", "python3-lxml", "python3-docutils", "rst2pdf",
                   "python3-svglib",
                   "python3-rich", "python3-setuptools")


def test_readme_offline_route_from_debian_packages(tmp_path):
    """The README's second route: Debian's own packages (the dependencies'
    lower ends), a venv that sees them, and pip with no index.  A report with
    every plot, in HTML and PDF, must come out of it."""
    offline = readme_commands()[2]
    assert set(DEBIAN_PACKAGES) <= set(offline.split())
    assert "python3 -m venv --system-site-packages --clear /opt/tkperf" in offline
    assert "/opt/tkperf/bin/pip install --no-deps --no-build-isolation --no-index ." in offline
    test_cmd = readme_commands()[1]
    assert set(DEBIAN_PACKAGES) <= set(test_cmd.split()), "the test command must install the offline route"
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("no Debian system Python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    missing = subprocess.run([SYSTEM_PYTHON, "-c", "import numpy, matplotlib, lxml, docutils, rst2pdf, svglib, rich, "
                              "reportlab, setuptools"], capture_output=True, text=True, env=env)
    assert missing.returncode == 0, f"apt-get install -y {' '.join(DEBIAN_PACKAGES)}: {missing.stderr[-300:]}"
    venv = tmp_path / "venv"
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", "--clear", str(venv)],
                          capture_output=True, text=True, env=env)
    assert made.returncode == 0, made.stderr
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                            ".pytest_cache"))
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "."], capture_output=True, text=True, env=env, cwd=str(src), timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    tkperf = str(venv / "bin" / "tkperf")
    versions = subprocess.run([str(venv / "bin" / "python"), "-c",
                               "import docutils, matplotlib; print(docutils.__version__, matplotlib.__version__)"],
                              capture_output=True, text=True, env=env)
    assert versions.returncode == 0, versions.stderr
    out = tmp_path / "report"
    report = subprocess.run([tkperf, "report", str(REPO / "examples" / "example-full.xml"), "--format",
                             "rst,html,pdf", "--outdir", str(out), "-q"], capture_output=True, text=True,
                            env=env, cwd=str(tmp_path), timeout=600)
    assert report.returncode == 0, report.stderr
    assert "could not be drawn" not in report.stderr, (versions.stdout, report.stderr[-1500:])
    assert (out / "example-full.pdf").stat().st_size > 10000
    plots = sorted(p.name for p in (out / "example-full-plots").iterdir())
    assert "iops-convergence.svg" in plots and "wsat-iops-vs-time.svg" in plots
    helped = subprocess.run([tkperf, "help", "exit-codes"], capture_output=True, text=True, env=env,
                            cwd=str(tmp_path))
    assert helped.returncode == 0 and helped.stdout.startswith("Exit codes\n")


def _link_step() -> str:
    """The README install line's step that links the command into /usr/local/bin."""
    install_demo = readme_commands()[0]
    step = re.search(r"(\{ if .*?; fi; \})", install_demo)
    assert step is not None, install_demo
    return step.group(1)


def test_readme_install_never_replaces_another_installs_command(tmp_path):
    """The step links /usr/local/bin/tkperf to /opt/tkperf's command when there
    is none or it is already that; another install's command is left and said."""
    ours, bindir = tmp_path / "opt" / "bin" / "tkperf", tmp_path / "bin"
    ours.parent.mkdir(parents=True)
    bindir.mkdir()
    ours.write_text("#!/bin/sh\n")
    step = _link_step().replace("/opt/tkperf/bin/tkperf", str(ours)).replace("/usr/local/bin/tkperf",
                                                                            str(bindir / "tkperf"))
    assert "/usr/local" not in step and "/opt/tkperf" not in step

    def run() -> subprocess.CompletedProcess:
        return subprocess.run(["sh", "-c", step + " && echo next"], capture_output=True, text=True)

    done = run()  # nothing there: linked, and the line goes on
    assert done.returncode == 0 and done.stdout.strip() == "next"
    assert os.readlink(bindir / "tkperf") == str(ours)
    done = run()  # ours already: kept as it is, quietly
    assert done.stdout.strip() == "next" and os.readlink(bindir / "tkperf") == str(ours)
    (bindir / "tkperf").unlink()
    other = tmp_path / "other-tkperf"
    other.write_text("#!/bin/sh\n")
    os.symlink(other, bindir / "tkperf")
    done = run()  # another install's: left, said, and the line goes on (to the demo)
    assert done.returncode == 0 and os.readlink(bindir / "tkperf") == str(other)
    assert "is another install's: left as it is" in done.stdout and done.stdout.strip().endswith("next")
    (bindir / "tkperf").unlink()
    (bindir / "tkperf").write_text("a file of its own\n")
    run()  # a plain file (a pip install --user's script ...): left too
    assert (bindir / "tkperf").read_text() == "a file of its own\n"
