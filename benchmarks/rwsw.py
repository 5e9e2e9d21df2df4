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

``--analysis during`` has the capture analyse its events while it records
(``tkperf capture --analysis during``: on idle CPU, a part at a time), whose
CPU then counts in the capture process's while recording; ``--iodepth``
sets fio's queue depth and ``--reads`` its share of reads (``--reads 100
--iodepth 16``: random reads only, which keep two CPUs busy on a loop
device).

    sudo python3 benchmarks/rwsw.py [--app fio|pgbench] [--runs 3] [--seconds 8] [--analysis after|during]

``--memory`` measures instead the memory of the capture's analysis
(no root, no device): a synthetic blkparse text of N I/Os
(tests/lab/rwsw_synth.py: 60% random 4 KiB reads, 25% sequential 64 KiB
writes, 15% random 8 KiB writes over 8 GiB, some 8 in flight) is imported
with ``tkperf capture --import`` in a process of its own, and its peak
resident memory (the kernel's ``ru_maxrss``) printed per size, with the
bytes per I/O it comes to and between sizes.  The target (issue 42): a
peak under 200 MB at 10**7 I/Os.

    python3 benchmarks/rwsw.py --memory [--sizes 1000000,10000000] [--tiny]
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

import rwsw_synth  # noqa: E402
from pgbench_lab import PgbenchLab  # noqa: E402

from tkperf.target.loopdev import LoopDevice  # noqa: E402

TARGET = 0.95
MEMORY_TARGET = 200e6  # bytes of peak RSS at 10**7 imported I/Os


def _import_peak(path: str, outdir: str, name: str) -> tuple[float, float, int]:
    """(peak RSS in bytes, wall seconds, exit code) of ``tkperf capture --import path``."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    t = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", "--import", path, "--name", name,
                             "--outdir", outdir, "--step", "60s", "-q"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"tkperf capture --import failed ({proc.returncode}): {err.strip()}")
    return usage.ru_maxrss * 1024.0, wall, proc.returncode


def memory(sizes: list[int], workdir: str) -> None:
    """Peak RSS of importing each size of synthetic trace (the generator runs in this process)."""
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    rows = []
    for n in sizes:
        src = os.path.join(workdir, f"synth-{n}.txt")
        t = time.monotonic()
        rwsw_synth.write(src, rwsw_synth.mix(n), gap_us=50.0, lat_us=400.0)
        made = time.monotonic() - t
        peak, wall, _ = _import_peak(src, workdir, f"synth{n}")
        size = os.path.getsize(src)
        os.unlink(src)
        rows.append((n, peak))
        print(f"{n:>12,} I/Os ({size / 1e6:,.0f} MB of blkparse text, made in {made:,.0f} s): "
              f"import {wall:,.1f} s, peak RSS {peak / 1e6:,.1f} MB, {peak / n:,.1f} bytes per I/O", flush=True)
    for (a, pa), (b, pb) in zip(rows, rows[1:]):
        print(f"from {a:,} to {b:,} I/Os: {(pb - pa) / (b - a):,.2f} bytes per further I/O")
    n, peak = rows[-1]
    if n >= 10**7:
        print(f"target: peak under {MEMORY_TARGET / 1e6:.0f} MB at 10**7 I/Os: "
              f"{'met' if peak < MEMORY_TARGET else 'NOT met'} ({peak / 1e6:,.1f} MB)")


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


ANALYSIS = ["after"]  # tkperf capture --analysis


def _captured(dev: str, seconds: int, outdir: str, name: str, app: Callable[[], float]) -> float:
    """``app()``'s figure while ``tkperf capture`` records ``dev``; the capture
    process's CPU time over the application's run goes to :data:`CPU`."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    cap = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", dev, "--duration", str(seconds + 3),
                            "--name", name, "--outdir", outdir, "-q", "--analysis", ANALYSIS[0]], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _instances() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the events are enabled right after the instance is made
        before, t = _cpu_seconds(cap.pid), time.monotonic()
        figure = app()
        CPU.append((_cpu_seconds(cap.pid) - before) / (time.monotonic() - t))  # still recording
    finally:
        _, err = cap.communicate(timeout=600)
    if cap.returncode != 0:
        raise SystemExit(f"tkperf capture failed: {err.strip()}")
    return figure


def fio_iops(dev: str, seconds: int, iodepth: int = 4, reads: int = 70) -> float:
    out = subprocess.run(
        ["fio", "--name=mix", f"--filename={dev}", "--direct=1", "--ioengine=libaio", f"--iodepth={iodepth}",
         "--rw=randrw", f"--rwmixread={reads}", "--bs=4k,64k", "--percentage_random=100,0", "--norandommap",
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
    ap = argparse.ArgumentParser(description="tkperf capture's overhead on the application it records, or "
                                             "(--memory) the memory of its analysis")
    ap.add_argument("--app", choices=("fio", "pgbench"), default="fio")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--outdir", help="where the captures go (default: /dev/shm, a disk of its own)")
    ap.add_argument("--analysis", choices=("after", "during"), default="after",
                    help="tkperf capture --analysis: after the recording (default) or during it")
    ap.add_argument("--iodepth", type=int, default=4, help="fio's queue depth (default 4)")
    ap.add_argument("--reads", type=int, default=70,
                    help="fio's share of reads in percent (default 70; 100: random reads only, CPU-bound on a loop "
                         "device)")
    ap.add_argument("--memory", action="store_true",
                    help="measure the peak memory of importing synthetic traces instead (no root, no device)")
    ap.add_argument("--sizes", default="1000000,10000000", help="--memory: the trace sizes in I/Os")
    ap.add_argument("--tiny", action="store_true", help="--memory with 10**4 and 10**5 I/Os (a quick check)")
    args = ap.parse_args()
    ANALYSIS[0] = args.analysis
    if args.memory or args.tiny:
        sizes = [10**4, 10**5] if args.tiny else [int(x) for x in args.sizes.split(",")]
        with tempfile.TemporaryDirectory(prefix="tkperf-rwsw-memory-", dir=args.outdir) as work:
            memory(sizes, work)
        return
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="tkperf-rwsw-bench-") as tmp, \
            tempfile.TemporaryDirectory(prefix="tkperf-rwsw-captures-", dir=args.outdir or shm) as outdir:
        print(f"captures written to {outdir} (not the disk under the loop device's backing file)")
        if args.app == "fio":
            with LoopDevice(512 * 1024 * 1024, tmp) as dev:
                print(f"fio on {dev}: RND 4KiB read {args.reads}% + SEQ 64KiB write {100 - args.reads}%, QD "
                      f"{args.iodepth}, {args.seconds} s a run; the capture's events analysed {args.analysis} the "
                      "recording")
                compare(args.runs, args.seconds, dev, outdir,
                        lambda: fio_iops(dev, args.seconds, args.iodepth, args.reads), "IOPS")
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
