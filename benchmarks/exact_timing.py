"""How an exact replay (``replay --replay exact``) keeps its capture's
timing, step by step: before (fio iolog version 3, each I/O a delay after
the previous issue, as tkperf replayed until issue 57) and now (version 2,
each captured millisecond held by a wait until its time since fio started).

A synthetic capture of 10 steps of 1 s -- 20,000, 500, 8,000, 0, 15,000,
2,000, 20,000, 100, 5,000 and 12,000 I/Os (70% random 4 KiB reads, 30%
random 8 KiB writes, a quarter of them in bursts of 4 or 16 in one
microsecond) -- is replayed on a 1 GiB loop device over a sparse file, made
here and always removed.  Both ways are timed alike, from fio's own
submission log (``write_lat_log``; :func:`tkperf.testtypes.realworld.exactlog.timing`):
the reads and writes fio issued within each step's second against the
captured ones, and how far fio fell behind the captured times.

Prints figures, asserts nothing.  Root and fio needed.

    sudo python benchmarks/exact_timing.py [--runs N] [--rate-scale X] [--tiny]

``--tiny``: one replay of each kind of the capture at a twentieth of its
I/Os (a look, not a figure).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO]

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.rwsw import model  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402
from tkperf.testtypes.realworld import exact, exactlog  # noqa: E402
from tkperf.verdict import conformance  # noqa: E402

RATES = (20000, 500, 8000, 0, 15000, 2000, 20000, 100, 5000, 12000)
SIZE = {"read": 4096, "write": 8192}
RT_US = 200.0  # the capture's mean response time: sets its peak in flight (the replay's iodepth)


def make_capture(folder: str, scale: float, seed: int) -> Tuple[str, List[int]]:
    """The capture's XML and iolog in ``folder``; its read and write time stamps (µs)."""
    rnd = random.Random(seed)
    ios: List[Tuple[int, str, int, int]] = []
    steps = []
    total = {"read": 0, "write": 0}
    for s, rate in enumerate(int(r * scale) for r in RATES):
        got = {"read": 0, "write": 0}
        k = 0
        while k < rate:
            t = s * 1_000_000 + rnd.randrange(1_000_000)
            for j in range(min(rnd.choice((1, 1, 1, 4, 16)), rate - k)):
                rw = "read" if rnd.random() < 0.7 else "write"
                bs = SIZE[rw]
                ios.append((t + j, rw, rnd.randrange((1 << 30) // bs) * bs, bs))
                got[rw] += 1
            k += j + 1
        n = sum(got.values())
        moved = got["read"] * 4096 + got["write"] * 8192
        streams = tuple(model.Stream("random", rw, SIZE[rw], c, c / n, c * SIZE[rw] / moved)
                        for rw, c in got.items() if c)
        steps.append(model.Step(s, float(s), 1.0, streams, n * RT_US / 1e6, float(n), moved / 1e6))
        for rw in total:
            total[rw] += got[rw]
    ios.sort()
    with open(os.path.join(folder, "cap.iolog"), "w", encoding="ascii") as fh:
        fh.write("fio version 3 iolog\n0 /dev/captured add\n0 /dev/captured open\n")
        fh.writelines(f"{t} /dev/captured {rw} {off} {bs}\n" for t, rw, off, bs in ios)
        fh.write(f"{len(RATES) * 1_000_000 - 1} /dev/captured close\n")
    n = sum(total.values())
    moved = total["read"] * 4096 + total["write"] * 8192
    whole = tuple(model.Stream("random", rw, SIZE[rw], c, c / n, c * SIZE[rw] / moved) for rw, c in total.items())
    cap = model.Capture("timing", "/dev/captured", 1 << 30, "import", "2026-12-07T00:00:00+00:00", float(len(RATES)),
                        1.0, tuple(steps), whole, n * RT_US / 1e6 / len(RATES), n / len(RATES),
                        moved / len(RATES) / 1e6, "cap.iolog")
    path = os.path.join(folder, "cap.xml")
    model.save(cap, path)
    return path, [t for t, *_ in ios]


def before(dev: str, folder: str, stamps: Sequence[int], depth: int) -> Optional[exactlog.Timing]:
    """The replay as it was: the iolog's version 3 time stamps, one fio job."""
    mapped = os.path.join(folder, "v3.iolog")
    with open(os.path.join(folder, "cap.iolog"), encoding="ascii") as src, open(mapped, "w", encoding="ascii") as dst:
        for line in src:
            dst.write(line.replace("/dev/captured", dev))
    prefix = os.path.join(folder, "v3issued")
    subprocess.run(["fio", "--name=old", f"--filename={dev}", "--ioengine=libaio", "--direct=1", "--rw=randrw",
                    "--bs=8192", f"--iodepth={depth}", f"--read_iolog={mapped}", f"--write_lat_log={prefix}",
                    "--output-format=json", f"--output={os.path.join(folder, 'v3.json')}"], check=True)
    issued = exactlog.issued_ms(prefix)
    windows = [(float(s), 1.0) for s in range(len(RATES))]
    return exactlog.timing(stamps, issued, windows) if issued is not None else None


def now(dev: str, folder: str, cap_path: str) -> Tuple[Optional[exactlog.Timing], List[str]]:
    """The replay as tkperf runs it now."""
    out = os.path.join(folder, "out")
    main(["ssd", "run", dev, "--name", "r", "--outdir", out, "--yes", "--quiet", "--write-cache", "keep",
          "--no-report", "--purge", "none", "--tests", "replay", "--replay", "exact", "--workload", cap_path])
    run = store.load(os.path.join(out, "r.xml"))
    (test,) = run.tests
    d = test.data
    shutil.rmtree(out, ignore_errors=True)
    if d.get("exact.timing") != "measured":
        return None, []
    n = 1
    steps = []
    while f"exact.step.{n}.captured" in d:
        steps.append(exactlog.StepTiming(*(int(d[f"exact.step.{n}.{k}"]) for k in ("captured", "replayed", "edge"))))
        n += 1
    named = [v for v in conformance.of_run(run).deviations if "the exact replay issued" in v]
    return exactlog.Timing(tuple(steps), int(d["exact.lag_max_us"]), int(d["exact.lag_p99_us"])), named


def show(label: str, t: Optional[exactlog.Timing], ratios: List[float]) -> None:
    if t is None:
        print(f"  {label}: fio's submission log missing")
        return
    print(f"  {label}: behind the capture by up to {t.lag_max_us / 1e6:.3f} s (p99 {t.lag_p99_us / 1e3:.1f} ms)")
    parts = []
    for n, st in enumerate(t.steps, 1):
        if st.captured:
            ratios.append(st.replayed / st.captured)
            parts.append(f"{n}: {st.replayed}/{st.captured} = {st.replayed / st.captured:.3f}x (edge {st.edge})")
        else:
            parts.append(f"{n}: {st.replayed}/0")
    print("    " + "; ".join(parts))


def spread(label: str, ratios: List[float]) -> None:
    if ratios:
        r = sorted(ratios)
        print(f"{label}: {len(r)} steps, per-step ratio min {r[0]:.3f}, median {r[len(r) // 2]:.3f}, max {r[-1]:.3f}; "
              f"off by more than {100 * exact.TOLERANCE:.0f}%: {sum(abs(x - 1) > exact.TOLERANCE for x in r)}")


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3, help="replays of each kind (default 3)")
    p.add_argument("--rate-scale", type=float, default=1.0, help="scale every step's I/O count (default 1)")
    p.add_argument("--no-before", action="store_true", help="leave the version 3 replay out")
    p.add_argument("--tiny", action="store_true", help="one replay of each kind at a twentieth of the I/Os")
    args = p.parse_args()
    if args.tiny:
        args.runs, args.rate_scale = 1, args.rate_scale / 20
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"exact replay timing, {fio}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    old_r: List[float] = []
    new_r: List[float] = []
    scratch = tempfile.mkdtemp(prefix="tkperf-exact-timing-")
    try:
        with LoopDevice(1 << 30, scratch) as dev:
            for run in range(args.runs):
                folder = os.path.join(scratch, f"run{run}")
                os.makedirs(folder)
                cap_path, stamps = make_capture(folder, args.rate_scale, run)
                depth = exactlog.check(os.path.join(folder, "cap.iolog"), model.load(cap_path)).depth
                print(f"run {run + 1}: {len(stamps):,} I/Os in {len(RATES)} s, iodepth {depth}, "
                      f"load average {os.getloadavg()[0]:.1f}")
                if not args.no_before:
                    show("before (version 3 time stamps)", before(dev, folder, stamps, depth), old_r)
                t, named = now(dev, folder, cap_path)
                show("now (waits until each millisecond)", t, new_r)
                for v in named:
                    print(f"    verdict: {v}")
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    spread("before", old_r)
    spread("now", new_r)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
