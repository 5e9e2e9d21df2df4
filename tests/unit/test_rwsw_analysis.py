"""The arithmetic of a capture (tkperf/rwsw/analysis.py, docs/rwsw.rst): the
stream rule, the queue depth, the steps, the iolog -- on I/O tables written
out here, where the right answer is known by construction."""
import numpy as np
import pytest

from tkperf.rwsw import analysis, steps
from tkperf.rwsw.trace import IoTrace

KiB = 1024


def _trace(rows, t0=0.0, t1=None):
    """rows: (issue, done or None, write, offset, length)."""
    issue, done, write, offset, length = (np.array(c) for c in zip(*rows))
    return IoTrace(issue=issue.astype(float), done=np.array([np.nan if d is None else d for d in done], float),
                   write=write.astype(bool), offset=offset.astype(np.int64), length=length.astype(np.int64),
                   t0=t0, t1=float(issue.max() + 1) if t1 is None else t1)


def test_interleaved_sequential_streams_stay_sequential():
    rows = []
    t = 0.0
    for i in range(20):  # two files written in turn, 64 KiB each, a random read between
        for base in (0, 1 << 30):
            rows.append((t, t + 0.001, True, base + i * 64 * KiB, 64 * KiB))
            t += 0.01
        rows.append((t, t + 0.001, False, (7919 * i % 1000) * 1 << 20, 4 * KiB))
        t += 0.01
    tr = _trace(rows)
    seq = analysis.sequential(tr)
    writes = seq[tr.write]
    assert writes.sum() == 38  # all but the first write of each file
    assert not seq[~tr.write].any()
    streams = {s.key: s for s in analysis.streams_of(seq, tr.write, tr.length)}
    assert streams["SEQ 64KiB write"].ios == 38 and streams["RND 64KiB write"].ios == 2
    assert streams["RND 4KiB read"].share == pytest.approx(20 / 60)
    assert streams["SEQ 64KiB write"].byte_share == pytest.approx(38 * 64 / (40 * 64 + 20 * 4))


def _pairs(n, base=10 << 20):
    """``n`` runs of two 4 KiB writes each (the second sequential), one after the other."""
    rows = []
    for i in range(n):
        t = 0.01 + 0.001 * i
        rows += [(t, None, True, base + i * (1 << 20), 4096), (t, None, True, base + i * (1 << 20) + 4096, 4096)]
    return rows


def test_a_run_unused_longest_is_forgotten_when_the_table_is_full():
    first = [(0.0, 0.1, True, 0, 4096), (0.0, 0.1, True, 4096, 4096)]  # a run of two
    goes_on = [(9.0, 9.1, True, 8192, 4096)]
    tr = _trace(first + _pairs(analysis.RUNS) + goes_on)  # RUNS other runs went on since
    assert not analysis.sequential(tr)[-1]
    tr = _trace(first + _pairs(analysis.RUNS - 1) + goes_on)
    assert analysis.sequential(tr)[-1]
    # a run's second I/O: the first's end is remembered among the last NEW_RUNS random I/Os' ends
    one = [(0.0, 0.1, True, 0, 4096)]
    rnd = [(0.01 + 0.001 * i, None, True, (i + 10) * (1 << 20), 4096) for i in range(analysis.NEW_RUNS)]
    tr = _trace(one + rnd + [(9.0, 9.1, True, 4096, 4096)])
    assert not analysis.sequential(tr)[-1]
    tr = _trace(one + rnd[1:] + [(9.0, 9.1, True, 4096, 4096)])
    assert analysis.sequential(tr)[-1]


def test_a_run_goes_on_however_many_others_interleave():
    # 120 streams in turn, each 4 KiB sequential in its own region: all but each stream's first I/O sequential
    rows = [(0.001 * (i * 120 + s), None, False, s * (1 << 24) + i * 4096, 4096) for i in range(20) for s in range(120)]
    assert int(analysis.sequential(_trace(rows)).sum()) == 120 * 19
    # 400 streams that started one after the other, then go on in turn: runs are remembered by the RUNS
    rows = []
    for s in range(400):
        rows += [(0.0, None, False, s * (1 << 24), 4096), (0.0, None, False, s * (1 << 24) + 4096, 4096)]
    rows += [(1.0, None, False, s * (1 << 24) + i * 4096, 4096) for i in range(2, 20) for s in range(400)]
    assert int(analysis.sequential(_trace(rows)).sum()) == 400 * 19


def test_queue_depth():
    tr = _trace([(0.0, 1.0, False, 0, 4096), (0.5, 1.5, False, 8192, 4096)], t1=2.0)
    assert analysis.queue_depth(tr.issue, tr.done, 0.0, 2.0) == pytest.approx(1.0)
    assert analysis.queue_depth(tr.issue, tr.done, 0.5, 1.0) == pytest.approx(2.0)
    # still in flight at the end (issued after the last completion): until the end
    tr = _trace([(0.0, 1.0, False, 0, 4096), (1.5, None, False, 8192, 4096)], t1=2.0)
    assert analysis.queue_depth(tr.issue, tr.done, 0.0, 2.0) == pytest.approx(0.75)
    # a completion that was lost (others completed later): not counted at all
    tr = _trace([(0.0, None, False, 0, 4096), (0.5, 1.0, False, 8192, 4096)], t1=2.0)
    assert analysis.queue_depth(tr.issue, tr.done, 0.0, 2.0) == pytest.approx(0.25)


@pytest.mark.parametrize("duration, step, expected", [
    (10.0003, 5.0, [(0.0, 5.0), (5.0, 5.0003)]),
    (11.0, 5.0, [(0.0, 5.0), (5.0, 5.0), (10.0, 1.0)]),
    (3.0, 300.0, [(0.0, 3.0)]),
])
def test_steps(duration, step, expected):
    got = analysis.step_bounds(duration, step)
    assert [(a, pytest.approx(b)) for a, b in got] == [(a, pytest.approx(b)) for a, b in expected]


def test_analyse_and_iolog():
    rows = [(0.1 + 0.005 * i, 0.1 + 0.005 * i + 0.005, i % 2 == 0, i * 8192, 8192) for i in range(100)]
    tr = _trace(rows, t0=0.0, t1=2.0)
    c = steps.analyse(tr, 1.0, name="x", device="d", size=1 << 20, source="import", started="s", iolog="x.iolog")
    assert len(c.steps) == 2 and c.steps[0].iops == 100 and c.steps[1].iops == 0 and c.iops == 50
    assert c.steps[0].qd == pytest.approx(100 * 0.005) and c.qd == pytest.approx(100 * 0.005 / 2)
    # every I/O took 5 ms: mean, p99 (within half a histogram bin) and largest
    lat = c.seen.lat
    assert lat.ios == 100 and lat.mean_us == pytest.approx(5000) and lat.max_us == pytest.approx(5000)
    assert lat.p99_us == pytest.approx(5000, rel=0.011)
    assert c.steps[0].seen.read.ios == 50 and c.steps[1].seen.lat is None and c.steps[1].seen.flushes == 0
    # each I/O starts one I/O past where the last of its direction ended: random
    assert [s.key for s in c.streams] == ["RND 8KiB read", "RND 8KiB write"]
    lines = b"".join(analysis.iolog_lines(tr, chunk=7)).decode().splitlines()
    assert lines[:3] == ["fio version 3 iolog", "0 rwsw.capture add", "0 rwsw.capture open"]
    assert lines[3] == "100000 rwsw.capture write 0 8192" and lines[4] == "105000 rwsw.capture read 8192 8192"
    assert lines[-1] == "2000000 rwsw.capture close" and len(lines) == 104
