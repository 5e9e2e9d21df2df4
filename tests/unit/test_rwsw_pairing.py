"""Pairing a capture's completions with their issues (tkperf/rwsw/trace.py):
flushes, which the kernel gives no sector, pair in the order they were
issued; after events the trace lost, pairing starts afresh and the steps
the loss touched are marked in the file, ``show`` and the report; memory
follows what is in flight.  Two recordings of the kernel's block
tracepoints on this project's machine (tests/data/README.rst) and
synthetic event sequences."""
import gzip
import io
import json
import math

import numpy as np
import pytest
from lxml import etree

from conftest import data_path
from tkperf.cli import main
from tkperf.errors import ResultFileError
from tkperf.rwsw import model, rawtrace, report, steps, summary, trace
from tkperf.store import seal

NO_SECTOR = 2 ** 64 - 1  # block_rq_complete's sector of a flush


def _recording(name):
    """(raw pages, layout, device number, metadata) of a recording under tests/data/rwsw."""
    with open(data_path(f"rwsw/{name}.json")) as fh:
        meta = json.load(fh)
    lay = meta["layout"]
    layout = rawtrace.Layout(commit=tuple(lay["commit"]), data=lay["data"], page_size=lay["page_size"],
                             events={int(k): tuple(v) for k, v in lay["events"].items()}, marker=lay["marker"],
                             marker_buf=lay["marker_buf"])
    with gzip.open(data_path(f"rwsw/{name}.raw.gz")) as fh:
        raw = fh.read()
    return raw, layout, meta["dev"], meta


def _capture(name, step=1.0):
    raw, layout, dev, meta = _recording(name)
    acc = steps.Accumulator(step, io.BytesIO(), lost_known=True)
    p = rawtrace.read_raw(io.BytesIO(raw), layout, dev, acc)
    c = acc.finish(name=name, device="/dev/loop0", size=256 << 20, source="tracefs", started="2026-12-07T18:21:00Z",
                   iolog=None, lost_events=meta["lost"])
    return c, p, meta


def test_every_flush_of_a_recording_pairs_with_its_completion():
    c, p, meta = _capture("tracefs-flush-discard")
    want = meta["expect"]
    assert p.flushes_paired == want["flushes"] == c.seen.flushes == 6
    assert not any("before the capture" in why for why in p.skipped), p.skipped  # no orphan completion
    assert sum(s.ios for s in c.streams) == want["reads"] + want["writes"]
    assert c.seen.read.ios == want["reads"] and c.seen.write.ios == want["writes"]
    assert (c.seen.discards, c.seen.discard_bytes) == (want["discards"], want["discard_bytes"])
    assert c.steps_touched_by_loss == () and c.seen.lost_events == 0


def test_pairing_starts_afresh_after_a_recorded_loss():
    """fio at queue depth 16 over 1 MiB (256 blocks: a block comes back while an
    earlier I/O of it lost its completion) with an 8 KiB trace buffer per CPU."""
    c, p, meta = _capture("tracefs-lossy-qd16")
    want = meta["expect"]
    assert c.seen.lost_events == meta["lost"] > 0
    # no completion taken by an I/O it is not: at most 16 in flight, no response time above fio's largest
    assert c.qd <= want["iodepth"] and all(st.qd <= want["iodepth"] for st in c.steps)
    assert c.seen.lat.max_us <= want["fio_lat_max_ns"] / 1e3
    assert 0 < sum(s.ios for s in c.streams) < want["fio_reads"]
    # every step lost events here: each is marked, and so is the whole capture
    assert c.steps_touched_by_loss == tuple(range(1, len(c.steps) + 1)) and c.seen.loss_touched
    assert any("lost" in why for why in p.skipped)


def test_the_steps_a_loss_touched_are_marked_in_the_file_show_and_report(tmp_path, capsys):
    c, _, _ = _capture("tracefs-lossy-qd16", step=0.25)
    touched = c.steps_touched_by_loss
    assert touched and len(touched) < len(c.steps)
    path = tmp_path / "lossy.xml"
    model.save(c, str(path))
    back = model.load(str(path))
    assert back.steps_touched_by_loss == touched
    assert [st.seen.loss_touched for st in back.steps] == [st.seen.loss_touched for st in c.steps]
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln[:6].strip().lstrip("!").strip().isdigit()]
    assert len(rows) == len(c.steps)
    assert [int(r[:6].strip().lstrip("!")) for r in rows if r.lstrip().startswith("!")] == list(touched)
    assert "touched by lost events" in out and summary.numbers_text(touched) in out
    assert main(["show", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps_touched_by_loss"] == list(touched) and doc["touched_by_loss"] is True
    assert [st["touched_by_loss"] for st in doc["steps"]] == [st.number in touched for st in c.steps]
    cells = [blk for blk in report.stream_map_blocks(c) if hasattr(blk, "rows")]
    marked = [row[0] for row in cells[-1].rows if row[0].endswith("!")]
    assert marked == [f"{n} !" for n in touched]


def test_a_file_without_the_mark_reads_its_steps_touched_by_their_own_lost_events(tmp_path):
    c, _, _ = _capture("tracefs-lossy-qd16", step=0.25)
    doc = etree.tostring(model.to_element(c), xml_declaration=True, encoding="UTF-8", pretty_print=True)
    assert b'touched-by-loss="1"' in doc
    old = model.loads(seal.sealed(doc.replace(b' touched-by-loss="1"', b"")))
    assert old.steps_touched_by_loss == tuple(st.number for st in c.steps if st.seen.lost_events)
    with pytest.raises(ResultFileError, match="touched-by-loss"):
        model.loads(seal.sealed(doc.replace(b'touched-by-loss="1"', b'touched-by-loss="yes"', 1)))


class _Sink:
    def __init__(self):
        self.issue, self.done, self.kind, self.losses = [], [], [], []

    def begin(self, t0):
        pass

    def end(self, t1):
        pass

    def lost(self, t, n, since):
        self.losses.append((t, n, since))

    def batch(self, issue, done, kind, offset, length):
        assert not self.issue or issue[0] >= self.issue[-1]
        self.issue += issue.tolist()
        self.done += done.tolist()
        self.kind += kind.tolist()


def test_flushes_pair_in_issue_order_whatever_sector_the_trace_gives_them():
    sink = _Sink()
    p = trace.Pairer(sink)
    most = 0
    t = 0.0
    flush_done = None
    for i in range(100_000):  # reads at QD 4, a flush every 1,000 I/Os taking 2 ms
        t += 1e-5
        p.event(t, "issue", trace.KIND_READ, 8 * i, 8)
        if i % 1000 == 0:
            p.event(t, "issue", trace.KIND_FLUSH, 0, 0)
            flush_done = t + 2e-3
        if i >= 4:
            p.event(t, "complete", trace.KIND_READ, 8 * (i - 4), 8)
        if flush_done is not None and t >= flush_done:
            p.event(t, "complete", trace.KIND_FLUSH, NO_SECTOR, 0)
            flush_done = None
        most = max(most, p.held)
    p.finish()
    assert p.flushes_paired == 100 and not p.skipped.get(trace._SKIP_ORPHAN)
    # held while a flush is in flight: its 2 ms of I/O, not 30 s (HORIZON)
    assert most <= 2e-3 / 1e-5 + 8
    flush_times = [d - i for i, d, k in zip(sink.issue, sink.done, sink.kind) if k == trace.KIND_FLUSH]
    assert len(flush_times) == 100 and max(flush_times) == pytest.approx(2e-3, abs=2e-5)


def test_after_a_loss_a_later_io_of_the_same_sector_takes_its_own_completion():
    sink = _Sink()
    p = trace.Pairer(sink)
    p.event(0.0, "issue", trace.KIND_READ, 80, 8)          # its completion is lost
    p.event(0.5, "issue", trace.KIND_READ, 160, 8)         # in flight at the loss, its completion after it
    p.missed(1.0, 1000, since=0.2)
    p.event(1.1, "complete", trace.KIND_READ, 160, 8)      # an orphan now: its issue was given up
    p.event(2.0, "issue", trace.KIND_READ, 80, 8)
    p.event(2.0001, "complete", trace.KIND_READ, 80, 8)
    p.finish()
    assert sink.issue == [0.0, 0.5, 2.0]
    assert math.isnan(sink.done[0]) and math.isnan(sink.done[1])
    assert sink.done[2] == pytest.approx(2.0001)            # not 2 s for the first read of sector 80
    assert sink.losses == [(1.0, 1000, 0.0)]                # touched from the earliest I/O given up
    assert p.skipped[trace._SKIP_AFTER_LOSS] == 1


def test_a_completion_never_seen_holds_at_most_max_held_requests(monkeypatch):
    monkeypatch.setattr(trace, "MAX_HELD", 1000)
    sink = _Sink()
    p = trace.Pairer(sink)
    p.event(0.0, "issue", trace.KIND_WRITE, 0, 8)  # never completes
    most = 0
    for i in range(1, 20_000):
        t = i * 1e-5
        p.event(t, "issue", trace.KIND_WRITE, 8 * i, 8)
        p.event(t, "complete", trace.KIND_WRITE, 8 * i, 8)
        most = max(most, p.held)
    p.finish()
    assert most <= 1001 and len(sink.issue) == 20_000 and math.isnan(sink.done[0])
    assert not np.isnan(np.array(sink.done[1:])).any()
    assert p.skipped[trace._GIVEN_UP] == 1


def test_a_loss_marks_every_step_from_its_start_to_its_end():
    acc = steps.Accumulator(1.0, lost_known=True)
    acc.begin(100.0)
    acc.end(106.0)
    acc.lost(103.5, 40, 101.2)   # lost events between 101.2 and 103.5: steps 2 to 4
    acc.lost(105.9, 2, 105.9)
    c = acc.finish(name="x", device="d", size=1 << 20, source="tracefs", started="", iolog=None, lost_events=42)
    assert c.steps_touched_by_loss == (2, 3, 4, 6)
    assert [st.seen.lost_events for st in c.steps] == [0, 0, 0, 40, 0, 2]
    assert c.seen.loss_touched and c.seen.lost_events == 42


def test_nothing_pairs_within_a_loss_window_of_another_cpu():
    """CPU 0 lost its events from 1.0 to 5.0 s (told at its last event, 1.0); CPU 1's events in between are
    kept: a read of sector 80 issued there lost its completion, a second read of sector 80 lost its issue
    and kept its completion.  Paired, the first would take the second's completion (2 s)."""
    sink = _Sink()
    p = trace.Pairer(sink)
    p.event(0.5, "issue", trace.KIND_READ, 8, 8)
    p.event(0.6, "complete", trace.KIND_READ, 8, 8)
    p.missed(5.0, 5000, since=1.0)
    p.event(2.0, "issue", trace.KIND_READ, 80, 8)       # its completion is among CPU 0's lost events
    p.event(4.0, "complete", trace.KIND_READ, 80, 8)    # the completion of a read whose issue was lost
    p.event(6.0, "issue", trace.KIND_READ, 80, 8)       # after the window: pairs again
    p.event(6.0002, "complete", trace.KIND_READ, 80, 8)
    p.finish()
    assert sink.issue == [0.5, 2.0, 6.0]
    assert sink.done[0] == pytest.approx(0.6) and math.isnan(sink.done[1]) and sink.done[2] == pytest.approx(6.0002)
    assert sink.losses == [(5.0, 5000, 1.0)] and p.skipped[trace._SKIP_AFTER_LOSS] == 1


def _parts(raw):
    """The raw file cut at every read it holds (a part a read, as small as parts come)."""
    out, pos = [], 0
    while pos < len(raw):
        _cpu, length = rawtrace.CHUNK.unpack_from(raw, pos)
        out.append(raw[pos:pos + rawtrace.CHUNK.size + length])
        pos += rawtrace.CHUNK.size + length
    return out


@pytest.mark.parametrize("name", ["tracefs-flush-discard", "tracefs-lossy-qd16"])
def test_a_recording_read_a_part_at_a_time_is_the_recording_read_whole(name):
    """What ``tkperf capture --analysis during`` does (tkperf.rwsw.liveparts): every part's events merged
    with those held from the parts before; cut at every read, the capture is the same, loss and all."""
    whole, p_whole, _ = _capture(name)
    raw, layout, dev, meta = _recording(name)
    parts = _parts(raw)
    assert len(parts) > 3
    acc = steps.Accumulator(1.0, io.BytesIO(), lost_known=True)
    stream = rawtrace.Stream(layout, acc, (trace.Span(dev, 0, None, 0),))
    for k, part in enumerate(parts):
        stream.part(io.BytesIO(part), last=k == len(parts) - 1)
    p = stream.finish()
    c = acc.finish(name=name, device="/dev/loop0", size=256 << 20, source="tracefs", started="2026-12-07T18:21:00Z",
                   iolog=None, lost_events=meta["lost"])
    assert (p.count, p.skipped, p.flushes_paired) == (p_whole.count, p_whole.skipped, p_whole.flushes_paired)
    assert c.streams == whole.streams and c.steps == whole.steps and c.seen == whole.seen  # every figure
    assert c.steps_touched_by_loss == whole.steps_touched_by_loss
