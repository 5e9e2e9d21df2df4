"""How often does nightly QA go red for nothing, and how soon does it see a real change?

Simulated nights made from real result files (docs/check.rst, "Measured
rates"): each figure at its level in a recorded result, times a night
factor (spread ``--night`` 6 %, the same for every figure and round of
that night: a slower host slows everything), times a round factor per
round of the figure's window (spread ``--round`` 8 %).  A figure better
when lower (a latency) is divided by the factors instead: a slow night
makes it higher.  A figure's value is the mean of its window (5 rounds);
one without window values in the recorded file (WSAT's first interval)
is a single round.  Two nights' families:

* *quick*: the headline figures of ``examples/example-ssd.xml`` (a
  ``--quick`` run of IOPS, TP, LAT and WSAT: 14 figures, LAT's 4k read latency among them);
* *full*: every cell of ``examples/example-full.xml``'s IOPS matrix (56:
  8 block sizes x 7 mixes) as a figure, plus its TP, LAT and WSAT
  headline figures.

Printed next to their targets (issue "Nightly QA a team can leave
unattended"):

1. identical nights red (any figure a regression, against 5 baseline
   nights, ``tkperf check``'s defaults): quick and full, <= 5 %;
2. one figure 30 % worse (a random one of the night's judged figures;
   its better-is-up value down 30 %: IOPS or MB/s x 0.7, a latency
   divided by 0.7): red on that first night, >= 90 %; and apart (for
   information), an extreme figure (the largest latency, the 99.99%:
   ``regression.extreme``, judged alone on one round's spread), which is
   simulated as what it is, the largest of its rounds, not their mean;
3. history over 365 noise-only nights: series without a change point,
   >= 95 %;
4. a 15 % step of every figure (at a random night): a change point named
   within 3 nights of it, >= 90 %; at the right night, >= 80 %, printed
   beside the ceiling no method can pass on these nights (an oracle that
   knows both levels: the maximum-likelihood night);
5. history's cost on 365 nights (``benchmarks/history.py`` builds them):
   one new night with its pages, <= 1 s.

The statistics are tkperf's own (:func:`tkperf.verdict.regression.assess`
and :func:`tkperf.history.changepoints.detect`); only the nights are
simulated.  ``--tiny`` runs a few trials of each (the test suite does).

    python3 benchmarks/nightly.py [--nights 600] [--trials 300] [--series 400] [--tiny] [--no-cost]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from tkperf import store  # noqa: E402
from tkperf.history import changepoints  # noqa: E402
from tkperf.model import family, noise  # noqa: E402
from tkperf.model.figures import Figure  # noqa: E402
from tkperf.verdict import regression  # noqa: E402

QUICK = os.path.join(ROOT, "examples", "example-ssd.xml")
FULL = os.path.join(ROOT, "examples", "example-full.xml")
BASELINES = 5
ROUNDS = 5
TOLERANCE = 10.0

#: (test, figure, better, level, whether it has window values)
Level = Tuple[str, Figure, bool]


def headline(path: str) -> List[Level]:
    run = store.load(path)
    out = []
    for test in run.tests:
        windows = noise.window_values(test, regression.figures)
        out += [(test.key, f, f.key in windows) for f in regression.figures(test)]
    return out


def full_matrix(path: str) -> List[Level]:
    """Every IOPS cell of the matrix as a figure, then TP, LAT and WSAT's headline figures."""
    run = store.load(path)
    iops = run.test("iops")
    assert iops is not None
    cells = []
    for i, w in enumerate(iops.window_rounds()[0].workloads):
        level = float(np.mean([r.workloads[i].read.iops + r.workloads[i].write.iops for r in iops.window_rounds()]))
        cells.append(("iops", Figure(w.name, w.name, level, "IOPS", "higher"), True))
    return cells + [c for c in headline(path) if c[0] != "iops"]


def nights(levels: Sequence[Level], rng: np.random.Generator, n: int, night_sd: float, round_sd: float,
           worse: Sequence[float] = ()) -> List[List[Tuple[float, Tuple[float, ...]]]]:
    """``n`` nights: per night, per figure (value, window values); ``worse``:
    a factor per figure on the last night (1: none, 0.7: 30 % worse)."""
    out = []
    for j in range(n):
        night = 1.0 + night_sd * rng.standard_normal()
        row = []
        for k, (_test, fig, windowed) in enumerate(levels):
            rounds = 1.0 + round_sd * rng.standard_normal(ROUNDS if windowed else 1)
            factor = night * rounds * (worse[k] if worse and j == n - 1 else 1.0)
            values = fig.value / factor if fig.better == "lower" else fig.value * factor
            whole = np.max(values) if regression.extreme(fig.key) else np.mean(values)  # the slowest: the max
            row.append((float(whole), tuple(float(v) for v in values) if windowed else ()))
        out.append(row)
    return out


def red(levels: Sequence[Level], sim, old: bool = False) -> bool:
    """Whether ``tkperf check``'s statistics call the last night a regression
    against the others; ``old``: tkperf 0.1's (each figure alone, no correction)."""
    items = []
    for k, (test, fig, _w) in enumerate(levels):
        base = [night[k] for night in sim[:-1]]
        value, mine = sim[-1][k]
        data = family.Figure(fig.better, tuple(v for v, _ in base), value, tuple(w for _, w in base), mine)
        items.append(regression.Input(test, Figure(fig.key, fig.label, value, fig.unit, fig.better), data))
    if old:
        return any(regression.assess([i], TOLERANCE, correction=regression.NO_CORRECTION).regressions
                   for i in items)
    return regression.assess(items, TOLERANCE).verdict == regression.REGRESSION


def false_red(levels, rng, trials, night_sd, round_sd, old: bool = False) -> float:
    return sum(red(levels, nights(levels, rng, BASELINES + 1, night_sd, round_sd), old)
               for _ in range(trials)) / trials


def caught(levels, rng, trials, night_sd, round_sd, extreme: bool = False) -> float:
    """The share of nights red whose one figure (a random one of those judged:
    the ordinary ones, or the ``extreme`` ones) is 30 % worse."""
    judged = [k for k, (_t, f, _w) in enumerate(levels) if f.better and regression.extreme(f.key) == extreme]
    hits = 0
    for _ in range(trials):
        k = judged[int(rng.integers(len(judged)))]
        worse = [1.0] * len(levels)
        worse[k] = 0.7  # its better-is-up value down 30%: IOPS x 0.7, a latency / 0.7
        hits += red(levels, nights(levels, rng, BASELINES + 1, night_sd, round_sd, worse))
    return hits / trials


def series_noise(rng, n: int, night_sd: float, round_sd: float) -> np.ndarray:
    """One figure's values over ``n`` nights (a 5-round window each)."""
    return (1.0 + night_sd * rng.standard_normal(n)) * (1.0 + round_sd * rng.standard_normal((n, ROUNDS))).mean(1)


def history_rates(rng, count: int, n: int, night_sd: float, round_sd: float) -> Tuple[float, float, float, float]:
    """(share of noise-only series with no change point, share of stepped
    series with one within 3 nights of the step, at the step, named with 3
    nights of the new level in the history)."""
    clean = sum(not changepoints.detect(series_noise(rng, n, night_sd, round_sd)) for _ in range(count))
    near = exact = early = 0
    for _ in range(count):
        at = int(rng.integers(changepoints.MIN_SEGMENT, n - changepoints.MIN_SEGMENT + 1))
        x = series_noise(rng, n, night_sd, round_sd)
        x[at:] *= 0.85
        found = [c.index for c in changepoints.detect(x)]
        near += any(abs(i - at) <= 3 for i in found)
        exact += at in found
        early += any(abs(i - at) <= 1 for i in (c.index for c in changepoints.detect(x[:at + 3])))
    return clean / count, near / count, exact / count, early / count


def oracle_exact(rng, count: int, n: int, night_sd: float, round_sd: float) -> float:
    """The share of 15% steps put at the right night by an oracle that knows
    both levels and that the noise is Gaussian: the maximum-likelihood split
    of the logarithms with nothing estimated.  No method can do better on
    average, so this is the ceiling of "named at the right night"."""
    hits = 0
    for _ in range(count):
        at = int(rng.integers(changepoints.MIN_SEGMENT, n - changepoints.MIN_SEGMENT + 1))
        x = series_noise(rng, n, night_sd, round_sd)
        x[at:] *= 0.85
        y = np.log(x)
        before = np.concatenate(([0.0], np.cumsum(-y ** 2)))
        after = np.concatenate(([0.0], np.cumsum(-(y - np.log(0.85)) ** 2)))
        loglik = before[1:n] + (after[n] - after[1:n])  # split k = 1 .. n-1
        hits += int(np.argmax(loglik)) + 1 == at
    return hits / count


def cost(nights_n: int) -> Tuple[Tuple[float, float], ...]:
    """(wall, CPU) seconds of the first build, one new night with its pages
    and one new night JSON only, from benchmarks/history.py."""
    proc = subprocess.run([sys.executable, os.path.join(HERE, "history.py"), "--nights", str(nights_n)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    found = {}
    for line in proc.stdout.splitlines():
        for key in ("first build", "update after one more night", "update with HTML page"):
            if line.startswith(key):
                after = line.split(":", 1)[1]
                found[key] = (float(after.split()[0]), float(after.split("CPU ")[1].split()[0]))
    if len(found) < 3:
        sys.exit(f"benchmarks/history.py failed: {proc.stdout}{proc.stderr}")
    return found["first build"], found["update with HTML page"], found["update after one more night"]


def line(what: str, value: float, target: str, ok: bool, detail: str = "") -> str:
    return f"{what:<58} {value * 100:6.1f} %   target {target:<7} {'met' if ok else 'MISSED'}{detail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=600, help="identical nights per family (default 600)")
    ap.add_argument("--trials", type=int, default=300, help="30%% drops tried (default 300)")
    ap.add_argument("--series", type=int, default=400, help="history series of each kind (default 400)")
    ap.add_argument("--length", type=int, default=365, help="nights per history series (default 365)")
    ap.add_argument("--night", type=float, default=0.06, help="night-to-night spread (default 0.06)")
    ap.add_argument("--round", type=float, default=0.08, help="round-to-round spread (default 0.08)")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--tiny", action="store_true", help="a few trials of each: does it run")
    ap.add_argument("--no-cost", action="store_true", help="leave out the history's timing")
    args = ap.parse_args()
    if args.tiny:
        args.nights, args.trials, args.series, args.length, args.no_cost = 20, 10, 4, 40, True
    rng = np.random.default_rng(args.seed)
    quick, full = headline(QUICK), full_matrix(FULL)
    t0 = time.perf_counter()
    print(f"simulated nights: level x night factor ({args.night:.0%}) x round factor ({args.round:.0%}), "
          f"{BASELINES} baseline nights, tolerance {TOLERANCE:g}%, check's defaults "
          f"(alpha {noise.ALPHA:g}, Holm)")
    rates = []
    for name, levels in (("quick example", quick), ("full IOPS matrix + TP + LAT + WSAT", full)):
        rate = false_red(levels, rng, args.nights, args.night, args.round)
        rates.append(rate <= 0.05)
        print(line(f"identical nights red, {name} ({len(levels)} figures)", rate, "<= 5%", rate <= 0.05,
                   f"  ({args.nights} nights)"))
    before = false_red(quick, rng, args.trials, args.night, args.round, old=True)
    print(line("  the same, tkperf 0.1's test (each figure alone, no correction)", before, "(info)", True,
               f"  ({args.trials} nights)"))
    hit = caught(quick, rng, args.trials, args.night, args.round)
    print(line("one figure 30% worse: red on its first night (quick)", hit, ">= 90%", hit >= 0.9,
               f"  ({args.trials} trials)"))
    hit_full = caught(full, rng, args.trials, args.night, args.round)
    print(line("one figure 30% worse: red on its first night (full)", hit_full, ">= 90%", hit_full >= 0.9,
               f"  ({args.trials} trials)"))
    hit_extreme = caught(quick, rng, args.trials, args.night, args.round, extreme=True)
    print(line("  an extreme figure (largest, 99.99%) 30% worse, red (quick)", hit_extreme, "(info)", True,
               f"  ({args.trials} trials; judged alone, one round's spread)"))
    clean, near, exact, early = history_rates(rng, args.series, args.length, args.night, args.round)
    print(line(f"history, {args.length} noise-only nights: no change point", clean, ">= 95%", clean >= 0.95,
               f"  ({args.series} series)"))
    print(line("history, 15% step: named within 3 nights of it", near, ">= 90%", near >= 0.9))
    print(line("history, 15% step: named at the right night", exact, ">= 80%", exact >= 0.8))
    best = oracle_exact(rng, max(args.series, 2000) if not args.tiny else 20, args.length, args.night, args.round)
    print(line("  the ceiling: an oracle knowing both levels, right night", best, "(info)", True,
               "  (no method does better on these nights)"))
    print(line("history, 15% step: named (+-1) with 3 nights of the new level", early, "(info)", True))
    print(f"statistics took {time.perf_counter() - t0:.0f} s")
    if not args.no_cost:
        first, pages, json_only = cost(365)
        print(f"{'history cost, 365 nights: one new night with its pages':<58} {pages[0]:6.2f} s   target <= 1 s   "
              f"{'met' if pages[0] <= 1.0 else 'MISSED'}  (CPU {pages[1]:.2f} s; first build {first[0]:.2f} s, "
              f"CPU {first[1]:.2f} s; JSON only {json_only[0]:.2f} s, CPU {json_only[1]:.2f} s; "
              f"load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
