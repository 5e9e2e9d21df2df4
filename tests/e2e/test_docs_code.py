"""Every code block of the plug-in pages (docs/extending.rst, docs/api.rst)
runs against tkperf installed from its wheel, with warnings as errors
(issue 59 item 2): what a plug-in author copies works, and uses nothing
deprecated.

The convention the pages follow, in reST comments a reader does not see:

``.. file: NAME`` before a code block
    The block is the next part of file ``NAME``; the blocks of one file are
    joined in the order of the page (a plug-in shown in pieces, or in two
    files: a package and its ``view`` module).  Lines indented under the
    comment go into the file before the block: the imports and the parts
    the page leaves out.
``.. file: NAME`` with lines under it and no code block right after
    Those lines go into the file there (checks after a block).
``.. file: -`` before a code block
    The block is not run here; the comment says which test runs it.

Then, in one virtual environment (``--system-site-packages`` from the
Python running this test, tkperf's wheel installed into it): every Python
file runs with ``-W error``, in the order the page first names them; a
directory with a ``pyproject.toml`` is pip-installed (the plug-in of the
walk-through) and ``tkperf tests --json`` of the environment lists its type.
"""
from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "docs" / "extending.rst", ROOT / "docs" / "api.rst")
COMMENT = re.compile(r"^(\s*)\.\. file: (\S+)\s*$")
BLOCK = re.compile(r"^(\s*)\.\. code-block:: (\S+)\s*$")


def _indented(lines: List[str], start: int, indent: int) -> Tuple[List[str], int]:
    """The lines from ``start`` indented deeper than ``indent`` (blank lines
    inside kept), dedented; and the index after them."""
    body: List[str] = []
    i = start
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    cut = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
    return [x[cut:] for x in body], i


def parts(text: str) -> Tuple[Dict[str, List[str]], List[Tuple[str, int]], List[str]]:
    """(file -> its lines, [(language, line) of every code block], [the
    blocks not assigned to a file, as "line N"]) of a page."""
    lines = text.splitlines()
    files: Dict[str, List[str]] = {}
    blocks: List[Tuple[str, int]] = []
    unassigned: List[str] = []
    pending = None  # the file named by a comment right before a block
    i = 0
    while i < len(lines):
        m, b = COMMENT.match(lines[i]), BLOCK.match(lines[i])
        if m:
            hidden, i = _indented(lines, i + 1, len(m.group(1)))
            pending = m.group(2)
            if pending != "-":
                files.setdefault(pending, []).extend(hidden + [""])
            continue
        if b:
            blocks.append((b.group(2), i + 1))
            body, i = _indented(lines, i + 1, len(b.group(1)))
            if pending is None:
                unassigned.append(f"line {blocks[-1][1]} ({b.group(2)})")
            elif pending != "-":
                files[pending].extend(body + [""])
            pending = None
            continue
        if lines[i].strip():
            pending = None
        i += 1
    return files, blocks, unassigned


def test_every_code_block_is_in_a_file():
    """The convention holds: no code block is left out by mistake, and only
    the one that needs root, a loop device and fio is run elsewhere."""
    for page in PAGES:
        _files, blocks, unassigned = parts(page.read_text(encoding="utf-8"))
        assert unassigned == [], f"{page.name}: code blocks without a '.. file:' comment: {unassigned}"
    text = PAGES[0].read_text(encoding="utf-8")
    assert text.count(".. file: -") == 1 and len(parts(text)[1]) >= 10


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """(python of a venv that sees this Python's packages, with tkperf
    installed from a wheel built from this checkout) ."""
    base = tmp_path_factory.mktemp("docs-code")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", base / "venv"],
                          capture_output=True, text=True, env=env)
    if made.returncode != 0:
        pytest.skip(f"python -m venv is unavailable: {made.stderr.strip()[-200:]}")
    python = base / "venv" / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        # this Python is a virtual environment itself (as the README installs tkperf): a venv made from it
        # sees the base Python's packages, so point the new one at this one's too, after its own
        new_site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                                  capture_output=True, text=True, env=env).stdout.strip()
        (Path(new_site) / "tkperf-parent-env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    if subprocess.run([*pip, "--version"], capture_output=True, env=env).returncode != 0:
        pytest.skip("pip is not installed beside this Python")
    old = ("import importlib.util, setuptools, sys\n"
           "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2] if x.isdigit())\n"
           "sys.exit(0 if v >= (70, 1) or importlib.util.find_spec('wheel') else 1)")
    if subprocess.run([python, "-c", old], env=env).returncode != 0:
        # setuptools before 70.1 builds no wheel without the 'wheel' package: pip fetches it, as a user's would
        got = subprocess.run([*pip, "install", "wheel"], capture_output=True, text=True, env=env, timeout=600)
        if got.returncode != 0:
            pytest.skip(f"cannot build a wheel: setuptools < 70.1 and no 'wheel' package ({got.stderr[-300:]})")
    built = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", base / "wheel", ROOT],
                           capture_output=True, text=True, env=env, cwd=str(base), timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((base / "wheel").glob("tkperf-*.whl"))
    done = subprocess.run([*pip, "install", "--no-deps", "--force-reinstall", wheel], capture_output=True, text=True,
                          env=env, cwd=str(base), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    where = subprocess.run([python, "-c", "import tkperf; print(tkperf.__file__)"], capture_output=True, text=True,
                           env=env, cwd=str(base)).stdout.strip()
    assert where.startswith(str(base / "venv")), f"tkperf comes from {where}, not the wheel"
    return python, pip, env


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_code_block_runs_against_the_installed_wheel(page, wheel_env, tmp_path):
    python, pip, env = wheel_env
    files, _blocks, _unassigned = parts(page.read_text(encoding="utf-8"))
    for name, lines in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    projects = sorted({(tmp_path / n).parent for n in files if n.endswith("pyproject.toml")})
    for project in projects:
        done = subprocess.run([*pip, "install", "--no-deps", "--no-build-isolation", project], capture_output=True,
                              text=True, env=env, cwd=str(tmp_path), timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    for name in files:
        if name.endswith(".py"):
            done = subprocess.run([python, "-W", "error", name], capture_output=True, text=True, env=env,
                                  cwd=str(tmp_path), timeout=300)
            assert done.returncode == 0, f"{page.name}: {name}:\n{done.stdout}{done.stderr}"
    if projects:  # the walk-through's plug-in, installed: tkperf lists it with its options
        listed = subprocess.run([python, "-W", "error", "-m", "tkperf", "tests", "--json"], capture_output=True,
                                text=True, env=env, cwd=str(tmp_path), timeout=300)
        assert listed.returncode == 0 and listed.stderr == "", listed.stderr
        shown = {t["name"]: t for t in json.loads(listed.stdout)["tests"]}
        assert "rw4k" in shown, sorted(shown)
        assert "--rw4k-mix" in json.dumps(shown["rw4k"]) and "--rw4k-qd" in json.dumps(shown["rw4k"])
