"""Links another user could plant in a shared directory, for the tests that
root never follows them (result files, captures, logs, passwords)."""
from __future__ import annotations

import os

import pytest

#: The uid of ``nobody`` on Debian: the other user who plants the link.
NOBODY = 65534

#: Planting another user's link needs root (``lchown``).
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's link needs root (lchown)")


def shared_dir(tmp_path) -> str:
    """A directory every user may write, sticky, as /tmp is."""
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o1777)
    return d


def plant(link, target, uid: int = NOBODY) -> str:
    """A symbolic link ``link`` -> ``target`` owned by ``uid``; its path."""
    os.symlink(str(target), str(link))
    os.lchown(str(link), uid, uid)
    return str(link)
