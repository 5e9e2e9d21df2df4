"""What reaching a drive over SSH and fio's client/server mode costs (prints figures, asserts nothing).

On this machine only: an OpenSSH server and a fio server on 127.0.0.2
(started here, stopped at the end, as the tests do) and a 256 MiB loop
device.  It prints:

* the time to open a remote target (SSH login, ``tkperf agent`` start and
  greeting, resolving the device) and one agent request's round trip
  (median of ``--requests`` safety checks);
* the fio server's version probe;
* the same short run (one LAT workload, ``--rounds`` rounds) on the loop
  device as a local target and as ``127.0.0.2:/dev/loopN``: wall time and
  the IOPS measured, so the cost of the remote path shows beside the
  measurement it must not disturb.

    sudo python3 benchmarks/remote.py [--rounds 3] [--requests 50]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lab"))

from remote_lab import free_port, start_ssh_lab  # noqa: E402  (the tests' lab: sshd on loopback)

from tkperf.fio.jobs import FioSettings  # noqa: E402
from tkperf import store  # noqa: E402
from tkperf.remote import proxy  # noqa: E402
from tkperf.remote.fio import RemoteFio  # noqa: E402
from tkperf.target.loopdev import try_loop  # noqa: E402

AGENT = [sys.executable, "-m", "tkperf"]


def _run(dev: str, out: str, rounds: int, remote: list) -> tuple:
    argv = [sys.executable, "-m", "tkperf", "ssd", "run", dev, "--tests", "lat", "--lat-bs", "4k",
            "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1", "--max-rounds", str(rounds),
            "-nj", "1", "-iod", "4",
            "--wipc-loops", "1", "--yes", "--no-report", "--quiet", "--outdir", out, *remote]
    t0 = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    run = store.load(next(str(p) for p in Path(out).glob("*.xml")))
    iops = statistics.mean(r.workloads[0].write.iops for r in run.tests[0].rounds)
    return wall, iops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    if args.tiny:
        args.rounds, args.requests = 1, 5
    with tempfile.TemporaryDirectory(prefix="tkperf-bench-remote-") as tmp:
        (Path(tmp) / "ssh").mkdir()
        lab = start_ssh_lab(Path(tmp) / "ssh")
        port = free_port()
        server = subprocess.Popen(["fio", f"--server=ip:127.0.0.2,{port}"], start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loop, why = try_loop(256 << 20, tmp)
        if loop is None:
            print(f"needs a loop device: {why}")
            return 1
        try:
            time.sleep(1.0)
            t0 = time.monotonic()
            side = proxy.connect("127.0.0.2", str(lab.config), AGENT)
            dev = side.resolve(loop.path)
            opened = time.monotonic() - t0
            trips = []
            for _ in range(args.requests):
                t = time.monotonic()
                side.safety_problems(dev)
                trips.append(time.monotonic() - t)
            side.close()
            t0 = time.monotonic()
            RemoteFio(FioSettings(filename=loop.path), tmp, "127.0.0.2", port)
            probe = time.monotonic() - t0
            remote = ["--ssh-config", str(lab.config), "--remote-tkperf", " ".join(AGENT), "--fio-port", str(port)]
            local_wall, local_iops = _run(loop.path, os.path.join(tmp, "local"), args.rounds, [])
            remote_wall, remote_iops = _run(f"127.0.0.2:{loop.path}", os.path.join(tmp, "remote"), args.rounds,
                                            remote)
        finally:
            loop.__exit__(None, None, None)
            server.kill()
            server.wait()
            lab.stop()
    print(f"open a remote target (SSH login, agent start, resolve): {opened * 1000:.0f} ms")
    print(f"one agent request, round trip: median {statistics.median(trips) * 1000:.2f} ms, "
          f"max {max(trips) * 1000:.2f} ms ({args.requests} requests)")
    print(f"fio server version probe: {probe * 1000:.0f} ms")
    print(f"run of {args.rounds} rounds, local:  {local_wall:.1f} s wall, RND 4k W {local_iops:,.0f} IOPS")
    print(f"run of {args.rounds} rounds, remote: {remote_wall:.1f} s wall, RND 4k W {remote_iops:,.0f} IOPS "
          f"(+{remote_wall - local_wall:.1f} s, IOPS {100 * (remote_iops / local_iops - 1):+.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
