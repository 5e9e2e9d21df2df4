"""CPU of the live throughput display: fio's status reports of a round read,
parsed and measured (:func:`tkperf.fio.backend._read_live` and
:class:`tkperf.fio.live.LiveMeter`), per second of the round.

Prints figures, asserts nothing.  A status report of a round lists every
job of it, so the cost grows with the workloads of a round: the PTS IOPS
round has 56 (8 block sizes x 7 mixes), and with ``--latency-histograms``
each carries fio's json+ bins.  The reports are REAL fio 3.33 output
(tests/data: a --status-interval report and a json+ report), their one job
copied to N jobs with advancing counters: SYNTHETIC numbers, real shape.
Target: about 1% of one core at the interval tkperf picks for the round
(:func:`tkperf.fio.live.interval_for`).

    python3 benchmarks/live.py [--jobs 56] [--reports 300]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tkperf.fio import live  # noqa: E402
from tkperf.fio.backend import LiveReader  # noqa: E402
from tkperf.fio.live import LiveMeter  # noqa: E402
from tkperf.fio.output import json_objects  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data")


def _first_job(name: str) -> dict:
    text = open(os.path.join(DATA, name), encoding="utf-8").read()
    obj, _ = next(json_objects(text))
    return obj


def reports(base: dict, jobs: int, count: int) -> str:
    """``count`` reports of ``jobs`` jobs, job k running in report k * count / jobs."""
    job = base["jobs"][0]
    out = []
    for r in range(1, count + 1):
        running = min(r * jobs // count, jobs - 1)
        listed = []
        for k in range(jobs):
            j = copy.deepcopy(job)
            j["jobname"] = f"w{k}"
            done = 1.0 if k < running else (0.5 if k == running else 0.0)
            for d in ("read", "write"):
                j[d]["total_ios"] = int(j[d].get("total_ios", 0) * done * r)
                j[d]["runtime"] = int(1000 * r * done)
            listed.append(j)
        out.append(json.dumps({**base, "jobs": listed}, indent=2))  # as fio prints it
    return "\n".join(out)


def measure(text: str) -> float:
    """CPU seconds to read ``text`` in 64 KiB chunks, as fio's pipe gives it,
    into reports and measure each (:class:`tkperf.fio.backend.LiveReader`)."""
    seen = []
    live.set_sink(seen.append)
    reader = LiveReader(LiveMeter("bench round"))
    t0 = time.process_time()
    for at in range(0, len(text), 1 << 16):
        reader.feed(text[at:at + (1 << 16)])
    reader.finish()
    cpu = time.process_time() - t0
    live.set_sink(None)
    assert seen, "no report was measured"
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=56)
    ap.add_argument("--reports", type=int, default=300)
    ap.add_argument("--tiny", action="store_true", help="a small run of the same code paths (seconds): does it run")
    args = ap.parse_args()
    if args.tiny:
        args.jobs, args.reports = 4, 10
    for label, name in (("json ", "fio-3.33-status-interval.json"), ("json+", "fio-3.33-jsonplus-randread-2jobs.json")):
        text = reports(_first_job(name), args.jobs, args.reports)
        cpu = measure(text)
        per_report = cpu / args.reports
        every = live.interval_for(args.jobs, label.strip() == "json+")
        print(f"{label}: {args.jobs} jobs, {len(text) / args.reports / 1e3:,.0f} kB per report: "
              f"{per_report * 1e3:.2f} ms CPU per report; a report every {every} s: "
              f"{per_report / every:.2%} of one core")


if __name__ == "__main__":
    main()
