"""Fixtures: real loop devices over sparse files, always detached afterwards.

End-to-end tests need root (losetup); where no loop device can be made the
``target`` fixture falls back to a file target and says so in the test
report, as the project's standards ask.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tkperf.target.loopdev import try_loop

DATA = os.path.join(os.path.dirname(__file__), "data")
MiB = 1024 * 1024


def data_path(name: str) -> str:
    return os.path.join(DATA, name)


@pytest.fixture
def loopdev(tmp_path):
    """A fresh 256 MiB loop device; skips (saying why) where none can be made."""
    loop, why = try_loop(256 * MiB, str(tmp_path))
    if loop is None:
        pytest.skip(f"needs a loop device: {why}")
    try:
        yield loop.path
    finally:
        loop.__exit__(None, None, None)


@pytest.fixture
def target(tmp_path):
    """(argv fragment, kind): a loop device, or a file target where none can be made."""
    loop, why = try_loop(256 * MiB, str(tmp_path))
    if loop is None:
        sys.stderr.write(f"\nNOTE: {why}; using a file target instead of a block device\n")
        yield [str(tmp_path / "target.img"), "--size", "256m"], "file"
        return
    try:
        yield [loop.path], "block"
    finally:
        loop.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _no_fio_left():
    """No test may leave a fio child of this process behind (other fio
    processes on the machine are not ours to judge)."""
    yield
    if shutil.which("pgrep"):
        out = subprocess.run(["pgrep", "-P", str(os.getpid()), "-x", "fio"],
                             capture_output=True, text=True).stdout.split()
        assert not out, f"fio processes left running: {out}"


def fio_available() -> bool:
    return shutil.which("fio") is not None


needs_fio = pytest.mark.skipif(not fio_available(), reason="fio is not installed")


# ---------------------------------------------------------------------------
# Remote-host lab (issue 13): sshd and fio servers on 127.0.0.2 / 127.0.0.3.
# Registered here so that every test module shares one session sshd; test
# modules import only helpers (LAB_HOSTS, refusing_config, ...) from remote_lab.
from remote_lab import fio_servers, old_fio, ssh_lab, ssh_refusing_config  # noqa: E402,F401
