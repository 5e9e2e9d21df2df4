"""The history's change points on recorded nights, not simulated ones.

``benchmarks/nightly.py`` holds :func:`tkperf.history.changepoints.detect`
to stationary simulated noise; real nights are not that: a shared host's
load comes and goes over days, and the figures the host path sets follow
it.  This one runs the detector over ``benchmarks/data/nights-emulated-ssd.csv``,
39 identical ``--quick`` nights of the example nightly job on tkperf's
emulated SSD (12 figures a night, the host's load and the drive's idle
share; nights 1-23 at loads of 1.6-12.6, nights 24-39 at 1.9-4.6), and
prints:

1. the change points the history finds (``tkperf history``'s own
   trends, :func:`tkperf.history.trends.build`) in the 39 nights (and in
   nights 1-23), with their night, size and the idle share's mean on both
   sides: on an unchanged drive every one is a false alarm of the drive's
   history; and how many of them lie at a step of the host's idle share
   (which the history says beside them) and follow the host (a figure the
   host path sets, at such a step: the nightly job does not tell those);
2. over every window of ``--window`` (20) consecutive nights, the share of
   the figures' series with no change point (target: >= 95%, what the
   simulated nights hold), with the detector on the values alone and as
   the history runs it (the host's idle share taken out of the figures the
   host path sets, ``changepoints.detect(..., host=)``), and which figures
   had one;
3. a planted step: in each window, the last 3 nights of one figure moved
   ``--step`` (19%) in its worse direction (the -19% read IOPS step of a
   +30% flash read time on that model): the share of series in which a
   change point is named at the step's first night, and within a night of
   it, both ways, and in how many windows the 4k read IOPS step is named.

The values are the figures as the job's check printed them (3-4
significant digits: TP's 0.2% night-to-night spread is near its
rounding).  ``--tiny`` runs one window (the test suite's mode).

    python3 benchmarks/history_real.py [--window 20] [--step 19] [--tiny] [--data CSV]
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from datetime import datetime, timedelta, timezone  # noqa: E402

from tkperf.history import changepoints  # noqa: E402
from tkperf.history.index import HOST_FIGURE, HOST_TEST, FigureRow, FileFacts  # noqa: E402
from tkperf.history.trends import build  # noqa: E402
from tkperf.verdict.comparable import host_path  # noqa: E402

DATA = os.path.join(HERE, "data", "nights-emulated-ssd.csv")
#: The figures and which way is better (the test types' headline figures).
FIGURES = {"rnd_4k_write_iops": "higher", "rnd_4k_mixed_iops": "higher", "rnd_4k_read_iops": "higher",
           "seq_write_mb_s": "higher", "seq_read_mb_s": "higher", "rnd_4k_write_lat_mean_us": "lower",
           "rnd_4k_write_lat_max_us": "lower", "rnd_4k_write_lat_largest_us": "lower",
           "rnd_4k_write_lat_p99_9_us": "lower", "first_interval_iops": "higher",
           "last_5_intervals_iops": "higher", "gb_written": "", "rnd_4k_read_lat_mean_us": "lower"}
#: Each figure's test key.
TESTS = {f: ("iops" if f.endswith("_iops") and f.startswith("rnd") else "tp-1024k" if f.startswith("seq")
             else "lat" if "_lat_" in f else "wsat") for f in FIGURES}
#: Nights of a planted step before the history is read (a new level is named from its third night on).
STEP_NIGHTS = 3


def read(path: str = DATA) -> Tuple[Dict[str, List[float]], List[float]]:
    """(each figure's values in night order, the idle share in %): the figures
    of :data:`FIGURES` the file has, of its identical nights (a file
    ``benchmarks/nightly_real.py --record`` wrote also holds planted ones)."""
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip() and not line.startswith("#")]
    head = lines[0].strip().split(",")
    rows = [dict(zip(head, line.strip().split(","))) for line in lines[1:]]
    rows = [r for r in rows if r.get("kind", "identical") == "identical" and r.get("idle_pct")]
    return ({f: [float(r[f]) for r in rows] for f in FIGURES if f in head and all(r[f] for r in rows)},
            [float(r["idle_pct"]) for r in rows])


def _mean(xs: List[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def as_files(series: Dict[str, List[float]], idle: List[float], nights: int) -> List[FileFacts]:
    """The first ``nights`` nights as the history's index holds results: each
    night's figures and the host's idle share, in night order."""
    start = datetime(2026, 12, 1, 1, 30, tzinfo=timezone.utc)
    out = []
    for i in range(nights):
        rows = [FigureRow(TESTS[f], f, f, "", FIGURES[f], "{:g}", values[i], None, None, None, 1, None)
                for f, values in series.items()]
        rows.append(FigureRow(HOST_TEST, HOST_FIGURE, "idle", "%", "", "{:g}", idle[i], None, None, None, 1, None))
        out.append(FileFacts(f"N{i + 1:02d}.xml", (start + timedelta(days=i)).isoformat(), "serial:S", "S",
                             "", True, tuple(rows)))
    return out


def listing(series: Dict[str, List[float]], idle: List[float], nights: int) -> Tuple[int, int, int]:
    """Print the change points the history finds in the first ``nights``
    nights (:func:`tkperf.history.trends.build`, as ``tkperf history`` runs
    it), each with the idle share's mean on both sides and what the host's
    steps say of it; (change points, at a step of the host, following the host)."""
    found = at_step = follows = 0
    (device,) = build(as_files(series, idle, nights))
    for t in device.trends:
        for c in t.changes:
            if t.test == HOST_TEST:
                print(f"  {'(the host) idle share':<28} night {c.index + 1:>2}: {c.change_pct:+6.1f}%")
                continue
            found += 1
            at_step += c.host_step is not None
            follows += c.host_path
            print(f"  {t.figure:<28} night {c.index + 1:>2}: {c.change_pct:+6.1f}%  p {c.p_value:.3f}  idle "
                  f"{_mean(idle[:c.index]):.0f}% before, {_mean(idle[c.index:nights]):.0f}% after"
                  + (f"  ({c.host_text()})" if c.host_step is not None else ""))
    return found, at_step, follows


def windows(series: Dict[str, List[float]], idle: List[float], window: int, step_pct: float, count: int,
            missed: Dict[str, int], alarms: Dict[str, int], with_host: bool = True) -> Tuple[int, int, int, int]:
    """(series, series without a change point, planted steps named at their night, named within one);
    ``missed`` counts each figure's planted steps not named within a night, ``alarms`` its windows
    with a change point.  ``with_host``: as the history does, the idle share is taken out of a
    figure the host path sets first (``changepoints.detect(..., host=)``)."""
    total = clean = exact = near = 0
    n = len(next(iter(series.values())))
    for start in range(0, min(n - window + 1, count)):
        for fig, values in series.items():
            part = values[start:start + window]
            host = idle[start:start + window] if with_host and host_path(TESTS[fig], fig) else None
            total += 1
            alarm = bool(changepoints.detect(part, host=host))
            clean += not alarm
            alarms[fig] = alarms.get(fig, 0) + alarm
            better = FIGURES[fig]
            if not better:
                continue
            factor = 1 - step_pct / 100 if better == "higher" else 1 / (1 - step_pct / 100)
            at = window - STEP_NIGHTS
            planted = part[:at] + [v * factor for v in part[at:]]
            named = [c.index for c in changepoints.detect(planted, host=host)]
            exact += at in named
            near += any(abs(i - at) <= 1 for i in named)
            missed[fig] = missed.get(fig, 0) + (not any(abs(i - at) <= 1 for i in named))
    return total, clean, exact, near


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--window", type=int, default=20, help="nights per window (default 20)")
    ap.add_argument("--step", type=float, default=19.0, help="the planted step, percent worse (default 19)")
    ap.add_argument("--tiny", action="store_true", help="one window (the test suite's mode)")
    ap.add_argument("--data", default=DATA, metavar="CSV",
                    help="the recorded nights (default benchmarks/data/nights-emulated-ssd.csv; also a file "
                         "benchmarks/nightly_real.py --record wrote, its identical nights)")
    args = ap.parse_args()
    series, idle = read(args.data)
    n = len(idle)
    if n < args.window:
        ap.error(f"--window {args.window}: {args.data} has {n} identical nights")
    for nights in sorted({min(23, n), n}):
        print(f"change points over nights 1-{nights} of an unchanged drive (each a false alarm):")
        found, at_step, follows = listing(series, idle, nights)
        print(f"  {found} change point(s) in {len(series)} figures: {at_step} at a step of the host's idle "
              f"share, {follows} of them of a figure the host path sets (the nightly job does not tell those)")
    for with_host, how in ((False, "the values alone"),
                           (True, "the host's idle share taken out of the figures the host path sets")):
        missed: Dict[str, int] = {}
        alarms: Dict[str, int] = {}
        total, clean, exact, near = windows(series, idle, args.window, args.step, 1 if args.tiny else n,
                                            missed, alarms, with_host)
        steps = total // len(series) * sum(1 for f in series if FIGURES[f])
        per = total // len(series)
        print(f"the detector on {how}:")
        print(f"  windows of {args.window} nights: series without a change point {clean / total:6.1%} of {total}"
              f"  (target >= 95%)")
        print("    with a change point: " + (", ".join(f"{f} {k} of {per}" for f, k in alarms.items() if k)
                                           or "none"))
        print(f"  a {args.step:g}% step, {STEP_NIGHTS} nights of it: named at its night {exact / steps:6.1%}, "
              f"within a night {near / steps:6.1%} of {steps}; the 4k read IOPS step (-{args.step:g}%) "
              f"within a night in {per - missed.get('rnd_4k_read_iops', 0)} of {per}")
        print("    not named within a night: " + (", ".join(f"{f} {k} of {per}" for f, k in missed.items() if k)
                                                  or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
