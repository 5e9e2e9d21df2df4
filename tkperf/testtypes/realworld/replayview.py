"""How a replay is shown: tkperf's generic section (SNIA header, headline
figures, every round), then per step what the drive delivered next to what
the capture asked for -- IOPS, MB/s, queue depth, mean response time -- and
per stream its share of the I/Os against the capture's; for an exact
replay, the captured and the issued I/O counts."""
from __future__ import annotations

from typing import Sequence

from tkperf.api import Heading, Paragraph, RunResult, TestRun, View, stored, table
from tkperf.api import compare_section as generic_compare_section
from tkperf.api import report_section as generic_report_section
from tkperf.testtypes.realworld import exact
from tkperf.testtypes.realworld.delivered import CALIBRATION, STEP, outstanding, steps
from tkperf.testtypes.realworld.replay import ReplayTest


def _f(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def step_blocks(test: TestRun) -> list:
    figs = steps(test)
    if not figs:
        return []
    rows = [[str(s.step), _f(s.seconds), _f(s.asked_iops, 0), _f(s.iops, 0), _f(s.asked_mbps), _f(s.mbps),
             _f(s.asked_qd, 2), _f(s.qd, 2), _f(s.lat_mean_us)] for s in figs]
    out: list = [Heading("What the drive delivered, next to the capture", 2),
                 Paragraph("Per step: the capture's IOPS, MB/s and queue depth (mean outstanding I/Os) and what "
                           "the drive delivered; the delivered queue depth is each stream job's IOPS times its "
                           "mean response time (Little's law), added up."),
                 table(["Step", "Seconds", "Asked IOPS", "IOPS", "Asked MB/s", "MB/s", "Asked QD", "QD",
                        "Mean RT (µs)"], rows, title="Every step, asked and delivered")]
    srows = [[str(s.step), x.key, _f(100.0 * x.asked_share), _f(100.0 * x.share), str(x.iodepth), _f(x.qd, 2),
              _f(x.iops, 0), _f(x.lat_mean_us)] for s in figs for x in s.streams]
    out.append(table(["Step", "Stream", "Asked share %", "Share %", "fio iodepth", "QD", "IOPS", "Mean RT (µs)"],
                     srows, title="Every stream of every step: its share of the I/Os, asked and replayed"))
    return out


def _param(test: TestRun, key: str) -> float:
    return stored.number(test, key)


def exact_blocks(test: TestRun) -> list:
    if "exact.reads" not in test.data or not test.rounds:
        return []
    issued = sum(w.read.ios + w.write.ios for w in test.rounds[0].workloads)
    asked = stored.whole(test, "exact.reads") + stored.whole(test, "exact.writes")
    w = test.rounds[0].workloads
    iops = sum(x.iops for x in w)
    qd = sum(outstanding(x) for x in w)
    rows = [["Captured I/Os replayed", f"{asked:,}"], ["I/Os fio issued", f"{issued:,}"],
            ["IOPS, captured / delivered", f"{_param(test, 'capture_iops'):,.0f} / {iops:,.0f}"],
            ["Queue depth, captured / delivered", f"{_param(test, 'capture_qd'):,.2f} / {qd:,.2f}"],
            ["Moved to fit the target's range", test.data.get("exact.moved", "0")],
            ["Left out (trims, syncs, oversize)", test.data.get("exact.dropped", "0")],
            ["Target range (bytes)", test.data.get("exact.span", "")]]
    return [Heading("The captured I/Os, replayed", 2), table(["Figure", "Value"], rows, title="Exact replay")]


def report_section(ctx, tests: Sequence[TestRun]) -> list:
    out = generic_report_section(ReplayTest(), ctx, tests)
    for test in tests:
        out += step_blocks(test) + exact_blocks(test)
    return out


def compare_section(ctx, runs, labels) -> list:
    return generic_compare_section(ReplayTest(), ctx, runs, labels)


class ReplayView(View):
    """How a replay is shown (this module's sections) and what its stored data must be."""

    def report_section(self, ctx, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def compare_section(self, ctx, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        return compare_section(ctx, runs, labels)

    def instance_title(self, test: TestRun) -> str:
        return f"Replay of {test.params.get('capture', '')}".strip()

    def check_data(self, test: TestRun) -> None:
        for rnd in test.rounds:
            label = test.data.get(f"phase.{rnd.index}", "")
            if label and not label.startswith((CALIBRATION, STEP, exact.LABEL)):
                raise ValueError(f"round {rnd.index} is labelled {label[:40]!r}, not a replay step")
