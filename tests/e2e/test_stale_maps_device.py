"""Issue 54 item 3 with the real device-mapper: maps over a loop device,
named as tkperf names its maps and as it never does, one held open (busy).
The sweep removes only the map whose name is tkperf's exact pattern and
whose owner is gone, tries the busy one once in bounded time and says so
once; the other maps are not touched.  Skips where the kernel has no
device-mapper (tests/unit/test_stale_maps.py covers the same with a
stand-in).  Every map the test makes is removed, and the loop device
detached, however it ends."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from test_ar_segments_device import device_mapper
from tkperf import programs
from tkperf.target import armap


@pytest.fixture
def maps(loopdev, monkeypatch):
    """make(name): a linear map of the loop device's first MiB; all removed afterwards."""
    why = device_mapper()
    if why:
        pytest.skip(f"no device-mapper here: {why}")
    monkeypatch.setattr(armap, "_left", {})
    monkeypatch.setattr(armap, "_unsaid", [])
    rdev = os.stat(loopdev).st_rdev
    made = []

    def make(name: str) -> str:
        table = f"0 2048 linear {os.major(rdev)}:{os.minor(rdev)} 0\n"
        subprocess.run(["dmsetup", "create", name], input=table, text=True, check=True, capture_output=True)
        made.append(name)
        return name

    try:
        yield make
    finally:
        for name in made:
            if name in armap._maps():
                subprocess.run(["dmsetup", "remove", "--retry", name], capture_output=True)


def _pid_max() -> int:
    with open("/proc/sys/kernel/pid_max") as fh:
        return int(fh.read())


def test_the_sweep_removes_only_what_tkperf_made_and_leaves_a_busy_map_once(maps, monkeypatch):
    dead = _pid_max()  # no process has this pid
    foreign = maps("tkperf-ar-backup")
    live = maps(f"tkperf-ar-1-{armap.owner_tag(1).split('-')[1]}")  # pid 1, its own start: alive
    gone = maps(f"tkperf-ar-{dead}-1")
    busy = maps(f"tkperf-ar-{dead}-2")
    tried = []
    real_run = programs.run

    def run(argv, *a, **kw):
        tried.append(list(argv))
        return real_run(argv, *a, **kw)

    monkeypatch.setattr(programs, "run", run)
    fd = os.open(armap.map_path(busy), os.O_RDONLY)
    try:
        t0 = time.monotonic()
        assert armap.sweep() == [gone]
        assert time.monotonic() - t0 < armap.STALE_REMOVE_S * 2 + 5
        assert armap.sweep() == [] and armap.remove_stale(armap.require(2, load=False)) == []
    finally:
        os.close(fd)
    removed = [a[-1] for a in tried if a[1:2] == ["remove"]]
    assert sorted(removed) == sorted([gone, busy])  # each once; the others never
    left = set(armap._maps())
    assert {foreign, live, busy} <= left and gone not in left
    said = armap.unsaid()
    assert len(said) == 1 and busy in said[0] and "busy" in said[0].lower() and foreign not in said[0]
    assert armap.unsaid() == []
