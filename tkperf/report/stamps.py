"""What names a report's charts outside the report: each chart's SVG (and
PNG) in ``<name>-plots/`` is a file of its own, copied into slides or a
ticket; its stamp (:class:`tkperf.render.blocks.Stamp`) says which drive,
which run and which test it shows, in a small line in the picture and in
the SVG's ``<title>`` and ``<desc>``.

The drive's and the run's words come from the result file: they are plain
text here, drawn as text and escaped by the drawing
(:func:`tkperf.render.plotting.stamp_svg`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence

from tkperf import __version__
from tkperf.model.results import RunResult
from tkperf.render import blocks as b
from tkperf.report.header import device_or_desc

#: Between the parts of a stamp's line.
SEP = " · "


def drive_words(run: RunResult) -> str:
    """The drive as a stamp names it: its model (the description file's,
    else 'model not reported'), serial where known, and the target's path:
    'Samsung PM9A3 S/N S64XNA0R123 (/dev/nvme0n1)'."""
    d = run.device
    model = device_or_desc(run, d.model, "model", "model_no", "product")
    serial = d.serial.strip()
    return f"{model}" + (f" S/N {serial}" if serial else "") + f" ({d.path})"


def run_words(run: RunResult, short: bool = False) -> str:
    """The run as a stamp names it: 'run demo, started 2026-12-07T20:47:26+00:00'
    (and that it was a quick smoke test); ``short``: 'run demo 2026-12-07 20:47, quick'."""
    if short:
        started = run.started[:16].replace("T", " ")
        return f"run {run.name or 'unnamed'}" + (f" {started}" if started else "") + (", quick" if run.quick else "")
    return (f"run {run.name or 'unnamed'}" + (f", started {run.started}" if run.started else "")
            + (", --quick (NOT PTS-conformant)" if run.quick else ""))


def run_stamp(run: RunResult, test: str = "") -> b.Stamp:
    """The stamp of a chart of ``run``'s test ``test`` ('TP', 'IOPS'; ''
    for a chart of the whole run)."""
    line = SEP.join(([test] if test else []) + [run_words(run, short=True), drive_words(run)])
    desc = (f"drive: {drive_words(run)}; {run_words(run)}" + (f"; test: {test}" if test else "")
            + f"; measured by tkperf {run.tkperf_version or 'of unknown version'}, drawn by tkperf {__version__}")
    return b.Stamp(line=line, title=SEP.join(([test] if test else []) + [run_words(run), drive_words(run)]),
                   desc=desc)


def comparison_stamp(runs: Sequence[RunResult], labels: Sequence[str], test: str = "") -> b.Stamp:
    """The stamp of a comparison's chart: every run's label and drive."""
    each = [f"{label}: {drive_words(run)}" for run, label in zip(runs, labels)]
    line = SEP.join(([test] if test else []) + [f"comparison of {len(runs)} runs"] + each)
    desc = "; ".join([f"comparison of {len(runs)} runs" + (f", test {test}" if test else "")]
                     + [f"{label}: drive {drive_words(run)}, {run_words(run)}" for run, label in zip(runs, labels)]
                     + [f"drawn by tkperf {__version__}"])
    return b.Stamp(line=line, title=line, desc=desc)


def stamped(blocks: Sequence[object], stamp: b.Stamp) -> List[object]:
    """``blocks`` with every chart that has no stamp yet given ``stamp``."""
    return [replace(x, stamp=stamp) if isinstance(x, b.Chart) and x.stamp is None else x for x in blocks]


def type_words(short: Optional[str], name: str) -> str:
    """A test type as a stamp names it: its short name ('TP'), else its name in capitals."""
    return short or name.upper()
