"""How a replay is shown: the SNIA header (its own OIO and pre-conditioning
lines: the replay runs right after the purge, at each stream's own depth),
the headline figures, then per step what the drive delivered next to what
the capture asked for -- IOPS, MB/s, queue depth, mean and 99th percentile
response time, traced at the block tracepoints as the capture is (the
data I/Os; flushes and discards apart) -- and per stream its share of the
I/Os against the capture's; for an exact replay, the captured and the
issued I/O counts, flushes and discards, and the queue depth and response
times beside the capture's."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from tkperf.api import Heading, Paragraph, TestRun, headline_table, table
from tkperf.pts import open_test, snia_header, stored
from tkperf.testtypes.realworld import exact
from tkperf.testtypes.realworld.captureview import CaptureView, capture_title
from tkperf.testtypes.realworld.delivered import (
    BLOCK,
    CALIBRATION,
    COUNTERS,
    STEP,
    measured,
    outstanding,
    overall,
    steps,
    touched,
)
from tkperf.testtypes.realworld.replay import ReplayTest, captured_rt_us


def _f(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def step_blocks(test: TestRun) -> list:
    figs = steps(test)
    if not figs:
        return []
    source = figs[0].source if len({s.source for s in figs}) == 1 else COUNTERS

    def p99(x: float) -> str:
        return _f(x) if x > 0 else "-"

    rows = [[f"{s.step} !" if s.touched else str(s.step), _f(s.seconds),
             _f(s.kept_iops, 0), _f(s.iops, 0), _f(s.asked_mbps), _f(s.mbps),
             _f(s.asked_qd, 2), _f(s.qd, 2), _f(s.asked_lat_us), _f(s.lat_mean_us), p99(s.asked_p99_us),
             "-" if s.lat_p99_us is None else p99(s.lat_p99_us)] for s in figs]
    intensity = test.params.get("intensity", "max")
    how = ("each stream held to its captured rate" if intensity == "captured" else
           "each step's streams as fast as the drive served them (--replay-intensity max)")
    measured_as = {
        BLOCK: "at the block tracepoints the capture records, with its definition: the data I/Os (reads and "
               "writes; flushes and discards apart), each one's response time issue to completion, and their "
               "time in flight over the step's time.",
        COUNTERS: "from the target's block-layer counters (/sys/class/block/NAME/stat; the replay was not "
                  "traced): they count each flush's empty write as a write and charge it the flush time, so where "
                  "the replay flushed they are not the capture's definition, and they give no 99th percentile.",
    }.get(source, "by fio (this target has no block-layer counters): its IOPS times its mean "
                  "submission-to-completion latency, which counts I/Os fio holds as in flight.")
    out: list = [Heading("What the drive delivered, next to the capture", 2),
                 Paragraph(f"Per step ({how}), numbered from 1 as everywhere in tkperf: the IOPS the streams "
                           "that ran asked for and what the drive delivered; the queue depth (time-averaged I/Os in "
                           "flight) and the mean and 99th percentile response time, captured and delivered, the "
                           "delivered ones measured " + measured_as),
                 table(["Step", "Seconds", "Asked IOPS", "IOPS", "Asked MB/s", "MB/s", "Asked QD", "QD",
                        "Asked RT (µs)", "RT (µs)", "Asked p99 (µs)", "p99 (µs)"], rows,
                       title="Every step, asked and delivered" + (LOSS_WORDS if any(s.touched for s in figs) else ""))]
    srows = [[str(s.step), x.key, _f(100.0 * x.asked_share), _f(100.0 * x.share), str(x.iodepth), _f(x.qd, 2),
              _f(x.iops, 0), _f(x.lat_mean_us)] for s in figs for x in s.streams]
    if any(s.asked_flushes for s in figs):
        out.append(table(["Step", "Captured flushes", "fio fsync every (writes)", "Flushes at the block layer"],
                         [[str(s.step), f"{s.asked_flushes:,}", test.params.get(f"step.{s.step}.fsync", "-"),
                           "not measured" if s.flushes is None else f"{s.flushes:,}"] for s in figs],
                         title="Every step's flushes, captured and replayed"))
    out.append(table(["Step", "Stream", "Asked share %", "Share %", "fio iodepth", "fio QD", "IOPS",
                      "fio mean RT (µs)"], srows,
                     title="Every stream of every step: its share of the I/Os the streams that ran made, asked "
                           "and replayed (fio's figures)"))
    return out


#: The note of a table with steps the capture lost events in (marked "!").
LOSS_WORDS = (" (!: the capture lost trace events in this step: its asked figures miss the I/Os whose events were "
              "lost, and the step is not judged)")


def exact_steps(test: TestRun) -> list:
    """The exact replay's queue depth and response times per captured step, traced in each step's
    window of the capture's time, beside the capture's."""
    figs = exact.step_figures(test)
    if not figs:
        return []

    def pair(asked: float, got: Optional[float], digits: int) -> str:
        return f"{_f(asked, digits) if asked > 0 else '-'} / {'-' if got is None else _f(got, digits)}"

    rows = []
    for n, got in figs:
        mark = f"{n} !" if touched(test, n) else str(n)
        if got is None:
            rows.append([mark, "-", "not known", "not known", "not known"])
            continue
        lat = got.ios > 0
        rows.append([mark, f"{got.ios:,}", pair(_param(test, f"step.{n}.qd"), got.qd, 3),
                     pair(_param(test, f"step.{n}.lat_mean_us"), got.lat_mean_us if lat else None, 1),
                     pair(_param(test, f"step.{n}.lat_p99_us"), got.lat_p99_us if lat else None, 1)])
    lossy = any(touched(test, n) for n, _ in figs)
    return [table(["Step", "I/Os traced", "QD, captured / replayed", "Mean RT (µs), captured / replayed",
                   "p99 RT (µs), captured / replayed"], rows,
                  title="Every captured step, at the block tracepoints in its window of the capture's time (the "
                        "last keeps the I/Os issued after the capture's end)" + (LOSS_WORDS if lossy else ""))]


def _param(test: TestRun, key: str) -> float:
    return stored.number(test, key)


def exact_blocks(test: TestRun) -> list:
    if "exact.reads" not in test.data or not test.rounds:
        return []
    rnd = test.rounds[0]
    w = rnd.workloads
    issued = sum(x.read.ios + x.write.ios for x in w)
    asked = stored.whole(test, "exact.reads") + stored.whole(test, "exact.writes")
    iops = sum(x.iops for x in w)
    captured_rt = captured_rt_us(test)
    got = measured(test, rnd)
    fio_lat = sum(x.lat_mean_us * (x.read.ios + x.write.ios) for x in w) / issued if issued else 0.0
    p99 = _param(test, "capture_lat_p99_us")
    rows = [["Captured I/Os replayed", f"{asked:,}"], ["I/Os fio issued", f"{issued:,}"],
            ["IOPS, captured / delivered", f"{_param(test, 'capture_iops'):,.0f} / {iops:,.0f}"],
            ["Length (s), captured / replayed (fio's runtime less its lead before the capture's time 0)",
             f"{stored.whole(test, 'exact.length_us') / 1e6:,.1f} / {exact.replayed_s(test):,.1f}"],
            ["Most I/Os outstanding (fio iodepth: the capture's peak in flight)", test.data.get("exact.iodepth", "")],
            ["Behind the captured timing (s), furthest / 99th percentile (fio's submission log)",
             f"{stored.whole(test, 'exact.lag_max_us') / 1e6:,.3f} / "
             f"{stored.whole(test, 'exact.lag_p99_us') / 1e6:,.3f}" if "exact.lag_max_us" in test.data
             else "not measured"]]
    if got is not None:
        how = "block tracepoints, data I/Os" if got.source == BLOCK else "block-layer counters, flushes counted"
        rows += [[f"Queue depth, captured / delivered ({how})", f"{_param(test, 'capture_qd'):,.2f} / {got.qd:,.2f}"],
                 [f"Mean response time (µs), captured / delivered ({how}, issue to completion)",
                  f"{captured_rt:,.1f} / {got.lat_mean_us:,.1f}"],
                 [f"p99 response time (µs), captured / delivered ({how})",
                  f"{p99:,.1f}" if p99 > 0 else "not recorded"]]
        rows[-1][1] += " / " + ("not known (counters)" if got.lat_p99_us is None else f"{got.lat_p99_us:,.1f}")
    else:
        rows.append(["Queue depth, captured / delivered (fio: IOPS x mean latency)",
                     f"{_param(test, 'capture_qd'):,.2f} / {sum(outstanding(x) for x in w):,.2f}"])
        rows.append(["Captured p99 response time (µs, block layer)", f"{p99:,.1f}" if p99 > 0 else "not recorded"])
    rows.append(["fio's mean latency (µs; includes completed I/Os waiting for fio to reap them while it keeps "
                 "the captured timing)", f"{fio_lat:,.1f}"])
    for what, key, seen in (("Flushes", "flushes", got.flushes if got else None),
                            ("Discards", "discards", got.discards if got else None)):
        rows.append([f"{what}: captured / in the iolog / seen at the block layer",
                     f"{test.params.get(f'capture_{key}', 'not recorded')} / {test.data.get(f'exact.{key}', '0')} / "
                     f"{'not measured' if seen is None else seen}"])
    rows += [["Moved to fit the target's range", test.data.get("exact.moved", "0")],
             ["Left out (longer than the target's range)", test.data.get("exact.dropped", "0")],
             ["Target range (bytes)", test.data.get("exact.span", "")]]
    return [Heading("The captured I/Os, replayed", 2), table(["Figure", "Value"], rows, title="Exact replay")] \
        + exact_steps(test)


def _header(ctx, test: TestRun):
    exact_mode = "exact.reads" in test.data or test.params.get("mode") == "exact"
    stimulus = test.params.get("access", "") or ("the captured I/Os with their timing" if exact_mode else
                                                 "each step's IO streams")
    figures = overall(test)
    middle = (("Capture", f"{test.params.get('capture', '')} ({test.params.get('workload', '')})"),
              ("Steps", test.params.get("steps", "1 (the whole capture)")),
              ("Response time measured", figures.lat_source if figures else "not measured"))
    h = snia_header(ctx.run, test, stimulus, middle, without_wipc="none: the replay runs right after the purge",
                    wdpc="none")
    oio = (f"TC 1 x QD {test.params.get('iodepth', '?')} (the capture's peak in flight)" if exact_mode else
           "one fio job per IO stream, each at its own depth (below)")
    return replace(h, test=tuple((k, oio) if k == "OIO" else (k, v) for k, v in h.test))


def report_section(ctx, tests: Sequence[TestRun]) -> list:
    kind = ReplayTest()
    out: list = [Heading(kind.title)]
    level = 2 if len(tests) > 1 else 1
    for test in tests:
        opening, measured = open_test(test, capture_title(ReplayView.word, test),
                                      _header(ctx, test), level)
        out += opening[1:] if level == 1 else opening
        if not measured:
            continue
        head = headline_table(kind, test)
        out += ([head] if head is not None else []) + step_blocks(test) + exact_blocks(test)
    return out


class ReplayView(CaptureView):
    """How a replay is shown (this module's report section) and what its stored data must be."""

    word = "Replay"

    def report_section(self, ctx, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def check_data(self, test: TestRun) -> None:
        for rnd in test.rounds:
            label = test.data.get(f"phase.{rnd.index}", "")
            if label and not label.startswith((CALIBRATION, STEP, exact.LABEL)):
                raise ValueError(f"round {rnd.index} is labelled {label[:40]!r}, not a replay step")
