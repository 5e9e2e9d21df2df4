"""How closely ``replay`` reproduces its captures: per step, the captured
IOPS, queue depth (time-averaged I/Os in flight) and mean and p99 response
time next to the replay's, both measured as the capture measures them (the
replay traced at the same block tracepoints: data I/Os, flushes apart); per
stream, its captured share next to the replayed one; for an exact replay,
its queue depth and mean and p99 response time next to the capture's; and
for every replay a capture of the replay itself
(``tkperf capture`` recording while it runs) as an independent check: its
mean and p99 response time and flushes where the capture records them.

Prints figures, asserts nothing.  Captures replayed:

* ``mix``: a fio mix with known rates recorded here by ``tkperf capture`` on
  a loop device: 300 IOPS RND 4 KiB reads (iodepth 2), 100 IOPS SEQ 64 KiB
  writes with an fsync every 10 (iodepth 1), 100 IOPS RND 8 KiB writes;
* ``pgbench``: examples/rwsw/pgbench.xml (PostgreSQL's pgbench on ext4).

Each is replayed ``--replay steps`` (at the captured intensity) and
``--replay exact`` on a fresh 512 MiB loop device over a sparse file and on
an emulated SSD (``tkperf simdrive``, 256 MiB), all made here and always
removed.  Root, fio and tracefs needed.  Targets (issue 42): steps replay
IOPS per step within 10% of the capture's where the drive can serve it;
exact replay's mean response time within 2x of the capture's; stream
shares within 1 point.  Issue 57: per step, QD and mean and p99 response
time within 1.2x of the capture's (a figure beyond it is marked MISS; on
another device than the captured one a miss is the device's, not the
replay's).  ``--tiny``: the pgbench capture on the loop device
only.

    sudo python benchmarks/replay_fidelity.py [--tiny] [--no-simdrive]
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO]

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.rwsw import iolog, model  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402
from tkperf.testtypes.realworld import exactlog  # noqa: E402
from tkperf.testtypes.realworld.delivered import measured, overall, step_rounds, steps  # noqa: E402

PGBENCH = os.path.join(REPO, "examples", "rwsw", "pgbench.xml")
MIX = """[global]
ioengine=libaio
direct=1
time_based=1
runtime={seconds}
filename={dev}
[rr4k]
rw=randread
bs=4k
iodepth=2
rate_iops=300
size=128m
[sw64k]
rw=write
bs=64k
iodepth=1
rate_iops=100
fsync=10
offset=256m
size=128m
[rw8k]
rw=randwrite
bs=8k
iodepth=1
rate_iops=100
offset=128m
size=128m
"""


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def tk(argv: List[str]) -> int:
    return subprocess.run([sys.executable, "-m", "tkperf", *argv], cwd=REPO).returncode


def recorded(dev: str, seconds: float, step: str, name: str, outdir: str, action: Callable[[], None]) -> Optional[str]:
    """Record ``dev`` with tkperf capture while ``action`` runs; the capture's path, or None.
    ``seconds`` bounds the recording; it is stopped early (Ctrl-C: the capture keeps what it
    recorded) a second after ``action`` returns, so no recording idles on to its bound."""
    argv = [sys.executable, "-m", "tkperf", "capture", dev, "--duration", f"{int(seconds)}s", "--step", step,
            "--name", name, "--outdir", outdir, "--quiet"]
    print("  $ " + " ".join(argv[2:]))
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL)
    time.sleep(2.0)  # tracing set up before the I/O starts
    try:
        action()
    finally:
        try:
            rc = proc.wait(timeout=1.0)  # the last completions reach the trace
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            rc = proc.wait()
    path = os.path.join(outdir, f"{name}.xml")
    if rc != 0 or not os.path.exists(path):
        print(f"  capture {name}: exit {rc}, no file")
        return None
    return path


def make_mix(dev: str, scratch: str, seconds: int) -> Optional[str]:
    job = os.path.join(scratch, "mix.fio")
    with open(job, "w", encoding="ascii") as fh:
        fh.write(MIX.format(seconds=seconds, dev=dev))
    return recorded(dev, seconds + 4, "2s", "mix", scratch,
                    lambda: subprocess.run(["fio", "--output=/dev/null", job], check=False))


def _p(x: Optional[float], digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _vs(asked: float, got: Optional[float], digits: int = 0) -> str:
    """``captured / replayed (ratio)``, MISS beyond 1.2x either way."""
    if got is None or asked <= 0:
        return f"{_p(asked if asked > 0 else None, digits)} / {_p(got, digits)}"
    ratio = got / asked
    return f"{asked:,.{digits}f} / {got:,.{digits}f} ({ratio:.2f}x{'' if 1 / 1.2 <= ratio <= 1.2 else ' MISS'})"


def _rt_us(cap: model.Capture) -> float:
    return exactlog.mean_rt_us(cap)


def _p99(cap: model.Capture) -> Optional[float]:
    return exactlog.seen_figure(cap, "lat", "p99_us")


def _iolog_flushes(cap_path: str, cap: model.Capture) -> Optional[int]:
    n = exactlog.seen_figure(cap, "flushes")
    if n is not None:
        return int(n)
    if not cap.iolog:
        return None
    lines = iolog.text_lines(os.path.join(os.path.dirname(cap_path), cap.iolog))  # either kind, packed or text
    return sum(1 for line in lines if line.split()[2:3] in (["sync"], ["datasync"]))


def replay(dev: str, kind: str, cap_path: str, mode: str, scratch: str) -> None:
    cap = model.load(cap_path)
    out = os.path.join(scratch, f"{kind}-{cap.name}-{mode}")
    argv = ["ssd", "run", dev, "--tests", "replay", "--replay", mode, "--workload", cap_path, "--purge", "none",
            "--quick", "--yes", "--quiet", "--no-report", "--write-cache", "keep", "--name", "r", "--outdir", out]
    rc: List[int] = []
    seconds = cap.duration * (1.0 if mode == "exact" else 1.4) + 12
    again = recorded(dev, seconds, "1s", "again", scratch, lambda: rc.append(main(argv)))
    if not rc or rc[0] not in (0, 1):
        print(f"[{kind}] {cap.name} {mode}: tkperf exited {rc}")
        return
    test = store.load(os.path.join(out, "r.xml")).tests[0]
    whole = overall(test)
    head = f"[{kind}] {cap.name} {mode}"
    for got in steps(test):
        off = max((abs(x.share - x.asked_share) for x in got.streams), default=0.0)
        ratio = got.iops / got.kept_iops if got.kept_iops else 0.0
        print(f"{head} step {got.step}: IOPS captured {got.kept_iops:,.1f} replayed {got.iops:,.1f} ({ratio:.2f}x"
              f"{'' if 0.9 <= ratio <= 1.1 else ' MISS'}) | QD {_vs(got.asked_qd, got.qd, 3)} | mean RT µs "
              f"{_vs(got.asked_lat_us, got.lat_mean_us)} | p99 µs {_vs(got.asked_p99_us, got.lat_p99_us)} | "
              f"flushes {got.asked_flushes:,} / {_p(got.flushes)} ({got.source}{', lost events' if got.lost else ''})"
              f" | shares off by at most {100 * off:.1f} pt{'' if off <= 0.01 else ' MISS'}")
    got_all = [measured(test, r) for r in test.rounds]
    flushes = sum(m.flushes for m in got_all if m is not None)
    if mode == "exact" and got_all and got_all[-1] is not None:
        m = got_all[-1]
        print(f"{head} exact, whole: QD {_vs(cap.qd, m.qd, 3)} | mean RT µs {_vs(_rt_us(cap), m.lat_mean_us)} | "
              f"p99 µs {_vs(_p99(cap) or 0.0, m.lat_p99_us)} ({m.source})")
    if whole is None:
        print(f"{head}: nothing measured")
        return
    rt = _rt_us(cap)
    ratio = whole.lat_mean_us / rt if rt else 0.0
    asked = sum(s.ios for s in cap.streams)
    done = sum(w.read.ios + w.write.ios for _, r in step_rounds(test) for w in r.workloads) or sum(
        w.read.ios + w.write.ios for w in test.rounds[-1].workloads)
    line = (f"{head} whole: I/Os captured {asked:,} replayed {done:,} ({done / asked:.2f}x; IOPS over the steps with "
            f"I/O {whole.iops:,.1f}, over the whole capture {cap.iops:,.1f} captured) |"
            f" mean RT µs captured {rt:,.0f} replayed {whole.lat_mean_us:,.0f} ({ratio:.2f}x, {whole.lat_source}; "
            f"fio's {whole.fio_lat_us:,.0f})")
    if mode == "exact":
        line += f" | fio iodepth {test.data.get('exact.iodepth', '?')}"
    print(line)
    print(f"{head} flushes: captured {_p(_iolog_flushes(cap_path, cap))}, replayed (block tracepoints) {flushes} "
          f"| p99 µs captured {_p(_p99(cap))}")
    if again is not None:
        re = model.load(again)
        print(f"{head} re-capture of the replay: {sum(s.ios for s in re.streams):,} I/Os, mean RT µs "
              f"{_rt_us(re):,.0f}, p99 µs {_p(_p99(re))}, flushes "
              f"{_p(exactlog.seen_figure(re, 'flushes'))} ({load()})")
        os.remove(again)
        if re.iolog:
            os.remove(os.path.join(scratch, re.iolog))


def on_device(kind: str, dev: str, scratch: str, captures: List[str]) -> None:
    for cap_path in captures:
        for mode in ("steps", "exact"):
            replay(dev, kind, cap_path, mode, scratch)


def simdrive(scratch: str, captures: List[str]) -> None:
    made = subprocess.run([sys.executable, "-m", "tkperf", "simdrive", "up", "--capacity", "256M"], cwd=REPO,
                          capture_output=True, text=True)
    if made.returncode != 0:
        print(f"[simdrive] not made: {made.stderr.strip()}")
        return
    dev = made.stdout.strip()
    try:
        on_device("simdrive", dev, scratch, captures)
    finally:
        tk(["simdrive", "down", dev])


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="the pgbench capture on a loop device only")
    p.add_argument("--no-simdrive", action="store_true", help="leave the emulated SSD out")
    p.add_argument("--mix-seconds", type=int, default=12, help="length of the fio mix captured (default 12)")
    args = p.parse_args()
    print(f"fio mix and pgbench replays, {load()}")
    scratch = tempfile.mkdtemp(prefix="tkperf-replay-bench-")
    try:
        captures = []
        with LoopDevice(512 << 20, scratch) as dev:
            if not args.tiny:
                mix = make_mix(dev, scratch, args.mix_seconds)
                if mix is not None:
                    c = model.load(mix)
                    print(f"[loop] mix captured: {c.iops:,.1f} IOPS (asked 500), QD {c.qd:.2f}, "
                          + ", ".join(f"{s.key} {100 * s.share:.1f}%" for s in c.streams[:4]))
                    captures.append(mix)
            pg = os.path.join(scratch, "pgbench.xml")
            shutil.copy(PGBENCH, pg)
            shutil.copy(PGBENCH.replace(".xml", ".iolog"), os.path.join(scratch, "pgbench.iolog"))
            captures.append(pg)
            on_device("loop", dev, scratch, captures)
        if not (args.tiny or args.no_simdrive):
            simdrive(scratch, captures)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
