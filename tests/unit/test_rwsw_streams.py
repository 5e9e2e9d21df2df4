"""The capture's analysis on synthetic traces imported through
``tkperf capture --import`` (tests/lab/rwsw_synth.py: workloads known by
construction): the stream rule with many concurrent sequential streams,
flushes, FUA and discards, response times, and memory that follows what is
in flight rather than what the trace touched."""
import json
import math
import os

import numpy as np
import pytest

import rwsw_synth
from tkperf.cli import main
from tkperf.rwsw import analysis, iolog, latency, model, trace


def _import(tmp_path, ios, name="s", step="10s", **kw):
    src = tmp_path / f"{name}.txt"
    rwsw_synth.write(str(src), ios, **kw)
    assert main(["capture", "--import", str(src), "--name", name, "--outdir", str(tmp_path), "--step", step,
                 "-q"]) == 0
    return model.load(str(tmp_path / f"{name}.xml"))


def _per_stream_sequential(ios, region_sectors=1 << 24):
    """Per stream (its region), the share of its I/Os the stream rule calls sequential."""
    ios = list(ios)
    w = np.array([x[0] for x in ios], dtype=np.int64)
    off = np.array([x[1] * 512 for x in ios], dtype=np.int64)
    n = np.array([x[2] * 512 for x in ios], dtype=np.int64)
    seq = analysis.SeqRule().mark(w, off, n)
    region = off // (region_sectors * 512)
    return {int(r): float(seq[region == r].mean()) for r in np.unique(region)}


@pytest.mark.parametrize("streams", [1, 8, 48, 128])
def test_concurrent_sequential_streams_stay_sequential(tmp_path, streams):
    per = 40
    c = _import(tmp_path, rwsw_synth.sequential_streams(streams, per), gap_us=20, lat_us=20 * streams)
    by_key = {s.key: s for s in c.streams}
    seq = by_key["SEQ 128KiB read"]
    assert seq.ios == streams * (per - 1)  # each stream's first I/O has nothing before it
    assert seq.share >= 0.95
    shares = _per_stream_sequential(rwsw_synth.sequential_streams(streams, per))
    assert len(shares) == streams and min(shares.values()) >= 0.95


def test_sequential_streams_among_random_io(tmp_path):
    """48 sequential readers and random 4 KiB I/O (a third of the I/Os) interleaved."""
    rnd = np.random.default_rng(5)
    seq = list(rwsw_synth.sequential_streams(48, 60))
    rand = list(rwsw_synth.random_ios(len(seq), device_sectors=1 << 22, seed=9))
    ios = []
    r = iter(rand)
    for x in seq:
        ios.append(x)
        if rnd.random() < 0.5:
            ios.append(next(r))
    c = _import(tmp_path, ios, gap_us=10, lat_us=500)
    by_key = {s.key: s for s in c.streams}
    assert by_key["SEQ 128KiB read"].ios >= 0.95 * len(seq)
    rnd_ios = sum(s.ios for s in c.streams if s.bs == 4096)
    assert sum(s.ios for s in c.streams if s.bs == 4096 and s.access == "random") >= 0.95 * rnd_ios
    shares = _per_stream_sequential([x for x in ios if x[2] == 256])
    assert min(shares.values()) >= 0.95


def test_random_io_stays_random(tmp_path):
    c = _import(tmp_path, rwsw_synth.random_ios(20000), gap_us=50, lat_us=100)
    assert sum(s.share for s in c.streams if s.access == "random") >= 0.95
    assert sum(s.ios for s in c.streams) == 20000


FLUSHES = b"""\
  7,0    0        1     0.000100000  4711  D  WS 2048 + 8 [db]
  7,0    0        2     0.000200000     0  C  WS 2048 + 8 [0]
  7,0    0        3     0.000300000  4711  D  FF [kworker]
  7,0    0        4     0.000900000     0  C  FF 0 [0]
  7,0    0        5     0.001000000  4711  D  WFS 4096 + 8 [jbd2]
  7,0    0        6     0.001500000     0  C  WFS 4096 + 8 [0]
  7,0    0        7     0.002000000  4711  D  FN [kworker]
  7,0    0        8     0.002400000     0  C  FN 0 [0]
  7,0    0        9     0.003000000  4711  D  D 8192 + 2048 [fstrim]
  7,0    0       10     0.004000000     0  C  D 8192 + 2048 [0]
  7,0    0       11     0.005000000  4711  D  R 100 + 8 [db]
  7,0    0       12     0.005100000  4711  R  R 100 + 8 [db]
  7,0    0       13     0.005200000  4711  D  R 100 + 8 [db]
  7,0    0       14     0.005700000     0  C  R 100 + 8 [0]
  7,0    0       15     0.006000000  4711  D  RA 200 + 8 [db]
"""


def test_flushes_fua_discards_and_requeues_are_counted_and_kept(tmp_path, capsys):
    src = tmp_path / "f.txt"
    src.write_bytes(FLUSHES)
    assert main(["capture", "--import", str(src), "--name", "f", "--outdir", str(tmp_path), "-q"]) == 0
    c = model.load(str(tmp_path / "f.xml"))
    seen = c.seen
    assert (seen.flushes, seen.fua, seen.discards, seen.discard_bytes) == (2, 1, 1, 2048 * 512)
    assert seen.lost_events is None  # an import: not known
    # reads and writes only: 2 writes, the requeued read once (its second issue), and the read never completed
    assert sum(s.ios for s in c.streams) == 4
    assert seen.write.ios == 2 and seen.write.mean_us == pytest.approx(300.0)
    assert seen.read.ios == 1 and seen.read.max_us == pytest.approx(500.0)  # from its second issue
    assert seen.lat.max_us == pytest.approx(500.0)
    log = list(iolog.text_lines(str(tmp_path / "f.iolog")))
    actions = [ln.split()[2] for ln in log[3:-1]]
    assert actions == ["write", "sync", "write", "sync", "trim", "read", "read"]
    assert log[4].split()[3:] == ["0", "0"] and log[7].split()[3:] == [str(8192 * 512), str(2048 * 512)]
    # the exact replay's reader takes the log (it leaves syncs and trims out, counted)
    m = iolog.scan(str(tmp_path / "f.iolog"))
    assert (m.reads, m.writes, m.dropped) == (2, 2, 3)
    capsys.readouterr()
    assert main(["show", str(tmp_path / "f.xml"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["flushes"], doc["fua"], doc["discards"], doc["discard_bytes"]) == (2, 1, 1, 1048576)
    assert doc["steps"][0]["flushes"] == 2 and doc["steps"][0]["number"] == 1


class _Counting:
    """A sink that counts and checks the issue order."""

    def __init__(self):
        self.n, self.last, self.lost_done = 0, -math.inf, 0

    def begin(self, t0):
        pass

    def end(self, t1):
        pass

    def lost(self, t, n, since):
        pass

    def batch(self, issue, done, kind, offset, length):
        assert np.all(np.diff(issue) >= 0) and issue[0] >= self.last
        self.last = float(issue[-1])
        self.n += issue.size
        self.lost_done += int(np.isnan(done).sum())


def test_memory_follows_what_is_in_flight_not_the_sectors_touched():
    sink = _Counting()
    p = trace.Pairer(sink)
    qd, most = 16, 0
    t = 0.0
    inflight = []
    for i in range(200_000):  # every I/O at a sector of its own, 16 in flight
        t += 1e-5
        p.event(t, "issue", trace.KIND_WRITE, 8 * i, 8)
        inflight.append(8 * i)
        if len(inflight) == qd:
            p.event(t, "complete", trace.KIND_WRITE, inflight.pop(0), 8)
        most = max(most, len(p.waiting), p.held)
    assert most <= qd
    p.finish()
    assert sink.n == 200_000 and sink.lost_done == qd - 1


def test_a_completion_never_seen_is_given_up_after_the_horizon():
    sink = _Counting()
    p = trace.Pairer(sink)
    p.event(0.0, "issue", trace.KIND_READ, 0, 8)  # its completion never comes
    for i in range(1, 1000):
        t = i * 0.1
        p.event(t, "issue", trace.KIND_READ, 8 * i, 8)
        p.event(t + 0.001, "complete", trace.KIND_READ, 8 * i, 8)
        assert p.held <= trace.HORIZON / 0.1 + 2
    p.finish()
    assert sink.n == 1000 and sink.lost_done == 1


def test_the_histogram_p99_is_within_a_bin_of_the_exact_figure():
    rng = np.random.default_rng(1)
    ns = rng.lognormal(mean=12.0, sigma=1.2, size=100_000)
    h = latency.Histogram()
    for part in np.array_split(ns, 7):
        h.add(part)
    exact = float(np.percentile(ns, 99, method="inverted_cdf"))
    assert h.percentile(99.0) == pytest.approx(exact, rel=0.011)
    n, mean, p99, largest = h.figures_us()
    assert n == ns.size and mean == pytest.approx(ns.mean() / 1e3) and largest == pytest.approx(ns.max() / 1e3)
    assert latency.Histogram().figures_us() is None


def test_a_version_1_capture_reads_with_its_figures_not_recorded(capsys):
    from conftest import data_path
    path = data_path(os.path.join("rwsw", "pgbench-v1.xml"))
    c = model.load(path)
    assert c.seen is None and all(st.seen is None for st in c.steps) and c.steps[0].number == 1
    assert main(["show", path]) == 0
    out = capsys.readouterr().out
    assert "not recorded" in out and "  1 " in out.split("dominant streams\n")[-1][:8]
    assert main(["show", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["figures_recorded"] is False and doc["lat_p99_us"] is None and doc["flushes"] is None
    assert [st["number"] for st in doc["steps"]] == list(range(1, len(c.steps) + 1))
    assert doc["coverage_ios_pct"] == pytest.approx(c.coverage_ios_pct)


def test_lost_events_are_read_from_the_page_header():
    import struct

    from tkperf.rwsw import rawtrace
    layout = rawtrace.Layout(commit=(8, 8), data=16, page_size=4096, events={}, marker=0, marker_buf=0)

    def page(flags, stored=None):
        body = bytearray(4096)
        struct.pack_into("<QQ", body, 0, 123, 100 | flags)
        if stored is not None:
            struct.pack_into("<Q", body, 16 + 100, stored)
        return bytes(body)

    assert rawtrace._missed(page(0), layout) == (100, 0)
    assert rawtrace._missed(page(1 << 31 | 1 << 30, 37), layout) == (100, 37)  # the count stored behind the data
    assert rawtrace._missed(page(1 << 31), layout) == (100, 1)  # lost, no room for the count: at least one


def test_the_streams_left_out_of_the_list_are_counted_in_good_english():
    # Issue 60 item 6: "1 more streams"
    from tkperf.rwsw import summary
    from tkperf.rwsw.model import Stream

    big = Stream("random", "read", 4096, 990, 0.99, 0.99)
    small = Stream("random", "write", 8192, 1, 0.001, 0.002)
    (_, one) = summary._stream_lines([big, small], "")
    assert one.startswith("1 more stream ") and "streams" not in one
    assert summary._stream_lines([big, small, small], "")[1].startswith("2 more streams ")
