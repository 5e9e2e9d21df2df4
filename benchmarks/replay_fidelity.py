"""How closely ``replay`` reproduces a capture's steps: per step and stream,
the capture's share of the I/Os next to the replayed share, and the step's
queue depth next to the delivered one (each stream job's IOPS x mean
response time, from fio's report, added up).

Prints figures, asserts nothing.  Runs ``tkperf ssd run --tests replay
--quick`` ``--runs`` times (default 3) on a fresh 256 MiB loop device over a
sparse file (root and fio needed; always detached), with the capture of
tests/lab/rwsw_captures.py.  Targets (issue 38): every dominant stream within
3 points of its captured share, the queue depth within 10%.

    sudo python benchmarks/replay_fidelity.py [--runs N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests", "lab")]

import rwsw_captures  # noqa: E402

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.rwsw import model  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402
from tkperf.testtypes.realworld.delivered import steps  # noqa: E402


def one(scratch: str, index: int, capture: str) -> None:
    with LoopDevice(256 << 20, scratch) as dev:
        out = os.path.join(scratch, f"run{index}")
        rc = main(["ssd", "run", dev, "--tests", "replay", "--workload", capture, "--quick", "--yes", "--quiet",
                   "--no-report", "--write-cache", "keep", "--name", "r", "--outdir", out])
        if rc not in (0, 1):
            print(f"run {index}: tkperf exited {rc}")
            return
        test = store.load(os.path.join(out, "r.xml")).tests[0]
    cap = model.load(capture)
    for step, got in zip(cap.steps, steps(test)):
        print(f"run {index} step {got.step}: QD asked {step.qd:.2f}, delivered {got.qd:.2f} "
              f"({100.0 * (got.qd / step.qd - 1):+.1f}%), {got.iops:,.0f} IOPS")
        asked = {s.key: s.share for s in step.streams}
        for s in got.streams:
            print(f"    {s.key:<18} share asked {100 * asked.get(s.key, 0):5.1f}%, replayed {100 * s.share:5.1f}% "
                  f"(fio iodepth {s.iodepth}, {s.qd:.2f} outstanding)")


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--tiny", action="store_true", help="one run: does it run")
    args = p.parse_args()
    if args.tiny:
        args.runs = 1
    with tempfile.TemporaryDirectory(prefix="tkperf-replay-bench-") as scratch:
        capture = rwsw_captures.write(scratch)
        for i in range(1, args.runs + 1):
            one(scratch, i, capture)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
