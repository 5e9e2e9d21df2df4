"""The round structure of DIRTH and CBW: the PTS 2.0 implementation's, or tkperf's shorter one.

``pts-2.0`` (the default under ``--pts pts-e-2.0`` and ``pts-c-2.0``), as
the PTS 2.0 implementation (ADATA's fork of CloudHarmony's block-storage)
runs it: first the workload-dependent preconditioning (its "Test Flow
2.2"): RND 100% writes (DIRTH: its block size; CBW: the JEDEC block-size
split and zones) at the highest OIO in rounds of ``--<test>-wdpc-round``
(30 min), the IOPS of each round's last minute tracked (the points tkperf
takes of every 30-minute round, :mod:`tkperf.kit.longrounds`; the PTS 2.0
implementation tracks the first minute here), until 20/10 holds
(at most ``--max-rounds``); then every round is a pre-write of 100% writes
at the highest OIO (TC32/QD32 on the PTS grid, ``--<test>-prewrite``,
5 min) followed by the whole sweep, in one fio process, repeated until the
highest-OIO point of the sweep is steady (20/10, at most ``--max-rounds``,
and not before the test's own random writes after the WIPC reach one
drive fill); then, in one more fio process, for each of the max, mid and
min points (chosen from the window means) a pre-write of 100% writes at
the point's own TC and QD (``--<test>-capture-prewrite``, 60 min) and a
capture at the point (``--<test>-capture``, 10 min) whose response-time
histogram the report shows.  :class:`~tkperf.kit.composite.SweepRounds`
runs it.  Sources: Alan-ADATA/SSS-PTS-TEST, ``test/lib/BlockStorageTestDirth.php``
and ``test/lib/BlockStorageTestCbw.php`` (``wdpc()``).

``steady-sweep`` (the default under ``--pts pts-e-1.1``, and tkperf's only
structure before): rounds of the workload at the highest OIO
(``--<test>-round``, 30 min) until steady, then one sweep whose points
give the histograms (:class:`~tkperf.kit.composite.SteadyThenSweep`).
Under a 2.0 revision it is a disclosed deviation.

Where the ``<options>`` of an older result file hold no structure, the
test ran ``steady-sweep``.
"""
from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Tuple

from tkperf.durations import duration
from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.kit.base import Option, in_range
from tkperf.kit.longrounds import split_round
from tkperf.kit.options import MAX_RUNTIME, parse_duration

PTS20 = "pts-2.0"
SHORT = "steady-sweep"
AUTO = "auto"
STRUCTURES = (AUTO, PTS20, SHORT)
#: The PTS 2.0 implementation's pre-write of every round, the pre-write before each capture and the capture.
PREWRITE_S = 5 * 60
CAPTURE_PREWRITE_S = 60 * 60
CAPTURE_S = 10 * 60
#: The workload-dependent preconditioning before the sweep rounds: rounds of 30 minutes
#: (its tracked figure the IOPS of each round's last minute); the start of its workloads' names;
#: the plan parameter holding its round length.
WDPC_ROUND_S = 30 * 60
WDPC = "wdpc-"
WDPC_ROUND_PARAM = "wdpc_round_s"

WORDS = {
    PTS20: ("the PTS 2.0 implementation's: first the workload dependent preconditioning (RND writes at the "
            "highest OIO in 30-minute rounds until 20/10 holds); then every round a pre-write (100% writes) at the "
            "highest OIO, then the whole sweep, "
            "until the highest-OIO point is steady; the figures of each point are means over the window; "
            "then a pre-write (100% writes at the point's own TC and QD) and a capture at each of the max, mid and "
            "min points, whose histograms are shown"),
    SHORT: ("tkperf's shorter structure: steady state at the highest OIO, then one sweep; the histograms come "
            "from the sweep's points. The PTS 2.0 implementation instead repeats a pre-write and the whole "
            "sweep until the highest-OIO point is steady, and captures each histogram point after its own "
            "pre-write"),
}


def parse_structure(text: str, flag: str) -> str:
    value = (text or "").strip().lower()
    if value not in STRUCTURES:
        raise UsageError(f"{flag} {text!r} is not one of {', '.join(STRUCTURES)}")
    return value


def resolve(value: Optional[str], revision_id: str) -> str:
    """The structure a run uses: ``auto`` is ``pts-2.0`` under a 2.0
    revision, else ``steady-sweep``; None (an older file) is ``steady-sweep``."""
    if value is None:
        return SHORT
    if value == AUTO:
        return PTS20 if revision_id.endswith("-2.0") else SHORT
    return value


def structure_options(prefix: str, what: str) -> Tuple[Option, ...]:
    """``--<prefix>-structure``, ``--<prefix>-prewrite``, ``--<prefix>-capture-prewrite``, ``--<prefix>-capture``,
    ``--<prefix>-wdpc-round``."""
    flag = "--" + prefix.replace("_", "-")

    def seconds(name: str, default: int, quick: int, words: str) -> Option:
        f = f"{flag}-{name.replace('_', '-')}"
        return Option(f"{prefix}_{name}", (f,), f"{what} {words} under the pts-2.0 structure (default "
                      f"{duration(float(default), rough=True)}; 1s with --quick)", parse=parse_duration,
                      default=default, quick=quick, check=in_range(1, MAX_RUNTIME, f), metavar="DURATION")

    return (
        Option(f"{prefix}_structure", (f"{flag}-structure",), f"{what} round structure: pts-2.0 (every round a "
               "pre-write and the whole sweep, then captures at the max, mid and min points), steady-sweep "
               "(steady state at the highest OIO, then one sweep) or auto (default: pts-2.0 under a 2.0 "
               "revision, steady-sweep under pts-e-1.1)", parse=parse_structure, default=AUTO, metavar="STRUCTURE"),
        seconds("prewrite", PREWRITE_S, 1, "pre-write (100% writes) at the highest OIO before each round's sweep"),
        seconds("capture_prewrite", CAPTURE_PREWRITE_S, 1, "pre-write (100% writes) at the captured point's own TC "
                "and QD before each capture"),
        seconds("capture", CAPTURE_S, 2, "capture at each of the max, mid and min points"),
        seconds("wdpc_round", WDPC_ROUND_S, 1, "round of the workload dependent preconditioning before the sweep "
                "rounds (the IOPS of its last minute are tracked)"),
    )


def structure_deviations(stored: Mapping[str, str], values: Mapping[str, object], prefix: str, what: str,
                         revision_id: str) -> Tuple[str, List[str]]:
    """(the structure the run used, its deviations) from the stored
    ``<options>`` text ``stored`` and their values ``values``."""
    used = resolve(stored.get(f"{prefix}_structure") and str(values[f"{prefix}_structure"]), revision_id)
    out: List[str] = []
    if used == SHORT:
        if revision_id.endswith("-2.0"):
            out.append(f"{what} uses tkperf's shorter structure (steady state at the highest OIO, then one sweep "
                       "whose points give the histograms) instead of the PTS 2.0 round structure")
        return used, out
    for name, pts_s, words in (("prewrite", PREWRITE_S, "pre-write of each round"),
                               ("capture_prewrite", CAPTURE_PREWRITE_S, "pre-write before each capture"),
                               ("capture", CAPTURE_S, "capture at each point"),
                               ("wdpc_round", WDPC_ROUND_S, "workload dependent preconditioning rounds")):
        got = int(values[f"{prefix}_{name}"])  # type: ignore[call-overload]
        if got < pts_s:
            out.append(f"{what} {words} of {duration(float(got), rough=True)} instead of "
                       f"{duration(float(pts_s), rough=True)} (the PTS 2.0 implementation)")
    return used, out


def wdpc_jobs(write: Callable[[int, int, int, str], FioJob], wbase: str, top: Tuple[int, int],
              round_s: int) -> Tuple[FioJob, ...]:
    """One round of the workload-dependent preconditioning: ``write(tc, qd,
    runtime, name)`` at the highest OIO ``top`` for ``round_s``, the rest of
    the round first, then its last minute (or the whole round when shorter)
    as its own job, whose IOPS are the tracked figure: the point of every
    30-minute round (:func:`~tkperf.kit.longrounds.split_round`).  Results
    from before tracked the round's first minute (the PTS 2.0
    implementation's ``wdpc()`` in ``test/lib/BlockStorageTestDirth.php``)."""
    name = f"{wbase}-tc{top[0]}-qd{top[1]}"
    return split_round(lambda runtime, job: write(top[0], top[1], runtime, job), round_s, f"{WDPC}{name}",
                       f"{WDPC}rest-{name}")


def wdpc_tracked(jobs: Tuple[FioJob, ...]) -> FioJob:
    """The tracked job of a preconditioning round (:func:`wdpc_jobs`): its last."""
    return jobs[-1]
