"""Latency QoS: response-time histograms, confidence ("nines") plots and the
nines table of any test whose workloads kept their histograms (LAT always,
every round-based test with ``--latency-histograms``).

A workload's histogram is merged over the rounds the report measures (the
steady-state window; all rounds of a test without one, such as a sweep):
the sum of the bins is the exact histogram of all those I/Os
(:mod:`tkperf.model.histogram`).  Percentiles are read from it, and each is
shown only where the I/O count supports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.model import histogram
from tkperf.model.results import Round, TestRun, Workload, format_bs, mix_label
from tkperf.render import blocks as b
from tkperf.report.words import fmt

#: Curves on one histogram or confidence chart.
PER_CHART = 8


@dataclass(frozen=True)
class Distribution:
    """One direction of one workload, merged over the measured rounds."""

    label: str
    bs: int
    rwmixread: int
    direction: str
    bins: histogram.Bins
    #: the mean of the per-round means (the PTS tables' AVE)
    mean_us: float
    #: the slowest single I/O over the rounds (not the PTS MAX)
    max_us: float

    @property
    def ios(self) -> int:
        return histogram.total(self.bins)


def measured_rounds(test: TestRun) -> List[Round]:
    """The rounds a test's figures come from: its steady-state window, or
    every round of a test without one (a sweep, phases)."""
    if test.steady is not None and test.steady.rounds:
        return test.window_rounds()
    return list(test.rounds)


def has_histograms(test: TestRun) -> bool:
    return any(s.bins for r in test.rounds for w in r.workloads for s in (w.read, w.write))


def _label(w: Workload, direction: str, with_oio: bool) -> str:
    access = "SEQ" if w.rw in ("read", "write", "rw") else "RND"
    text = f"{access} {format_bs(w.bs)} {mix_label(w.rwmixread)} {'R' if direction == 'read' else 'W'}"
    return text + (f" TC{w.numjobs}/QD{w.iodepth}" if with_oio else "")


def distributions(test: TestRun, rounds: Optional[Sequence[Round]] = None) -> List[Distribution]:
    """Every workload direction with a histogram, in the order first measured,
    over ``rounds`` (by default the measured rounds, :func:`measured_rounds`)."""
    rounds = measured_rounds(test) if rounds is None else list(rounds)
    oios = {(w.numjobs, w.iodepth) for r in rounds for w in r.workloads}
    merged: Dict[Tuple[str, str], List] = {}
    for r in rounds:
        for w in r.workloads:
            for direction in ("read", "write"):
                s = getattr(w, direction)
                if not s.bins:
                    continue
                key = (w.name, direction)
                if key not in merged:
                    merged[key] = [w, [], 0.0, 0, 0.0]
                entry = merged[key]
                entry[1].append(s.bins)
                # AVE as the PTS tables have it: the mean of the per-round means, so
                # this table and the LAT AVE table agree where they show the same cell
                entry[2] += s.lat_mean_us
                entry[3] += 1
                entry[4] = max(entry[4], s.lat_max_us)
    out = []
    for (_, direction), (w, bins, lat_sum, rounds, worst) in merged.items():
        out.append(Distribution(_label(w, direction, len(oios) > 1), w.bs, w.rwmixread, direction,
                                histogram.merge(*bins), lat_sum / rounds if rounds else 0.0, worst))
    return out


def nines_table(dists: Sequence[Distribution], title: str) -> b.Table:
    """Per distribution: I/Os, AVE, each of the nines (n/s where the I/O
    count cannot support it), MAX, and the highest supported percentile."""
    rows = []
    for d in dists:
        cells = [fmt(v, "µs") if ok else "n/s" for _, v, ok in histogram.nines_rows(d.bins)]
        best = histogram.most_supported(d.ios)
        rows.append([d.label, f"{d.ios:,}", fmt(d.mean_us, "µs")] + cells
                    + [fmt(d.max_us, "µs"), f"{best}%" if best else "none"])
    headers = ["Workload", "I/Os", "AVE"] + [f"{p}%" for p in histogram.NINES] + ["Largest", "Supported"]
    return b.table(headers, rows, title=f"{title} (µs; AVE: the mean of the per-round means, as the "
                   "PTS tables; Largest: the slowest single I/O, not the PTS MAX; n/s: not supported by "
                   "the I/O count)",
                   # the nines' columns wide enough for '99.9999%' on one line in the PDF
                   widths=[15, 10, 8] + [10] * len(histogram.NINES) + [9, 11])


def _groups(dists: Sequence[Distribution]) -> List[Tuple[str, List[Distribution]]]:
    """Distributions by block size (largest first), at most :data:`PER_CHART` a chart."""
    by_bs: Dict[int, List[Distribution]] = {}
    for d in dists:
        by_bs.setdefault(d.bs, []).append(d)
    out = []
    for bs in sorted(by_bs, reverse=True):
        group = sorted(by_bs[bs], key=lambda d: (-d.rwmixread, d.direction))
        for i in range(0, len(group), PER_CHART):
            part = "" if len(group) <= PER_CHART else f" (part {i // PER_CHART + 1})"
            out.append((format_bs(bs) + part, group[i:i + PER_CHART]))
    return out


def histogram_curve(label: str, bins: histogram.Bins) -> b.Curve:
    """A histogram as a chart curve: bin value in µs, I/O count."""
    return b.Curve(label, np.array([ns / 1000.0 for ns, _ in bins]), np.array([float(c) for _, c in bins]))


def confidence_curve(label: str, bins: histogram.Bins) -> b.Curve:
    x, y = histogram.confidence(bins)
    return b.Curve(label, x, y)


def supported_marks(ios: int) -> Tuple[str, ...]:
    """The nines a sample of ``ios`` I/Os supports (the lines a confidence plot draws)."""
    return tuple(p for p in histogram.NINES if histogram.supported(ios, p))


def qos_blocks(ctx: ReportContext, test: TestRun, where: str, level: int = 2,
               rounds: Optional[Sequence[Round]] = None, source: str = "") -> list:
    """The latency QoS part of one test's section: nines table, histograms and
    confidence plots per block size; nothing without histograms.  ``rounds``:
    the rounds whose histograms are shown (by default the measured rounds);
    ``source``: a sentence saying where they come from, said first."""
    dists = distributions(test, rounds)
    if not dists:
        return []
    out: list = [
        b.Heading("Response-time distribution (latency QoS)", level),
        b.Paragraph((source + " " if source else "")
                    + f"Response time (fio's total latency, submission to completion) of every I/O, "
                    f"from fio's latency histograms added over {where}. A percentile is given only where "
                    "the I/O count supports it: at least one I/O beyond it (99.99% needs 10,000 I/Os, "
                    "99.9999% a million); 'n/s' marks the others."),
        nines_table(dists, f"Response-time percentiles, {where}"),
    ]
    for name, group in _groups(dists):
        most = max(d.ios for d in group)
        safe = name.replace(" ", "").replace("(", "-").replace(")", "")
        out.append(ctx.chart(test, f"histogram-{safe}", b.HistogramChart(
            tuple(histogram_curve(d.label, d.bins) for d in group),
            title=f"Response-time histogram, block size {name}"),
            f"Share of I/Os per response-time bin (fio's log-spaced bins), block size {name}, {where}."))
        out.append(ctx.chart(test, f"confidence-{safe}", b.ConfidenceChart(
            tuple(confidence_curve(d.label, d.bins) for d in group),
            title=f"Response-time confidence, block size {name}", marks=supported_marks(most)),
            f"Share of I/Os completed within each response time, block size {name}, {where}; "
            "the y axis counts nines (90%, 99%, 99.9% ...), dotted lines mark the percentiles the "
            "sample supports."))
    return out


# --- comparisons ------------------------------------------------------------------

def _find(test: Optional[TestRun], label: str) -> Optional[Distribution]:
    if test is None:
        return None
    for d in distributions(test):
        if d.label == label:
            return d
    return None


def compare_blocks(ctx: CompareContext, tests: Sequence[Optional[TestRun]], labels: Sequence[str],
                   title: str, stem: str) -> list:
    """Confidence curves of the same workload direction overlaid, one curve
    per run, for each of ``labels`` some run measured; a nines table by run."""
    out: list = []
    for label in labels:
        pairs = [(run_label, _find(t, label)) for run_label, t in zip(ctx.labels, tests)]
        found = [(r, d) for r, d in pairs if d is not None]
        if not found:
            continue
        if not out:
            out.append(b.Heading(title, 2))
        most = max(d.ios for _, d in found)
        rows = []
        for r, d in found:
            rows.append([r, f"{d.ios:,}"] + [fmt(v, "µs") if ok else "n/s"
                                             for _, v, ok in histogram.nines_rows(d.bins)])
        out.append(b.table(["Run", "I/Os"] + [f"{p}%" for p in histogram.NINES], rows,
                           title=f"{label}: response-time percentiles by run (µs)",
                           widths=[30, 12, 11, 11, 11, 11, 11]))
        safe = label.replace(" ", "-").replace("/", "-")
        out.append(b.Chart(f"{stem}-confidence-{safe}.png", b.ConfidenceChart(
            tuple(confidence_curve(r, d.bins) for r, d in found),
            title=f"{label}: response-time confidence by run", marks=supported_marks(most)),
            f"{label}: share of I/Os completed within each response time, one curve per run."))
    return out
