"""Throw-away loop devices over sparse files, for the demo and the tests.

:class:`LoopDevice` always detaches and deletes what it made, even when the
body raises.  Where no loop device can be made (no root, no loop driver, a
container), :func:`try_loop` says why and the caller falls back to a file.
"""
from __future__ import annotations

import os
import tempfile
from typing import Optional, Tuple

from tkperf import programs
from tkperf.errors import TkperfError


class LoopDevice:
    """``with LoopDevice(size) as path:`` -> /dev/loopN over a sparse file."""

    def __init__(self, size: int, directory: Optional[str] = None) -> None:
        self.size = size
        self.directory = directory
        self.backing = ""
        self.path = ""

    def __enter__(self) -> str:
        fd, self.backing = tempfile.mkstemp(prefix="tkperf-loop-", suffix=".img", dir=self.directory)
        try:
            os.ftruncate(fd, self.size)
        finally:
            os.close(fd)
        try:
            out = programs.run([programs.require("losetup"), "--find", "--show", "--direct-io=on",
                                self.backing], timeout=60, what="losetup")
        except BaseException:
            os.unlink(self.backing)
            raise
        self.path = out.stdout.strip()
        return self.path

    def __exit__(self, *exc: object) -> None:
        try:
            if self.path:
                programs.run([programs.require("losetup"), "--detach", self.path], timeout=60,
                             check=False, what="losetup --detach")
        finally:
            if self.backing and os.path.exists(self.backing):
                os.unlink(self.backing)


def try_loop(size: int, directory: Optional[str] = None) -> Tuple[Optional[LoopDevice], str]:
    """A set-up LoopDevice (entered), or (None, why not)."""
    if os.geteuid() != 0:
        return None, "loop devices need root"
    loop = LoopDevice(size, directory)
    try:
        loop.__enter__()
    except (TkperfError, OSError) as exc:
        return None, f"no loop device could be made ({exc})"
    return loop, ""
