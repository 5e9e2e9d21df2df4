"""tkperf's recovery verdicts against an emulated SSD whose truth is known
(issue 33): host idle recovery (HIR) against the model's background GC in
the idle gaps, and cross-stimulus recovery (XSR) settling where the model
does.  How the truth is read and why a loop device cannot stand in:
test_simdrive_verdicts.py and :mod:`simtruth`.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from conftest import needs_fio
from simtruth import Counters, Watch, hold_to_drive, note, rel, run_tkperf, slices, unique_name, window_rate
from tkperf.testtypes.hir import iopslog
from tkperf.testtypes.hir.analysis import baseline, settings
from tkperf.testtypes.xsr import JOB_NAMES, LABELS
from tkperf.testtypes.xsr.analysis import RND, SEQ2, analyse, level, settle

pytestmark = needs_fio

#: As in test_simdrive_verdicts.py: tkperf's figure against the model's over
#: the same window of rounds (simtruth.hold_to_drive), and one write period against a level (a 1 s
#: period has the jitter of a stream's first interval).
SAME_WINDOW = 0.05
PERIOD = 0.25
#: tkperf's HIR baseline against the model's count of the same rounds over fio's time for each: the same
#: I/Os over the same seconds, so it differs only by fio's rounding of its rates (issue 56 item 6: a
#: baseline of the window's maximum round or of every round's mean, +1.4% against the model's count in
#: the review, must fail it).
COUNT = 0.003


def hold_baseline(t, watch) -> float:
    """tkperf's HIR baseline (the window's mean round, the PTS's steady-state
    average) against the mean of the model's count of each window round's
    writes over fio's runtime of that round; the relative difference."""
    rates = []
    for r in t.window_rounds():
        m = watch.one("run", f"hir round {r.index}")
        (w,) = [w for w in r.workloads if w.name == t.tracking_workload]
        assert w.write.ios == m.delta("host_write_ios")  # fio counted every write the drive got
        rates.append(m.delta("host_write_ios") / (w.runtime_ms / 1e3))
    base, model = baseline(t), float(np.mean(rates))
    note("hir baseline", tkperf=base, model=model, window_max=max(rates), rounds=len(rates))
    return rel(base, model)


def write_bursts(history: List[List[float]], start: float, end: float) -> List[Tuple[float, float, float]]:
    """(first second, last second, host write I/Os) of each run of model seconds
    with writes between ``start`` and ``end``, from the model's history
    (cumulative host write I/Os at every whole model second)."""
    rows = [r for r in history if start - 1 <= r[0] <= end + 1]
    out: List[Tuple[float, float, float]] = []
    run_start, run_ios = None, 0.0
    for a, z in zip(rows, rows[1:]):
        grew = z[2] - a[2]
        if grew > 0:
            run_start = a[0] if run_start is None else run_start
            run_ios += grew
        elif run_start is not None:
            out.append((run_start, a[0], run_ios))
            run_start, run_ios = None, 0.0
    if run_start is not None:
        out.append((run_start, rows[-1][0], run_ios))
    return out


# --- HIR ------------------------------------------------------------------------------------

def test_hir_recovery_follows_the_models_background_gc(simdrive, tmp_path, monkeypatch):
    # Background GC starts after 1.5 s of idle: a 1 s gap gives the drive
    # nothing, a 3 s gap 1.5 s of collecting as fast as it can (up to 16 free
    # blocks; no pace from the spare area: bg_spare_s 0).
    drive = simdrive(name=unique_name(), capacity="64M", op=7, bg_delay_ms=1500, bg_free_blocks=16, bg_duty_pct=100,
                     bg_spare_s=0)
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    run = run_tkperf(drive, tmp_path, "hir", "--tests", "hir", "--hir-wipc", "--wipc-loops", "1",
                     "--hir-idle", "1,3", "--hir-cycles", "2", "--hir-write", "1", "--hir-return", "2",
                     "--hir-round", "2", "--hir-qd", "32", "--max-rounds", "25", "--purge", "discard", watch=watch)
    (t,) = run.tests
    assert t.stop_reason == "all idle settings run after steady state" and t.steady.steady
    base = baseline(t)
    window = [watch.one("run", f"hir round {r}") for r in t.steady.rounds]
    fio_s = sum(w.runtime_ms for r in t.window_rounds() for w in r.workloads if w.name == t.tracking_workload) / 1e3
    why = hold_to_drive(base, window, fio_s, SAME_WINDOW)
    assert not why, why
    assert hold_baseline(t, watch) <= COUNT
    model_base = window_rate(window)
    assert all(m.delta("bg_gc_copies") == 0 for m in window)  # the gaps between rounds are short
    got = {s.idle_s: s for s in settings(t)}
    marks = {idle: watch.one("run", f"hir idle {idle} s") for idle in (1, 3)}
    # The model: no background GC in 1 s gaps, some in 3 s gaps.
    assert marks[1].delta("bg_gc_copies") == 0 and marks[1].delta("erases") > 0
    assert marks[3].delta("bg_gc_copies") > 0
    # tkperf: the write periods after a gap (not the lead-in) gain nothing
    # after 1 s and clearly more after 3 s.
    after_gap = {idle: s.iops[s.kind == iopslog.WHOLE] for idle, s in got.items()}
    note("hir", baseline=base, model=model_base, idle1=float(after_gap[1].mean()), idle3=float(after_gap[3].mean()),
         bg1=marks[1].delta("bg_gc_copies"), bg3=marks[3].delta("bg_gc_copies"))
    assert all(v.size for v in after_gap.values())
    # (a gap without GC still lets the write buffer drain: its pages are taken at the controller's pace)
    buffered = c.param("buffer_programs") * c.param("program_pages") / (base * float(t.params["write"]))
    assert rel(float(after_gap[1].mean()), base) <= PERIOD + buffered
    assert float(after_gap[3].mean()) > (1 + 2 * PERIOD) * base
    # Both gaps let the write buffer drain (its pages are in both periods); what the 3 s gaps add on top is
    # the background GC's, an amount of pages, not a factor: more than a period's jitter of the baseline.
    assert float(after_gap[3].mean()) > float(after_gap[1].mean()) + PERIOD * base
    assert got[3].gain_pct(base) > got[1].gain_pct(base)
    # ... and each of them is the model's own count of that write period.
    history = c(history=True)["history"]
    m = marks[3]
    bursts = write_bursts(history, m.before["model_time_s"], m.after["model_time_s"])
    # lead-in (write + idle seconds of writes), the periods after a gap, the return
    assert len(bursts) == 1 + len(after_gap[3]) + 1
    for (_a, _z, ios), iops in zip(bursts[1:-1], after_gap[3]):
        assert rel(iops * float(t.params["write"]), ios) <= PERIOD


def test_hir_gains_grow_with_idle_time_as_the_default_models_background_gc(simdrive, tmp_path, monkeypatch):
    # The default model: background GC from 100 ms of idle on, at 10% of the
    # time and no faster than the spare area in bg_spare_s, up to the spare
    # area: a 10 s gap collects several times what a 1 s gap does, and the
    # write period after it gains more.  (Since issue 56 made recovery grow
    # with the wait, a 1 s gap in steady state frees about one block: its
    # own gain is within a period's jitter, so only the 10 s gap's is held
    # above the baseline.)
    drive = simdrive(name=unique_name(), capacity="64M")
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    run = run_tkperf(drive, tmp_path, "hir", "--tests", "hir", "--hir-wipc", "--wipc-loops", "1",
                     "--hir-idle", "1,10", "--hir-cycles", "2", "--hir-write", "1", "--hir-return", "2",
                     "--hir-round", "2", "--hir-qd", "32", "--max-rounds", "25", "--purge", "discard", watch=watch)
    (t,) = run.tests
    assert t.stop_reason == "all idle settings run after steady state" and t.steady.steady
    base = baseline(t)
    assert hold_baseline(t, watch) <= COUNT
    got = {s.idle_s: s for s in settings(t)}
    marks = {idle: watch.one("run", f"hir idle {idle} s") for idle in (1, 10)}
    bg = {idle: m.delta("bg_gc_copies") for idle, m in marks.items()}
    after_gap = {idle: float(s.iops[s.kind == iopslog.WHOLE].mean()) for idle, s in got.items()}
    note("hir default", baseline=base, idle1=after_gap[1], idle10=after_gap[10], bg1=bg[1], bg10=bg[10])
    # The model: its background GC works in proportion to the idle time (the
    # 100 ms before it starts aside), and so frees more blocks.
    assert bg[1] > 0 and bg[10] > 5 * bg[1]
    # tkperf: the write periods after 10 s gaps run faster than after 1 s gaps, and the recovery tkperf
    # reports against the baseline grows with the idle time.
    assert after_gap[10] > after_gap[1]
    assert got[10].gain_pct(base) > max(got[1].gain_pct(base), 0)
    # How much faster is not held to a margin: on the model's own clock with an ideal host the second
    # after a 10 s gap takes 1,825 writes and after a 1 s gap 1,185 (1.54x), but one 1 s period of fio's
    # varies by a fifth on a loaded host (1,405-2,063 after 10 s gaps over 13 runs beside a CPU hog), and
    # a 25% margin failed 3 of them.  What the host cannot move: each period after a 10 s gap is the
    # model's own count of the writes in it (its per-second history: the gap leaves whole seconds idle).
    m = marks[10]
    bursts = write_bursts(c(history=True)["history"], m.before["model_time_s"], m.after["model_time_s"])
    periods = got[10].iops[got[10].kind == iopslog.WHOLE]
    assert len(bursts) == 1 + len(periods) + 1  # the lead-in, the periods after a gap, the return
    for (_a, _z, ios), iops in zip(bursts[1:-1], periods):
        assert rel(iops * float(t.params["write"]), ios) <= PERIOD


# --- XSR ------------------------------------------------------------------------------------

def test_xsr_settles_where_the_model_does(simdrive, tmp_path, monkeypatch):
    drive = simdrive(name=unique_name(), capacity="64M", op=7, program_us=250, copy_us=250)
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    run = run_tkperf(drive, tmp_path, "xsr", "--tests", "xsr", "--xsr-seq1", "4s", "--xsr-rnd", "10s",
                     "--xsr-seq2", "10s", "--xsr-interval", "1s", "--purge", "discard", watch=watch)
    (t,) = run.tests
    a = analyse(t)
    assert a is not None
    for kind in (RND, SEQ2):
        p = a.of(kind)
        assert p is not None and p.complete and p.settle.settled
        truth = slices(watch.one("stream", f"xsr {LABELS[kind]}"), JOB_NAMES[kind])
        assert len(truth) == p.rows
        seconds = a.fio_s[p.start:p.stop]
        # The drive's own throughput per interval (its busy time: a late
        # host is not the drive's), and its garbage collection: flash bytes
        # programmed per host byte.
        model_mb = np.array([x.host_bytes / x.busy_s / 1e6 for x in truth])
        waf = np.array([x.nand_bytes / x.host_bytes for x in truth])
        mine = a.mb_s[p.start:p.stop]
        band = p.settle.band_pct
        model = settle(model_mb, seconds, level(model_mb), band)
        final = level(waf[:-1])
        out_of_band = np.flatnonzero(np.abs(waf[:-1] - final) > 0.15 * final)
        gc_row = int(out_of_band[-1]) + 1 if out_of_band.size else 0
        note(f"xsr {kind}", settle_row=p.settle.row, model_row=model.row if model.settled else -1, gc_row=gc_row,
             level=p.level_mb_s, model_level=level(model_mb), waf_level=final,
             worst=max(rel(v, m) for v, m in zip(mine[1:-1], model_mb[1:-1])))
        # tkperf's intervals carry every byte the model was sent, and the
        # settle time they give is the model's: the drive's own throughput
        # settles in the same interval.
        stream = watch.one("stream", f"xsr {LABELS[kind]}")
        assert stream.delta("host_write_bytes") == t.series["intervals"].column("io_bytes")[p.start:p.stop].sum()
        assert model.settled and abs(p.settle.row - model.row) <= 1, (kind, p.settle, model)
        # Where tkperf says the phase settled, the model's GC has (to the
        # interval: the rolling median does not see a one-interval transient
        # at a phase's start).
        assert gc_row <= p.settle.row + 1, (kind, p.settle, waf.tolist())
        # The level tkperf reports (issue 56: not only the settle row) is the model's over the same
        # intervals: its host bytes over fio's interval times, the same median of the phase's last
        # quarter; and never above the drive's own pace (its busy time).
        seen = np.array([x.host_bytes / (x.fio_ms / 1e3) / 1e6 for x in truth])
        assert rel(p.level_mb_s, level(seen)) <= SAME_WINDOW, (kind, p.level_mb_s, level(seen))
        assert p.level_mb_s <= (1 + SAME_WINDOW) * level(model_mb), (kind, p.level_mb_s, level(model_mb))
