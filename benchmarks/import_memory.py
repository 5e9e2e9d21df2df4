"""Peak memory and CPU time of ``tkperf capture --import`` by the number of I/Os.

Writes a SYNTHETIC blkparse text (each I/O an issue line ``D`` and a
completion line ``C``, 4 KiB at random 4 KiB-aligned sectors, one read in
three, 100 us apart), imports it in a child process with a step of 1 s,
and prints the child's peak RSS (``ru_maxrss``) and CPU time for each
size, with the bytes per I/O above the first size's.  A Python process
with tkperf's import modules loaded is measured too (the floor).

    python benchmarks/import_memory.py            # 10^5 and 3 x 10^5 I/Os
    python benchmarks/import_memory.py --tiny     # 2 x 10^3 and 10^4 I/Os
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
from typing import List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_trace(path: str, ios: int) -> None:
    rnd = random.Random(1)
    with open(path, "w", encoding="ascii") as fh:
        t = 0.0
        for i in range(ios):
            t += 0.0001
            sector = rnd.randrange(0, 1 << 24) * 8
            rw = "R" if i % 3 == 0 else "W"
            fh.write(f"  7,0    0        0     {t:.9f}  4151  D   {rw} {sector} + 8 [fio]\n")
            fh.write(f"  7,0    0        0     {t + 0.00005:.9f}  4151  C   {rw} {sector} + 8 [0]\n")


def child(argv: List[str]) -> Tuple[int, float]:
    """(peak RSS in bytes, CPU seconds) of a child running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=ROOT))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return after.ru_maxrss * 1024, cpu  # ru_maxrss is KiB on Linux; the largest child so far


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiny", action="store_true", help="small sizes, for a quick check that it runs")
    args = p.parse_args()
    sizes = (2_000, 10_000) if args.tiny else (100_000, 300_000)
    floor, _ = child([sys.executable, "-c", "import tkperf.cli, tkperf.rwsw.capture, numpy"])
    print(f"python with tkperf's import modules: peak RSS {floor / 1e6:.0f} MB")
    first = None
    with tempfile.TemporaryDirectory() as work:
        for n in sizes:  # in growing order: ru_maxrss of the children is their largest so far
            trace = os.path.join(work, f"t{n}.txt")
            write_trace(trace, n)
            rss, cpu = child([sys.executable, "-m", "tkperf", "capture", "--import", trace, "--name", f"x{n}",
                              "--outdir", work, "--step", "1s", "-q"])
            line = f"{n:>9,} I/Os: peak RSS {rss / 1e6:.0f} MB, CPU {cpu:.1f} s"
            if first is not None:
                line += f"; {(rss - first[1]) / (n - first[0]):.0f} bytes per I/O above {first[0]:,}"
            print(line)
            first = first or (n, rss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
