"""The options of the real-world workload tests (SNIA RWSW PTS): ``--workload`` and
``--streams-share``, which the three share, and each one's own, as typed values."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import ClassVar

from tkperf.api import Option, UsageError, in_range, parse_duration
from tkperf.pts import parse_tgbw

#: The share of the I/Os the dominant streams make up (the RWSW PTS's applied test workload).
DEFAULT_SHARE = 0.8
MODES = ("steps", "exact")
INTENSITIES = ("captured", "max")
#: rwsw-wsat's ``--rwsw-wsat-streams``: the dominant streams as one mixed job, or each on its own.
WSAT_STREAMS = ("mixed", "each")


def parse_workload(text: str, flag: str) -> str:
    """A capture file (``tkperf capture``'s N.xml) as given; it is read when the
    run is planned (a bad one is refused then, before anything is written), not
    here, so a stored result stays readable without it."""
    t = (text or "").strip()
    if not t:
        raise UsageError(f"{flag} needs a capture file (N.xml, written by tkperf capture)")
    return t


def parse_share(text: str, flag: str) -> float:
    """'80%', '80' or '0.8' -> 0.8; above 0 and at most 100%."""
    t = (text or "").strip()
    number = t[:-1].strip() if t.endswith("%") else t
    try:
        value = float(number)
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not a share like 80%") from None
    if not t.endswith("%") and value <= 1.0:
        value *= 100.0
    if not math.isfinite(value) or not 0 < value <= 100:
        raise UsageError(f"{flag} {text!r} is out of range (above 0%, at most 100%)")
    return value / 100.0


def parse_step_time(text: str, flag: str) -> int:
    """A duration, or 0: every step its captured duration."""
    return 0 if (text or "").strip() == "0" else parse_duration(text, flag)


def share_text(value: float) -> str:
    return f"{100.0 * value:g}%"


def _one_of(text: str, flag: str, allowed, choose: str) -> str:
    """``text`` as one of ``allowed`` (case and spaces aside), else a UsageError saying ``choose``."""
    t = (text or "").strip().lower()
    if t not in allowed:
        raise UsageError(f"{flag} {text!r}: choose {choose}")
    return t


def parse_mode(text: str, flag: str) -> str:
    return _one_of(text, flag, MODES, "steps (each step's stream mix) or exact (the captured I/Os)")


def parse_intensity(text: str, flag: str) -> str:
    return _one_of(text, flag, INTENSITIES, "captured (each stream at its captured rate) or max (each step's "
                   "streams at its queue depth, as fast as the drive serves them)")


def parse_wsat_streams(text: str, flag: str) -> str:
    return _one_of(text, flag, WSAT_STREAMS, "mixed (the dominant streams as one applied workload) or each "
                   "(every dominant stream as a WSAT segment of its own)")


def is_capture_file(text: str) -> bool:
    """Whether ``--workload TEXT`` is this option's: a file (a capture), or
    what names one (N.xml, a path) though it is missing, so that a
    mistyped name is told "no such file" when the run is planned."""
    t = text.strip()
    return os.path.isfile(t) or t.lower().endswith(".xml") or os.sep in t


WORKLOAD = Option("rwsw_workload", ("--workload", "--rwsw-workload"),
                  "replay, rwsw-wsat, rwsw-dirth: the capture to run (N.xml, written by tkperf capture)",
                  parse=parse_workload, default="", metavar="N.xml", claims=is_capture_file)
STREAMS_SHARE = Option("rwsw_streams_share", ("--streams-share",),
                       "rwsw-wsat, rwsw-dirth: the dominant streams, those making up at least this share of "
                       "the I/Os, are the applied workload (default 80%)",
                       parse=parse_share, format=share_text, default=DEFAULT_SHARE, metavar="PERCENT")


@dataclass(frozen=True)
class WorkloadSettings:
    """``--workload`` and ``--streams-share``."""

    option_prefix: ClassVar[str] = "rwsw_"

    #: The capture file's absolute path ('' when not given).
    workload: str
    #: The share of the I/Os the dominant streams make up, 0..1.
    streams_share: float


@dataclass(frozen=True)
class ReplaySettings:
    """The replay's options (``--workload``, ``--replay``, ``--replay-step-time``, ``--replay-intensity``)."""

    option_prefix: ClassVar[str] = "rwsw_"

    workload: str
    #: 'steps' (each step's stream mix) or 'exact' (the captured I/Os).
    replay: str
    #: Seconds every step runs (0: the step's own duration).
    replay_step_time: int
    #: 'captured' (each stream held to its captured rate) or 'max' (as fast as the drive serves the step's QD).
    replay_intensity: str


REPLAY_OPTIONS = (
    WORKLOAD,
    Option("rwsw_replay", ("--replay",),
           "replay: steps (each step's stream mix at its queue depth for its duration, the RWSW PTS's "
           "Replay-Native) or exact (the captured I/Os through fio's iolog replay) (default steps)",
           parse=parse_mode, default="steps", metavar="steps|exact"),
    Option("rwsw_replay_step_time", ("--replay-step-time",),
           "replay: run every step this long instead of its captured duration (a disclosed departure; "
           "default: the captured durations)", parse=parse_step_time, default=0,
           metavar="DURATION"),
    Option("rwsw_replay_intensity", ("--replay-intensity",),
           "replay --replay steps: captured (each stream held to its captured rate, fio rate, with room for "
           "its share of the step's queue depth) or max (each step's streams at its queue depth as fast as "
           "the drive serves them, a disclosed departure) (default captured)",
           parse=parse_intensity, default="captured", metavar="captured|max"),
)


@dataclass(frozen=True)
class RwswWsatSettings(WorkloadSettings):
    """rwsw-wsat's options: the applied workload (:class:`WorkloadSettings`)
    and WSAT's stop rules (``--rwsw-wsat-*``)."""

    #: Time limit in seconds.
    wsat_time: int
    #: Total written limit: drive fills ('4x') or GB ('800').
    wsat_tgbw: str
    #: Reporting interval in seconds.
    wsat_interval: int
    #: Also stop at steady state.
    wsat_steady: bool
    #: Spacing of the steady-state points in seconds.
    wsat_steady_spacing: int
    #: 'mixed' (one applied workload) or 'each' (a WSAT segment per dominant stream).
    wsat_streams: str = "mixed"


WSAT_OPTIONS = (
    WORKLOAD, STREAMS_SHARE,
    Option("rwsw_wsat_time", ("--rwsw-wsat-time",), "rwsw-wsat time limit (default 24h, as WSAT)",
           parse=parse_duration, default=24 * 3600, quick=8,
           check=in_range(1, 366 * 86400, "--rwsw-wsat-time"), metavar="DURATION"),
    Option("rwsw_wsat_tgbw", ("--rwsw-wsat-tgbw",),
           "rwsw-wsat total GB written limit, or drive fills like 4x (default 4x, as WSAT)",
           parse=parse_tgbw, default="4x", metavar="GB|Nx"),
    Option("rwsw_wsat_interval", ("--rwsw-wsat-interval",), "rwsw-wsat reporting interval (default 60s)",
           parse=parse_duration, default=60, quick=1,
           check=in_range(1, 3600, "--rwsw-wsat-interval"), metavar="DURATION"),
    Option("rwsw_wsat_steady", ("--rwsw-wsat-steady",),
           "also stop rwsw-wsat at steady state: 20/10 on 5 points --rwsw-wsat-steady-spacing apart, "
           "checked only after two drive fills (WSAT's optional stop)", switch=True, default=False),
    Option("rwsw_wsat_steady_spacing", ("--rwsw-wsat-steady-spacing",),
           "spacing of the points the rwsw-wsat steady state is judged on (default 30m), each the IOPS of "
           "the last minute of intervals before it",
           parse=parse_duration, default=30 * 60, quick=1,
           check=in_range(1, 366 * 86400, "--rwsw-wsat-steady-spacing"), metavar="DURATION"),
    Option("rwsw_wsat_streams", ("--rwsw-wsat-streams",),
           "rwsw-wsat: mixed (the dominant streams as one applied workload) or each (every dominant stream, the "
           "8 largest at most, as a WSAT segment of its own, each from its own purge) (default mixed)",
           parse=parse_wsat_streams, default="mixed", metavar="mixed|each"),
)
