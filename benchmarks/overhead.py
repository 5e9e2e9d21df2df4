"""tkperf's overhead over plain fio, on a loop device (prints figures, asserts nothing).

1. The wall time of one plain fio job with tkperf's options and a 1 s
   runtime, median of 5 (fio itself spends some 0.3 s starting and stopping).
2. ``tkperf ssd run --tests iops --runtime 1`` for N rounds, purge and WIPC
   included.
3. tkperf's wall time / (workloads run x plain fio wall time).  Target <= 1.05.

    sudo python3 benchmarks/overhead.py [--rounds 3] [--size 256m]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402
from tkperf.kit.options import parse_size  # noqa: E402


def plain_fio(dev: str, nj: int, iod: int) -> float:
    argv = ["fio", "--output-format=json", "--name=plain", f"--filename={dev}", "--ioengine=libaio",
            "--direct=1", "--rw=randrw", "--rwmixread=65", "--bs=4k", f"--numjobs={nj}",
            f"--iodepth={iod}", "--runtime=1", "--time_based=1", "--group_reporting=1",
            "--norandommap=1", "--randrepeat=0", "--percentile_list=99:99.9:99.99:99.999"]
    t0 = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main_bench() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="256m")
    ap.add_argument("-nj", type=int, default=1)
    ap.add_argument("-iod", type=int, default=8)
    ap.add_argument("--tiny", action="store_true",
                    help="one round of one workload (RND 4KiB W) on 64 MiB, two plain fio samples: does it run")
    args = ap.parse_args()
    narrow = ["--bs", "4k", "--mix", "0/100"] if args.tiny else []
    if args.tiny:
        args.rounds, args.size = 1, "64m"
    with tempfile.TemporaryDirectory() as tmp, LoopDevice(parse_size(args.size), tmp) as dev:
        samples = [plain_fio(dev, args.nj, args.iod) for _ in range(2 if args.tiny else 5)]
        one = statistics.median(samples)
        each = ", ".join(f"{s:.3f}" for s in samples)
        print(f"plain fio, one 1 s job: median {one:.3f} s of {len(samples)} ({each})")
        out = os.path.join(tmp, "out")
        t0 = time.monotonic()
        rc = main(["ssd", "run", dev, "--tests", "iops", "--runtime", "1", "--max-rounds", str(args.rounds),
                   "--yes", "--quiet", "-nj", str(args.nj), "-iod", str(args.iod), "--name", "bench",
                   "--outdir", out, *narrow])
        wall = time.monotonic() - t0
        if rc != 0:
            raise SystemExit(f"tkperf run failed with exit code {rc}")
        run = store.load(os.path.join(out, "bench.xml"))
        t = run.tests[0]
        workloads = sum(len(r.workloads) for r in t.rounds)
        round_wall = sum(r.wall_s for r in t.rounds)
        print(f"tkperf IOPS test: {len(t.rounds)} rounds, {workloads} workloads, wall {wall:.2f} s "
              f"(purge {t.purge.seconds:.2f} s, WIPC {t.wipc.seconds:.2f} s, rounds {round_wall:.2f} s)")
        print(f"per workload inside a round: {round_wall / workloads:.3f} s "
              f"(fio's own run time {sum(r.fio_s for r in t.rounds) / workloads:.3f} s)")
        print(f"overhead ratio: tkperf wall / (workloads x plain fio) = {wall / (workloads * one):.3f} "
              f"(target <= 1.05)")


if __name__ == "__main__":
    main_bench()
