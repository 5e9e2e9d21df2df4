"""What a step replay runs beside its 16 largest streams, and where its flushes go
(docs/rwsw-tests.rst).

* **The remainder**: the streams beyond the :data:`~.applied.MAX_STREAMS`
  largest run as one more fio job (``stN-rest``), the applied workload's
  normalisation of them (:func:`~.applied.mixed_job`: read share, transfer
  sizes and random share per direction), so their I/Os and bytes stay in
  the step's intensity; in a file system's writeback step they are most of
  the bytes.
* **The discards**: a step whose capture recorded discards runs a
  ``randtrim`` job (``stN-trim``) of their mean size at their captured
  bytes per second (fio trims a block device with the discard ioctl, the
  request the capture saw).  fio refuses to trim a regular file, and a
  device that does not discard (``discard_max_bytes`` 0) would fail the
  run, so there the job is left out and the verdict names the discards not
  replayed (:func:`not_replayed`).
* **The flushes**: each write stream flushes as it did in the capture
  (:attr:`tkperf.rwsw.model.Stream.flushes`, the flushes that followed one
  of its writes), as fio ``fsync`` every N of its own writes; a capture
  that did not record which stream flushed (written before tkperf kept it)
  has its step's flushes spread over the write streams (the earlier rule,
  disclosed).  Flushes that followed no write of a stream that runs are
  named.  A job that mixes reads into its writes (the remainder) has its
  N set for fio's way of counting (:func:`mixed_fsync`).
"""
from __future__ import annotations

import math
import os
import stat
from typing import List, Mapping, Optional, Sequence, Tuple

from tkperf.rwsw.model import Step, Stream
from tkperf.testtypes.realworld import applied

#: The fio rw of a discard job.
TRIM_RW = "randtrim"
#: Discards are issued in whole 4 KiB units (any device's logical block divides it).
TRIM_ALIGN = 4096
#: The test data key that says discards were left out, and why.
TRIM_SKIPPED = "trim.skipped"
#: A step whose discards (or, at the maximum intensity, flushes) at the block layer are off
#: their captured count by more than this share is named (as :data:`~.delivered.FLUSH_TOLERANCE`).
FLUSH_TOLERANCE = 0.25


def rest_streams(step: Step, limit: int = applied.MAX_STREAMS) -> Tuple[Stream, ...]:
    """The step's streams beyond the ``limit`` largest (shares above 0)."""
    ordered = sorted((s for s in step.streams if s.share > 0), key=lambda s: (-s.share, s.key))
    return tuple(ordered[limit:])


def rest_name(n: int) -> str:
    return f"st{n}-rest"


def trim_name(n: int) -> str:
    return f"st{n}-trim"


def rest_settings(rest: Sequence[Stream]) -> Tuple[str, int, int, Tuple[Tuple[str, str], ...]]:
    """(fio rw, bs, rwmixread, extra lines) of the remainder job."""
    mix = applied.mixed_job(rest)
    rw = "randrw" if 0 < mix.rwmixread < 100 else ("randread" if mix.rwmixread == 100 else "randwrite")
    return rw, mix.largest, mix.rwmixread, mix.extra()


def discards(step: Step) -> Tuple[int, int]:
    """(discards, bytes) the step's capture recorded; (0, 0) where none or not recorded."""
    seen = getattr(step, "seen", None)
    if seen is None or not seen.discards or not seen.discard_bytes:
        return 0, 0
    return int(seen.discards), int(seen.discard_bytes)


def trim_size(count: int, nbytes: int) -> int:
    """The discard job's transfer size: the captured mean, in whole 4 KiB, at least 4 KiB."""
    return max(TRIM_ALIGN, int(round(nbytes / count / TRIM_ALIGN)) * TRIM_ALIGN)


def trim_rate(step: Step, count: int, bs: int) -> int:
    """Bytes per second of the discard job: the captured count over the step at the job's size."""
    return max(1, int(round(count * bs / max(step.duration, 1e-6))))


def fsync_every(writes: float, flushes: float) -> int:
    """fio ``fsync``: a flush every N writes, N the writes over the flushes, whole, at least 1; 0 without flushes."""
    if flushes <= 0 or writes <= 0:
        return 0
    return max(1, int(round(writes / flushes)))


def mixed_fsync(writes: float, flushes: float, rwmixread: int) -> int:
    """fio ``fsync`` of a job that mixes reads into its writes (``rwmixread``
    percent reads) for ``flushes`` over ``writes``: fio 3.33 syncs after
    every N-th write and again after each read that comes before the next
    write (its check is the write count, which a read leaves a multiple of
    N), so a job syncs ``writes / (N * write share)`` times (measured with
    fio 3.33 on a loop device: 70% reads, N 2: 711 syncs for 418 writes; N 7:
    682 for 1,390), and N is the writes per flush over the write share."""
    if flushes <= 0 or writes <= 0:
        return 0
    share = max(0.01, 1.0 - rwmixread / 100.0)
    return max(1, int(round(writes / flushes / share)))


def own_flushes(streams: Sequence[Stream]) -> bool:
    """Whether the capture recorded which write stream flushed."""
    return any(s.rw == "write" and s.flushes is not None for s in streams)


def stream_fsync(s: Stream) -> int:
    """A write stream's own flushes as fio fsync (0: it issued none, or a read stream)."""
    return fsync_every(s.ios, s.flushes or 0) if s.rw == "write" else 0


def rest_fsync(rest: Sequence[Stream]) -> int:
    """The remainder job's fsync: its writes over the flushes its streams issued (:func:`mixed_fsync`)."""
    if not rest:
        return 0
    return mixed_fsync(sum(s.ios for s in rest if s.rw == "write"), sum(s.flushes or 0 for s in rest),
                       applied.mixed_job(rest).rwmixread)


def unplaced_flushes(step: Step, streams: Sequence[Stream]) -> int:
    """Of the step's captured flushes, those that followed no write of a stream that runs
    (a write in an earlier step, or none); a capture without per-stream flushes: 0."""
    seen = getattr(step, "seen", None)
    if seen is None or not own_flushes(step.streams):
        return 0
    return max(0, int(seen.flushes) - sum(s.flushes or 0 for s in streams if s.rw == "write"))


# --- the target ---------------------------------------------------------------------------

def discard_refusal(path: str) -> str:
    """Why fio cannot trim ``path`` ('' when it can): fio trims only a block device, and one that discards."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"the target cannot be examined ({exc.strerror})"
    if not stat.S_ISBLK(st.st_mode):
        return "the target is not a block device (fio trims only block devices)"
    dev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    queue = os.path.join(dev, "queue")
    if not os.path.isdir(queue):  # a partition: the queue is its disk's
        queue = os.path.join(os.path.dirname(dev), "queue")
    try:
        with open(os.path.join(queue, "discard_max_bytes"), encoding="ascii") as fh:
            if int(fh.read().strip() or 0) <= 0:
                return "the target does not discard (discard_max_bytes 0)"
    except (OSError, ValueError):
        return "the target's discard support is unknown"
    return ""


# --- the verdict ----------------------------------------------------------------------------

#: The param that says the flushes went to the streams that issued them (absent: spread over
#: the write streams, as every result from before it was kept).
FLUSH_RULE = "flush_rule"


def rules(params: Mapping[str, str]) -> List[str]:
    """How a step replay's result ran the flushes, the remainder and the
    discards, in words (without the test's key), from what its params say
    it ran: a result from before these were kept says only what it did."""
    out = []
    steps = _steps(params)
    flushing = [n for n in steps if params.get(f"step.{n}.fsync")]
    if flushing and params.get(FLUSH_RULE) == "own":
        out.append("each write stream's captured flushes (those that followed its writes) as a flush every N of "
                   "its writes (fio fsync), N its writes over its flushes, whole")
    elif flushing:
        out.append("a step's captured flushes, where the capture recorded them, as a flush every N writes of each "
                   "write stream (fio fsync), N its writes over its flushes, whole")
    if any(f"step.{n}.rest" in params for n in steps):
        out.append(f"the streams beyond the {applied.MAX_STREAMS} largest of a step as one more fio job (rwmixread, "
                   "bssplit and percentage_random per direction, whole percentages), "
                   + ("as one more stream of the flow" if params.get("intensity") == "max"
                      else "at their captured bytes per second"))
    trimmed = [n for n in steps if f"step.{n}.trim_bs" in params]
    if trimmed:
        out.append("a step's captured discards as a fio randtrim job of their mean size (whole 4 KiB) at their "
                   f"captured rate (step{'s' if len(trimmed) > 1 else ''} {', '.join(map(str, trimmed))})")
    return out


def _steps(params: Mapping[str, str]) -> List[int]:
    return sorted({int(k.split(".")[1]) for k in params if k.startswith("step.") and k.split(".")[1].isdigit()})

def _number(p: Mapping[str, str], key: str) -> float:
    try:
        v = float(p.get(key, "") or 0.0)
    except ValueError:
        return 0.0
    return v if math.isfinite(v) else 0.0


def _discard_verdicts(n: int, params: Mapping[str, str], skipped: str,
                      got: Optional[Tuple[int, int]], ran: bool) -> List[str]:
    """Step ``n``'s captured discards not replayed, or off their count at the block layer
    (``got``: its round's discards and flushes there, None: not measured; ``ran``: it has a round)."""
    asked = int(_number(params, f"step.{n}.discards"))
    if not asked:
        return []
    if params.get(f"step.{n}.idle") == "true":
        return [f"step {n}: {asked:,} captured discards not replayed (a step without reads or writes runs "
                "as an idle gap)"]
    if skipped:
        return [f"step {n}: {asked:,} captured discards not replayed: {skipped}"]
    out = []
    bs = int(_number(params, f"step.{n}.trim_bs"))
    if ran and got is None:
        out.append(f"step {n}: {asked:,} captured discards replayed as fio trims, not counted at the block layer")
    elif ran and got is not None and abs(got[0] / asked - 1.0) > FLUSH_TOLERANCE:
        out.append(f"step {n}: {got[0]:,} discards at the block layer against the captured {asked:,} (fio "
                   f"randtrim of {bs:,} bytes)")
    capped = int(_number(params, f"step.{n}.trim_capped"))
    if capped and f"step.{n}.trim_bs" in params:
        out.append(f"step {n}: its discards (mean {capped:,} bytes) replayed as {asked:,} discards of "
                   f"{bs:,} bytes, the target's range")
    return out


def _flush_verdicts(n: int, params: Mapping[str, str], got: Optional[Tuple[int, int]], ran: bool) -> List[str]:
    """Step ``n``'s flushes off their captured count (maximum intensity), not placed, or spread."""
    out = []
    flushes = int(_number(params, f"step.{n}.flushes"))
    if flushes and params.get("intensity") == "max" and ran and (
            got is None or abs(got[1] / flushes - 1.0) > FLUSH_TOLERANCE):
        seen_text = "not measured" if got is None else f"{got[1]:,}"
        out.append(f"step {n}: {seen_text} flushes at the block layer against the captured {flushes:,} "
                   f"(fio fsync every {params.get(f'step.{n}.fsync', '?')} writes)")
    unplaced = int(_number(params, f"step.{n}.flushes_unplaced"))
    if unplaced:
        out.append(f"step {n}: {unplaced:,} captured flushes not replayed: they followed no write of a stream "
                   "the step runs")
    if params.get(f"step.{n}.flushes_spread") == "true":
        out.append(f"step {n}: the capture did not record which stream flushed: its flushes spread over the "
                   "write streams (fio fsync every N writes of each)")
    return out


def not_replayed(params: Mapping[str, str], data: Mapping[str, str],
                 counted: Mapping[int, Optional[Tuple[int, int]]]) -> List[str]:
    """The discards and flushes a step replay did not replay, per step, in
    words (without the test's key).  ``counted``: the discards and flushes
    each step's round saw at the target's block layer (None: not measured);
    at the captured intensity the flushes are judged with the step's rate
    (:func:`~.delivered.step_verdicts`), at the maximum here.  A step the
    capture lost events in is left out: its captured counts miss them (the
    step verdicts say it is not judged)."""
    out = []
    skipped = data.get(TRIM_SKIPPED, "")
    for n in _steps(params):
        if params.get(f"step.{n}.touched_by_loss") == "true":
            continue
        got = counted.get(n)
        out += _discard_verdicts(n, params, skipped, got, n in counted)
        out += _flush_verdicts(n, params, got, n in counted)
    return out
