"""How rwsw-dirth is shown: DIRTH's sections (the max, mid and min points,
IOPS and response time by TC and QD, the demand-intensity curve, the three
points' response-time histograms, every point, the steady state) under a
header naming the applied workload, and its streams after every point."""
from __future__ import annotations

from typing import Sequence

from tkperf.api import RunResult, TestRun
from tkperf.pts import SweepView, sweep_header
from tkperf.pts.sweep.header import stimulus_words as sweep_stimulus_words
from tkperf.pts.sweep.report import compare_section as sweep_compare_section
from tkperf.pts.sweep.report import report_section as sweep_report_section
from tkperf.testtypes.realworld.dirth import RwswDirthTest
from tkperf.testtypes.realworld.wsatview import applied_blocks


def header(ctx, test: TestRun):
    p = test.params
    stimulus, wdpc = sweep_stimulus_words(test, f"the applied workload of {p.get('capture', '')}",
                                          "the applied workload")
    extra = (("Applied workload", p.get("access", "")), ("fio bssplit (reads,writes)", p.get("bssplit", "")),
             ("fio rwmixread", p.get("rwmixread", "")),
             ("fio percentage_random (reads,writes)", p.get("percentage_random", "")))
    return sweep_header(ctx, test, stimulus, wdpc, extra)


def more(ctx, test: TestRun, points) -> list:
    return applied_blocks(test)


def report_section(ctx, tests: Sequence[TestRun]) -> list:
    return sweep_report_section(ctx, tests, RwswDirthTest(), header, more)


def compare_section(ctx, runs, labels) -> list:
    return sweep_compare_section(ctx, runs, labels, RwswDirthTest())


class RwswDirthView(SweepView):
    """How rwsw-dirth is shown: DIRTH's sections under its own header."""

    def report_section(self, ctx, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def compare_section(self, ctx, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        return compare_section(ctx, runs, labels)

    def instance_title(self, test: TestRun) -> str:
        return self.kind.short
