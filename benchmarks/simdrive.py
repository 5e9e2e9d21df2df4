"""The emulated SSD (``tkperf simdrive``): the default model as a drive, and
how fast its server is.

Prints figures, asserts nothing.  Needs root, /dev/fuse and fio (the WAF
part needs neither: it drives the model on its own clock).

1. **WAF**: steady write amplification of the model under uniform random
   4 KiB writes (an ideal host on the model's clock, ``--fills`` capacities
   to steady state, as many measured) at 7, 14 and 28% over-provisioning,
   beside Desnoyers' analytic value for greedy cleaning (P. Desnoyers,
   "Analytic Modeling of SSD Write Performance", SYSTOR 2012, Eq. 12).
2. **Queue depth**: 4 KiB random reads of a written drive at QD 1, 8 and
   32 by fio, beside the model's count per busy second and what its
   parameters allow; QD 32 over QD 1 beside a data sheet's.
3. **Unmapped reads**: the same at QD 1 on a fresh drive (nothing mapped:
   no flash read) against the written one.
4. **Transfer size**: fresh MB/s of RND 4K, SEQ 4K and SEQ 128K writes at
   QD 32 (half a capacity each, on a fresh drive), and SEQ 128K reads of
   a written drive; SEQ 128K writes over RND 4K and SEQ 128K reads over
   writes beside the data sheets'.
4b. **QD 1 service**: a 4 KiB read's and write's service on the model's
   clock (its parameters) and fio's mean latency at QD 1, read over write
   beside the data sheets'.

The published anchors (each drive's data sheet, Samsung Electronics):
Samsung SSD 850 PRO: sequential 550 / 520 MB/s read / write, 4 KiB random
QD 1 10,000 / 36,000 IOPS, QD 32 100,000 / 90,000 IOPS; Samsung NVMe SSD
970 EVO Plus (1 TB): 3,500 / 3,300 MB/s, QD 1 19,000 / 60,000 IOPS, QD 32
600,000 / 550,000 IOPS.
5. **Idle recovery**: after two capacities of random writes, the free
   blocks after 1, 3 and 10 s of idle (the model's background GC).
6. **Server**: 4 KiB random writes, numjobs 4 x iodepth 32, on a 1 GiB
   drive whose model costs are all zero: the IOPS the server itself
   carries.  The default model's ceilings are to stay well below it.
7. **Host load**: steady 4 KiB random writes at QD 32 as back-to-back fio
   processes, idle and beside 12 busy loops, with the gaps between the
   processes idle and then held (as a run of tkperf holds them: no
   background GC in them); and QD 1 reads idle and beside the loops, with
   the share of its active time the drive waited for the host (the
   host-limit caveat's measure).

Every line gives the drive's late replies (sent more than 1 ms after the
model's time) and the machine's load average: the server shares the CPUs
with fio, the loop device's worker and everything else running.

    python3 benchmarks/simdrive.py [--capacity 64m] [--fills 6] [--seconds 5] [--tiny]
"""
from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tkperf.simdrive import control, hostlimit  # noqa: E402
from tkperf.simdrive.model import Drive  # noqa: E402
from tkperf.simdrive.params import rates  # noqa: E402
from tkperf.simdrive.reference import greedy_waf as desnoyers_greedy  # noqa: E402

ZERO = {"read_us": 0, "program_us": 0, "copy_us": 0, "erase_us": 0, "cmd_us": 0}
PAGE = 4096


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def fio(device: str, rw: str, bs: str, qd: int, *args: str) -> Dict[str, Any]:
    argv = ["fio", "--output-format=json", "--name=b", f"--filename={device}", "--direct=1",
            "--ioengine=libaio", f"--bs={bs}", f"--rw={rw}", f"--iodepth={qd}", "--randrepeat=0",
            "--norandommap=1", "--group_reporting", *args]  # norandommap: uniform random, as tkperf's jobs
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    job = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
    return job["read"] if "read" in rw else job["write"]


class Up:
    """An emulated SSD for a ``with`` block; ``stats()`` its counters."""

    def __init__(self, capacity: int, name: str, params: Dict[str, float]) -> None:
        self.capacity, self.name, self.params = capacity, name, params

    def __enter__(self) -> Up:
        self.device = control.up(self.capacity, self.params, self.name)
        self.rundir = control.find(self.device)
        return self

    def __exit__(self, *exc: Any) -> None:
        control.down(self.rundir)

    def stats(self) -> Dict[str, Any]:
        return control.stats(self.rundir)


def busy_rate(a: Dict[str, Any], z: Dict[str, Any], key: str) -> float:
    busy = (z["model_time_s"] - a["model_time_s"]) - (z["idle_time_s"] - a["idle_time_s"])
    return (z[key] - a[key]) / busy if busy > 0 else 0.0


def late(a: Dict[str, Any], z: Dict[str, Any]) -> str:
    return f"{z['late_replies'] - a['late_replies']} late replies; {load()}"


def waf(capacity: int, fills: int) -> None:
    print(f"1. steady WAF, uniform random 4 KiB writes, {capacity >> 20} MiB, fills {fills}-{2 * fills} "
          "(the model on its own clock):")
    for op in (7, 14, 28):
        d = Drive(capacity, {"op_pct": op})
        rng = random.Random(1)
        pending = [0.0] * 32
        mark: Tuple[int, int] = (0, 0)
        for i in range(2 * fills * d.logical_pages):
            if i == fills * d.logical_pages:
                mark = (d.c["host_write_bytes"], d.c["nand_write_pages"])
            t = heapq.heappop(pending)
            heapq.heappush(pending, d.write(t, rng.randrange(d.logical_pages) * PAGE, PAGE))
        got = (d.c["nand_write_pages"] - mark[1]) * PAGE / (d.c["host_write_bytes"] - mark[0])
        ref = desnoyers_greedy(op)
        print(f"   OP {op:2}%: model {got:.2f}, Desnoyers greedy {ref:.2f} ({(got / ref - 1) * 100:+.1f}%)")


#: (what, the drive's figure, its data sheet's): the anchors the model's ratios are printed beside
ANCHORS = {
    "qd32_qd1": ("4 KiB random reads QD 32 / QD 1", "850 PRO 100,000 / 10,000 IOPS = 10x"),
    "seq_rnd_w": ("fresh SEQ 128K / RND 4K writes (MB/s)",
                  "850 PRO 520 / 369 = 1.41x; 970 EVO Plus 3,300 / 2,253 = 1.46x"),
    "seq_r_w": ("SEQ 128K reads / writes (MB/s)", "850 PRO 550 / 520 = 1.06x; 970 EVO Plus 3,500 / 3,300 = 1.06x"),
    "qd1_r_w": ("QD 1 4 KiB read / write service",
                "850 PRO 1/10,000 / 1/36,000 = 3.6x; 970 EVO Plus 1/19,000 / 1/60,000 = 3.2x"),
}


def ratio(key: str, model: float, fio_value: float) -> None:
    what, anchor = ANCHORS[key]
    print(f"   ratio {what}: model {model:.2f}x, fio {fio_value:.2f}x; published {anchor}")


def queue_depth(capacity: int, seconds: int) -> None:
    r = rates()
    print("2. 4 KiB random reads of a written drive (fio; the model's own count per busy second; "
          "what its parameters allow with every die busy):")
    fio_iops, model_iops = {}, {}
    with Up(capacity, "bench-qd", {}) as drive:
        fio(drive.device, "write", "128k", 32)
        for qd in (1, 8, 32):
            a = drive.stats()
            got = fio(drive.device, "randread", "4k", qd, "--time_based", f"--runtime={seconds}")
            z = drive.stats()
            ideal = min(qd * r["read_qd1_iops"], r["read_iops"])
            fio_iops[qd], model_iops[qd] = got["iops"], busy_rate(a, z, "host_read_ios")
            print(f"   QD {qd:2}: fio {got['iops']:7,.0f} IOPS, model {model_iops[qd]:7,.0f}, "
                  f"parameters {ideal:7,.0f}; mean latency {got['clat_ns']['mean'] / 1e3:,.0f} us ({late(a, z)})")
    ratio("qd32_qd1", model_iops[32] / model_iops[1], fio_iops[32] / fio_iops[1])


def unmapped(capacity: int, seconds: int) -> None:
    print("3. 4 KiB random reads at QD 1, fresh (nothing mapped) and written:")
    for fill in (False, True):
        with Up(capacity, "bench-unmapped", {}) as drive:
            if fill:
                fio(drive.device, "write", "128k", 32)
            a = drive.stats()
            got = fio(drive.device, "randread", "4k", 1, "--time_based", f"--runtime={seconds}")
            z = drive.stats()
            print(f"   {'written' if fill else 'unmapped'}: fio {got['iops']:7,.0f} IOPS, model "
                  f"{busy_rate(a, z, 'host_read_ios'):7,.0f}; unmapped pages read "
                  f"{z['unmapped_read_pages'] - a['unmapped_read_pages']:,} ({late(a, z)})")


def transfer_size(capacity: int) -> None:
    r = rates()
    print(f"4. fresh writes at QD 32, half a capacity each (parameters: 4 KiB {r['write_iops']:,.0f} IOPS = "
          f"{r['write_iops'] * PAGE / 1e6:.1f} MB/s; whole blocks overwritten {r['seq_write_bytes_s'] / 1e6:.1f} "
          f"MB/s; 128 KiB reads {r['seq_read_bytes_s'] / 1e6:.1f} MB/s), and reads of a written drive:")
    fio_mb, model_mb = {}, {}
    for rw, bs in (("randwrite", "4k"), ("write", "4k"), ("write", "128k"), ("read", "128k")):
        with Up(capacity, "bench-fresh", {}) as drive:
            if rw == "read":
                fio(drive.device, "write", "128k", 32)
            a = drive.stats()
            got = fio(drive.device, rw, bs, 32, f"--size={capacity // 2}")
            z = drive.stats()
            key = "host_read_bytes" if rw == "read" else "host_write_bytes"
            model = busy_rate(a, z, key) / 1e6
            fio_mb[rw, bs], model_mb[rw, bs] = got["bw_bytes"] / 1e6, model
            print(f"   {'RND' if rw.startswith('rand') else 'SEQ'} {bs:>4} {'reads ' if rw == 'read' else 'writes'}: "
                  f"fio {got['bw_bytes'] / 1e6:6.1f} MB/s ({got['iops']:,.0f} IOPS), model {model:6.1f} MB/s; "
                  f"GC copies {z['gc_copies']} ({late(a, z)})")
    w, rd, rnd = ("write", "128k"), ("read", "128k"), ("randwrite", "4k")
    ratio("seq_rnd_w", model_mb[w] / model_mb[rnd], fio_mb[w] / fio_mb[rnd])
    ratio("seq_r_w", model_mb[rd] / model_mb[w], fio_mb[rd] / fio_mb[w])


def service(capacity: int, seconds: int) -> None:
    r = rates()
    print(f"4b. QD 1 4 KiB service (the model's clock: read {r['read_qd1_s'] * 1e6:,.0f} us, write "
          f"{r['write_qd1_s'] * 1e6:,.0f} us; fio's mean latency adds the host path):")
    lat = {}
    with Up(capacity, "bench-qd1", {}) as drive:
        for rw in ("randwrite", "randread"):  # writes fresh (no GC), reads of a written drive
            if rw == "randread":
                fio(drive.device, "write", "128k", 32)
            a = drive.stats()
            got = fio(drive.device, rw, "4k", 1, "--time_based", f"--runtime={seconds}")
            z = drive.stats()
            lat[rw] = got["clat_ns"]["mean"] / 1e3
            print(f"   {rw}: fio mean latency {lat[rw]:,.0f} us ({late(a, z)})")
    ratio("qd1_r_w", r["read_qd1_s"] / r["write_qd1_s"], lat["randread"] / lat["randwrite"])


def idle(capacity: int, gaps: Tuple[float, ...]) -> None:
    print(f"5. free blocks after 2 capacities of random writes and idle ({capacity >> 20} MiB):")
    with Up(capacity, "bench-idle", {}) as drive:
        fio(drive.device, "randwrite", "4k", 32, f"--io_size={2 * capacity}")
        a = drive.stats()
        start, said = time.monotonic(), []
        for gap in gaps:
            time.sleep(max(0.0, start + gap - time.monotonic()))
            s = drive.stats()
            said.append(f"{gap:g} s: {s['free_blocks']} ({s['bg_gc_copies'] - a['bg_gc_copies']:,} copies)")
        spare = a["params"]["bg_free_blocks"]["value"]
        print(f"   at the end of the writes: {a['free_blocks']}; " + "; ".join(said)
              + f"; the spare area: {spare} of {a['physical_blocks']} blocks ({late(a, s)})")


def server(seconds: int) -> None:
    with Up(1 << 30, "bench-zero", ZERO) as drive:  # large enough that no GC runs: the server, not the model
        a = drive.stats()
        got = fio(drive.device, "randwrite", "4k", 32, "--numjobs=4", "--time_based", f"--runtime={seconds}")
        z = drive.stats()
        print(f"6. server, zero model costs: {got['iops']:,.0f} IOPS of 4 KiB random writes at 4 x QD 32 "
              f"({seconds} s; {late(a, z)}); the default model's ceiling: {rates()['read_iops']:,.0f} IOPS")


def busy_loops(n: int) -> List[subprocess.Popen]:
    """``n`` CPU hogs (busy loops at normal priority); kill them when done."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def host(capacity: int, seconds: int, hogs: int, processes: int) -> None:
    """7. What a loaded host does to the drive's figures, and what tkperf
    does about it (issue 56 item 5): steady 4 KiB random writes at QD 32 as
    ``processes`` back-to-back fio processes, idle and beside ``hogs`` busy
    loops, with the gap between processes left idle and held (as a run of
    tkperf holds it); and QD 1 reads' waiting share (hostlimit)."""
    print(f"7. host load: steady RND 4K writes QD 32 as {processes} fio processes of {seconds} s, idle and "
          f"beside {hogs} busy loops ({capacity >> 20} MiB):")
    with Up(capacity, "bench-host", {}) as drive:
        fio(drive.device, "randwrite", "4k", 32, f"--io_size={3 * capacity}")
        for held in (False, True):
            for n in (0, hogs):
                loops = busy_loops(n)
                try:
                    if held:
                        control.hold(drive.rundir)
                    a, ios, took = drive.stats(), 0, 0.0
                    for _ in range(processes):
                        got = fio(drive.device, "randwrite", "4k", 32, "--time_based", f"--runtime={seconds}")
                        if held:
                            control.hold(drive.rundir)
                        ios, took = ios + got["total_ios"], took + got["runtime"] / 1e3
                    z = drive.stats()
                finally:
                    for loop in loops:
                        loop.kill()
                print(f"   gaps {'held' if held else 'idle'}, {n:2} busy loops: fio {ios / took:,.0f} IOPS, "
                      f"background GC copies {z['bg_gc_copies'] - a['bg_gc_copies']:,}, held "
                      f"{z['host_held_s'] - a['host_held_s']:.2f} s ({late(a, z)})")
        for n in (0, hogs):
            loops = busy_loops(n)
            try:
                a = drive.stats()
                got = fio(drive.device, "randread", "4k", 1, "--time_based", f"--runtime={seconds}")
                z = drive.stats()
            finally:
                for loop in loops:
                    loop.kill()
            share = hostlimit.share(a, z)
            print(f"   RND 4K reads QD 1, {n:2} busy loops: fio {got['iops']:,.0f} IOPS, mean "
                  f"{got['clat_ns']['mean'] / 1e3:,.0f} us against the model's {share['read_service_s'] * 1e6:,.0f}"
                  f" us; the drive waited for the host {share['host_wait_share']:.0%} of its active time "
                  f"(caveat above {hostlimit.WAIT_THRESHOLD:.0%}; {late(a, z)})")


def sizes(text: str) -> int:
    units: Iterator[Tuple[str, int]] = iter((("k", 10), ("m", 20), ("g", 30)))
    for suffix, shift in units:
        if text.lower().endswith(suffix):
            return int(text[:-1]) << shift
    return int(text)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--capacity", default="64m", help="drive capacity (default 64m)")
    p.add_argument("--fills", type=int, default=6, help="WAF: capacities to steady state, as many measured (default 6)")
    p.add_argument("--seconds", type=int, default=5, help="length of each timed fio run (default 5)")
    p.add_argument("--tiny", action="store_true", help="a quick look: 16 MiB, 2 fills, 1 s runs, idle 1 and 3 s")
    args = p.parse_args()
    capacity = sizes(args.capacity)
    fills, seconds, gaps = args.fills, args.seconds, (1.0, 3.0, 10.0)
    if args.tiny:
        capacity, fills, seconds, gaps = 16 << 20, 2, 1, (1.0, 3.0)
    waf(capacity, fills)
    why = control.available()
    if why:
        print(f"2-6 not run: {why}")
        return 1
    queue_depth(capacity, seconds)
    unmapped(capacity, seconds)
    transfer_size(capacity)
    service(capacity, seconds)
    idle(capacity, gaps)
    server(seconds)
    host(capacity // 2, 1 if args.tiny else 2, 2 if args.tiny else 12, 2 if args.tiny else 6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
