"""The applied test workload of a capture: its dominant streams, normalised,
as one fio job (rwsw-wsat, rwsw-dirth; docs/rwsw-tests.rst)."""
from __future__ import annotations

import os
from typing import Dict, List, Mapping, Tuple

from tkperf.api import FioJob, Options, UsageError
from tkperf.pts import Capture, CaptureStream, dominant_streams, load_capture
from tkperf.testtypes.realworld import applied
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


def mixed(streams) -> applied.Mixed:
    return applied.mixed_job(streams)


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


def workload_deviations(name: str, options: Mapping[str, str], streams_share: float) -> List[str]:
    """The departures of an applied workload run as one fio job."""
    out = [f"{name}: the applied workload runs as one fio job (rwmixread, bssplit and percentage_random per "
           "direction, each a whole percentage), not one thread per IO stream"]
    if abs(streams_share - ro.DEFAULT_SHARE) > 1e-9:
        out.append(f"{name}: the applied workload holds the streams making up {ro.share_text(streams_share)} of "
                   f"the I/Os, not the {ro.share_text(ro.DEFAULT_SHARE)} the {RWSW_PTS} tests use here")
    return out
