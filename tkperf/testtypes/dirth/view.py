"""How DIRTH results are shown: the sweep's sections of :mod:`tkperf.api`
(``sweep_report_section``, ``sweep_compare_section``) under DIRTH's SNIA
header -- per instance (R/W mix) the max, mid and min points and the rule
that chose them, IOPS and mean response time by TC and QD, IOPS vs OIO per
TC, the demand-intensity curve, the response-time histograms and confidence
plot of the three points with their "nines", every point of the sweep, and
the steady state that preceded the sweep; in a comparison, the figures of
the three points per run and the demand-intensity curves and max-point
histograms overlaid.
"""
from __future__ import annotations

from typing import Sequence

from tkperf import api
from tkperf.pts import (
    NA,
    Header,
    SweepView,
    sweep_header,
)
from tkperf.pts.sweep.header import stimulus_words as sweep_stimulus_words
from tkperf.pts.sweep.report import compare_section as sweep_compare_section
from tkperf.pts.sweep.report import report_section as sweep_report_section
from tkperf.testtypes.dirth import DemandIntensityTest, stimulus_source


def dirth_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    p = test.params
    bs, mix = p.get("block_size", NA), p.get("mix", NA)
    stimulus, wdpc = sweep_stimulus_words(test, f"RND {bs} R/W {mix} ({stimulus_source(p)})", f"RND {bs} {mix}")
    return sweep_header(ctx, test, stimulus, wdpc)



class DemandIntensityView(SweepView):
    """How DemandIntensity results are shown."""

    def report_section(self, ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
        return sweep_report_section(ctx, tests, DemandIntensityTest(), dirth_header)

    def compare_section(self, ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
        return sweep_compare_section(ctx, runs, labels, DemandIntensityTest())

    def instance_title(self, test: api.TestRun) -> str:
        p = test.params
        return f"DIRTH {p.get('block_size', '')} {p.get('mix', '')}".strip()
