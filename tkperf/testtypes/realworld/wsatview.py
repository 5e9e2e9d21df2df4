"""How rwsw-wsat is shown: tkperf's generic section (SNIA header, headline
figures, IOPS per interval) and the applied workload: the dominant streams
and the fio settings that hold them."""
from __future__ import annotations

from typing import Sequence

from tkperf.api import Heading, TestRun, table
from tkperf.api import report_section as generic_report_section
from tkperf.testtypes.realworld.captureview import CaptureView
from tkperf.testtypes.realworld.workload import stream_rows
from tkperf.testtypes.realworld.wsat import RwswWsatTest


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
    return [Heading("The applied test workload", 2),
            table(["Stream", "Share %", "Byte share %"], rows,
                  title=f"The dominant streams of {p.get('capture', '')} (at least {p.get('streams_share', '')} "
                        f"of the I/Os; {covered}), normalised"),
            table(["fio option", "Value"], fio, title="One fio job holding them")]


def report_section(ctx, tests: Sequence[TestRun]) -> list:
    out = generic_report_section(RwswWsatTest(), ctx, tests)
    for test in tests:
        out += applied_blocks(test)
    return out


class RwswWsatView(CaptureView):
    """How rwsw-wsat is shown (this module's report section) and what its stored data must be."""

    word = "RWSW-WSAT"

    def report_section(self, ctx, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def check_data(self, test: TestRun) -> None:
        if test.rounds:
            raise ValueError("rwsw-wsat keeps its intervals as a series, not as rounds")
