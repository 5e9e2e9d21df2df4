"""A capture's I/Os stored compactly: tkperf's packed iolog (docs/rwsw.rst, "The file").

fio's text iolog (version 3) takes some 40 bytes an I/O: about 70 GB for a
day at 20,000 IOPS.  The packed iolog holds the same actions -- the
microseconds since the start, the action (read, write, trim, sync), the
byte offset and length, in issue order -- in about 4 to 8 bytes an I/O:

* the first line is text, :data:`MAGIC` (so ``head`` says what it is);
* then chunks of up to :data:`MAX_CHUNK` actions, each a header
  (:data:`CHUNK`: ``b"TKC1"``, the number of actions, the bytes that
  follow) and the zlib-compressed columns: the time since the previous
  action, the action, the offset less where the previous action ended (so a
  sequential run is a column of zeros) zigzag-coded, and the length, each
  column's eight bytes stored byte by byte (all first bytes, then all
  second bytes ...), which leaves the compressor long runs of zeros;
* last, the trailer (:data:`END`: ``b"TKE1"`` and the time of the end,
  fio's ``close``).  A file without it was cut short, and is refused.

The file is untrusted input when read (:func:`read_chunks`): every chunk
must inflate to exactly its size, and every value must be in range
(times never going backwards, offsets and lengths within 2^63 bytes, a
known action), else one line (:class:`~tkperf.errors.ResultFileError`).
``python -m tkperf.rwsw.packedlog N.iolog`` prints it as fio's text iolog.
"""
from __future__ import annotations

import struct
import sys
import zlib
from typing import IO, Iterator, Tuple

import numpy as np

from tkperf.errors import ResultFileError

MAGIC = b"tkperf packed iolog 1\n"
CHUNK = struct.Struct("<4sII")
END = struct.Struct("<4sq")
CHUNK_TAG, END_TAG = b"TKC1", b"TKE1"
#: The most actions in one chunk (a writer's batch is at most this, a reader refuses more).
MAX_CHUNK = 1 << 20
#: The actions, by their code.
ACTIONS = ("read", "write", "trim", "sync")
#: Bytes an action takes before compression (four columns of 8 bytes, the action's one byte).
_WIDTH = 8 * 3 + 1
LEVEL = 6
_LIMIT = 2 ** 63 - 1


def _planes(values: np.ndarray) -> bytes:
    """An int64/uint64 column as its bytes, byte by byte (little-endian)."""
    return values.astype("<u8").view(np.uint8).reshape(-1, 8).T.tobytes()


def _unplanes(data: bytes, n: int) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).reshape(8, n).T.copy().view("<u8").ravel()


def _zigzag(v: np.ndarray) -> np.ndarray:
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def _unzigzag(u: np.ndarray) -> np.ndarray:
    return ((u >> np.uint64(1)).astype(np.int64)) ^ -((u & np.uint64(1)).astype(np.int64))


class Writer:
    """Writes the packed iolog to ``out`` a batch at a time: :meth:`add`, then :meth:`close`."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.last_us = 0
        self.end = 0     # where the previous action ended (bytes)
        self.count = 0
        out.write(MAGIC)

    def add(self, usec: np.ndarray, action: np.ndarray, offset: np.ndarray, length: np.ndarray) -> None:
        """Actions in issue order: µs since the start (never backwards), :data:`ACTIONS` codes, bytes."""
        for lo in range(0, int(usec.size), MAX_CHUNK):
            hi = lo + MAX_CHUNK
            self._chunk(usec[lo:hi].astype(np.int64), action[lo:hi].astype(np.uint8),
                        offset[lo:hi].astype(np.int64), length[lo:hi].astype(np.int64))

    def _chunk(self, usec: np.ndarray, action: np.ndarray, offset: np.ndarray, length: np.ndarray) -> None:
        n = int(usec.size)
        if not n:
            return
        dt = np.diff(usec, prepend=self.last_us)
        ends = offset + length
        prev = np.concatenate(([self.end], ends[:-1]))
        payload = (_planes(dt) + action.tobytes() + _planes(_zigzag(offset - prev)) + _planes(length))
        packed = zlib.compress(payload, LEVEL)
        self.out.write(CHUNK.pack(CHUNK_TAG, n, len(packed)) + packed)
        self.last_us, self.end = int(usec[-1]), int(ends[-1])
        self.count += n

    def close(self, end_us: int) -> None:
        """The end of the capture (fio's ``close``), in µs; the file is complete."""
        self.out.write(END.pack(END_TAG, max(int(end_us), self.last_us)))


def is_packed(head: bytes) -> bool:
    return head.startswith(MAGIC)


def _fail(path: str, why: str) -> ResultFileError:
    return ResultFileError(f"{path}: {why}; not a complete packed iolog")


def _read(fh: IO[bytes], n: int, path: str, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise _fail(path, f"cut short in {what}")
    return data


def _decode(payload: bytes, n: int, last_us: int, end: int, path: str, number: int
            ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One chunk's columns, checked: (µs, action codes, offsets, lengths)."""
    dt = _unplanes(payload[:8 * n], n)
    action = np.frombuffer(payload[8 * n:9 * n], dtype=np.uint8)
    delta = _unzigzag(_unplanes(payload[9 * n:17 * n], n))
    length = _unplanes(payload[17 * n:], n)
    if (dt > np.uint64(2 ** 40)).any() or (length > np.uint64(2 ** 62)).any() or (action >= len(ACTIONS)).any():
        raise _fail(path, f"chunk {number}: a time, length or action out of range")
    usec = last_us + np.cumsum(dt.astype(np.int64))
    length_i = length.astype(np.int64)
    # offset[i] = end[i-1] + delta[i], end[i] = offset[i] + length[i]: a running sum
    with np.errstate(over="ignore"):
        offset = end + np.cumsum(delta) + np.concatenate(([0], np.cumsum(length_i)[:-1]))
    # the same sums in floating point, which cannot wrap around
    rough = end + np.cumsum(delta.astype(float)) + np.concatenate(([0.0], np.cumsum(length_i.astype(float))[:-1]))
    if (np.abs(rough - offset) > 2.0 ** 50).any() or (offset < 0).any() or (offset > _LIMIT - length_i).any() \
            or usec[-1] > 2 ** 62:
        raise _fail(path, f"chunk {number}: an offset or time out of range")
    return usec, action, offset, length_i


def read_chunks(fh: IO[bytes], path: str) -> Iterator[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The actions of the packed iolog ``fh`` (positioned at its start), a chunk at a time:
    (µs since the start, action codes, offsets, lengths); the last is the end (µs, no actions)."""
    if _read(fh, len(MAGIC), path, "its first line") != MAGIC:
        raise ResultFileError(f"{path}: not a packed iolog")
    last_us = end = 0
    number = 0
    while True:
        tag = _read(fh, 4, path, "a chunk's header")
        if tag == END_TAG:
            (stop,) = struct.unpack("<q", _read(fh, 8, path, "its end"))
            if stop < last_us or fh.read(1):
                raise _fail(path, "its end is before its last action, or bytes follow it")
            empty = np.zeros(0, dtype=np.int64)
            yield np.array([stop], dtype=np.int64), np.zeros(0, dtype=np.uint8), empty, empty
            return
        number += 1
        if tag != CHUNK_TAG:
            raise _fail(path, f"chunk {number}: no chunk header")
        _, n, size = CHUNK.unpack(tag + _read(fh, CHUNK.size - 4, path, "a chunk's header"))
        if not 0 < n <= MAX_CHUNK or size > n * _WIDTH * 2 + 64:
            raise _fail(path, f"chunk {number}: {n} actions in {size} bytes")
        inflate = zlib.decompressobj()
        try:
            payload = inflate.decompress(_read(fh, size, path, f"chunk {number}"), n * _WIDTH)
        except zlib.error:
            raise _fail(path, f"chunk {number}: not zlib data") from None
        if len(payload) != n * _WIDTH or inflate.unconsumed_tail or not inflate.eof:
            raise _fail(path, f"chunk {number}: not {n} actions")
        usec, action, offset, length = _decode(payload, n, last_us, end, path, number)
        last_us, end = int(usec[-1]), int(offset[-1] + length[-1])
        yield usec, action, offset, length


def text_lines(fh: IO[bytes], path: str, name: str) -> Iterator[str]:
    """The packed iolog as fio's text iolog (version 3) on file ``name``."""
    yield f"fio version 3 iolog\n0 {name} add\n0 {name} open\n"
    for usec, action, offset, length in read_chunks(fh, path):
        if not action.size:
            yield f"{int(usec[0])} {name} close\n"
            return
        yield "".join(f"{t} {name} {ACTIONS[a]} {o} {x}\n" for t, a, o, x in zip(
            usec.tolist(), action.tolist(), offset.tolist(), length.tolist()))


def main(argv: list) -> int:  # pragma: no cover - a small tool: python -m tkperf.rwsw.packedlog N.iolog
    from tkperf.model.files import open_to_read
    if len(argv) != 1:
        print("usage: python -m tkperf.rwsw.packedlog N.iolog  (prints it as fio's text iolog)", file=sys.stderr)
        return 2
    fd = open_to_read(argv[0], "iolog", ResultFileError)
    try:
        with open(fd, "rb") as fh:
            for text in text_lines(fh, argv[0], "rwsw.capture"):
                sys.stdout.write(text)
    except ResultFileError as exc:
        print(f"tkperf: {exc}", file=sys.stderr)
        return 7
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
