"""blkdiscard on a real loop device, and the verification read.

A loop device over a sparse file punches holes for a discard, so the
discarded range reads back as zeros: tkperf fills the device with data
first, purges, and its verification read (64 MiB at 16 places, O_DIRECT)
must find only zeros.  A discard that did nothing must be caught.
"""
from __future__ import annotations

import os

from test_purge import fill
from tkperf import programs
from tkperf.target import device, purge

MiB = 1 << 20


def read_at(path: str, offset: int, n: int = 4096) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        import mmap
        buf = mmap.mmap(-1, n)
        os.preadv(fd, [buf], offset)
        return bytes(buf)
    finally:
        os.close(fd)


def test_blkdiscard_purge_really_discards(loopdev):
    fill(loopdev)
    dev = device.resolve(loopdev)
    assert read_at(loopdev, 100 * MiB) == b"\xab" * 4096
    rec = purge.purge("auto", dev)
    assert rec.method == "discard" and not rec.pts_purge and "blkdiscard" in rec.command
    assert rec.verification == "read 64 MiB at 16 places: all zeros"
    for off in (0, 100 * MiB, dev.size_bytes - 4096):
        assert read_at(loopdev, off) == b"\0" * 4096


def test_a_discard_that_did_nothing_is_caught(loopdev, monkeypatch):
    fill(loopdev)
    real_run = programs.run

    def run(argv, *args, **kwargs):
        if os.path.basename(argv[0]) == "blkdiscard" and "--help" not in argv:
            return real_run(["true"])  # the discard that never happened
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(programs, "run", run)
    rec = purge.purge("discard", device.resolve(loopdev))
    assert "NOT all zeros: data at 16 of them (first at byte 0)" in rec.verification
    assert "the verification read found data after the purge" in rec.note


def test_verification_reads_the_whole_range(tmp_path):
    """Data only in the last MiB is found: the places span the device."""
    path = tmp_path / "x.img"
    with open(path, "wb") as fh:
        fh.truncate(256 * MiB)
        fh.seek(256 * MiB - MiB)
        fh.write(b"\x01" * MiB)
    text = purge.verify_zeros(str(path), 256 * MiB)
    assert text == f"read 64 MiB at 16 places: NOT all zeros: data at 1 of them (first at byte {252 * MiB})"
    assert purge.verify_zeros(str(path), 128 * MiB) == "read 64 MiB at 16 places: all zeros"
