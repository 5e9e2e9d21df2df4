"""The applied test workload of a capture: its dominant streams, normalised,
as one fio job (rwsw-wsat, rwsw-dirth; docs/rwsw-tests.rst).

The job flushes as the capture did: a flush every N of its writes (fio
``fsync``), N the applied write streams' writes over the flushes that
followed them (:attr:`tkperf.rwsw.model.Stream.flushes`).  The capture's
discards are not applied (fio mixes no trims into a job's reads and
writes) and the verdict names them (:func:`side_deviations`)."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, List, Mapping, Optional, Tuple

from tkperf.api import FioJob, Options, UsageError
from tkperf.rwsw.model import Capture
from tkperf.rwsw.model import Stream as CaptureStream
from tkperf.rwsw.model import dominant as dominant_streams
from tkperf.rwsw.model import load as load_capture
from tkperf.testtypes.realworld import applied, sidejobs
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld.words import RWSW_PTS

STREAM_PARAM = "applied."


def dominant(opts: Options) -> Tuple[Capture, Tuple[CaptureStream, ...]]:
    """The capture and its dominant streams (shares summing to 1)."""
    w = opts.of(ro.WorkloadSettings)
    if not w.workload:
        raise UsageError("the real-world workload tests need --workload N.xml (a capture by tkperf capture)")
    cap = load_capture(w.workload)
    streams = dominant_streams(cap.streams, w.streams_share)
    if not streams:
        raise UsageError(f"--workload {os.path.basename(w.workload)}: the capture holds no I/O to apply")
    return cap, streams


def mixed(streams, cap: Optional[Capture] = None) -> applied.Mixed:
    """The streams as one fio job; with their capture, flushing as they did (:func:`flushes`)."""
    mix = applied.mixed_job(streams)
    if cap is None:
        return mix
    flushed, writes, _ = flushes(cap, streams)
    return replace(mix, fsync=sidejobs.mixed_fsync(writes, flushed, mix.rwmixread),
                   write_fsync=sidejobs.fsync_every(writes, flushed))


def flushes(cap: Capture, streams) -> Tuple[int, int, bool]:
    """(flushes, writes, spread) of the applied streams: the flushes that
    followed their writes in the capture and their writes; for a capture
    that did not record which stream flushed (``spread``), the capture's
    flushes in proportion to the streams' share of its writes."""
    writes = sum(s.ios for s in streams if s.rw == "write")
    if sidejobs.own_flushes(cap.streams):
        return sum(s.flushes or 0 for s in streams if s.rw == "write"), writes, False
    total = int(getattr(cap.seen, "flushes", 0) or 0)
    all_writes = sum(s.ios for s in cap.streams if s.rw == "write")
    return (int(round(total * writes / all_writes)) if all_writes else 0), writes, True


def job(mix: applied.Mixed, tc: int, qd: int, runtime: int, name: str) -> FioJob:
    """The applied workload with TC threads (fio numjobs) of QD outstanding I/Os each (fio iodepth)."""
    return FioJob(name=name, rw="randrw", bs=mix.largest, rwmixread=mix.rwmixread, runtime=runtime,
                  numjobs=tc, iodepth=qd, extra=mix.extra())


def params(opts: Options, cap: Capture, streams, mix: applied.Mixed) -> Dict[str, str]:
    """What the test stores of its workload: the capture, the share and every applied stream."""
    w = opts.of(ro.WorkloadSettings)
    out = {"workload": os.path.basename(w.workload), "capture": cap.name, "capture_device": cap.device,
           "streams_share": ro.share_text(w.streams_share), "access": "applied workload: "
           + ", ".join(f"{s.key} {100.0 * s.share:.0f}%" for s in streams),
           "rwmixread": str(mix.rwmixread), "bssplit": mix.bssplit, "percentage_random": mix.percentage_random,
           "captured_share": repr(sum(s.share for s in cap.streams if s.key in {d.key for d in streams}))}
    flushed, writes, spread = flushes(cap, streams)
    total = int(getattr(cap.seen, "flushes", 0) or 0)
    if total:
        out.update({"capture_flushes": str(total), "flushes": str(flushed), "flushed_writes": str(writes),
                    "fsync": str(mix.fsync), "flushes_spread": "true" if spread else "false"})
    discards = int(getattr(cap.seen, "discards", 0) or 0)
    if discards:
        out.update({"capture_discards": str(discards),
                    "capture_discard_bytes": str(int(getattr(cap.seen, "discard_bytes", 0) or 0))})
    if cap.devices:  # several devices applied as one workload to this target: named (side_deviations)
        out["capture_folded"] = ", ".join(d.label for d in cap.devices)
    for k, s in enumerate(streams):
        out[f"{STREAM_PARAM}{k}"] = f"{s.key}|{s.share!r}|{s.byte_share!r}"
    return out


def stream_rows(p: Mapping[str, str]) -> List[List[str]]:
    """(stream, share %, byte share %) of the applied streams a test stored."""
    rows = []
    k = 0
    while f"{STREAM_PARAM}{k}" in p:
        key, _, rest = p[f"{STREAM_PARAM}{k}"].partition("|")
        share, _, byte_share = rest.partition("|")
        try:
            rows.append([key, f"{100.0 * float(share):.1f}", f"{100.0 * float(byte_share):.1f}"])
        except ValueError:
            rows.append([key, "", ""])
        k += 1
    return rows


def side_deviations(key: str, p: Mapping[str, str]) -> List[str]:
    """What the applied workload (one fio job) does of the capture's flushes
    and discards, from the params its test stored."""
    out: List[str] = []
    try:
        fsync, total = int(p.get("fsync", "0") or 0), int(p.get("capture_flushes", "0") or 0)
        flushed, writes = int(p.get("flushes", "0") or 0), int(p.get("flushed_writes", "0") or 0)
        discards = int(p.get("capture_discards", "0") or 0)
        discard_bytes = int(p.get("capture_discard_bytes", "0") or 0)
    except ValueError:
        return out
    if fsync:
        how = ("the capture did not record which stream flushed: its flushes in proportion to the applied "
               "streams' share of its writes" if p.get("flushes_spread") == "true" else
               "the flushes that followed the applied write streams' writes")
        out.append(f"{key}: the applied workload flushes as the capture did ({flushed:,} flushes over {writes:,} "
                   f"writes; {how}), as fio fsync every {fsync} writes, which fio 3.33 repeats after each read "
                   "before the next write: the flushes follow reads as well as writes")
    if total > flushed:
        out.append(f"{key}: {total - flushed:,} of the capture's {total:,} flushes are not applied (they followed "
                   "writes of streams outside the applied workload, or no write)")
    if discards:
        out.append(f"{key}: the capture's {discards:,} discards ({discard_bytes / 1e6:,.1f} MB) are not applied: "
                   "the applied workload is one fio job, and fio mixes no trims into a job's reads and writes")
    if p.get("capture_folded"):
        out.append(f"{key}: the capture is of several devices ({p['capture_folded']}), applied to this one target as "
                   "one workload: its streams are the devices' together (a stream of several devices one stream), "
                   "their shares of the whole capture")
    return out


def workload_deviations(name: str, options: Mapping[str, str], streams_share: float) -> List[str]:
    """The departures of an applied workload run as one fio job."""
    out = [f"{name}: the applied workload runs as one fio job (rwmixread, bssplit and percentage_random per "
           "direction, each a whole percentage), not one thread per IO stream"]
    if abs(streams_share - ro.DEFAULT_SHARE) > 1e-9:
        out.append(f"{name}: the applied workload holds the streams making up {ro.share_text(streams_share)} of "
                   f"the I/Os, not the {ro.share_text(ro.DEFAULT_SHARE)} the {RWSW_PTS} tests use here")
    return out
