"""What a real capture keeps beyond its streams (docs/rwsw.rst): response
times, flushes and discards, checked against fio's own counts and latencies
on a loop device the test makes; and 48 concurrent sequential fio writers
captured as sequential."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import needs_fio
from tkperf.cli import main
from tkperf.rwsw import analysis, iolog, model

pytestmark = [needs_fio, pytest.mark.skipif(os.geteuid() != 0, reason="tkperf capture needs root")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _instance(pid):
    for point in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        d = os.path.join(point, "instances")  # named tkperf-capture-PID-STARTTIME
        if os.path.isdir(d) and any(n.startswith(f"tkperf-capture-{pid}-") for n in os.listdir(d)):
            return True
    return False


def _queue(dev, name):
    with open(f"/sys/block/{os.path.basename(dev)}/queue/{name}") as fh:
        return fh.read().strip()


def _captured_while(loopdev, tmp_path, name, fio_argv, notes=None):
    """Capture ``loopdev`` while fio runs ``fio_argv`` to its end; the capture
    is then stopped with SIGINT (kept).  Returns (capture, fio's JSON); the
    capture's notes are added to the list ``notes``."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    cap = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", loopdev, "--duration", "600", "--name", name,
                            "--outdir", str(tmp_path), "--step", "1s", *(() if notes is not None else ("-q",))],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _instance(cap.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _instance(cap.pid), "the capture never set up its tracefs instance"
        time.sleep(0.5)  # the start mark follows the instance
        out = tmp_path / f"{name}.json"
        subprocess.run(["fio", *fio_argv, "--output-format=json", f"--output={out}"], check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        time.sleep(0.5)
    finally:
        cap.send_signal(signal.SIGINT)
        said, err = cap.communicate(timeout=600)
    assert cap.returncode == 0, err
    if notes is not None:
        notes.extend(ln for ln in (said + err).splitlines() if "note:" in ln)
    c = model.load(str(tmp_path / f"{name}.xml"))
    assert c.stopped_by == "SIGINT"
    return c, json.loads(out.read_text())


def test_response_times_flushes_and_discards_against_fio(loopdev, tmp_path):
    trims = _queue(loopdev, "discard_max_bytes") != "0"
    flushes = _queue(loopdev, "write_cache") == "write back"
    argv = ["--direct=1", "--ioengine=psync", f"--filename={loopdev}",
            "--name=rw", "--rw=randrw", "--rwmixread=50", "--bs=4k", "--number_ios=400", "--fsync=10",
            "--randseed=42"]
    if trims:
        argv += ["--name=trim", "--stonewall", "--rw=randtrim", "--bs=64k", "--number_ios=20", "--size=64m"]
    notes = []
    c, doc = _captured_while(loopdev, tmp_path, "seen", argv, notes)
    rw = doc["jobs"][0]
    reads, writes = rw["read"]["total_ios"], rw["write"]["total_ios"]
    seen = c.seen
    # iodepth 1: every I/O fio made reached the device as one request, and completed
    assert sum(s.ios for s in c.streams) == reads + writes
    assert seen.read.ios == reads and seen.write.ios == writes and seen.lat.ios == reads + writes
    # the block layer's issue-to-completion lies within fio's submit-to-completion of the same I/O
    for d, lat in (("read", seen.read), ("write", seen.write)):
        fio_lat = rw[d]["lat_ns"]
        assert 0 < lat.mean_us <= fio_lat["mean"] / 1e3, (d, lat, fio_lat["mean"])
        assert lat.max_us <= fio_lat["max"] / 1e3 and lat.p99_us <= lat.max_us
    if flushes:  # fio's fsync of the block device: one flush request each
        fsyncs = rw["sync"]["total_ios"] if "sync" in rw else writes // 10
        assert fsyncs <= seen.flushes <= fsyncs + 2, (fsyncs, seen.flushes)
    # fio started once the capture ran: every completion pairs with its issue, the flushes' too (the
    # kernel gives a flush's issue sector 0 and its completion 2^64-1)
    assert not [n for n in notes if "completions" in n], notes
    if trims:
        trim = doc["jobs"][1]["trim"]
        assert seen.discards == trim["total_ios"] == 20 and seen.discard_bytes == 20 * 65536
    assert seen.fua == 0  # a loop device takes no FUA: the block layer makes it a flush
    assert seen.lost_events == 0
    assert sum(st.seen.flushes for st in c.steps) == seen.flushes
    assert sum(st.seen.discards for st in c.steps) == seen.discards
    assert sum(st.seen.lat.ios for st in c.steps if st.seen.lat) == seen.lat.ios
    # the iolog holds the flushes and discards as fio actions, in issue order
    actions = [ln.split()[2] for ln in list(iolog.text_lines(str(tmp_path / "seen.iolog")))[3:-1]]
    assert actions.count("sync") == seen.flushes and actions.count("trim") == seen.discards


def test_48_concurrent_sequential_writers_are_captured_sequential(loopdev, tmp_path):
    """48 fio jobs, each writing its own 4 MiB region sequentially in 64 KiB I/Os, all at once."""
    argv = ["--name=w", f"--filename={loopdev}", "--direct=1", "--ioengine=psync", "--rw=write", "--bs=64k",
            "--numjobs=48", "--size=4m", "--offset_increment=4m", "--rate_iops=40", "--group_reporting"]
    c, doc = _captured_while(loopdev, tmp_path, "w48", argv)
    fio_ios = doc["jobs"][0]["write"]["total_ios"]
    assert fio_ios == 48 * 64
    by_key = {s.key: s for s in c.streams}
    assert sum(s.ios for s in c.streams) == fio_ios
    seq = by_key["SEQ 64KiB write"]
    assert seq.share >= 0.95, c.streams
    # each writer on its own: the stream rule over the captured I/Os, by region
    lines = [ln.split() for ln in list(iolog.text_lines(str(tmp_path / "w48.iolog")))[3:-1]]
    off = np.array([int(x[3]) for x in lines if x[2] == "write"], dtype=np.int64)
    n = np.array([int(x[4]) for x in lines if x[2] == "write"], dtype=np.int64)
    marks = analysis.SeqRule().mark(np.ones(off.size, dtype=np.int64), off, n)
    region = off // (4 << 20)
    shares = [float(marks[region == r].mean()) for r in np.unique(region)]
    assert len(shares) == 48 and min(shares) >= 0.95, shares


def _capture_beside_reads(loopdev, tmp_path, name: str, fio_s: int, capture_s: int):
    """``tkperf capture`` of 1 s steps for ``capture_s`` seconds, a second into fio's 4 KiB random reads at
    queue depth 16 over 1 MiB for ``fio_s`` seconds; the capture, and fio's largest read latency in us."""
    fio = subprocess.Popen(["fio", "--name=r", f"--filename={loopdev}", "--direct=1", "--ioengine=libaio",
                            "--iodepth=16", "--rw=randread", "--bs=4k", "--norandommap", f"--runtime={fio_s}",
                            "--size=1m", "--time_based", "--output-format=json",
                            f"--output={tmp_path / 'fio.json'}"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        rc = main(["capture", loopdev, "--duration", str(capture_s), "--name", name, "--outdir", str(tmp_path),
                   "--step", "1s"])
    finally:
        fio.wait(timeout=120)
    assert rc == 0
    fio_max_us = json.loads((tmp_path / "fio.json").read_text())["jobs"][0]["read"]["lat_ns"]["max"] / 1e3
    return model.load(str(tmp_path / f"{name}.xml")), fio_max_us


def test_a_capture_that_lost_events_says_so(loopdev, tmp_path, capsys, monkeypatch):
    """A trace buffer of a few KiB per CPU under fio at queue depth 16 overflows between two reads."""
    from tkperf.rwsw import tracing
    monkeypatch.setattr(tracing, "BUFFER_KB", 8)
    # over 1 MiB (256 blocks): a block is read again while an earlier read of it lost its completion
    c, fio_max_us = _capture_beside_reads(loopdev, tmp_path, "lossy", fio_s=6, capture_s=3)
    out = capsys.readouterr().out
    lost = c.seen.lost_events
    assert lost > 0 and f"{lost} events were lost" in out
    # per step: what the pages said was lost before them, never more than the kernel's count
    assert 0 < sum(st.seen.lost_events for st in c.steps) <= lost
    # pairing starts afresh after each loss: no completion taken by another I/O of the same block, so
    # never more than fio's 16 in flight and no response time above fio's largest (its own spans the block layer's)
    assert c.qd <= 16 and all(st.qd <= 16 for st in c.steps), [st.qd for st in c.steps]
    assert c.seen.lat.max_us <= fio_max_us and all(st.seen.lat is None or st.seen.lat.max_us <= fio_max_us
                                                    for st in c.steps)
    # the steps the losses touched are marked, in the file and by show
    touched = c.steps_touched_by_loss
    assert touched and all(st.number in touched for st in c.steps if st.seen.lost_events)
    assert "touched by lost events" in out


class _StalledClock:
    """The recorder's ``time`` with its third wait between two reads 4 s long: a reader stalled as by
    a loaded host (the kernel keeps writing, over what was not read)."""

    def __init__(self):
        self.waits = 0
        self.monotonic = time.monotonic

    def sleep(self, s):
        self.waits += 1
        time.sleep(4.0 if self.waits == 3 else s)


def test_a_stalled_reader_loses_events_and_the_rest_of_the_capture_stays_true(loopdev, tmp_path, capsys,
                                                                               monkeypatch):
    """fio's reads at queue depth 16 over 1 MiB (a block comes back often) while the recorder stalls
    for 4 s with 256 KiB of trace buffer per CPU: each CPU loses events over its own stretch of time,
    and the other CPU's events of that time come without the other half of their I/Os."""
    from tkperf.rwsw import tracing
    monkeypatch.setattr(tracing, "BUFFER_KB", 256)
    monkeypatch.setattr(tracing, "time", _StalledClock())
    c, fio_max_us = _capture_beside_reads(loopdev, tmp_path, "stall", fio_s=9, capture_s=6)
    out = capsys.readouterr().out
    assert c.seen.lost_events > 0
    # no completion taken by an I/O it is not: never more than fio's 16 in flight, no response time
    # above fio's largest, in any step and in the whole capture
    assert c.qd <= 16 and all(st.qd <= 16 for st in c.steps), [st.qd for st in c.steps]
    assert all(st.seen.lat is None or st.seen.lat.max_us <= fio_max_us for st in c.steps), fio_max_us
    assert c.seen.lat.max_us <= fio_max_us
    touched = c.steps_touched_by_loss
    assert touched and all(st.number in touched for st in c.steps if st.seen.lost_events)
    assert "touched by lost events" in out
