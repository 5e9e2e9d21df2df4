"""Kill a real run at random moments and count what survives (prints figures).

For each of N trials on a loop device: start ``tkperf ssd run`` (IOPS and LAT,
2 rounds each), send SIGKILL, SIGINT, SIGTERM or SIGHUP at a random moment
within its expected duration, then check that the XML parses and validates,
that no fio is left, and that ``tkperf resume`` completes the run with the
same tests and rounds as an uninterrupted one.  Target: all of them.

    sudo python3 benchmarks/resilience.py [--trials 20] [--seed 1]
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, REPO)

from tkperf import store  # noqa: E402
from tkperf.errors import TkperfError  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402

RUN = ["--tests", "iops,lat", "--bs", "4k", "--mix", "0/100", "--lat-bs", "4k", "--lat-mix", "0/100",
       "--lat-capture", "0", "--runtime", "1", "--max-rounds", "2", "-nj", "1", "-iod", "4", "--yes", "--no-report",
       "-q"]
SIGNALS = [signal.SIGKILL, signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def tkperf(*argv: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen([sys.executable, "-m", "tkperf", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    size = 512 << 20
    if args.tiny:
        args.trials, size = 1, 128 << 20  # the same steps; a smaller WIPC
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp, LoopDevice(size, tmp) as dev:
        t0 = time.monotonic()
        ref = os.path.join(tmp, "ref")
        tkperf("ssd", "run", dev, "--name", "k", "--outdir", ref, *RUN).wait()
        full = time.monotonic() - t0
        expect = [(t.key, len(t.rounds)) for t in store.load(os.path.join(ref, "k.xml")).tests]
        print(f"uninterrupted run: {full:.1f} s, tests and rounds {expect}")
        valid = resumed = orphans = 0
        for i in range(args.trials):
            out = os.path.join(tmp, f"t{i}")
            sig = rng.choice(SIGNALS)
            at = rng.uniform(0.3, full)
            proc = tkperf("ssd", "run", dev, "--name", "k", "--outdir", out, *RUN)
            time.sleep(at)
            proc.send_signal(sig)
            rc = proc.wait()
            time.sleep(0.2)
            left = subprocess.run(["pgrep", "-f", out], capture_output=True, text=True).stdout.split()
            orphans += bool(left)
            xml = os.path.join(out, "k.xml")
            if not os.path.exists(xml):
                # killed before the run wrote anything: nothing to lose, start afresh
                tkperf("ssd", "run", dev, "--name", "k", "--outdir", out, *RUN).wait()
            try:
                status = store.load(xml).status
                valid += 1
            except (TkperfError, OSError) as exc:
                status = f"INVALID ({exc})"
            rrc = tkperf("resume", xml, "--yes", "--no-report", "-q").wait()
            try:
                got = [(t.key, len(t.rounds)) for t in store.load(xml).tests]
            except (TkperfError, OSError):
                got = []
            ok = rrc == 0 and got == expect
            resumed += ok
            print(f"trial {i + 1:2d}: {signal.Signals(sig).name:7s} at {at:5.2f} s -> exit {rc:4d}, "
                  f"file {status}, fio left {len(left)}, resume {'completed' if ok else f'FAILED ({rrc}, {got})'}")
        print(f"valid files after the kill: {valid}/{args.trials}; resumed to completion: "
              f"{resumed}/{args.trials}; runs that left fio behind: {orphans}")


if __name__ == "__main__":
    main()
