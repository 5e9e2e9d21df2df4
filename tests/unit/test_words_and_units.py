"""Words and numbers a newcomer reads (issue 60 item 6): one unit chooser
for a response time; a step's dominant streams never list a 0% stream."""
from __future__ import annotations

import io
import os

import pytest

from tkperf import store
from tkperf.durations import latency
from tkperf.fio.live import LiveFigures
from tkperf.report import summary
from tkperf.rwsw.model import Latency, Stream
from tkperf.rwsw.summary import lat_text, top_streams


@pytest.mark.parametrize("us, text", [(0.0, "0.0 µs"), (98.46, "98.5 µs"), (999.9, "999.9 µs"),
                                      (999.96, "1.0 ms"), (1000.0, "1.0 ms"), (14028.3, "14.0 ms"),
                                      (1_250_300.0, "1,250.3 ms")])
def test_a_response_time_is_in_us_below_1_ms_and_in_ms_above(us, text):
    assert latency(us, micro="µs") == text
    assert latency(us, micro="us") == text.replace("µs", "us")


def test_an_ascii_stream_gets_us():
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert latency(5.0, ascii_out) == "5.0 us" and latency(5000.0, ascii_out) == "5.0 ms"


def test_the_live_panel_and_show_and_the_capture_summary_use_it():
    f = LiveFigures("replay step 1", "st2-s1-rnd-8kib-write", 3080.0, 25.2e6, 14028.3, 0.0)
    assert f.text().endswith("mean latency 14.0 ms")
    run = store.load(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "example-full.xml"))
    lat = next(line for line in summary.lines(run) if line.startswith("  LAT "))
    assert "4k W lat AVE 87.2 µs, MAX (mean of round maxima) 4.2 ms, largest single I/O 8.0 ms" in lat
    assert lat_text(Latency(ios=10, mean_us=412.0, p99_us=2310.0, max_us=9870.0)) == \
        "mean 412.0 µs, p99 2.3 ms, max 9.9 ms"


def _stream(access: str, rw: str, bs: int, share: float) -> Stream:
    return Stream(access=access, rw=rw, bs=bs, ios=int(share * 1000), share=share, byte_share=share)


def test_a_stream_whose_share_rounds_to_0_is_not_among_the_dominant_streams():
    seq, rnd = _stream("sequential", "write", 4096, 0.996), _stream("random", "write", 4096, 0.004)
    assert top_streams([seq, rnd]) == "SEQ 4KiB write 100%, 1 smaller stream"
    tiny = [_stream("random", "read", 4096 * k, 0.001) for k in range(1, 4)]
    assert top_streams([seq] + tiny) == "SEQ 4KiB write 100%, 3 smaller streams"
    # one decimal (the capture report's table): 0.4% is listed, 0.04% is not
    assert top_streams([seq, rnd], 3, 1, "; ") == "SEQ 4KiB write 99.6%; RND 4KiB write 0.4%"
    mid = _stream("random", "read", 8192, 0.3)
    big = _stream("sequential", "write", 4096, 0.7)
    assert top_streams([big, mid]) == "SEQ 4KiB write 70%, RND 8KiB read 30%"  # nothing left out: no word
    assert top_streams([]) == "no I/O"
