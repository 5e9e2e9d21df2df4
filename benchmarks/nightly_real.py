"""Real nights of the example nightly job on tkperf's emulated SSD: false alarms and planted regressions.

``benchmarks/nightly.py`` simulates nights; this one runs them: every
night is ``examples/nightly/tkperf-nightly`` (``TKPERF_QUICK=1``) on an
emulated SSD made afresh for it (``tkperf simdrive up``, always with the
same name, so the same serial) and taken down after it, as a lab would
run it on a drive that is unchanged from night to night.

1. ``--nights`` identical nights (default 20, after the job's
   ``TKPERF_MIN_NIGHTS`` 3 first nights, which are not judged): how many
   are red (the job exits 1).  Target (issue "Nightly QA on real
   nights"): at most 1 of 20.
2. For each planted regression (``--kinds``: ``program``, the flash
   program time +30%; ``read``, the page read time +30%), in a copy of
   the output folder as the identical nights left it, ``--regression-nights``
   nights of the changed drive (default 3): how many are red.  Target:
   every one, until accepted; then ``tkperf-nightly --accept`` and one
   more night of the changed drive, which must be green (the new level).

Per night it prints the exit code, the first line the job printed, the
1-minute load average at the night's start (the job's ``loadavg-start``)
and the emulated SSD's idle share (the check's ``host`` facts in the
night's ``summary.json``); its verdict column adds, from the same
``check`` entry, how many nights a red night has been red (``(2 n)``:
``red_since``) and how many figures were left out as host-limited.  ``--small`` is the cheap mode: 1 judged
identical night, 2 nights of the ``program`` regression, TP and LAT only
(a few minutes on 2 cores); the full run takes 40-60 minutes.  ``--tiny``
(the test suite's mode, so the script does not rot) runs one first night
of TP alone, not judged, and prints its line.

    python3 benchmarks/nightly_real.py [--nights 20] [--regression-nights 3]
                                      [--kinds program,read] [--tests iops,tp,lat,wsat] [--small | --tiny]

Needs root, fio and the kernel's NBD or ublk support that ``tkperf
simdrive`` uses; writes only to the emulated SSDs it makes.
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
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tkperf.simdrive import params  # noqa: E402  (this checkout's, as the shim runs it)

JOB = ROOT / "examples" / "nightly" / "tkperf-nightly"
NAME = "nqbench"
MIN_NIGHTS = 3
#: The planted regressions: the model's flash program or read time (docs/simdrive.rst) +30%.
PLANTED = {name: [f"--{name}-us", str(round(params.PARAMS[f"{name}_us"][0] * 1.3))] for name in ("program", "read")}


def tkperf(bindir: Path) -> str:
    """A ``tkperf`` for the job to call by name: this checkout's."""
    shim = bindir / "tkperf"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m tkperf "$@"\n')
    shim.chmod(0o755)
    return str(shim)


def night(shim: str, outdir: Path, tests: str, model: List[str]) -> Dict[str, object]:
    """One night: a fresh emulated SSD, the job, the drive taken down."""
    up = subprocess.run([shim, "simdrive", "up", "--capacity", "64m", "--name", NAME, *model],
                        capture_output=True, text=True, timeout=300)
    if up.returncode != 0:
        raise SystemExit(f"simdrive up failed: {up.stderr.strip()}")
    dev = up.stdout.strip().splitlines()[-1]
    started = time.monotonic()
    try:
        env = dict(os.environ, TKPERF=shim, TKPERF_DEVICE=dev, TKPERF_OUTDIR=str(outdir), TKPERF_QUICK="1",
                   TKPERF_TESTS=tests, TKPERF_MIN_NIGHTS=str(MIN_NIGHTS))
        job = subprocess.run(["bash", str(JOB)], env=env, capture_output=True, text=True, timeout=3600,
                             stdin=subprocess.DEVNULL)
    finally:
        subprocess.run([shim, "simdrive", "down", dev], capture_output=True, text=True, timeout=300)
    folder = sorted(outdir.glob("nightly-*"))[-1]
    return {"rc": job.returncode, "said": (job.stdout.strip().splitlines() or [""])[0][:150],
            "load": _load(folder), "idle": _idle(folder), "secs": time.monotonic() - started,
            "verdict": _verdict(folder),
            "folder": folder.name}


def _load(folder: Path) -> Optional[float]:
    try:
        return float((folder / "loadavg-start").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _verdict(folder: Path) -> str:
    """The check's verdict as the night's summary.json holds it ('-': none), with
    since how many nights a red night is red and how many figures were left out
    as host-limited."""
    try:
        check = json.loads((folder / "summary.json").read_text())["check"]
        verdict = str(check["verdict"])
        since = check.get("red_since")
        if isinstance(since, dict):
            verdict += f" ({since.get('nights')} n)"
        held = check.get("host_limited") or []
        return verdict + (f" {len(held)} host-limited" if held else "")
    except (OSError, ValueError, KeyError, TypeError):
        return "-"


def _idle(folder: Path) -> Optional[float]:
    try:
        host = json.loads((folder / "summary.json").read_text())["check"]["host"]["simdrive_host"]
        return float(host["idle_share"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def show(label: str, n: Dict[str, object]) -> None:
    load = "-" if n["load"] is None else f"{n['load']:.1f}"
    idle = "-" if n["idle"] is None else f"{n['idle']:.0%}"
    print(f"  {label:<16} exit {n['rc']}  {n['verdict']:<16}  load {load:>5}  idle {idle:>4}  {n['secs']:4.0f} s"
          f"  {n['said']}", flush=True)


def tiny(args: argparse.Namespace) -> int:
    """One first night of TP alone: the job's whole path, nothing judged."""
    work = Path(tempfile.mkdtemp(prefix="tkperf-nightly-real-"))
    try:
        bindir = work / "bin"
        bindir.mkdir()
        n = night(tkperf(bindir), work / "nightly", "tp", [])
        show("N01 (first)", n)
        return 0 if n["rc"] == 0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nights", type=int, default=20, help="identical nights judged (default 20)")
    ap.add_argument("--regression-nights", type=int, default=3, help="nights of each planted regression")
    ap.add_argument("--kinds", default="program,read", help="planted regressions: program, read")
    ap.add_argument("--tests", default="iops,tp,lat,wsat", help="the job's TKPERF_TESTS")
    ap.add_argument("--small", action="store_true", help="1 judged night, 2 nights of 'program', TP and LAT")
    ap.add_argument("--tiny", action="store_true", help="one first night of TP, not judged (the test suite's mode)")
    args = ap.parse_args()
    if args.tiny:
        return tiny(args)
    if args.small:
        args.nights, args.regression_nights, args.kinds, args.tests = 1, 2, "program", "tp,lat"
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in PLANTED]
    if unknown:
        ap.error(f"--kinds {','.join(unknown)}: known: {', '.join(PLANTED)}")
    work = Path(tempfile.mkdtemp(prefix="tkperf-nightly-real-"))
    try:
        bindir = work / "bin"
        bindir.mkdir()
        shim = tkperf(bindir)
        base = work / "nightly"
        print(f"identical nights: {MIN_NIGHTS} not judged, then {args.nights} judged; tests {args.tests}, "
              f"--quick, 64 MiB emulated SSD made afresh each night", flush=True)
        judged = []
        for i in range(MIN_NIGHTS + args.nights):
            n = night(shim, base, args.tests, [])
            show(f"N{i + 1:02d}" + ("" if i >= MIN_NIGHTS else " (first)"), n)
            if i >= MIN_NIGHTS:
                judged.append(n)
        red = sum(1 for n in judged if n["rc"] == 1)
        other = sum(1 for n in judged if n["rc"] not in (0, 1))
        print(f"identical nights red: {red} of {len(judged)}  target <= 1 of 20"
              + (f"  ({other} nights failed otherwise)" if other else ""), flush=True)
        for kind in kinds:
            copy = work / f"nightly-{kind}"
            shutil.copytree(base, copy, symlinks=True)
            nights = [night(shim, copy, args.tests, PLANTED[kind]) for _ in range(args.regression_nights)]
            for j, n in enumerate(nights):
                show(f"{kind} +30% #{j + 1}", n)
            accept = subprocess.run(["bash", str(JOB), "--accept"], env=dict(os.environ, TKPERF_OUTDIR=str(copy)),
                                    capture_output=True, text=True, timeout=60)
            after = night(shim, copy, args.tests, PLANTED[kind])
            show(f"{kind} accepted", after)
            reds = sum(1 for n in nights if n["rc"] == 1)
            print(f"{kind} +30%: red on {reds} of {len(nights)} nights  target all; "
                  f"after --accept ({accept.returncode}): exit {after['rc']} ({after['verdict']})  target 0",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
