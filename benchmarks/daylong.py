"""What a day-long ``tkperf capture`` costs: disk, memory and CPU, measured on a
short real recording and extrapolated per hour (prints figures, asserts nothing).

**Recording** (root, fio): a loop device of 1 GiB under fio -- random
4 KiB reads at queue depth 4, a sequential 64 KiB writer, and a 4 KiB
writer with ``fsync`` after each write at 20 a second (flushes) -- is
recorded by ``tkperf capture`` for ``--seconds`` in a process of its own
(so its peak resident memory, the kernel's ``ru_maxrss``, is the
capture's).  Printed: the raw trace events the temporary file held before
the analysis, the packed iolog and the same I/Os as fio's text iolog (the
format before), each in bytes an I/O; the capture process's CPU time
while it recorded (a share of one core) and for the analysis (µs an I/O);
its peak memory; and from these the disk, the analysis time and the
iolog an hour and a day at ``--iops`` (default 20,000) take.

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
from tkperf.target.loopdev import LoopDevice  # noqa: E402

GiB = 1 << 30


def child(dev: str, seconds: float, outdir: str, name: str) -> None:
    """In the capture's own process: record, noting the raw file's size and the CPU time when the analysis
    begins, and print them as JSON."""
    from tkperf.rwsw import capture, rawtrace

    noted: dict = {}
    read_raw = rawtrace.read_raw

    def spy(raw, *a, **k):
        t = os.times()
        noted.update(raw_bytes=os.fstat(raw.fileno()).st_size, rec_cpu=t.user + t.system - cpu0,
                     rec_wall=time.monotonic() - noted["start"])
        return read_raw(raw, *a, **k)

    rawtrace.read_raw = spy
    t0 = os.times()
    noted["start"], cpu0 = time.monotonic(), t0.user + t0.system  # Python's start and imports apart
    done = capture.record(dev, seconds, name, outdir, 1.0, say=lambda text: None)
    t = os.times()
    noted.update(ana_cpu=t.user + t.system - cpu0 - noted["rec_cpu"], ana_wall=time.monotonic() - noted["start"]
                 - noted["rec_wall"], xml=done.xml, iolog=done.iolog)
    print(json.dumps(noted))


def _fio(dev: str, seconds: float) -> subprocess.Popen:
    common = [f"--filename={dev}", "--direct=1", "--ioengine=libaio", f"--runtime={seconds}", "--time_based"]
    return subprocess.Popen(
        ["fio", "--name=reads", "--rw=randread", "--bs=4k", "--iodepth=4", "--norandommap", *common,
         "--name=seq", "--rw=write", "--bs=64k", "--iodepth=1", "--offset=512m", "--size=256m", *common,
         "--name=log", "--rw=write", "--bs=4k", "--fsync=1", "--rate_iops=20", "--offset=900m", "--size=64m",
         *common], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def record(seconds: float, iops: float, work: str) -> None:
    with LoopDevice(GiB, work) as dev:
        fio = _fio(dev, seconds + 6)
        try:
            time.sleep(1.0)
            env = dict(os.environ, PYTHONPATH=ROOT)
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", dev, str(seconds), work],
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
    print(f"raw trace events (temporary, until the analysis): {raw_per:,.1f} bytes an I/O")
    print(f"iolog packed: {packed_per:,.2f} bytes an I/O; as fio's text iolog (before): {text_per:,.1f} "
          f"({text_per / packed_per:,.1f}x)")
    print(f"capture process: peak memory {peak / 1e6:,.1f} MB; CPU while recording {100 * share:.2f}% of one "
          f"core; analysis {ana_us:,.1f} µs of CPU an I/O ({got['ana_wall']:,.1f} s wall)")
    hour = iops * 3600
    print(f"at {iops:,.0f} I/Os a second, an hour: raw {raw_per * hour / 1e9:,.1f} GB + iolog "
          f"{packed_per * hour / 1e9:,.2f} GB (text before: {text_per * hour / 1e9:,.1f} GB); analysis "
          f"{ana_us * hour / 1e6 / 60:,.1f} min of CPU")
    print(f"a day: disk at the end {(raw_per + packed_per) * hour * 24 / 1e9:,.0f} GB (before, with the text "
          f"iolog: {(raw_per + text_per) * hour * 24 / 1e9:,.0f} GB), kept {packed_per * hour * 24 / 1e9:,.1f} GB; "
          f"analysis {ana_us * hour * 24 / 1e6 / 3600:,.1f} h of CPU after the recording")


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
        child(dev, seconds, outdir, "day")
        return
    ap = argparse.ArgumentParser(description="the disk, memory and CPU of a day-long tkperf capture")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long to record (default 20)")
    ap.add_argument("--iops", type=float, default=20_000.0, help="the rate to extrapolate to (default 20,000)")
    ap.add_argument("--ios", type=int, default=1_000_000, help="I/Os in the large import (default 10**6)")
    ap.add_argument("--gap", type=float, default=4.2, help="GiB of sparse gap in the large import (default 4.2)")
    ap.add_argument("--tiny", action="store_true", help="3 s, and 10**4 I/Os around a 64 MiB gap (a quick check)")
    args = ap.parse_args()
    seconds, ios, gap = (3.0, 10**4, 64 << 20) if args.tiny else (args.seconds, args.ios, int(args.gap * GiB))
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="tkperf-daylong-") as work:
        big_import(ios, gap, work)
    if os.geteuid() != 0:
        print("recording: skipped (tkperf capture needs root)")
        return
    with tempfile.TemporaryDirectory(prefix="tkperf-daylong-") as work:
        record(seconds, args.iops, work)


if __name__ == "__main__":
    main()
