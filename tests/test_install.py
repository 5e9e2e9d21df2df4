"""The README's install path: a fresh virtual environment made from the
system Python (``/usr/bin/python3`` where there is one, as on a stock
Debian or Ubuntu box), ``pip install .`` of a copy of this source tree, and
a working ``tkperf`` command from it.  And CI runs the README's own test
command.  The install fetches tkperf's dependencies from the package index
(pip's cache makes a second run quick).
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

REPO = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"


def readme_commands() -> list:
    """The indented command lines of the README's first screen."""
    text = (REPO / "README.rst").read_text()
    head = text[: text.index("Testing a drive")]
    return [ln.strip() for ln in head.splitlines() if ln.startswith("    ") and "apt-get" in ln]


def test_ci_runs_the_readme_test_command():
    install_demo, test_cmd = readme_commands()
    assert install_demo.endswith("tkperf demo") and "python3 -m venv" in install_demo
    assert "pytest" in test_cmd
    # the remote-host lab (tests/remote_lab.py) runs a real sshd and ssh client
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
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(src)], capture_output=True,
                         text=True, env=env, timeout=900)
    assert pip.returncode == 0, pip.stderr[-2000:]
    tkperf = venv / "bin" / "tkperf"
    version = subprocess.run([str(tkperf), "--version"], capture_output=True, text=True, env=env)
    assert version.stdout.strip() == f"tkperf {__version__}"
    listed = subprocess.run([str(tkperf), "tests"], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert [ln.split()[0] for ln in listed.stdout.splitlines()] == [
        "iops", "tp", "lat", "wsat", "consistency", "qd", "dirth", "cbw", "hir", "xsr",
        "hdd-zones", "hdd-iops", "hdd-lat"]
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
