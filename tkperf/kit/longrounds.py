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
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Mapping, Tuple

from tkperf.durations import duration
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


def floor_bytes(capacity: int) -> int:
    """Bytes of the test's own writes before a steady state on a drive of ``capacity`` bytes."""
    return FILLS * capacity


def floor_params(capacity: int) -> Dict[str, str]:
    """A plan's params that disclose the floor (:func:`header_fields` reads them)."""
    return {MIN_WRITTEN: str(floor_bytes(capacity)), MIN_FILLS: str(FILLS)}


def round_option(prefix: str, what: str) -> Option:
    """``--<prefix>-round DURATION``: the length of each steady-state round."""
    flag = "--" + prefix.replace("_", "-") + "-round"
    return Option(f"{prefix}_round", (flag,), f"{what} length of each steady-state round (default 30m, as the "
                  "open PTS implementations judge; 1s with --quick)", parse=options.parse_duration,
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


def header_fields(params: Mapping[str, str], test: TestRun) -> Tuple[Tuple[str, str], ...]:
    """What a test header says of the rule: the round length and the fill."""
    out = []
    round_s = params.get("round_s", "")
    if round_s.isdigit():
        out.append(("Steady-state rounds", f"{duration(float(round_s), rough=True)} each (the open PTS "
                                           "implementations judge on rounds of about 30 min)"))
    need = params.get(MIN_WRITTEN, "")
    if need.isdigit():
        fills = params.get(MIN_FILLS, "1")  # files from before the two-fill floor: one
        amount = "one drive fill" if fills == "1" else f"{fills} drive fills"
        why = "" if fills == "1" else "; FOB usually lasts 2 fills (SNIA PTS Primer)"
        out.append(("Steady state after", f"at least {amount} ({format_gb(int(need))}) of the test's own "
                                          f"random writes after the WIPC (the WIPC's fill not counted{why}); "
                                          "written: " + format_gb(written_by_the_test(test))))
    return tuple(out)
