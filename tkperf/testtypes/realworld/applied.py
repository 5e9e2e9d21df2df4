"""A capture's workload as fio job settings (docs/rwsw-tests.rst).

Plain data only: the test types (``replay``, ``rwsw-wsat``, ``rwsw-dirth``)
turn these settings into fio jobs.

* A **step** of a capture is replayed as one fio job per IO stream, all
  running at once (fio ``new_group``, so each is reported on its own), their
  I/O counts held in the step's proportions by fio's token-based flow
  control (``flow`` weights in one ``flow_id``).  fio's flow control holds
  the proportions by throttling the jobs that run ahead, which lowers their
  outstanding I/Os and the step's queue depth with them.  So the depths come
  from two short calibration runs: by Little's law (outstanding I/Os = IOPS
  x response time) a stream needs outstanding I/Os in proportion to its
  share x its response time (:func:`spread`), and the total depth that holds
  the step's queue depth under flow control is found from the two runs'
  measured depths (:func:`total_depth`).
* The **applied test workload** (rwsw-wsat, rwsw-dirth) is the dominant
  streams normalised into one fio job (:func:`mixed_job`): ``rwmixread``
  for the read share, ``bssplit`` per direction for the transfer sizes and
  ``percentage_random`` per direction for the random share.  fio draws the
  transfer size and the access of an I/O independently within a direction,
  so where one direction holds both random and sequential streams the
  access is not tied to the size (:func:`coupling_note` says so).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from tkperf.rwsw.model import Step, Stream, size_text

#: At most this many streams of a step run as jobs of their own (the largest;
#: the rest are left out and their share is disclosed).
MAX_STREAMS = 16
#: fio's weight unit (its largest flow weight): a stream's weight is its share in parts per this.
FLOW_SCALE = 1000
#: Queue depth of one job at most (fio iodepth).
MAX_DEPTH = 256


def _short(s: Stream) -> str:
    return f"{'rnd' if s.access == 'random' else 'seq'}-{size_text(s.bs).lower()}-{s.rw}"


def job_name(step: int, k: int, s: Stream) -> str:
    """The fio job of stream ``k`` (0-based) of step ``step`` (1-based): ``st1-s0-rnd-4kib-read``."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "", f"st{step}-s{k}-{_short(s)}")


def fio_rw(s: Stream) -> str:
    if s.access == "random":
        return "randread" if s.rw == "read" else "randwrite"
    return s.rw


def kept(streams: Sequence[Stream], limit: int = MAX_STREAMS) -> Tuple[Stream, ...]:
    """The streams a step runs: the largest ``limit`` with a share above 0."""
    ordered = sorted((s for s in streams if s.share > 0), key=lambda s: (-s.share, s.key))
    return tuple(ordered[:limit])


def left_out(step: Step, limit: int = MAX_STREAMS) -> float:
    """The share of a step's I/Os in streams that do not run (0 when all do)."""
    return max(0.0, 1.0 - sum(s.share for s in kept(step.streams, limit)))


def weights(streams: Sequence[Stream]) -> Tuple[int, ...]:
    """fio ``flow`` weights in proportion to the streams' shares (each at least 1)."""
    total = sum(s.share for s in streams) or 1.0
    return tuple(max(1, round(FLOW_SCALE * s.share / total)) for s in streams)


def target_qd(qd: float) -> int:
    """The whole queue depth a step runs at: its mean outstanding I/Os, rounded, at least 1."""
    return max(1, min(MAX_DEPTH, int(math.floor(qd + 0.5))))


def first_depths(shares: Sequence[float], qd: float) -> Tuple[int, ...]:
    """Depths for the calibration run: the step's depth shared by I/O share, each at least 1."""
    total = sum(shares) or 1.0
    return tuple(max(1, round(target_qd(qd) * s / total)) for s in shares)


def spread(need: Sequence[float], total: float) -> Tuple[int, ...]:
    """Whole depths (each at least 1) in proportion to ``need`` whose sum is nearest ``total``."""
    weight = sum(need)
    if weight <= 0:
        return tuple(1 for _ in need)
    best: Tuple[float, Tuple[int, ...]] = (math.inf, ())
    for step in range(1, 801):  # scale factors 0.01 .. 8 of the exact proportion
        c = step / 100.0
        d = tuple(min(MAX_DEPTH, max(1, int(math.floor(c * total * n / weight + 0.5)))) for n in need)
        gap = abs(sum(d) - total)
        if gap < best[0]:
            best = (gap, d)
    return best[1]


def total_depth(qd: float, tried: Sequence[Tuple[float, float]]) -> float:
    """The total queue depth (sum of the jobs' fio iodepth) expected to hold
    ``qd`` outstanding I/Os, from calibration runs ``tried`` (total depth,
    measured outstanding): flow control keeps jobs below their depths, so the
    outstanding I/Os grow with the total depth but stay under it.  From one
    run, scaled in proportion; from two, along the line through both
    (secant), within a quarter and eight times ``qd``."""
    if not tried:
        return qd
    d1, q1 = tried[-1]
    if len(tried) == 1 or abs(q1 - tried[-2][1]) < 1e-6:
        guess = d1 * qd / q1 if q1 > 0 else qd
    else:
        d0, q0 = tried[-2]
        guess = d1 + (qd - q1) * (d1 - d0) / (q1 - q0)
    return min(8.0 * qd, max(0.25 * qd, guess))


def step_extra(k: int, weight: int, flow_id: int = 1) -> Tuple[Tuple[str, str], ...]:
    """The fio lines of stream job ``k`` of a step beyond rw, bs and iodepth:
    every job after the first runs beside the others (``stonewall=0``) and is
    reported on its own (``new_group``); all share one flow."""
    own = (("flow_id", str(flow_id)), ("flow", str(weight)))
    return own if k == 0 else (("stonewall", "0"), ("new_group", "")) + own


# --- the applied test workload --------------------------------------------------------


@dataclass(frozen=True)
class Mixed:
    """One fio job holding a normalised set of streams."""

    rwmixread: int
    bssplit: str
    percentage_random: str
    #: The largest transfer (fio's ``bs``, which ``bssplit`` replaces).
    largest: int
    #: The smallest transfer (fio aligns a ``bssplit`` to it).
    smallest: int
    #: A flush every this many writes (fio ``fsync``; set for fio's count in
    #: a mixed job, :func:`tkperf.testtypes.realworld.sidejobs.mixed_fsync`), 0: none.
    fsync: int = 0
    #: The same flushes in a job of the writes alone (100% writes).
    write_fsync: int = 0

    def extra(self) -> Tuple[Tuple[str, str], ...]:
        own = (("bssplit", self.bssplit), ("percentage_random", self.percentage_random))
        return own + ((("fsync", str(self.fsync)),) if self.fsync else ())


def _percents(values: Sequence[float]) -> List[int]:
    """Whole percentages of ``values`` adding up to 100 (largest remainder)."""
    total = sum(values)
    if total <= 0:
        return [0] * len(values)
    raw = [100.0 * v / total for v in values]
    out = [math.floor(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: out[i] - raw[i])[:100 - sum(out)]:
        out[i] += 1
    return out


def _split(streams: Sequence[Stream]) -> str:
    by_bs: Dict[int, float] = {}
    for s in streams:
        by_bs[s.bs] = by_bs.get(s.bs, 0.0) + s.share
    sizes = sorted(by_bs)
    parts = [f"{bs}/{p}" for bs, p in zip(sizes, _percents([by_bs[b] for b in sizes])) if p > 0]
    return ":".join(parts)


def mixed_job(streams: Sequence[Stream]) -> Mixed:
    """The streams (shares summing to 1) as one fio job's settings."""
    if not streams:
        raise ValueError("no streams to apply")
    reads = [s for s in streams if s.rw == "read"]
    writes = [s for s in streams if s.rw == "write"]
    read_share = sum(s.share for s in reads) / (sum(s.share for s in streams) or 1.0)
    rwmixread = int(math.floor(100.0 * read_share + 0.5))

    def random_pct(side: Sequence[Stream]) -> int:
        total = sum(s.share for s in side)
        return int(math.floor(100.0 * sum(s.share for s in side if s.access == "random") / total + 0.5)) \
            if total > 0 else 100

    anyone = streams[0]
    rsplit = _split(reads) or f"{anyone.bs}/100"
    wsplit = _split(writes) or f"{anyone.bs}/100"
    return Mixed(rwmixread=rwmixread, bssplit=f"{rsplit},{wsplit}",
                 percentage_random=f"{random_pct(reads)},{random_pct(writes)}",
                 largest=max(s.bs for s in streams), smallest=min(s.bs for s in streams))


def coupling_note(streams: Sequence[Stream]) -> List[str]:
    """Where one fio job cannot hold the streams exactly: a direction with
    random and sequential streams of different transfer sizes (fio draws an
    I/O's size and its access independently)."""
    out = []
    for rw in ("read", "write"):
        side = [s for s in streams if s.rw == rw]
        kinds = {s.access for s in side}
        if len(kinds) > 1 and len({s.bs for s in side}) > 1:
            out.append(f"the {rw}s mix random and sequential streams of different transfer sizes; one fio job "
                       f"draws an I/O's size and its access independently, so each {rw} size is random in the "
                       "proportion of all random {rw}s".replace("{rw}", rw))
    return out


def stream_rows(streams: Sequence[Stream]) -> List[Tuple[str, str, str, str]]:
    """(stream, transfer size, share %, byte share %) of each stream."""
    return [(s.key, size_text(s.bs), f"{100.0 * s.share:.1f}", f"{100.0 * s.byte_share:.1f}") for s in streams]
