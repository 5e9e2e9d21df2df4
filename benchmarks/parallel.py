"""The orchestration cost of N parallel local runs (prints figures, asserts nothing).

For N = 1, 2, 4 loop devices, run one short, complete tkperf run per device
at the same time, exactly as ``tkperf ssd run DEV DEV ...`` does
(:class:`tkperf.engine.multi.ParallelRuns`, one ``python -m tkperf`` child
per device), and print:

* the wall time of the whole against the longest single run in it (the
  difference is what starting, watching and collecting the runs costs), and
  the longest run against the one run of N = 1 (what sharing the host cost
  the runs themselves: fio, the loop driver and tkperf on the same CPUs);
* CPU seconds: the parent's own while it watched, each child tkperf's own
  (its runs' bookkeeping, saving, report), and what the children ran (fio,
  chart workers).

    sudo python3 benchmarks/parallel.py [--counts 1,2,4] [--rounds 3] [--runtime 1] [--no-report]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tkperf.engine import multi  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402

MiB = 1024 * 1024


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def targets(devices, tmp: str, run_args) -> list:
    out = []
    for dev in devices:
        name = os.path.basename(dev)
        outdir = os.path.join(tmp, "out", name)
        summary = os.path.join(tmp, f"{name}.json")
        argv = [sys.executable, "-m", "tkperf", "ssd", "run", dev, *run_args, "--name", name,
                "--outdir", outdir, "--yes", "--quiet", "--json-summary", summary]
        out.append(multi.Target(name, dev, outdir, tuple(argv), summary))
    return out


def one(n: int, size: int, run_args) -> dict:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        devices = [stack.enter_context(LoopDevice(size, tmp)) for _ in range(n)]
        ts = targets(devices, tmp, run_args)
        cpu0, t0 = own_cpu(), time.monotonic()
        outcomes = multi.ParallelRuns(ts).run()
        wall, cpu = time.monotonic() - t0, own_cpu() - cpu0
    bad = [o for o in outcomes if o.exit_code != 0]
    if bad:
        raise SystemExit(f"N={n}: {bad[0].target.name} ended with exit code {bad[0].exit_code}: {bad[0].error}")
    return {"n": n, "wall": wall, "parent_cpu": cpu,
            "runs": [o.wall_s for o in outcomes],
            "tkperf_cpu": [o.cpu_self_s or 0.0 for o in outcomes],
            "child_cpu": [o.cpu_children_s or 0.0 for o in outcomes]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="1,2,4")
    ap.add_argument("--size", type=int, default=256, help="MiB per loop device")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=1)
    ap.add_argument("--no-report", action="store_true", help="children write no report (no charts)")
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    if args.tiny:
        args.counts, args.size, args.rounds, args.no_report = "1,2", 64, 1, True
    run_args = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0",
                "--runtime", str(args.runtime),
                "--max-rounds", str(args.rounds), "-nj", "1", "-iod", "4", "--wipc-loops", "1",
                *(["--no-report"] if args.no_report else ["--report-format", "rst"])]
    print(f"host: {os.cpu_count()} CPUs; each run: LAT 4k 0/100, {args.rounds} rounds of {args.runtime} s, "
          f"1x WIPC of {args.size} MiB, {'no report' if args.no_report else 'rst report with charts'}")
    print(f"{'N':>2} {'whole s':>8} {'longest s':>9} {'overhead s':>10} {'vs N=1':>7} "
          f"{'parent cpu s':>12} {'tkperf cpu s':>12} {'fio etc cpu s':>13}")
    alone = None
    for n in (int(x) for x in args.counts.split(",")):
        r = one(n, args.size * MiB, run_args)
        longest = max(r["runs"])
        alone = alone if alone is not None else (longest if n == 1 else None)
        ratio = f"{longest / alone:.2f}x" if alone else "-"
        print(f"{n:>2} {r['wall']:>8.2f} {longest:>9.2f} {r['wall'] - longest:>10.2f} {ratio:>7} "
              f"{r['parent_cpu']:>12.3f} {sum(r['tkperf_cpu']):>12.2f} {sum(r['child_cpu']):>13.2f}")
        print(f"   per run: wall {', '.join(f'{w:.2f}' for w in r['runs'])} s; tkperf cpu median "
              f"{statistics.median(r['tkperf_cpu']):.2f} s")


if __name__ == "__main__":
    main()
