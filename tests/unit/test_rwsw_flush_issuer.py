"""Each captured flush belongs to the write stream that issued it (the
stream of the last write completed before the flush was issued: an fsync
waits for its writes, then flushes), so a replay flushes where the
application did (issue 57, item 6)."""
from __future__ import annotations

import dataclasses

import numpy as np

from tkperf.rwsw import model
from tkperf.rwsw.steps import Accumulator
from tkperf.rwsw.trace import KIND_FLUSH, KIND_WRITE


def _log_writer_beside_random_writes(n: int = 50):
    """A log writer (4 KiB sequential writes, each followed by a flush, as fdatasync does)
    beside random 8 KiB writes that never flush, in issue order."""
    issue, kind, offset, length = [], [], [], []
    t = 0.0
    for i in range(n):
        for k, o, ln in ((KIND_WRITE, (1 << 30) + 7919 * 8192 * i % (1 << 29), 8192), (KIND_WRITE, 4096 * i, 4096),
                         (KIND_FLUSH, 0, 0)):
            t += 1e-4
            issue.append(t)
            kind.append(k)
            offset.append(o)
            length.append(ln)
    issue_a = np.array(issue)
    return issue_a, issue_a + 5e-5, np.array(kind, dtype=np.int8), np.array(offset, dtype=np.int64), \
        np.array(length, dtype=np.int64)


def _capture(batches):
    acc = Accumulator(1.0)
    acc.begin(0.0)
    acc.end(1.0)
    for b in batches:
        acc.batch(*b)
    return acc.finish("t", "/dev/x", 1 << 31, "import", "2026-12-07T00:00:00+00:00", None)


def test_each_flush_is_given_to_the_write_stream_whose_write_completed_last_before_it():
    cap = _capture([_log_writer_beside_random_writes()])
    by_key = {s.key: s for s in cap.steps[0].streams}
    # the first log write cannot be told sequential yet (no write ended where it starts)
    assert by_key["SEQ 4KiB write"].flushes == 49 and by_key["RND 4KiB write"].flushes == 1
    assert by_key["RND 8KiB write"].flushes == 0
    assert cap.steps[0].seen is not None and cap.steps[0].seen.flushes == 50
    assert {s.key: s.flushes for s in cap.streams}["SEQ 4KiB write"] == 49


def test_a_flush_first_in_its_batch_goes_to_a_write_of_the_batch_before():
    issue, done, kind, offset, length = _log_writer_beside_random_writes(4)
    cut = 5  # the batch ends with the second log write; its flush opens the next batch
    assert kind[cut] == KIND_FLUSH
    cap = _capture([(issue[:cut], done[:cut], kind[:cut], offset[:cut], length[:cut]),
                    (issue[cut:], done[cut:], kind[cut:], offset[cut:], length[cut:])])
    by_key = {s.key: s for s in cap.steps[0].streams}
    assert by_key["SEQ 4KiB write"].flushes == 3 and by_key["RND 8KiB write"].flushes == 0


def test_stream_flushes_are_stored_and_an_older_file_reads_them_as_not_recorded():
    cap = _capture([_log_writer_beside_random_writes()])
    back = model.loads(model.dumps(cap))
    assert back.steps[0].streams == cap.steps[0].streams
    def unrecorded(streams):
        return tuple(dataclasses.replace(s, flushes=None) for s in streams)

    older = dataclasses.replace(cap, streams=unrecorded(cap.streams), steps=tuple(
        dataclasses.replace(st, streams=unrecorded(st.streams)) for st in cap.steps))
    assert all(el.get("flushes") is None for el in model.to_element(older).iter("stream"))
    assert all(s.flushes is None for s in model.loads(model.dumps(older)).steps[0].streams)


def test_a_write_issued_between_a_log_write_and_its_flush_but_still_in_flight_does_not_take_it():
    """Two writers in step: the log write, then another process's random write, then the log's flush
    (issued once the log write completed, while the random write is still in flight)."""
    issue, done, kind, offset, length = [], [], [], [], []
    for i in range(20):
        t = i * 0.01
        for dt, rt, k, o, ln in ((0.0, 0.001, KIND_WRITE, 4096 * i, 4096),
                                 (0.0001, 0.003, KIND_WRITE, (1 << 30) + 7919 * 8192 * i % (1 << 29), 8192),
                                 (0.0012, 0.0005, KIND_FLUSH, 0, 0)):
            issue.append(t + dt)
            done.append(t + dt + rt)
            kind.append(k)
            offset.append(o)
            length.append(ln)
    cap = _capture([(np.array(issue), np.array(done), np.array(kind, dtype=np.int8), np.array(offset),
                     np.array(length))])
    by_key = {s.key: s.flushes for s in cap.steps[0].streams}
    assert (by_key["SEQ 4KiB write"], by_key["RND 4KiB write"], by_key["RND 8KiB write"]) == (19, 1, 0)
