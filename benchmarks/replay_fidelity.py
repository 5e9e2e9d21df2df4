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
* ``pgbench``: examples/rwsw/pgbench.xml (PostgreSQL's pgbench on ext4);
* ``flushing``: a flushing workload with discards, recorded here with the
  capture's trace reader stalled: 150 IOPS RND 4 KiB writes each followed
  by an fsync (a database's log), 300 IOPS RND 8 KiB reads (iodepth 2) and
  10 discards of 1 MiB a second, and a 4 s burst of RND 4 KiB reads at QD 16
  (of a discarded range: fast) while the capture process is stopped
  (SIGSTOP) for 5 s, so that the kernel's trace buffer overflows: the steps the loss touched are marked in
  the capture and not judged by the replay (issue 57).

Each is replayed ``--replay steps`` (at the captured intensity) and
``--replay exact`` on a fresh 512 MiB loop device over a sparse file and on
an emulated SSD (``tkperf simdrive``, 256 MiB), all made here and always
removed.  Root, fio and tracefs needed.  Targets (issue 42): steps replay
IOPS per step within 10% of the capture's where the drive can serve it;
exact replay's mean response time within 2x of the capture's; stream
shares within 1 point.  Issue 57: per step, QD and mean and p99 response
time within 1.2x of the capture's (a figure beyond it is marked MISS; on
another device than the captured one a miss is the device's, not the
replay's).  The mix is also captured and replayed on a loop device over a
file in /dev/shm (``[shm]``): no virtual disk under it, so the device
repeats itself more closely, and it is run twice more against itself as
the bound.  The tally at the end is per device.  ``--tiny``: the pgbench
capture on the loop device only.

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
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO]

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.rwsw import iolog, model  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402
from tkperf.testtypes.realworld import exact, exactlog  # noqa: E402
from tkperf.testtypes.realworld.delivered import measured, overall, step_rounds, steps, touched  # noqa: E402

PGBENCH = os.path.join(REPO, "examples", "rwsw", "pgbench.xml")
MIX = os.path.join(HERE, "data", "replay-mix.fio")
FLUSHING = os.path.join(HERE, "data", "replay-flushing.fio")


#: The captures recorded on the benchmark's own devices, (device kind, capture): the device is set as the
#: capture met it (written whole) before each replay there.
SAME_DEVICE = (("loop", "mix"), ("loop", "flushing"), ("shm", "mix-shm"))
#: When the flushing workload's burst starts, how long it lasts, and the capture's stall around it (s).
BURST_AT, BURST_S, STALL_AT, STALL_S = 5, 4, 4.5, 5.0
#: Within this factor of the capture's, either way, a replayed step's figure is counted as held (issue 57).
WITHIN = 1.2
#: Per figure (QD, mean, p99): [steps within WITHIN, steps judged], over every replay of the run.
TALLY: Dict[str, List[int]] = {}


def _job_text(path: str) -> str:
    with open(path, encoding="ascii") as fh:
        return fh.read()


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def tk(argv: List[str]) -> int:
    return subprocess.run([sys.executable, "-m", "tkperf", *argv], cwd=REPO).returncode


def _stall(proc: subprocess.Popen, at: float, seconds: float) -> threading.Thread:
    """Stop the capture process ``at`` s from now for ``seconds`` (SIGSTOP, SIGCONT): its trace
    reader stalls, as on a busy host, and the kernel's buffer loses what overflows it."""
    def run() -> None:
        time.sleep(at)
        proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            proc.send_signal(signal.SIGCONT)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def recorded(dev: str, seconds: float, step: str, name: str, outdir: str, action: Callable[[], None],
             stall: Optional[Tuple[float, float]] = None) -> Optional[str]:
    """Record ``dev`` with tkperf capture while ``action`` runs; the capture's path, or None.
    ``seconds`` bounds the recording; it is stopped early (Ctrl-C: the capture keeps what it
    recorded) a second after ``action`` returns, so no recording idles on to its bound.
    ``stall``: (at, for) seconds after ``action`` starts, the capture process is stopped."""
    argv = [sys.executable, "-m", "tkperf", "capture", dev, "--duration", f"{int(seconds)}s", "--step", step,
            "--name", name, "--outdir", outdir, "--quiet"]
    print("  $ " + " ".join(argv[2:]))
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL)
    time.sleep(2.0)  # tracing set up before the I/O starts
    stalled = _stall(proc, *stall) if stall else None
    try:
        action()
        if stalled is not None:
            stalled.join()
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


def make_mix(dev: str, scratch: str, seconds: int, name: str = "mix") -> Optional[str]:
    job = os.path.join(scratch, "mix.fio")
    with open(job, "w", encoding="ascii") as fh:
        fh.write(_job_text(MIX).format(seconds=seconds, dev=dev))
    prepare(dev, "mix")
    return recorded(dev, seconds + 4, "2s", name, scratch,
                    lambda: subprocess.run(["fio", "--output=/dev/null", job], check=False))


def against_itself(first: str, again: Optional[str], kind: str = "loop") -> None:
    """The mix run a second time and captured again, each step against the first capture's: how
    near the original workload comes to itself on this host, the bound for any replay."""
    if again is None:
        return
    a, b = model.load(first), model.load(again)
    for x, y in zip(a.steps, b.steps):
        if x.iops < 0.9 * 500 or y.iops < 0.9 * 500:  # fio's start and end: not full steps
            continue
        p99 = _vs(exactlog.seen_figure(x, "lat", "p99_us") or 0.0, exactlog.seen_figure(y, "lat", "p99_us"), 0,
                  f"[{kind}] itself p99")
        print(f"[{kind}] mix again, step {x.number}: QD {_vs(x.qd, y.qd, 3, f'[{kind}] itself QD')} | mean RT µs "
              f"{_vs(exactlog.mean_rt_us(x), exactlog.mean_rt_us(y), 0, f'[{kind}] itself mean')} | p99 µs {p99}")
    os.remove(again)
    if b.iolog:
        os.remove(os.path.join(os.path.dirname(again), b.iolog))


def fill(dev: str) -> None:
    """Write the whole loop device once before every capture and every replay: a sparse file's
    never-written blocks (and those a discard punched out) read and write at another speed than
    written ones, so without it the replay of a capture met another device than the capture did
    (the state its earlier captures and replays left), whatever the replay did."""
    subprocess.run(["fio", "--output=/dev/null", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1m",
                    "--direct=1", "--ioengine=libaio", "--iodepth=4", "--size=100%"], check=False)


def prepare(dev: str, name: str) -> None:
    """The device state a capture made here met, set again before each of its replays: written whole,
    and for ``flushing`` the burst's last 64 MiB discarded (holes answer at memory speed, so the
    stalled reader's buffer overflows on a loaded host too; the other streams keep to written blocks)."""
    fill(dev)
    if name == "flushing":
        subprocess.run(["fio", "--output=/dev/null", "--name=hole", f"--filename={dev}", "--rw=trim", "--bs=1m",
                        "--offset=448m", "--size=64m"], check=False)


def make_flushing(dev: str, scratch: str, seconds: int) -> Optional[str]:
    job = os.path.join(scratch, "flushing.fio")
    with open(job, "w", encoding="ascii") as fh:
        fh.write(_job_text(FLUSHING).format(seconds=seconds, dev=dev, burst_at=BURST_AT, burst_s=BURST_S))
    prepare(dev, "flushing")
    return recorded(dev, seconds + 4, "2s", "flushing", scratch,
                    lambda: subprocess.run(["fio", "--output=/dev/null", job], check=False),
                    stall=(STALL_AT, STALL_S))


def _p(x: Optional[float], digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _vs(asked: float, got: Optional[float], digits: int = 0, what: str = "") -> str:
    """``captured / replayed (ratio)``, MISS beyond 1.2x either way; counted in :data:`TALLY` under ``what``."""
    if got is None or asked <= 0:
        return f"{_p(asked if asked > 0 else None, digits)} / {_p(got, digits)}"
    ratio = got / asked
    held = 1 / WITHIN <= ratio <= WITHIN
    if what:
        mine = TALLY.setdefault(what, [0, 0])
        mine[0] += held
        mine[1] += 1
    return f"{asked:,.{digits}f} / {got:,.{digits}f} ({ratio:.2f}x{'' if held else ' MISS'})"


def _exact_steps(head: str, test) -> None:
    """An exact replay's figures in each captured step's window, beside the capture's."""
    for n, got in exact.step_figures(test):
        if touched(test, n):
            print(f"{head} step {n}: not judged, the capture lost events in it")
            continue
        if got is None:
            continue
        params = test.params
        asked = [float(params.get(f"step.{n}.{k}", 0.0)) for k in ("qd", "lat_mean_us", "lat_p99_us")]
        lat = got.ios > 0
        kind = head.split()[0]
        print(f"{head} step {n}: I/Os {got.ios:,} | QD {_vs(asked[0], got.qd, 3, f'{kind} exact QD')} | mean RT µs "
              f"{_vs(asked[1], got.lat_mean_us if lat else None, 0, f'{kind} exact mean')} | p99 µs "
              f"{_vs(asked[2], got.lat_p99_us if lat else None, 0, f'{kind} exact p99')}"
              f"{' (lost events in the replay trace)' if got.lost else ''}")


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
    if (kind, cap.name) in SAME_DEVICE:  # the device state the capture met (pgbench's was elsewhere)
        prepare(dev, cap.name)
    again = recorded(dev, seconds, "1s", "again", scratch, lambda: rc.append(main(argv)))
    if not rc or rc[0] not in (0, 1):
        print(f"[{kind}] {cap.name} {mode}: tkperf exited {rc}")
        return
    test = store.load(os.path.join(out, "r.xml")).tests[0]
    head = f"[{kind}] {cap.name} {mode}"
    if mode == "exact":
        _exact_steps(head, test)
    _step_lines(head, test)
    _whole_lines(head, cap, cap_path, test, mode)
    if again is not None:
        re = model.load(again)
        print(f"{head} re-capture of the replay: {sum(s.ios for s in re.streams):,} I/Os, mean RT µs "
              f"{_rt_us(re):,.0f}, p99 µs {_p(_p99(re))}, flushes "
              f"{_p(exactlog.seen_figure(re, 'flushes'))} ({load()})")
        os.remove(again)
        if re.iolog:
            os.remove(os.path.join(scratch, re.iolog))


def _step_lines(head: str, test) -> None:
    """A steps replay's figures per step, beside the capture's."""
    for got in steps(test):
        if got.touched:
            print(f"{head} step {got.step}: not judged, the capture lost events in it")
            continue
        off = max((abs(x.share - x.asked_share) for x in got.streams), default=0.0)
        ratio = got.iops / got.kept_iops if got.kept_iops else 0.0
        kind = head.split()[0]
        print(f"{head} step {got.step}: IOPS captured {got.kept_iops:,.1f} replayed {got.iops:,.1f} ({ratio:.2f}x"
              f"{'' if 0.9 <= ratio <= 1.1 else ' MISS'}) | QD {_vs(got.asked_qd, got.qd, 3, f'{kind} steps QD')} | "
              f"mean RT µs {_vs(got.asked_lat_us, got.lat_mean_us, 0, f'{kind} steps mean')} | p99 µs "
              f"{_vs(got.asked_p99_us, got.lat_p99_us, 0, f'{kind} steps p99')} | "
              f"flushes {got.asked_flushes:,} / {_p(got.flushes)} ({got.source}{', lost events' if got.lost else ''})"
              f" | shares off by at most {100 * off:.1f} pt{'' if off <= 0.01 else ' MISS'}")


def _whole_lines(head: str, cap: model.Capture, cap_path: str, test, mode: str) -> None:
    """A replay's whole figures beside the capture's (not judged for a capture that lost events)."""
    got_all = [measured(test, r) for r in test.rounds]
    flushes = sum(m.flushes for m in got_all if m is not None)
    if mode == "exact" and cap.steps_touched_by_loss:
        print(f"{head} exact, whole: not judged, the capture lost events in steps "
              f"{', '.join(map(str, cap.steps_touched_by_loss))}")
    elif mode == "exact" and got_all and got_all[-1] is not None:
        m = got_all[-1]
        print(f"{head} exact, whole: QD {_vs(cap.qd, m.qd, 3)} | mean RT µs {_vs(_rt_us(cap), m.lat_mean_us)} | "
              f"p99 µs {_vs(_p99(cap) or 0.0, m.lat_p99_us)} ({m.source})")
    whole = overall(test)
    if whole is None:
        print(f"{head}: nothing measured")
        return
    rt = _rt_us(cap) if not cap.steps_touched_by_loss else 0.0  # its whole figures miss what was lost
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


def on_device(kind: str, dev: str, scratch: str, captures: List[str]) -> None:
    for cap_path in captures:
        for mode in ("steps", "exact"):
            replay(dev, kind, cap_path, mode, scratch)


def ram_backed(scratch: str, seconds: int) -> None:
    """The mix captured on a loop device over a file in /dev/shm and replayed there: its response time is
    the host's path through the block layer and memory, with no virtual disk under it, so the workload
    comes nearer to itself from run to run than on the disk-backed loop device (run twice more as the
    bound), and a replay's figures are judged against a device that repeats itself."""
    if not os.path.isdir("/dev/shm"):
        print("[shm] no /dev/shm: skipped")
        return
    with LoopDevice(512 << 20, "/dev/shm") as dev:
        mix = make_mix(dev, scratch, seconds, "mix-shm")
        if mix is None:
            return
        for k in (1, 2):
            against_itself(mix, make_mix(dev, scratch, seconds, f"mix-shm-again{k}"), "shm")
        on_device("shm", dev, scratch, [mix])


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
                flushing = make_flushing(dev, scratch, args.mix_seconds + 4)
                if flushing is not None:
                    c = model.load(flushing)
                    print(f"[loop] flushing captured: {c.iops:,.1f} IOPS, QD {c.qd:.2f}, flushes "
                          f"{_p(exactlog.seen_figure(c, 'flushes'))}, discards "
                          f"{_p(exactlog.seen_figure(c, 'discards'))}"
                          f", lost events {_p(exactlog.seen_figure(c, 'lost_events'))}, steps touched by the loss "
                          f"{list(c.steps_touched_by_loss) or 'none'}; per step IOPS / QD / mean RT µs: "
                          + ", ".join(f"{st.iops:,.0f} / {st.qd:.2f} / {exactlog.mean_rt_us(st):,.0f}"
                                      for st in c.steps))
                    captures.append(flushing)
                mix = make_mix(dev, scratch, args.mix_seconds)
                if mix is not None:
                    c = model.load(mix)
                    print(f"[loop] mix captured: {c.iops:,.1f} IOPS (asked 500), QD {c.qd:.2f}, "
                          + ", ".join(f"{s.key} {100 * s.share:.1f}%" for s in c.streams[:4]))
                    rts = [exactlog.mean_rt_us(st) for st in c.steps if st.iops > 0.9 * 500]
                    if rts:  # the same workload in every full step: how far the device itself varies
                        print(f"[loop] mix captured, its own full steps: mean RT {min(rts):,.0f} to {max(rts):,.0f} µs "
                              f"({max(rts) / min(rts):.2f}x apart, the same workload on the same device; {load()})")
                    captures.append(mix)
                    against_itself(mix, make_mix(dev, scratch, args.mix_seconds, "mix-again"))
            pg = os.path.join(scratch, "pgbench.xml")
            shutil.copy(PGBENCH, pg)
            shutil.copy(PGBENCH.replace(".xml", ".iolog"), os.path.join(scratch, "pgbench.iolog"))
            captures.append(pg)
            on_device("loop", dev, scratch, captures)
        if not args.tiny:
            ram_backed(scratch, args.mix_seconds)
        if not (args.tiny or args.no_simdrive):
            simdrive(scratch, captures)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"steps within {WITHIN}x of the capture's, per figure: " + ", ".join(
        f"{what} {held} of {judged}" for what, (held, judged) in sorted(TALLY.items())) + f" ({load()})")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
