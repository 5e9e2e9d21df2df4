"""How rwsw-wsat is shown: tkperf's generic section (SNIA header, headline
figures, IOPS per interval) and the applied workload: the dominant streams
and the fio settings that hold them."""
from __future__ import annotations

from typing import Sequence

from tkperf.api import Heading, TestRun, table
from tkperf.api import report_section as generic_report_section
from tkperf.testtypes.realworld.captureview import CaptureView
from tkperf.testtypes.realworld.workload import stream_rows
from tkperf.testtypes.realworld.wsat import TAIL, RwswWsatTest


def applied_blocks(test: TestRun) -> list:
    p = test.params
    rows = stream_rows(p)
    if not rows:
        return []
    captured = p.get("captured_share", "")
    try:
        covered = f"{100.0 * float(captured):.1f}% of the captured I/Os"
    except ValueError:
        covered = "the dominant streams"
    fio = [["rwmixread", p.get("rwmixread", "")], ["bssplit (reads,writes)", p.get("bssplit", "")],
           ["percentage_random (reads,writes)", p.get("percentage_random", "")]]
    heading = "The applied test workload"
    if "segment" in p:
        heading = f"Segment {p['segment']}: {p.get('segment_stream', '')} on its own"
    return [Heading(heading, 2),
            table(["Stream", "Share %", "Byte share %"], rows,
                  title=f"The dominant streams of {p.get('capture', '')} (at least {p.get('streams_share', '')} "
                        f"of the I/Os; {covered}), normalised"),
            table(["fio option", "Value"], fio, title="One fio job holding them")]


def segment_blocks(tests: Sequence[TestRun]) -> list:
    """``--rwsw-wsat-streams each``: one row per stream's own segment, side by side."""
    kind = RwswWsatTest()
    rows = []
    for test in tests:
        p = test.params
        if "segment" not in p:
            continue
        figures = {f.key: f for f in kind.headline(test)}
        try:
            share = f"{100.0 * float(p.get('captured_share', '')):.1f}"
        except ValueError:
            share = ""
        cells = [figures.get(k) for k in ("first_interval_iops", f"last_{TAIL}_intervals_iops", "gb_written")]
        rows.append([p.get("segment", ""), p.get("segment_stream", ""), share]
                    + ["" if f is None else f"{f.value:,.0f}" if f.unit == "IOPS" else f"{f.value:,.2f}"
                       for f in cells] + [test.stop_reason or test.status])
    if not rows:
        return []
    return [Heading("Each dominant stream on its own", 2),
            table(["Segment", "Stream", "Captured I/O share %", "First IOPS", f"Last {TAIL} IOPS", "GB written",
                   "Stopped by"], rows,
                  title="Every dominant stream as a WSAT segment of its own, each from its own purge")]


def report_section(ctx, tests: Sequence[TestRun]) -> list:
    out = generic_report_section(RwswWsatTest(), ctx, tests)
    out += segment_blocks(tests)
    for test in tests:
        out += applied_blocks(test)
    return out


class RwswWsatView(CaptureView):
    """How rwsw-wsat is shown (this module's report section) and what its stored data must be."""

    word = "RWSW-WSAT"

    def report_section(self, ctx, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def instance_title(self, test: TestRun) -> str:
        """``RWSW-WSAT of CAPTURE``, and the stream of a segment of its own (``... : RND 4KiB write``)."""
        title = super().instance_title(test)
        stream = test.params.get("segment_stream", "")
        return f"{title}: {stream}" if stream else title

    def check_data(self, test: TestRun) -> None:
        if test.rounds:
            raise ValueError("rwsw-wsat keeps its intervals as a series, not as rounds")
