"""What a day-long ``tkperf capture`` costs: disk, memory and CPU, measured on a
short real recording and extrapolated per hour (prints figures, asserts nothing).

**Recording** (root, fio), once for each ``--analysis`` of ``tkperf
capture`` (after the recording, then during it): a loop device of 1 GiB under fio -- random
4 KiB reads at queue depth 4, a sequential 64 KiB writer, and a 4 KiB
writer with ``fsync`` after each write at 20 a second (flushes) -- is
recorded by ``tkperf capture`` for ``--seconds`` in a process of its own
(so its peak resident memory, the kernel's ``ru_maxrss``, is the
capture's).  Printed: the raw trace events written and the most of them
on disk at once (the analysis reads and frees them a part at a time while
recording, tkperf.rwsw.liveparts), the packed iolog and the same I/Os as
fio's text iolog (the format before), each in bytes an I/O; the
recorder's CPU time (a share of one core) and the analysis thread's (µs an
I/O), and how long the analysis went on after the recording; the peak
memory; and from these the disk, the analysis time and the iolog an hour
and a day at ``--iops`` (default 20,000) take.

**Import of more than 4 GiB** (no root): a blkparse text of ``--ios``
synthetic I/Os (tests/lab/rwsw_synth.py) cut in two around a sparse gap of
NUL bytes, so that the file is larger than 4 GiB (the limit tkperf had)
while most of it costs no disk; ``tkperf capture --import`` streams it
(a line of 4 KiB at most at a time, the gap skipped a piece at a time)
and its peak memory and time are printed.

    sudo python3 benchmarks/daylong.py [--seconds 20] [--iops 20000] [--ios 1000000]
    python3 benchmarks/daylong.py --tiny      # 3 s, 10**4 I/Os around a 64 MiB gap
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "lab")]

import rwsw_synth  # noqa: E402
from tkperf.rwsw import iolog as iolog_mod  # noqa: E402
from tkperf.rwsw import model  # noqa: E402
from tkperf.rwsw.liveparts import PART_BYTES  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402

GiB = 1 << 30


def child(dev: str, seconds: float, outdir: str, name: str, live: bool) -> None:
    """In the capture's own process: record, noting the raw events written, the most of them on disk at once
    (the parts not yet read, tkperf.rwsw.liveparts), the analysis thread's CPU time and how long it went on
    after the recording; print them as JSON."""
    from tkperf.rwsw import capture, liveparts, rawtrace

    noted = {"raw_bytes": 0, "raw_peak": 0, "ana_cpu": 0.0}
    fileno, close, part = liveparts.Parts.fileno, liveparts.Parts.close, rawtrace.Stream.part

    def on_disk(self):  # before each drain: the parts waiting and the one written (none is read yet)
        fd = fileno(self)
        waiting = sum(os.fstat(item[0].fileno()).st_size for item in list(self.waiting.queue) if item is not None)
        noted["raw_peak"] = max(noted["raw_peak"], waiting + os.fstat(fd).st_size)
        return fd

    def read(self, fh, tail=None, last=False):  # in the analysis thread: its CPU time, every part's bytes
        noted["raw_bytes"] += os.fstat(fh.fileno()).st_size
        t = time.thread_time()
        try:
            return part(self, fh, tail, last)
        finally:
            noted["ana_cpu"] += time.thread_time() - t
            noted["held"] = max(noted.get("held", 0), self.peak_held)

    def closed(self):
        noted.update(rec_end=time.monotonic(), parts_read=self.read, parts=self.handed + 1)
        return close(self)

    liveparts.Parts.fileno, liveparts.Parts.close, rawtrace.Stream.part = on_disk, closed, read
    t0 = os.times()
    noted["start"], cpu0 = time.monotonic(), t0.user + t0.system  # Python's start and imports apart
    done = capture.record(dev, seconds, name, outdir, 1.0, say=lambda text: None, live=live)
    t = os.times()
    noted.update(rec_cpu=t.user + t.system - cpu0 - noted["ana_cpu"], rec_wall=noted["rec_end"] - noted["start"],
                 after_wall=time.monotonic() - noted["rec_end"], xml=done.xml, iolog=done.iolog)
    print(json.dumps(noted))


def _fio(dev: str, seconds: float) -> subprocess.Popen:
    common = [f"--filename={dev}", "--direct=1", "--ioengine=libaio", f"--runtime={seconds}", "--time_based"]
    return subprocess.Popen(
        ["fio", "--name=reads", "--rw=randread", "--bs=4k", "--iodepth=4", "--norandommap", *common,
         "--name=seq", "--rw=write", "--bs=64k", "--iodepth=1", "--offset=512m", "--size=256m", *common,
         "--name=log", "--rw=write", "--bs=4k", "--fsync=1", "--rate_iops=20", "--offset=900m", "--size=64m",
         *common], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def record(seconds: float, iops: float, work: str, analysis: str) -> None:
    with LoopDevice(GiB, work) as dev:
        fio = _fio(dev, seconds + 6)
        try:
            time.sleep(1.0)
            env = dict(os.environ, PYTHONPATH=ROOT)
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", dev, str(seconds), work,
                                     analysis],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out_err = ("", "")
            _, status, usage = os.wait4(proc.pid, 0)
            out_err = proc.communicate()
        finally:
            fio.terminate()
            fio.wait()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the capture failed: {out_err[1].strip()}")
    got = json.loads(out_err[0].strip().splitlines()[-1])
    cap = model.load(got["xml"])
    seen = cap.seen
    ios = sum(s.ios for s in cap.streams)
    requests = ios + (seen.flushes + seen.discards if seen else 0)
    packed = os.path.getsize(got["iolog"])
    text = sum(len(line) + 1 for line in iolog_mod.text_lines(got["iolog"]))
    raw_per, packed_per, text_per = got["raw_bytes"] / requests, packed / requests, text / requests
    peak = usage.ru_maxrss * 1024.0
    share = got["rec_cpu"] / max(got["rec_wall"], 1e-9)
    ana_us = 1e6 * got["ana_cpu"] / requests
    print(f"recorded {cap.duration:,.1f} s: {ios:,} I/Os and {seen.flushes if seen else 0:,} flushes "
          f"({requests / cap.duration:,.0f} a second; load {os.getloadavg()[0]:.1f})")
    how = (f"parts of {PART_BYTES / 1e6:,.1f} MB analysed while recording" if analysis == "during" else
           "one part, analysed after the recording")
    print(f"raw trace events written: {raw_per:,.1f} bytes an I/O ({got['raw_bytes'] / 1e6:,.1f} MB); on disk at "
          f"once at most {got['raw_peak'] / 1e6:,.1f} MB ({how})")
    print(f"iolog packed: {packed_per:,.2f} bytes an I/O; as fio's text iolog (before): {text_per:,.1f} "
          f"({text_per / packed_per:,.1f}x)")
    print(f"capture process: peak memory {peak / 1e6:,.1f} MB; CPU of the recorder {100 * share:.2f}% of one "
          f"core; analysis {ana_us:,.1f} µs of CPU an I/O, {got['parts_read']} of {got['parts']} parts read while "
          f"recording, {got['after_wall']:,.1f} s of it after the recording; at most {got.get('held', 0):,} events "
          "held from one part for the next")
    hour = iops * 3600
    keeps = analysis == "during" and iops * ana_us / 1e6 <= 0.5  # analysed while recording, keeping up
    raw_day = PART_BYTES * 4 if keeps else raw_per * hour * 24
    print(f"at {iops:,.0f} I/Os a second, an hour: iolog {packed_per * hour / 1e9:,.2f} GB (text before: "
          f"{text_per * hour / 1e9:,.1f} GB); raw events {raw_per * hour / 1e9:,.1f} GB written, analysis "
          f"{ana_us * hour / 1e6 / 60:,.1f} min of CPU ({100 * iops * ana_us / 1e6:.0f}% of one core)")
    print(f"a day: disk at the end {(packed_per * hour * 24 + raw_day) / 1e9:,.1f} GB ("
          f"{'the raw events analysed as they came' if keeps else 'the raw events waiting for the analysis'}), "
          f"kept {packed_per * hour * 24 / 1e9:,.1f} GB; analysis after the recording "
          f"{(0 if keeps else ana_us * hour * 24 / 1e6) / 3600:,.1f} h")


class _part:
    """The first ``n`` bytes of ``fh``, for shutil.copyfileobj."""

    def __init__(self, fh, n: int) -> None:
        self.fh, self.left = fh, n

    def read(self, size: int = -1) -> bytes:
        data = self.fh.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data


def big_import(ios: int, gap: int, work: str) -> None:
    src = os.path.join(work, "big.txt")
    half = os.path.join(work, "half.txt")
    rwsw_synth.write(half, rwsw_synth.mix(ios), gap_us=50.0, lat_us=400.0)
    text = os.path.getsize(half)
    with open(half, "rb") as fh, open(src, "wb") as out:  # copied a piece at a time: this process stays small,
        fh.seek(text // 2)                                # and so does the import's fork of it (ru_maxrss)
        cut = text // 2 + len(fh.readline())
        fh.seek(0)
        shutil.copyfileobj(_part(fh, cut), out)
        out.truncate(cut + gap)  # a sparse gap of NUL bytes (no disk)
        out.seek(cut + gap)
        out.write(b"\n")
        shutil.copyfileobj(fh, out)
    os.unlink(half)
    size = os.path.getsize(src)
    env = dict(os.environ, PYTHONPATH=ROOT)
    t = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", "--import", src, "--name", "big",
                             "--outdir", work, "--step", "1s", "-q"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    os.unlink(src)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the import failed: {err.strip()}")
    cap = model.load(os.path.join(work, "big.xml"))
    print(f"import of {size / GiB:,.2f} GiB ({size:,} bytes: {text / 1e6:,.0f} MB of blkparse text around a "
          f"{gap / GiB:,.2f} GiB gap): {sum(s.ios for s in cap.streams):,} of {ios:,} I/Os, "
          f"peak memory {usage.ru_maxrss * 1024 / 1e6:,.1f} MB, {wall:,.1f} s")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        dev, seconds, outdir = sys.argv[2], float(sys.argv[3]), sys.argv[4]
        child(dev, seconds, outdir, "day", sys.argv[5] == "during")
        return
    ap = argparse.ArgumentParser(description="the disk, memory and CPU of a day-long tkperf capture")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long to record (default 20)")
    ap.add_argument("--iops", type=float, default=20_000.0, help="the rate to extrapolate to (default 20,000)")
    ap.add_argument("--ios", type=int, default=1_000_000, help="I/Os in the large import (default 10**6)")
    ap.add_argument("--gap", type=float, default=4.2, help="GiB of sparse gap in the large import (default 4.2)")
    ap.add_argument("--analysis", choices=("after", "during", "both"), default="both",
                    help="tkperf capture --analysis to measure (default: both, one after the other)")
    ap.add_argument("--tiny", action="store_true", help="3 s, and 10**4 I/Os around a 64 MiB gap (a quick check)")
    args = ap.parse_args()
    seconds, ios, gap = (3.0, 10**4, 64 << 20) if args.tiny else (args.seconds, args.ios, int(args.gap * GiB))
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="tkperf-daylong-") as work:
        big_import(ios, gap, work)
    if os.geteuid() != 0:
        print("recording: skipped (tkperf capture needs root)")
        return
    for analysis in ("after", "during") if args.analysis == "both" else (args.analysis,):
        print(f"\nrecording, the events analysed {analysis} it (tkperf capture --analysis {analysis}):")
        with tempfile.TemporaryDirectory(prefix="tkperf-daylong-") as work:
            record(seconds, args.iops, work, analysis)


if __name__ == "__main__":
    main()
