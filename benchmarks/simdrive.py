"""The emulated SSD (``tkperf simdrive``): how fast its server is, and how
far host jitter moves its figures.

Prints figures, asserts nothing.  Needs root, /dev/fuse and fio.

1. **Server**: 4 KiB random writes, numjobs 4 x iodepth 32, on a 1 GiB drive
   whose model costs are all zero (every reply as soon as it is handled):
   the IOPS the server carries.  Target >= 40,000.
2. **Burst**: the default model's fresh-out-of-box 4 KiB random write
   IOPS, from its parameters (units / program time) and as fio measures it
   on a fresh drive (QD32, the first half capacity).  Target: at most a
   quarter of (1).
3. **Up**: ``tkperf simdrive up`` until it prints the device, and
   ``control.up`` alone (without Python's and tkperf's start).  Target <= 2 s.
4. **Spread**: two fresh drives, the same fio run on each (4 KiB random
   writes, QD32: ``--fills`` capacities to steady state, then one more
   capacity measured); the measured IOPS and WAF of each and their spread.
   Target within 2%.

The machine's load average is printed with each figure: the server shares
the CPUs with fio, the loop device's worker and everything else running.

    python3 benchmarks/simdrive.py [--capacity 32m] [--fills 6] [--seconds 10]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tkperf.simdrive import control  # noqa: E402
from tkperf.simdrive.model import PARAMS  # noqa: E402

ZERO = {"read_us": 0, "program_us": 0, "copy_us": 0, "erase_us": 0, "cmd_us": 0}


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def fio(device: str, *args: str) -> Dict:
    argv = ["fio", "--output-format=json", "--name=b", f"--filename={device}", "--direct=1",
            "--ioengine=libaio", "--bs=4k", "--rw=randwrite", "--randrepeat=0", "--norandommap=1",
            "--group_reporting", *args]  # norandommap: uniform random, as tkperf's jobs
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["write"]


def server_iops(capacity: int, seconds: int) -> None:
    device = control.up(capacity, ZERO, "bench-zero")
    try:
        w = fio(device, "--numjobs=4", "--iodepth=32", "--time_based", f"--runtime={seconds}")
        s = control.stats(control.find(device))
        print(f"server, zero model delays: {w['iops']:,.0f} IOPS of 4 KiB random writes at 4 x QD32 "
              f"({seconds} s; {s['late_replies']} replies > 1 ms late; {load()})  target >= 40,000")
    finally:
        control.down(control.find(device))


def burst(capacity: int) -> float:
    units, prog = PARAMS["units"][0], PARAMS["program_us"][0]
    model = units / (prog / 1e6)
    device = control.up(capacity, {}, "bench-burst")
    try:
        w = fio(device, "--iodepth=32", f"--size={capacity // 2}")
        s = control.stats(control.find(device))
        print(f"default model burst: {model:,.0f} IOPS by its parameters ({units} units / {prog:g} us); "
              f"fio on a fresh drive: {w['iops']:,.0f} IOPS (first half capacity, QD32, "
              f"{s['late_replies']} late replies; {load()})")
    finally:
        control.down(control.find(device))
    return model


def up_time(capacity: int) -> None:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "tkperf", "simdrive", "up", "--capacity", str(capacity),
                          "--name", "bench-up"], capture_output=True, text=True, check=True)
    cli = time.monotonic() - t0
    control.down(control.find(out.stdout.strip()))
    t0 = time.monotonic()
    device = control.up(capacity, {}, "bench-up")
    inner = time.monotonic() - t0
    control.down(control.find(device))
    print(f"up to ready: tkperf simdrive up {cli:.2f} s (control.up alone {inner:.2f} s; {load()})  target <= 2 s")


def steady(capacity: int, fills: int, name: str) -> List[float]:
    device = control.up(capacity, {}, name)
    try:
        fio(device, "--iodepth=32", f"--io_size={fills * capacity}")
        before = control.stats(control.find(device))
        w = fio(device, "--iodepth=32", f"--io_size={capacity}")
        after = control.stats(control.find(device))
    finally:
        control.down(control.find(device))
    host = after["host_write_bytes"] - before["host_write_bytes"]
    waf = (after["nand_write_bytes"] - before["nand_write_bytes"]) / host
    span = after["model_time_s"] - before["model_time_s"]
    return [w["iops"], waf, host / 4096 / span]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--capacity", default="32m", help="drive capacity for (2)-(4) (default 32m)")
    p.add_argument("--fills", type=int, default=6, help="capacities written before the measured one (default 6)")
    p.add_argument("--seconds", type=int, default=10, help="length of the server measurement (default 10)")
    p.add_argument("--tiny", action="store_true", help="8 MiB drives, one fill, 2 s: does it run")
    args = p.parse_args()
    if args.tiny:
        args.capacity, args.fills, args.seconds = "8m", 1, 2
    why = control.available()
    if why:
        print(f"cannot run: {why}")
        return 1
    capacity = int(args.capacity[:-1]) << 20 if args.capacity.lower().endswith("m") else int(args.capacity)
    server_iops(1 << 30, args.seconds)  # large enough that no GC runs: the server, not the model
    burst(capacity)
    up_time(capacity)
    a = steady(capacity, args.fills, "bench-a")
    b = steady(capacity, args.fills, "bench-b")
    spread = abs(a[0] - b[0]) / max(a[0], b[0]) * 100
    print(f"steady state after {args.fills} fills, two fresh drives: {a[0]:,.0f} and {b[0]:,.0f} IOPS (fio), "
          f"model {a[2]:,.0f} and {b[2]:,.0f}; WAF {a[1]:.2f} and {b[1]:.2f}; spread {spread:.1f}% "
          f"({load()})  target within 2%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
