"""Numbers out of range in an imported trace (issue 44 items 3 and 4): a
time stamp too large for a float or beyond ten years, a sector beyond 64
bits (in blkparse's text and in blktrace's binary records), an I/O whose
sector + length wraps 2^63 bytes, two I/Os years apart (millions of empty
steps): one line, exit 7, never an internal error.  A failed import leaves
no file behind: the same name works on the retry."""
from __future__ import annotations

import gzip
import os
import shutil
import struct

import pytest

from conftest import data_path
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_RESULT_FILE
from tkperf.rwsw import capture, model

MIX = data_path(os.path.join("rwsw", "blkparse-mix.txt"))
BINARY = data_path(os.path.join("rwsw", "blktrace-mix.bin.gz"))
LINE = "  7,0    0        0     {t}  4151  {a}   W {sector} + {n} [fio]\n"


def _trace(*events) -> bytes:
    """A blkparse text of the mix with ``events`` ((time, action, sector, sectors), as text) after it."""
    with open(MIX, "rb") as fh:
        head = fh.read()
    return head + "".join(LINE.format(t=t, a=a, sector=s, n=n) for t, a, s, n in events).encode()


WRAP = 2 ** 63 // 512 - 4  # the first sector whose 8-sector I/O ends past 2^63 bytes
CASES = {
    "time-not-a-float": (("9" * 400 + ".0", "D", 0, 8),),
    "time-beyond-ten-years": ("400000000.000000000", "D", 0, 8),
    "time-of-forty-digits": ("1" + "0" * 39 + ".0", "C", 0, 8),
    "sector-beyond-64-bits": ("5.000000000", "D", 2 ** 64 + 8, 8),
    "sector-of-thirty-digits": ("5.000000000", "D", 10 ** 30, 8),
    "sector-plus-length-wraps-2^63": ("5.000000000", "D", WRAP, 8),
    "length-beyond-64-bits": ("5.000000000", "D", 0, 2 ** 64),
    "completion-sector-beyond-64-bits": ("5.000000000", "C", 2 ** 65, 8),
}


def _events(case):
    return case if isinstance(case[0], tuple) else (case,)


def _import(path, out, name="x", step="1s"):
    return main(["capture", "--import", str(path), "--name", name, "--outdir", str(out), "--step", step, "-q"])


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tkperf: error:"), err
    return err[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_number_out_of_range_is_one_line_and_exit_7(case, tmp_path, capsys):
    trace = tmp_path / "t.txt"
    trace.write_bytes(_trace(*_events(CASES[case])))
    out = tmp_path / "out"
    out.mkdir()
    assert _import(trace, out) == EXIT_RESULT_FILE
    line = _one_error(capsys)
    assert "line 2429" in line, line
    assert os.listdir(out) == []
    # the retry under the same name, with the trace as it should be: nothing in the way
    assert _import(MIX, out) == EXIT_OK
    assert sorted(os.listdir(out)) == ["x.iolog", "x.xml"]


def test_the_largest_offsets_in_range_import(tmp_path, capsys):
    """The last whole 8-sector I/O below 2^63 bytes (offsets are signed 64-bit) is in range: imported."""
    last = (2 ** 63 - 1) // 512 - 8
    trace = tmp_path / "t.txt"
    trace.write_bytes(_trace(("5.000000000", "D", last, 8), ("5.000100000", "C", last, 8)))
    assert _import(trace, tmp_path) == EXIT_OK
    c = model.load(str(tmp_path / "x.xml"))
    assert c.size == 2 ** 63 - 512 and sum(s.ios for s in c.streams) == 401


def test_two_ios_years_apart_are_refused_before_the_steps_are_made(tmp_path, capsys):
    """Three years between two I/Os at a step of 1 s would be 10^8 steps:
    refused with the --step that would do, and nothing written."""
    trace = tmp_path / "t.txt"
    trace.write_bytes(_trace(("94608000.000000000", "D", 0, 8), ("94608000.000100000", "C", 0, 8)))
    assert _import(trace, tmp_path) == EXIT_RESULT_FILE
    line = _one_error(capsys)
    assert f"more than the {capture.MAX_IMPORT_STEPS} steps" in line and "--step of at least 946" in line
    assert sorted(os.listdir(tmp_path)) == ["t.txt"]
    assert _import(trace, tmp_path, step="1000s") == EXIT_OK  # the step it said
    assert len(model.load(str(tmp_path / "x.xml")).steps) == 94608


def _blktrace_with_sector(path, sector: int) -> None:
    """blktrace's binary records of the mix with every record's sector set to ``sector``
    (struct blk_io_trace: magic, sequence, time, sector, bytes, action, pid, device, cpu,
    error, pdu_len; 48 bytes and the pdu)."""
    with gzip.open(BINARY) as src:
        data = bytearray(src.read())
    pos = 0
    while pos + 48 <= len(data):
        struct.pack_into("<Q", data, pos + 16, sector)
        pdu = struct.unpack_from("<H", data, pos + 46)[0]
        pos += 48 + pdu
    path.write_bytes(bytes(data))


@pytest.mark.skipif(shutil.which("blkparse") is None, reason="needs blkparse (Debian blktrace)")
@pytest.mark.parametrize("sector", [2 ** 64 - 8, WRAP])
def test_binary_records_with_sectors_out_of_range(sector, tmp_path, capsys):
    binary = tmp_path / "mix.blktrace"
    _blktrace_with_sector(binary, sector)
    out = tmp_path / "out"
    out.mkdir()
    assert _import(binary, out) == EXIT_RESULT_FILE
    assert "ends beyond 2^63 bytes" in _one_error(capsys)
    assert os.listdir(out) == []


def test_a_capture_that_does_not_read_back_leaves_nothing(tmp_path, monkeypatch, capsys):
    """The import's last step reads its own file back; if that fails, the
    capture and its iolog both go, and the retry under the name works."""
    def refuse(path):
        raise model.ResultFileError(f"{path}: refused on reading back")
    monkeypatch.setattr(capture.model, "load", refuse)
    assert _import(MIX, tmp_path) == EXIT_RESULT_FILE
    assert "refused on reading back" in _one_error(capsys)
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    assert _import(MIX, tmp_path) == EXIT_OK
