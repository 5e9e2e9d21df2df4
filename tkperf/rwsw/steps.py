"""A capture's figures gathered as its requests stream by (:class:`Accumulator`).

The requests come in issue order, in batches, from
:class:`tkperf.rwsw.trace.Pairer`; nothing is kept per I/O.  Per time step
of the capture (a fixed grid from its start; a last step shorter than 1%
of the step joins the one before) the accumulator keeps the I/O count and
bytes of each IO stream (the stream rule: :class:`tkperf.rwsw.analysis.SeqRule`),
the time I/Os were outstanding in the step (its queue depth, by the rule
of :mod:`tkperf.rwsw.analysis`), the response times of its reads and
writes in two histograms (:mod:`tkperf.rwsw.latency`; a step's are made
into figures and dropped once the I/Os have moved two steps on), and its
flushes, FUA writes, discards and lost events.  The I/Os go on to the
iolog as they come (packed, :mod:`tkperf.rwsw.packedlog`; flushes as ``sync``,
discards as ``trim``).  Each flush is given to the write stream that issued it: the
stream of the last write completed before the flush was issued (an
application's fsync waits for its writes to complete, then its flush
follows), so a replay can flush where the application did.  The block
layer does not say which process issued a request, so a write of another
stream that completed between the writer's last write and its flush
takes that flush.  Memory therefore follows the number of steps and what is in
flight, not the I/Os of the capture.
"""
from __future__ import annotations

import math
from typing import IO, Dict, List, Optional, Tuple

import numpy as np

from tkperf.rwsw import packedlog
from tkperf.rwsw.analysis import SeqRule, step_bounds
from tkperf.rwsw.latency import Histogram
from tkperf.rwsw.model import Capture, Latency, Seen, Step, Stream
from tkperf.rwsw.trace import KIND_DISCARD, KIND_FLUSH, KIND_FUA, IoTrace

#: Writes kept from one batch to the next for the flushes they may have preceded (the latest completed).
RECENT = 256


def _latency(h: Histogram) -> Optional[Latency]:
    f = h.figures_us()
    return None if f is None else Latency(*f)


class _StepAcc:
    """One step's figures as they gather."""

    __slots__ = ("streams", "busy", "flushes", "fua", "discards", "discard_bytes", "lost", "hist", "lat", "closed")

    def __init__(self) -> None:
        self.streams: Dict[int, List[int]] = {}   # length * 4 + sequential * 2 + write -> [I/Os, bytes, flushes]
        self.busy = 0.0          # seconds of I/O outstanding within the step, summed over the I/Os
        self.flushes = self.fua = self.discards = self.discard_bytes = self.lost = 0
        self.hist: Optional[Tuple[Histogram, Histogram]] = None   # reads, writes (while open)
        self.lat: Tuple[Optional[Latency], ...] = (None, None, None)  # all, read, write (once closed)
        self.closed = False

    def histograms(self) -> Optional[Tuple[Histogram, Histogram]]:
        """The open histograms, None once the step is closed (an I/O issued that
        late, out of time order, still counts in the whole capture's)."""
        if self.closed:
            return None
        if self.hist is None:
            self.hist = (Histogram(), Histogram())
        return self.hist

    def close(self) -> None:
        self.closed = True
        if self.hist is not None:
            both = Histogram()
            both.merge(self.hist[0])
            both.merge(self.hist[1])
            self.lat = (_latency(both), _latency(self.hist[0]), _latency(self.hist[1]))
            self.hist = None

    def merge(self, other: _StepAcc) -> None:
        for code, counts in other.streams.items():
            mine = self.streams.setdefault(code, [0, 0, 0])
            for i, v in enumerate(counts):
                mine[i] += v
        self.busy += other.busy
        self.flushes += other.flushes
        self.fua += other.fua
        self.discards += other.discards
        self.discard_bytes += other.discard_bytes
        self.lost += other.lost
        hists = self.histograms()
        if other.hist is not None and hists is not None:
            for h, o in zip(hists, other.hist):
                h.merge(o)


def _streams(counts: Dict[int, List[int]]) -> Tuple[Stream, ...]:
    total = sum(c[0] for c in counts.values())
    total_bytes = sum(c[1] for c in counts.values())
    out = [Stream(access="sequential" if k & 2 else "random", rw="write" if k & 1 else "read", bs=k // 4,
                  ios=n, share=n / total, byte_share=b / total_bytes if total_bytes > 0 else 0.0,
                  flushes=f if k & 1 else None)
           for k, (n, b, f) in counts.items() if n]
    out.sort(key=lambda s: (-s.ios, s.key))
    return tuple(out)


class Accumulator:
    """The sink of a :class:`~tkperf.rwsw.trace.Pairer`: per-step figures, and the iolog written to ``iolog``."""

    def __init__(self, step: float, iolog: Optional[IO[bytes]] = None, lost_known: bool = False) -> None:
        self.step = float(step)
        self.out = iolog
        self.lost_known = lost_known
        self.t0: Optional[float] = None
        self.t1: Optional[float] = None
        self.acc: Dict[int, _StepAcc] = {}
        self.open: set = set()   # steps whose histograms are still open
        self.rule = SeqRule()
        self.whole = (Histogram(), Histogram())
        self.unfinished: List[float] = []   # issue times of I/Os whose completion was not seen
        self.last_done = -math.inf
        self.last_us = 0
        # the latest completed writes of the batches so far (completion time, stream code): a flush's issuer
        self.recent: Tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0, dtype=np.int64))
        self.touched: set = set()   # steps touched by lost events

    # -- the sink's side ----------------------------------------------------------
    def begin(self, t0: float) -> None:
        self.t0 = t0
        if self.out is not None:
            self.log = packedlog.Writer(self.out)  # the iolog, packed (tkperf.rwsw.packedlog)

    def end(self, t1: float) -> None:
        self.t1 = t1

    def _get(self, j: int) -> _StepAcc:
        a = self.acc.get(j)
        if a is None:
            a = self.acc[j] = _StepAcc()
        return a

    def lost(self, t: float, n: int, since: Optional[float] = None) -> None:
        """``n`` events lost just before ``t``: counted in its step; every step
        from ``since`` to ``t`` is touched by the loss (its figures miss them)."""
        assert self.t0 is not None
        j = max(0, int((t - self.t0) // self.step))
        self._get(j).lost += n
        first = j if since is None else max(0, min(j, int((since - self.t0) // self.step)))
        self.touched.update(range(first, j + 1))

    def batch(self, issue: np.ndarray, done: np.ndarray, kind: np.ndarray, offset: np.ndarray,
              length: np.ndarray) -> None:
        assert self.t0 is not None
        t0, step = self.t0, self.step
        base = (kind & 3).astype(np.int64)
        if self.out is not None:
            self._iolog(issue, base, offset, length)
        k = np.maximum(np.floor((issue - t0) / step), 0).astype(np.int64)
        data = base <= 1
        write = base == 1
        for what, mask in (("flushes", base == KIND_FLUSH), ("discards", base == KIND_DISCARD),
                           ("fua", write & ((kind & KIND_FUA) != 0))):
            if mask.any():
                js, counts = np.unique(k[mask], return_counts=True)
                for j, c in zip(js.tolist(), counts.tolist()):
                    a = self._get(j)
                    setattr(a, what, getattr(a, what) + c)
        disc = base == KIND_DISCARD
        if disc.any():
            for j, b in zip(k[disc].tolist(), length[disc].tolist()):
                self._get(j).discard_bytes += b
        flush = base == KIND_FLUSH
        if not data.any():
            if flush.any():
                self._flush_issuers(k, flush, issue, done, np.zeros(0, dtype=np.int64))
            return
        seq = self.rule.mark(write[data].astype(np.int64), offset[data], length[data])
        code = length[data] * 4 + seq.astype(np.int64) * 2 + write[data].astype(np.int64)
        wrote = data & write
        if flush.any():
            self._flush_issuers(k, flush, issue, done[wrote], code[write[data]])
        if wrote.any():
            self._remember(done[wrote], code[write[data]])
        k, issue, done, write = k[data], issue[data], done[data], write[data]
        length = length[data]
        self._streams(k, code, length)
        seen = ~np.isnan(done)
        self._busy(k, issue, done, seen)
        self._times(k, issue, done, seen, write)

    def _flush_issuers(self, k: np.ndarray, flush: np.ndarray, issue: np.ndarray, done: np.ndarray,
                       wcode: np.ndarray) -> None:
        """Give each flush of the batch to the write stream that issued it: the
        stream of the last write completed before the flush was issued (an
        fsync waits for its writes to complete, then its flush follows), from
        this batch or the latest completed of the batches before."""
        wdone = np.concatenate([self.recent[0], done]) if wcode.size else self.recent[0]
        codes = np.concatenate([self.recent[1], wcode]) if wcode.size else self.recent[1]
        seen = ~np.isnan(wdone)
        wdone, codes = wdone[seen], codes[seen]
        order = np.argsort(wdone, kind="stable")
        wdone, codes = wdone[order], codes[order]
        at = np.searchsorted(wdone, issue[flush], side="right") - 1
        issuer = np.where(at >= 0, codes[np.maximum(at, 0)] if codes.size else -1, -1)
        self._flushers(k[flush], issuer.astype(np.int64))

    def _remember(self, done: np.ndarray, wcode: np.ndarray) -> None:
        """Keep the latest completed writes (:data:`RECENT`) for the flushes of the next batches."""
        wdone = np.concatenate([self.recent[0], done])
        codes = np.concatenate([self.recent[1], wcode])
        keep = np.argsort(np.nan_to_num(wdone, nan=-np.inf), kind="stable")[-RECENT:]
        self.recent = (wdone[keep], codes[keep])

    def _flushers(self, k: np.ndarray, issuer: np.ndarray) -> None:
        """Count flushes per (step, issuing stream); a flush before any write has none (-1)."""
        for j, c in zip(k.tolist(), issuer.tolist()):
            if c >= 0:
                self._get(j).streams.setdefault(c, [0, 0, 0])[2] += 1

    def _streams(self, k: np.ndarray, code: np.ndarray, length: np.ndarray) -> None:
        """Count the I/Os and bytes of each stream (``code``) per step (``k``)."""
        pairs, inverse, counts = np.unique(np.stack([k, code]), axis=1, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse.ravel(), weights=length.astype(float), minlength=pairs.shape[1])
        for j, c, n, b in zip(pairs[0].tolist(), pairs[1].tolist(), counts.tolist(), sums.tolist()):
            mine = self._get(j).streams.setdefault(c, [0, 0, 0])
            mine[0] += n
            mine[1] += int(b)

    def _busy(self, k: np.ndarray, issue: np.ndarray, done: np.ndarray, seen: np.ndarray) -> None:
        """The time each I/O was outstanding, by step (the queue depth)."""
        assert self.t0 is not None
        if seen.any():
            self.last_done = max(self.last_done, float(done[seen].max()))
        if (~seen).any():
            self.unfinished.extend(issue[~seen].tolist())
        fin = np.where(seen, done, issue)
        if self.t1 is not None:
            fin = np.minimum(fin, self.t1)
        fin = np.maximum(fin, issue)
        kd = np.maximum(np.floor((fin - self.t0) / self.step), 0).astype(np.int64)
        one = kd == k
        if one.any():
            js = np.unique(k[one])
            sums = np.bincount(np.searchsorted(js, k[one]), weights=(fin - issue)[one])
            for j, v in zip(js.tolist(), sums.tolist()):
                self._get(j).busy += v
        for a, b in zip(issue[~one].tolist(), fin[~one].tolist()):
            self._spread(a, b)

    def _times(self, k: np.ndarray, issue: np.ndarray, done: np.ndarray, seen: np.ndarray,
               write: np.ndarray) -> None:
        """Response times into the histograms of their step and direction; steps two behind closed."""
        ns = (done[seen] - issue[seen]) * 1e9
        wt, kt = write[seen], k[seen]
        for d, hist in enumerate(self.whole):
            hist.add(ns[wt == bool(d)])
        for j in np.unique(kt).tolist():
            hists = self._get(j).histograms()
            if hists is None:
                continue
            self.open.add(j)
            sel = kt == j
            for d in (0, 1):
                hists[d].add(ns[sel & (wt == bool(d))])
        top = int(k.max())
        for j in [j for j in self.open if j < top - 1]:
            self.acc[j].close()
            self.open.discard(j)

    def _spread(self, a: float, b: float) -> None:
        """Add the outstanding time [a, b) (trace clock) to the steps it spans."""
        assert self.t0 is not None
        t0, step = self.t0, self.step
        j = max(0, int((a - t0) // step))
        while True:
            lo, hi = t0 + j * step, t0 + (j + 1) * step
            part = min(b, hi) - max(a, lo)
            if part > 0:
                self._get(j).busy += part
            if b <= hi:
                break
            j += 1

    def _iolog(self, issue: np.ndarray, base: np.ndarray, offset: np.ndarray, length: np.ndarray) -> None:
        assert self.out is not None and self.t0 is not None
        usec = np.maximum(np.rint((issue - self.t0) * 1e6), 0).astype(np.int64)
        usec = np.maximum.accumulate(np.maximum(usec, self.last_us))  # never backwards (fio refuses it)
        self.last_us = int(usec[-1])
        flush = base == KIND_FLUSH
        self.log.add(usec, base, np.where(flush, 0, offset), np.where(flush, 0, length))

    # -- the end --------------------------------------------------------------
    def _settle(self, duration: float, n: int) -> set:
        """Before the figures: I/Os still in flight at the end outstanding until
        then, steps past the last (a last step's sliver) merged into it, every
        step closed; returns the (merged) indexes of the steps touched by lost events."""
        assert self.t0 is not None
        for t in self.unfinished:  # still in flight at the end: outstanding until then; else its completion was lost
            if t > self.last_done:
                self._spread(t, self.t0 + duration)
        last = self._get(n - 1)
        for j in sorted(j for j in self.acc if j >= n):
            last.merge(self.acc.pop(j))
        for one in self.acc.values():
            one.close()
        if self.out is not None:
            self.log.close(max(int(round(duration * 1e6)), self.last_us))
        return {min(j, n - 1) for j in self.touched}

    def _step(self, j: int, start: float, length: float, touched: bool) -> Step:
        a = self.acc.get(j) or _StepAcc()
        ios = sum(c[0] for c in a.streams.values())
        nbytes = sum(c[1] for c in a.streams.values())
        seen = Seen(lat=a.lat[0], read=a.lat[1], write=a.lat[2], flushes=a.flushes, fua=a.fua,
                    discards=a.discards, discard_bytes=a.discard_bytes,
                    lost_events=a.lost if self.lost_known else None, loss_touched=touched)
        return Step(index=j, start=start, duration=length, streams=_streams(a.streams),
                    qd=a.busy / length, iops=ios / length, mbps=nbytes / length / 1e6, seen=seen)

    def _whole_seen(self, steps: List[Step], touched: bool, lost_events: Optional[int]) -> Seen:
        both = Histogram()
        both.merge(self.whole[0])
        both.merge(self.whole[1])
        seen = [st.seen for st in steps if st.seen is not None]
        lost: Optional[int] = None
        if self.lost_known:
            lost = max(sum(x.lost_events or 0 for x in seen), lost_events or 0)
        return Seen(lat=_latency(both), read=_latency(self.whole[0]), write=_latency(self.whole[1]),
                    flushes=sum(x.flushes for x in seen), fua=sum(x.fua for x in seen),
                    discards=sum(x.discards for x in seen), discard_bytes=sum(x.discard_bytes for x in seen),
                    lost_events=lost, loss_touched=touched)

    def finish(self, name: str, device: str, size: int, source: str, started: str,
               iolog: Optional[str], lost_events: Optional[int] = None, host: Optional[str] = None) -> Capture:
        """The capture; ``lost_events``: the kernel's own count of lost events (for the whole capture)."""
        assert self.t0 is not None and self.t1 is not None
        duration = max(self.t1 - self.t0, 1e-6)
        bounds = step_bounds(duration, self.step)
        touched = self._settle(duration, len(bounds))
        steps = [self._step(j, start, length, j in touched) for j, (start, length) in enumerate(bounds)]
        whole: Dict[int, List[int]] = {}
        for a in self.acc.values():
            for code, counts in a.streams.items():
                mine = whole.setdefault(code, [0, 0, 0])
                for i, v in enumerate(counts):
                    mine[i] += v
        busy = sum(a.busy for a in self.acc.values())
        ios = sum(c[0] for c in whole.values())
        return Capture(name=name, device=device, size=size, source=source, started=started, duration=duration,
                       step=self.step, steps=tuple(steps), streams=_streams(whole), qd=busy / duration,
                       iops=ios / duration, mbps=sum(c[1] for c in whole.values()) / duration / 1e6, iolog=iolog,
                       seen=self._whole_seen(steps, bool(touched), lost_events), host=host)


def analyse(trace: IoTrace, step: float, *, name: str, device: str, size: int, source: str, started: str,
            iolog: Optional[str], out: Optional[IO[bytes]] = None) -> Capture:
    """The capture of the I/O table ``trace`` (reads and writes) cut into steps of ``step`` seconds."""
    acc = Accumulator(step, out)
    acc.begin(trace.t0)
    acc.end(trace.t1)
    if len(trace):
        acc.batch(trace.issue, trace.done, trace.write.astype(np.int8), trace.offset, trace.length)
    return acc.finish(name, device, size, source, started, iolog)
