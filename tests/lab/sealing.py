"""Forging a file tkperf wrote, as someone who knows its format would: a
test that changes a figure inside a result file or a capture to try the
reader's deeper checks (ranges, schema, series rows) seals the changed
bytes again, or the closing record (tkperf.store.seal) refuses the file
before those checks are reached.  The record's own tests do not use this."""
from tkperf.store import seal


def reseal(data: bytes) -> bytes:
    """``data`` (a file with a closing record, then perhaps appended rows)
    with its closing record made again over the changed bytes before it."""
    pos = seal.find(data)
    assert pos >= 0, "no closing record to make again"
    end = data.index(b"?>", pos) + 2
    if data[end:end + 1] == b"\n":
        end += 1
    return seal.sealed(data[:pos]) + data[end:]
