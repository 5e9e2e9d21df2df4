"""Issue 54 item 3, the ActiveRange maps: the sweep removes only maps tkperf
can prove it made (exactly ``tkperf-ar-PID-STARTTIME``, that owner gone),
tries each once per process in bounded time, and says once what it left
and why.  The kernel's map list is a sysfs tree in a folder and dmsetup a
stand-in that records what it is asked (tests/e2e/test_stale_maps_device.py
does it with the real device-mapper where the kernel has it)."""
from __future__ import annotations

import os
import subprocess

import pytest

from tkperf import programs
from tkperf.engine import opening
from tkperf.errors import ToolError
from tkperf.target import armap

MINE = armap.PREFIX + armap.owner_tag(os.getpid())           # a live run's (this process)
PID1_START = armap.owner_tag(1).split("-")[1]
REUSED = f"tkperf-ar-1-{int(PID1_START) + 1}"                # pid 1 now, but another start: the owner is gone
GONE = "tkperf-ar-4194305-12345"                              # beyond any pid_max: gone
NOT_OURS = ["tkperf-ar-backup", "tkperf-ar-", "tkperf-ar-7", "tkperf-ar-0-5", "tkperf-ar-012-5",
            "tkperf-ar-12-5-x", "tkperf-ar-12-5 ", "xtkperf-ar-12-5", "TKPERF-AR-12-5", "tkperf-ar-١٢-5"]


class Kernel:
    """The maps as /sys/block/dm-N/dm/name shows them, and a dmsetup that
    removes one unless it is busy (or hangs past its time)."""

    def __init__(self, root, names, busy=(), hangs=()):
        self.root, self.calls, self.busy, self.hangs = root, [], set(busy), set(hangs)
        for i, name in enumerate(names):
            (root / f"dm-{i}" / "dm").mkdir(parents=True)
            (root / f"dm-{i}" / "dm" / "name").write_text(name + "\n")
        (root / "loop0").mkdir()  # not a map

    def names(self):
        return sorted(armap._maps())

    def run(self, argv, timeout=None, check=True, what="", stdin_text=None):
        assert argv[0] == "/sbin/dmsetup" and argv[1] == "remove" and len(argv) == 3, argv
        name = argv[2]
        self.calls.append((name, timeout))
        if name in self.hangs:
            raise ToolError(f"{what} did not finish within {timeout:.0f} s")
        if name in self.busy:
            return subprocess.CompletedProcess(argv, 1, "", f"device-mapper: remove ioctl on {name}  failed: "
                                                            "Device or resource busy\nCommand failed.\n")
        for d in self.root.iterdir():
            f = d / "dm" / "name"
            if f.exists() and f.read_text().strip() == name:
                f.unlink()
        return subprocess.CompletedProcess(argv, 0, "", "")


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """kernel(names, busy=(), hangs=()): the maps there are; what this process tried is forgotten."""
    monkeypatch.setattr(armap, "SYS_BLOCK", str(tmp_path))
    monkeypatch.setattr(armap, "_which", lambda tool: "/sbin/dmsetup")
    monkeypatch.setattr(armap, "REMOVE_PAUSE_S", 0)  # the run's own map's retries: no waiting here
    monkeypatch.setattr(armap, "_left", {}, raising=False)
    monkeypatch.setattr(armap, "_unsaid", [], raising=False)

    def make(names, busy=(), hangs=()):
        k = Kernel(tmp_path, names, busy, hangs)
        monkeypatch.setattr(programs, "run", k.run)
        return k

    return make


def test_only_maps_of_the_exact_name_whose_owner_is_gone_are_removed(kernel):
    k = kernel([MINE, REUSED, GONE, *NOT_OURS])
    assert sorted(armap.sweep()) == sorted([REUSED, GONE])
    assert sorted(name for name, _ in k.calls) == sorted([REUSED, GONE])  # nothing else was even tried
    assert k.names() == sorted([MINE, *NOT_OURS])
    assert armap.unsaid() == []  # nothing left of tkperf's: nothing to say
    assert armap.sweep() == [] and len(k.calls) == 2


def test_a_busy_map_is_tried_once_and_said_once(kernel):
    k = kernel([GONE, REUSED], busy=[GONE])
    assert armap.sweep() == [REUSED]
    for _ in range(3):  # the run's other sweeps (each target of several, the map's own) do not try again
        assert armap.sweep() == [] and armap.remove_stale("/sbin/dmsetup") == []
    assert [name for name, _ in k.calls] == [GONE, REUSED]
    assert armap.unsaid() == [
        f"left 1 device-mapper map of killed tkperf runs, each still holding its device: {GONE} "
        f"(dmsetup remove failed: device-mapper: remove ioctl on {GONE}  failed: Device or resource busy); "
        "remove by hand (dmsetup remove NAME) once nothing uses it"]
    assert armap.unsaid() == []  # once
    assert k.names() == [GONE]


def test_the_time_spent_is_bounded(kernel, monkeypatch):
    """Each removal has STALE_REMOVE_S; once the sweep's budget is spent the
    rest are left (and said) without a try."""
    names = [f"tkperf-ar-4194305-{i}" for i in range(6)]
    k = kernel(names, hangs=names)
    clock = [1000.0]
    monkeypatch.setattr(armap.time, "monotonic", lambda: clock[0])

    def hang(argv, timeout=None, **kw):
        clock[0] += timeout  # dmsetup ran its whole time and was killed
        return Kernel.run(k, argv, timeout, **kw)

    monkeypatch.setattr(programs, "run", hang)
    assert armap.sweep() == []
    assert [t for _, t in k.calls] == [armap.STALE_REMOVE_S] * 3  # 3 x 10 s: the 30 s budget
    said, = armap.unsaid()
    assert said.startswith("left 6 device-mapper maps of killed tkperf runs")
    assert said.count("did not finish within 10 s") == 3 and said.count("not tried: the sweep's time was up") == 3


def test_without_dmsetup_the_maps_are_left_and_said(kernel, monkeypatch):
    k = kernel([GONE, "tkperf-ar-backup"])
    monkeypatch.setattr(armap, "_which", lambda tool: "")
    assert armap.sweep() == [] and k.calls == []
    assert armap.unsaid() == [f"left 1 device-mapper map of killed tkperf runs, each still holding its device: "
                              f"{GONE} (dmsetup is missing); remove by hand (dmsetup remove NAME) once nothing "
                              "uses it"]


def test_the_run_says_what_was_left_before_it_stops(kernel):
    kernel([GONE], busy=[GONE])
    opening.sweep_maps(type("Here", (), {"host": ""})())
    told = []
    opening.say_left(told.append)
    opening.say_left(told.append)
    assert len(told) == 1 and GONE in told[0]


def test_map_names_are_the_pattern_the_sweep_knows():
    assert armap.is_own(armap.map_name()) and armap.is_own(MINE)
    assert not any(armap.is_own(n) for n in NOT_OURS)
