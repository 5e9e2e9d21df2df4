"""The overhead of ``tkperf capture`` on the application it records (prints figures, asserts nothing).

The captured application runs on a loop device made for it, alternately
without and with ``tkperf capture`` recording the device for the whole run
(the capture is set up -- tracefs mounted, its instance made -- before the
application starts, and analysed after it ends):

* ``fio`` (default): 70% random 4 KiB reads and 30% sequential 64 KiB
  writes at queue depth 4, direct I/O; the figure is fio's IOPS.
* ``pgbench``: PostgreSQL on ext4 on the loop device (tests/lab/pgbench_lab.py),
  4 clients; the figure is pgbench's transactions per second.

The captures are written to /dev/shm (``--outdir``): as ``tkperf capture``
demands of a real disk, not to the disk the captured device lives on --
here the one under the loop device's backing file, whose I/O the
capture's own writes (some 160 bytes an I/O) would compete with.

The ratio is the median with the capture over the median without; the
target (issue 38) is at least 95%.  On a shared machine the runs scatter:
look at the single figures too, and at the capture process's own CPU time
while it records (measured from /proc, independent of the scatter).

    sudo python3 benchmarks/rwsw.py [--app fio|pgbench] [--runs 3] [--seconds 8]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "lab")]

from pgbench_lab import PgbenchLab  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402

TARGET = 0.95


def _instances() -> List[str]:
    out = []
    for point in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        d = os.path.join(point, "instances")
        if os.path.isdir(d):
            out += [n for n in os.listdir(d) if n.startswith("tkperf-capture")]
    return out


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of the process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU: List[float] = []  # the capture process's CPU seconds per second of the application's run


def _captured(dev: str, seconds: int, outdir: str, name: str, app: Callable[[], float]) -> float:
    """``app()``'s figure while ``tkperf capture`` records ``dev``; the capture
    process's CPU time over the application's run goes to :data:`CPU`."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    cap = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", dev, "--duration", str(seconds + 3),
                            "--name", name, "--outdir", outdir, "-q"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _instances() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the events are enabled right after the instance is made
        before, t = _cpu_seconds(cap.pid), time.monotonic()
        figure = app()
        CPU.append((_cpu_seconds(cap.pid) - before) / (time.monotonic() - t))  # still recording: no analysis yet
    finally:
        _, err = cap.communicate(timeout=600)
    if cap.returncode != 0:
        raise SystemExit(f"tkperf capture failed: {err.strip()}")
    return figure


def fio_iops(dev: str, seconds: int) -> float:
    out = subprocess.run(
        ["fio", "--name=mix", f"--filename={dev}", "--direct=1", "--ioengine=libaio", "--iodepth=4",
         "--rw=randrw", "--rwmixread=70", "--bs=4k,64k", "--percentage_random=100,0", "--norandommap",
         f"--runtime={seconds}", "--time_based", "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    job = json.loads(out)["jobs"][0]
    return float(job["read"]["iops"] + job["write"]["iops"])


def compare(runs: int, seconds: int, dev: str, outdir: str, app: Callable[[], float], unit: str) -> None:
    without: List[float] = []
    with_: List[float] = []
    for i in range(runs):  # in turn which goes first, so that a drift of the machine falls on both
        if i % 2:
            with_.append(_captured(dev, seconds, outdir, f"bench{i}", app))
            without.append(app())
        else:
            without.append(app())
            with_.append(_captured(dev, seconds, outdir, f"bench{i}", app))
        print(f"run {i + 1}: without capture {without[-1]:,.0f} {unit}, with capture {with_[-1]:,.0f} {unit}",
              flush=True)
    ratio = statistics.median(with_) / statistics.median(without)
    print(f"median without capture: {statistics.median(without):,.0f} {unit}")
    print(f"median with capture:    {statistics.median(with_):,.0f} {unit}")
    print(f"tkperf capture's CPU time while recording: median {100 * statistics.median(CPU):.1f}% of one core")
    print(f"ratio: {100 * ratio:.1f}%  (target >= {100 * TARGET:.0f}%: {'met' if ratio >= TARGET else 'NOT met'})")


def main_bench() -> None:
    ap = argparse.ArgumentParser(description="tkperf capture's overhead on the application it records")
    ap.add_argument("--app", choices=("fio", "pgbench"), default="fio")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--outdir", help="where the captures go (default: /dev/shm, a disk of its own)")
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    if args.tiny:
        args.runs, args.seconds = 1, 2
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="tkperf-rwsw-bench-") as tmp, \
            tempfile.TemporaryDirectory(prefix="tkperf-rwsw-captures-", dir=args.outdir or shm) as outdir:
        print(f"captures written to {outdir} (not the disk under the loop device's backing file)")
        if args.app == "fio":
            with LoopDevice(512 * 1024 * 1024, tmp) as dev:
                print(f"fio on {dev}: RND 4KiB read 70% + SEQ 64KiB write 30%, QD 4, {args.seconds} s a run")
                compare(args.runs, args.seconds, dev, outdir, lambda: fio_iops(dev, args.seconds), "IOPS")
        else:
            with PgbenchLab(tmp) as lab:
                def tps() -> float:
                    proc = lab.start_load(args.seconds)
                    out, _ = proc.communicate(timeout=600)
                    return lab.tps(out)
                print(f"pgbench on {lab.device} (PostgreSQL on ext4), 4 clients, {args.seconds} s a run")
                compare(args.runs, args.seconds, lab.device, outdir, tps, "TPS")


if __name__ == "__main__":
    main_bench()
