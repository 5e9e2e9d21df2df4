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
   program time +30%; ``read``, the page read time +30%; ``link``, the
   host link 30% slower, which bounds TP's 1024k reads), in a copy of
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
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tkperf import store  # noqa: E402
from tkperf.model import noise  # noqa: E402
from tkperf.simdrive import params  # noqa: E402  (this checkout's, as the shim runs it)
from tkperf.verdict import regression  # noqa: E402

JOB = ROOT / "examples" / "nightly" / "tkperf-nightly"
NAME = "nqbench"
MIN_NIGHTS = 3
#: The planted regressions: the model's flash program or read time (docs/simdrive.rst) +30%.
PLANTED = {name: [f"--{name}-us", str(round(params.PARAMS[f"{name}_us"][0] * 1.3))] for name in ("program", "read")}
#: The host link 30% slower (each byte's transfer +30%): the read path that TP's 1024k reads are bound by.
PLANTED["link"] = ["--link-mbs", f"{params.PARAMS['link_mbs'][0] / 1.3:.1f}"]


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
            "folder": folder.name, "figures": figures(folder)}


def figures(folder: Path) -> Dict[str, str]:
    """Every figure ``tkperf check`` judges of the night's result (its value),
    and of an extreme figure (``regression.extreme``) its window values too
    (``KEY:rounds``, ';'-separated), so the nights can be judged again offline."""
    out: Dict[str, str] = {}
    for path in sorted(folder.glob("*.xml")):
        try:
            run = store.load(str(path))
        except Exception:  # noqa: BLE001  (junit.xml and other XML that is no result)
            continue
        for test in run.tests:
            rounds = noise.window_values(test, regression.figures)
            for f in regression.figures(test):
                out[f.key] = f"{f.value:.6g}"
                if regression.extreme(f.key) and f.key in rounds:
                    out[f.key + ":rounds"] = ";".join(f"{v:.6g}" for v in rounds[f.key])
    return out


def record(path: Optional[str], rows: List[Dict[str, object]]) -> None:
    """Write the nights so far to ``path`` (CSV, a header line of comments first),
    as ``benchmarks/data/nights-emulated-ssd.csv`` holds the review's nights."""
    if not path:
        return
    keys: List[str] = []
    for r in rows:
        keys += [k for k in r["figures"] if k not in keys]  # type: ignore[attr-defined]
    head = ["night", "kind", "exit", "verdict", "load_1min", "idle_pct", "secs"] + keys
    lines = ["# Nights of the example nightly job (examples/nightly/tkperf-nightly, TKPERF_QUICK=1) on",
             "# tkperf's emulated SSD (64 MiB, made afresh each night), recorded by benchmarks/nightly_real.py",
             "# --record; kind: identical, or a planted regression (program/read +30%), 'accepted' after",
             "# --accept.  Figures as tkperf check judges them; KEY:rounds: an extreme figure's window values.",
             ",".join(head)]
    for r in rows:
        idle = r["idle"]
        base = [str(r["label"]), str(r["kind"]), str(r["rc"]), str(r["verdict"]).replace(",", ";"),
                "" if r["load"] is None else f"{r['load']:.2f}",
                "" if idle is None else f"{float(idle) * 100:.1f}", f"{r['secs']:.0f}"]  # type: ignore[arg-type]
        lines.append(",".join(base + [r["figures"].get(k, "") for k in keys]))  # type: ignore[attr-defined]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


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


def _rows(path: str) -> List[Dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        lines = [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","))) for line in lines[1:]]


def _p_worse(value: float, nights: List[float], rounds: List[List[float]], extreme: bool) -> Optional[float]:
    """The whole move's p (worse: higher, a latency) against the nights: a
    normal prediction interval on the values, its floor the window means'
    variance (as before issue 58), or, for an extreme figure, on a log scale
    with one round's variance as its floor (as ``tkperf check`` judges it)."""
    if extreme:
        logs = [[math.log(v) for v in r] for r in rounds if len(r) > 1]
        floor = noise.mean([noise.variance(r) for r in logs] or [0.0])
        t = noise.predict(math.log(value), [math.log(v) for v in nights], "lower", floor)
    else:
        floor = noise.mean([noise.variance(r) / len(r) for r in rounds if len(r) > 1] or [0.0])
        t = noise.predict(value, nights, "lower", floor)
    return None if t is None else t.p_worse


def _parts(row: Dict[str, str], key: str) -> Tuple[float, List[float]]:
    """(the figure, its window values) of a recorded night."""
    return float(row[key]), [float(v) for v in row[key + ":rounds"].split(";") if v]


def judge(path: str, last: int = 7) -> int:
    """``--judge CSV``: each extreme figure of the recorded nights (``KEY:rounds``)
    judged offline, the normal interval against the extreme model: each
    identical night after the first ``MIN_NIGHTS`` against the identical nights
    before it (the last ``last``), each planted night against the last
    ``last`` identical nights; how many have p < 0.05 and p < 0.01, and the
    move.  (The figures' p before Holm's correction: what the night's shift
    path needed to go red, whole-move p < 0.05 with a significant shift.)"""
    rows = _rows(path)
    same = [r for r in rows if r["kind"] == "identical"]
    keys = [k[:-len(":rounds")] for k in rows[0] if k.endswith(":rounds")]
    identical = [(same[i], same[max(0, i - last):i]) for i in range(MIN_NIGHTS, len(same))]
    planted = [(r, same[-last:]) for r in rows if r["kind"] in PLANTED]
    for key in keys:
        print(f"{key}:")
        for label, cases in (("identical", identical), ("planted", planted)):
            if not cases:
                continue
            for extreme, how in ((False, "normal, values"), (True, "log, one round's spread")):
                ps, moves = [], []
                for r, base in cases:
                    value, mine = _parts(r, key)
                    nights = [_parts(b, key) for b in base]
                    p = _p_worse(value, [v for v, _ in nights], [w for _, w in nights] + [mine], extreme)
                    ps.append(1.0 if p is None else p)
                    moves.append(100 * (value / noise.mean([v for v, _ in nights]) - 1))
                print(f"  {label:<9} {how:<24} p<0.05 {sum(p < 0.05 for p in ps):>2} of {len(ps)}, p<0.01 "
                      f"{sum(p < 0.01 for p in ps):>2}; moves {min(moves):+.1f}% to {max(moves):+.1f}%")
    return 0


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
    ap.add_argument("--kinds", default="program,read", help="planted regressions: program, read, link")
    ap.add_argument("--tests", default="iops,tp,lat,wsat", help="the job's TKPERF_TESTS")
    ap.add_argument("--small", action="store_true", help="1 judged night, 2 nights of 'program', TP and LAT")
    ap.add_argument("--tiny", action="store_true", help="one first night of TP, not judged (the test suite's mode)")
    ap.add_argument("--record", metavar="CSV", help="write every night's figures to CSV (benchmarks/data/)")
    ap.add_argument("--judge", metavar="CSV", help="run no night: judge the extreme figures of recorded nights")
    args = ap.parse_args()
    if args.judge:
        return judge(args.judge)
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
        rows: List[Dict[str, object]] = []
        for i in range(MIN_NIGHTS + args.nights):
            n = night(shim, base, args.tests, [])
            show(f"N{i + 1:02d}" + ("" if i >= MIN_NIGHTS else " (first)"), n)
            rows.append(dict(n, label=f"N{i + 1:02d}", kind="identical"))
            record(args.record, rows)
            if i >= MIN_NIGHTS:
                judged.append(n)
        red = sum(1 for n in judged if n["rc"] == 1)
        other = sum(1 for n in judged if n["rc"] not in (0, 1))
        print(f"identical nights red: {red} of {len(judged)}  target <= 1 of 20"
              + (f"  ({other} nights failed otherwise)" if other else ""), flush=True)
        for kind in kinds:
            copy = work / f"nightly-{kind}"
            shutil.copytree(base, copy, symlinks=True)
            nights = []
            for j in range(args.regression_nights):
                nights.append(night(shim, copy, args.tests, PLANTED[kind]))
                show(f"{kind} +30% #{j + 1}", nights[-1])
                rows.append(dict(nights[-1], label=f"{kind[0].upper()}{j + 1}", kind=kind))
                record(args.record, rows)
            accept = subprocess.run(["bash", str(JOB), "--accept"], env=dict(os.environ, TKPERF_OUTDIR=str(copy)),
                                    capture_output=True, text=True, timeout=60)
            after = night(shim, copy, args.tests, PLANTED[kind])
            show(f"{kind} accepted", after)
            rows.append(dict(after, label=f"{kind[0].upper()}A", kind=f"{kind} accepted"))
            record(args.record, rows)
            reds = sum(1 for n in nights if n["rc"] == 1)
            print(f"{kind} +30%: red on {reds} of {len(nights)} nights  target all; "
                  f"after --accept ({accept.returncode}): exit {after['rc']} ({after['verdict']})  target 0",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
