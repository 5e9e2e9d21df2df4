"""The packed iolog (issue 57 item 7, a day-long capture): the capture's
I/Os in a few bytes each instead of fio's 40-byte text lines, read back to
the same actions, old text iologs still read, and a damaged packed file
refused in one line."""
from __future__ import annotations

import io
import os

import numpy as np
import pytest

from tkperf.errors import ResultFileError
from tkperf.rwsw import iolog, packedlog


def _actions(n: int, seed: int = 7):
    """n actions as a capture issues them: random 4 KiB reads over 1 TB, a sequential 64 KiB writer,
    a flush now and then, a discard; µs apart at some 20,000 IOPS."""
    rnd = np.random.default_rng(seed)
    usec = np.cumsum(rnd.exponential(50.0, n)).astype(np.int64)
    kind = rnd.choice([0, 1, 2, 3], n, p=[0.6, 0.37, 0.01, 0.02]).astype(np.int64)
    offset = rnd.integers(0, (1 << 40) // 4096, n) * 4096
    length = np.full(n, 4096, dtype=np.int64)
    writes = kind == 1
    offset[writes] = (1 << 30) + np.arange(int(writes.sum())) * 65536
    length[writes] = 65536
    length[kind == 2] = 1 << 20
    offset[kind == 3] = 0
    length[kind == 3] = 0
    return usec, kind, offset, length


def _write(path, usec, kind, offset, length, end_us, batch=65536):
    with open(path, "wb") as fh:
        w = packedlog.Writer(fh)
        for lo in range(0, usec.size, batch):
            w.add(usec[lo:lo + batch], kind[lo:lo + batch], offset[lo:lo + batch], length[lo:lo + batch])
        w.close(end_us)


def _text(usec, kind, offset, length, end_us):
    names = packedlog.ACTIONS
    return (["fio version 3 iolog", "0 rwsw.capture add", "0 rwsw.capture open"]
            + [f"{t} rwsw.capture {names[a]} {o} {x}" for t, a, o, x in zip(usec.tolist(), kind.tolist(),
                                                                            offset.tolist(), length.tolist())]
            + [f"{end_us} rwsw.capture close"])


def test_a_packed_iolog_reads_back_as_the_same_actions_in_a_fifth_of_the_bytes(tmp_path):
    n = 200_000
    usec, kind, offset, length = _actions(n)
    end = int(usec[-1]) + 10
    path = str(tmp_path / "x.iolog")
    _write(path, usec, kind, offset, length, end)
    text = _text(usec, kind, offset, length, end)
    assert list(iolog.text_lines(path)) == text  # every action, exactly
    packed, plain = os.path.getsize(path), sum(len(t) + 1 for t in text)
    assert packed < plain / 4, (packed / n, plain / n)  # random offsets over 1 TB are most of what is left
    # the exact replay's readers take it as they take the text
    old = tmp_path / "old.iolog"
    old.write_text("".join(f"{t}\n" for t in text), encoding="ascii")
    assert iolog.scan(path) == iolog.scan(str(old))
    with iolog.actions(path) as a, iolog.actions(str(old)) as b:
        assert list(a) == list(b)


def test_a_sequential_stream_costs_next_to_nothing(tmp_path):
    n = 100_000
    usec = np.arange(n, dtype=np.int64) * 100
    offset = np.arange(n, dtype=np.int64) * 131072
    path = str(tmp_path / "s.iolog")
    _write(path, usec, np.zeros(n, dtype=np.int64), offset, np.full(n, 131072, dtype=np.int64), n * 100)
    assert os.path.getsize(path) < n * 0.1  # under 0.1 byte an I/O
    assert iolog.scan(path).reads == n


def _damaged(tmp_path, change) -> str:
    usec, kind, offset, length = _actions(1000)
    path = tmp_path / "d.iolog"
    _write(str(path), usec, kind, offset, length, int(usec[-1]), batch=400)
    path.write_bytes(change(path.read_bytes()))
    return str(path)


@pytest.mark.parametrize("change, words", [
    (lambda b: b[:-12], "cut short"),                                         # no end: cut short
    (lambda b: b[:-5], "cut short"),
    (lambda b: b + b"x", "bytes follow"),
    (lambda b: b[:len(packedlog.MAGIC) + 12] + bytes(40) + b[len(packedlog.MAGIC) + 52:], "not zlib data"),
    (lambda b: b[:len(packedlog.MAGIC)] + b"TKC1" + (2 ** 30).to_bytes(4, "little") + b[len(packedlog.MAGIC) + 8:],
     "actions in"),
    (lambda b: b[:len(packedlog.MAGIC)] + b"XXXX" + b[len(packedlog.MAGIC) + 4:], "no chunk header"),
])
def test_a_damaged_packed_iolog_is_one_line(tmp_path, change, words):
    path = _damaged(tmp_path, change)
    with pytest.raises(ResultFileError) as err:
        iolog.scan(path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_values_out_of_range_are_refused(tmp_path):
    # an offset that would wrap past 2^63, written by hand through the writer's own column coding
    buf = io.BytesIO()
    w = packedlog.Writer(buf)
    w.add(np.array([0, 1]), np.array([0, 0]), np.array([0, (1 << 63) - 8192]), np.array([4096, 1 << 40]))
    w.close(2)
    path = tmp_path / "r.iolog"
    path.write_bytes(buf.getvalue())
    with pytest.raises(ResultFileError, match="out of range"):
        iolog.scan(str(path))


def test_the_exact_replays_copy_of_a_packed_iolog_is_that_of_its_text(tmp_path):
    from tkperf.testtypes.realworld import exactlog

    usec, kind, offset, length = _actions(5000, seed=3)
    offset %= 1 << 30  # within a 1 GiB device
    end = int(usec[-1]) + 1
    packed, text = str(tmp_path / "p.iolog"), tmp_path / "t.iolog"
    _write(packed, usec, kind, offset, length, end, batch=1000)
    text.write_text("".join(f"{t}\n" for t in _text(usec, kind, offset, length, end)), encoding="ascii")
    copies = []
    for src in (packed, str(text)):
        out, stamps = io.StringIO(), []
        written = exactlog.write_mapped(src, out, "/dev/loop9", 256 << 20, stamps)
        copies.append((out.getvalue(), stamps, written))
    assert copies[0] == copies[1]
    assert copies[0][2].flushes == int((kind == 3).sum()) and copies[0][2].discards == int((kind == 2).sum())
