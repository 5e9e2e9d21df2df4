"""The steady-state rounds of HIR, DIRTH and CBW: about 30 minutes each, and
never steady before the test itself has written two drive fills after its WIPC.

Both open PTS implementations judge these tests' steady state on rounds of
about 30 minutes (CloudHarmony's HIR; the PTS 2.0 implementation's HIR,
DIRTH and CBW), and the PTS's optional WSAT rule uses points 30 minutes
apart: back-to-back 1-minute rounds pass 20/10 while a drive is still in
the fast burst that follows a sequential fill (SanDisk's "Performance Consistency" shows 80-260 s of
it on small drives).  So each round of these tests is ``--<test>-round``
long (default 30 min; ``--quick`` 1 s), and :class:`FillFloor` holds the
verdict at "not steady" until the test's own random writes (its
workload-dependent preconditioning and rounds; the WIPC's sequential fill
not counted) reach :data:`FILLS` drive capacities.  Both are disclosed in
the test's header (:func:`header_fields`) and a shorter round is a
conformance deviation.

Why two fills: FOB "usually only lasts 2 SSD capacity fills" (SNIA SSSI,
"Solid State Storage (SSS) Performance Test Specification (PTS) -- SSD
Performance: A Primer", 2013, section "FOB"), and a drive's write cliff
comes after about one capacity plus its spare area of random writes.  A
floor of one fill lies on that plateau for any drive with spare area: a
window of rounds there passes 20/10 at burst speed.

What a point of these rounds is (one definition for every test tracked in
30-minute stretches, :func:`split_round`, :func:`point_params`): the IOPS
of the LAST one-minute test period of each round, so the points are 30
minutes apart and each is a one-minute measurement, not a 30-minute mean.
Sources: SNIA SSSI, "SSD Performance -- A Primer" (2013), section "WSAT":
"5 points separated by 30 minutes of random 4KiB Writes"; the PTS 2.0
implementation (Alan-ADATA/SSS-PTS-TEST) tracks the 31st, last, one-minute
test of each 31-minute WSAT round (``test/lib/BlockStorageTestWsat.php``)
and the last of the 30 one-minute tests of each HIR round
(``test/lib/BlockStorageTestHir.php``, ``wdpc()``); its one-minute test
period (``wd_test_duration`` 60) is the PTS's measurement unit.  A round
is one fio process of two stonewalled jobs, the rest of the round then the
measured minute: the writes go on (fio only drains its queue between the
two jobs) and the point is fio's own count of that minute.  A round of a
minute or less is measured whole.  Results from before this definition
carry no :data:`POINT_PARAM`: their points were taken by the earlier one,
which each test names (:func:`point_words`).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from tkperf.durations import duration
from tkperf.fio.jobs import FioJob
from tkperf.kit import options
from tkperf.kit.base import Option, in_range
from tkperf.kit.composite import wdpc_written
from tkperf.model.results import TestRun, format_gb
from tkperf.model.steadystate import SteadyState

#: Seconds of one steady-state round (the open implementations' 30 minutes).
ROUND_S = 30 * 60
#: The parameter a plan stores the bytes a steady state needs written since the purge under.
MIN_WRITTEN = "steady_min_written"
#: ... and how many drive fills those bytes are (files from before it: one).
MIN_FILLS = "steady_min_fills"
#: Drive fills of the test's own random writes before any steady state: the
#: Primer's FOB "usually only lasts 2 SSD capacity fills".
FILLS = 2


#: Seconds of the measured test period each steady-state point is: the PTS's one-minute test period.
POINT_S = 60
#: The plan parameter that says how the points were taken (:data:`LAST_MINUTE`); absent in older results.
POINT_PARAM = "steady_point"
#: ... and its value: the last one-minute test period of each 30-minute stretch.
LAST_MINUTE = "last-minute"
#: The plan parameter holding the seconds each point measured (a minute, or a shorter round whole).
POINT_S_PARAM = "steady_point_s"
#: The definition in words, as headers, the dry run and the docs give it.
POINT_DEFINITION = ("steady state on the last minute of each 30-minute round (SNIA SSSI, \"SSD Performance \u2013 A "
              "Primer\" (2013), WSAT: \"5 points separated by 30 minutes\"; the PTS 2.0 implementation, "
              "Alan-ADATA/SSS-PTS-TEST, tracks the last one-minute test of each round)")


def point_seconds(round_s: int) -> int:
    """Seconds of the measured period of a round of ``round_s`` seconds: a
    minute, or the whole round when it is shorter (``--quick``)."""
    return max(1, min(POINT_S, int(round_s)))


def split_round(make: Callable[[int, str], FioJob], round_s: int, name: str, rest_name: str) -> Tuple[FioJob, ...]:
    """One steady-state round as the jobs of one fio process: ``make(runtime,
    job_name)`` for the rest of the round (``rest_name``), then the measured
    last minute (``name``, the tracking figure's workload); a round no longer
    than the measured period is that job alone."""
    tracked = point_seconds(round_s)
    if round_s <= tracked:
        return (make(round_s, name),)
    return (make(round_s - tracked, rest_name), make(tracked, name))


def point_params(measured_s: int) -> Dict[str, str]:
    """A plan's params that say how its points are taken, each over its last
    ``measured_s`` seconds (:func:`point_seconds` of a round; :func:`point_words` reads them)."""
    return {POINT_PARAM: LAST_MINUTE, POINT_S_PARAM: str(measured_s)}


def last_minute(params: Mapping[str, str]) -> bool:
    """Whether a stored test took its points by the last-minute definition (False: an older result)."""
    return params.get(POINT_PARAM) == LAST_MINUTE


def point_words(params: Mapping[str, str], earlier: str, unit: str = "round") -> str:
    """What each steady-state point of a stored test is: the last-minute
    definition with its source, or, for a result from before it, ``earlier``
    (the earlier definition, e.g. 'the mean IOPS of the whole round') named
    as such.  ``unit``: what the points end ('round', '30-minute stretch')."""
    if not last_minute(params):
        return f"{earlier} (this result's earlier definition; tkperf now tracks the last minute of each round)"
    secs = params.get(POINT_S_PARAM, "")
    if secs.isdigit() and int(secs) < POINT_S:
        return (f"the IOPS of the last {secs} s of each {unit} (shorter than a minute here, so the point is the whole "
                f"{unit}); {POINT_DEFINITION}")
    return f"the IOPS of the last one-minute test period of each {unit}; {POINT_DEFINITION}"


#: The earlier definitions of results from before the last-minute points, by
#: what their params show: (name, words).
EARLIER_ROUND = ("whole-round-mean", "the mean IOPS of the whole round")
EARLIER_WDPC = ("first-minute", "the IOPS of the first minute of each workload dependent preconditioning "
                                "round, as the PTS 2.0 implementation tracks it")
EARLIER_SPACED = ("block-mean", "the mean IOPS of the intervals each point ends")


def stored_definition(params: Mapping[str, str]) -> Optional[Tuple[str, str]]:
    """(name, words) of how a stored test took its 30-minute steady-state
    points: :data:`LAST_MINUTE`, or for a result from before, the earlier
    definition its params show (HIR and ``steady-sweep`` rounds,
    DIRTH/CBW preconditioning rounds, WSAT's spaced points); None for a
    test without such points, and for a WSAT run without its steady-state
    stop (no point decides anything there)."""
    if "steady_spacing" in params and params.get("steady_stop") != "true":
        return None
    if last_minute(params):
        secs = params.get(POINT_S_PARAM, "")
        if secs.isdigit() and int(secs) < POINT_S:
            return LAST_MINUTE, f"the IOPS of the last {secs} s of each round or stretch (shorter than a minute here)"
        what = " workload dependent preconditioning" if "wdpc_round_s" in params else ""
        return LAST_MINUTE, (f"the IOPS of the last minute of each 30-minute{what} round or stretch (SNIA Primer; "
                             "PTS 2.0 implementation)")
    for key, earlier in (("wdpc_round_s", EARLIER_WDPC), ("round_s", EARLIER_ROUND),
                         ("steady_spacing", EARLIER_SPACED)):
        if key in params:
            return earlier[0], f"{earlier[1]} (this result's earlier definition)"
    return None


def floor_bytes(capacity: int) -> int:
    """Bytes of the test's own writes before a steady state on a drive of ``capacity`` bytes."""
    return FILLS * capacity


def floor_params(capacity: int) -> Dict[str, str]:
    """A plan's params that disclose the floor (:func:`header_fields` reads them)."""
    return {MIN_WRITTEN: str(floor_bytes(capacity)), MIN_FILLS: str(FILLS)}


def round_option(prefix: str, what: str) -> Option:
    """``--<prefix>-round DURATION``: the length of each steady-state round."""
    flag = "--" + prefix.replace("_", "-") + "-round"
    return Option(f"{prefix}_round", (flag,), f"{what} length of each steady-state round, whose point is the IOPS of "
                  "its last minute (default 30m, as the open PTS implementations judge; 1s with --quick, "
                  "measured whole)", parse=options.parse_duration,
                  default=ROUND_S, quick=1, check=in_range(1, options.MAX_RUNTIME, flag), metavar="DURATION")


def round_deviation(values: Mapping[str, object], prefix: str, what: str) -> List[str]:
    """The deviation of a steady-state round shorter than 30 minutes."""
    seconds = int(values[f"{prefix}_round"])  # type: ignore[call-overload]
    if seconds >= ROUND_S:
        return []
    return [f"{what} steady-state rounds of {duration(float(seconds), rough=True)} instead of 30 min "
            "(as the open PTS implementations judge)"]


def written_by_the_test(test: TestRun) -> int:
    """Bytes the test's own random writes put on the drive after its WIPC:
    its preconditioning rounds (PTS 2.0 DIRTH/CBW) and its rounds.  The
    WIPC's sequential fill does not count: the fast burst the floor guards
    against follows exactly such a fill."""
    return wdpc_written(test) + sum(w.write.io_bytes for r in test.rounds for w in r.workloads)


@dataclasses.dataclass(frozen=True)
class FillFloor:
    """A plan's ``judge``: the 20/10 verdict on the tracking figure, held at
    not steady until the test's own writes (:func:`written_by_the_test`)
    reach ``min_written`` bytes (:func:`floor_bytes`)."""

    min_written: int

    def __call__(self, test: TestRun, window: int) -> SteadyState:
        verdict = test.evaluate(window)
        if verdict.steady and written_by_the_test(test) < self.min_written:
            return dataclasses.replace(verdict, steady=False)
        return verdict


def header_fields(params: Mapping[str, str], test: TestRun,
                  earlier: str = "the mean IOPS of the whole round") -> Tuple[Tuple[str, str], ...]:
    """What a test header says of the rule: the round length, what each
    point is (``earlier``: the definition of results from before the
    last-minute points) and the fill."""
    out = []
    round_s = params.get("round_s", "")
    if round_s.isdigit():
        out.append(("Steady-state rounds", f"{duration(float(round_s), rough=True)} each (the open PTS "
                                           "implementations judge on rounds of about 30 min)"))
        out.append(("Steady-state points", point_words(params, earlier)))
    need = params.get(MIN_WRITTEN, "")
    if need.isdigit():
        fills = params.get(MIN_FILLS, "1")  # files from before the two-fill floor: one
        amount = "one drive fill" if fills == "1" else f"{fills} drive fills"
        why = "" if fills == "1" else "; FOB usually lasts 2 fills (SNIA PTS Primer)"
        out.append(("Steady state after", f"at least {amount} ({format_gb(int(need))}) of the test's own "
                                          f"random writes after the WIPC (the WIPC's fill not counted{why}); "
                                          "written: " + format_gb(written_by_the_test(test))))
    return tuple(out)
