"""``tkperf history FILES|DIR [--json] [--outdir DIR]``: a device's results over time (docs/history.rst).

Groups results by device (serial, else name) and test, in time order;
each headline figure is a trend with its window's spread and its change
points.  Prints a summary, or JSON; ``--outdir`` also writes an HTML page
per device with a plot per figure.  A directory keeps an SQLite index of
its results beside them, so a year of nightly results opens in about a
second.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Sequence

from tkperf import history, strictjson
from tkperf.cli.common import prepare_outdir
from tkperf.durations import unit_word
from tkperf.errors import EXIT_OK
from tkperf.history import page
from tkperf.history.page import value_text
from tkperf.history.trends import Device, as_dict


def lines(devices: Sequence[Device]) -> List[str]:
    """The text summary: per device, per figure its last value and its change points."""
    out: List[str] = []
    for d in devices:
        out.append(f"{d.label}: {d.runs} result{'' if d.runs == 1 else 's'} ({d.key})")
        for t in d.trends:
            last = t.points[-1]
            spread = (f" (window {value_text(t, last.lo)}-{value_text(t, last.hi)})"
                      if last.lo is not None and last.hi is not None else "")
            found = ("series too short for a change point" if not t.changes and page.too_short(t) else
                     f"{len(t.changes)} change point{'' if len(t.changes) == 1 else 's'}")
            unit = unit_word(t.unit, sys.stdout)
            out.append(f"  {t.test}/{t.figure}: last {value_text(t, last.value)} {unit}{spread}, {found}")
            for c in t.changes:
                pct = "n/a" if c.change_pct is None else f"{c.change_pct:+.1f}%"
                host = f"; {c.host_text()}" if c.host_step is not None else ""
                out.append(f"    change at run {c.index + 1} ({c.started}): {value_text(t, c.before)} -> "
                           f"{value_text(t, c.after)} {unit} ({pct}, p {c.p_value:.3f}{host}) from {c.path}")
    return out


def cmd_history(args: argparse.Namespace) -> int:
    devices, index, stats = history.collect(args.inputs)
    for note in stats.notes:  # the index was not trusted, was rebuilt or not updated
        print(f"tkperf: warning: {note}", file=sys.stderr)
    written: List[str] = []
    if args.outdir:
        written = page.write(devices, prepare_outdir(args.outdir), charts=not args.no_plots,
                             skipped=stats.skipped)
    if args.json:
        print(strictjson.dumps(as_dict(devices, index, stats.as_dict()), indent=2))
    else:
        print("\n".join(lines(devices)))
        if stats.skipped:
            print(f"skipped {len(stats.skipped)} XML files that are not tkperf results: "
                  + ", ".join(stats.skipped[:5]) + (" ..." if len(stats.skipped) > 5 else ""))
        if stats.links:
            print(f"left out {stats.links} links (dangling, looping or not) and other entries that are "
                  f"not regular files")
        if written:
            print(f"history pages: {written[0]}")
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("history", help="every result of a device over time: trends and change points",
                       allow_abbrev=False)
    p.add_argument("inputs", nargs="+", metavar="FILES|DIR",
                   help="result files, or a directory searched for them (its index is kept in it)")
    p.add_argument("--json", action="store_true", help="print the trends and change points as JSON")
    p.add_argument("--outdir", metavar="DIR", help="write an HTML page per device and an SVG plot per figure there")
    p.add_argument("--no-plots", action="store_true", help="with --outdir: the pages without the PNG plots")
    p.set_defaults(func=cmd_history)
