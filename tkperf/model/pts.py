"""The SNIA PTS revisions a run can follow, and every parameter they set.

A revision is plain data: the engine takes its defaults from it (OIO,
active range, write cache, TP block sizes and preconditioning, the IOPS
tracking figures), the report names it in every header, and the
conformance check (:mod:`tkperf.verdict.conformance`) holds a run against it.

Where public implementations of a revision disagree, the value here is the
one ``docs/method.rst`` gives with its source; every value used is printed
in the report header, and each can be overridden (which the conformance
verdict then lists as a deviation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tkperf.errors import UsageError


@dataclass(frozen=True)
class Revision:
    """One PTS revision and device class."""

    id: str                      # what --pts takes and the result file stores
    title: str                   # how reports name it
    device_class: str            # enterprise | client
    numjobs: int                 # default thread count (TC)
    iodepth: int                 # default queue depth (QD) per thread
    active_range: int            # percent of the LBA range, preconditioning and test
    write_cache: str             # the state the revision requires: WCE | WCD
    tp_block_sizes: Tuple[int, ...]
    #: TP preconditions with SEQ 128KiB (1.1) or with the TP block size (2.0).
    tp_wipc_with_test_bs: bool
    #: IOPS steady state: every one of these (block size, read %) must pass 20/10.
    iops_tracking: Tuple[Tuple[int, int], ...]
    #: PTS-C 1.1 lets the preconditioning range shrink to 80% (to emulate TRIM)
    #: and the test range to 8 GiB (SNIA SSSI, "SSD Performance - A Primer",
    #: 2013, "Required PTS test parameters": "PC AR=80%/Test AR=8GiB");
    #: 0 / (): only ``active_range`` for both.
    min_precondition_range: int = 0
    test_ranges: Tuple[int, ...] = ()
    #: The test range as ActiveRange segments: contiguous, equal LBA ranges
    #: whose starts are spread randomly across the active range, 2,048 for
    #: IOPS, TP and LAT (SNIA SSSI, "PTS Test Terminology", "ActiveRange
    #: Segments"; the Primer's sample headers carry an "AR Segments" field).
    #: The default of ``--ar-segments`` with a test range; another count, or
    #: one span (``--ar-segments 1``), is a deviation, named.
    test_range_segments: int = 0

    @property
    def wce(self) -> bool:
        return self.write_cache == "WCE"

    def range_deviations(self, active_range: Optional[int], test_range: int, capacity: int = 0,
                         segments: int = 1) -> List[str]:
        """What the preconditioning range (percent) and the test range (bytes,
        0: the same range; ``segments``: in how many ActiveRange segments)
        depart from this revision, in words.  With the ``capacity`` known, a
        test range larger than the active range is named at the size the
        tests use (:func:`tested_bytes`), never shrunk silently."""
        out: List[str] = []
        if test_range and test_range in self.test_ranges and self.test_range_segments \
                and segments != self.test_range_segments:
            out.append((f"the test range is {segments:,} ActiveRange segments, not the "
                        if segments > 1 else "the test range is one span at the start of the LBA range, not the ")
                       + f"{self.test_range_segments:,} ActiveRange segments spread randomly across the active "
                       f"range that {self.title} defines for IOPS, TP and LAT")
        used = tested_bytes(capacity, active_range or self.active_range, test_range) if capacity else test_range
        if test_range and used < test_range:
            if segments > 1:  # whole 4 KiB segments of what the active range holds
                used = used // segments // SEGMENT_ALIGN * SEGMENT_ALIGN * segments
            out.append(f"test range {range_text(test_range)} asked, but the device's active range holds only "
                       f"{range_text(used)}: the tests use {range_text(used)}"
                       + (f" instead of the {self.title} test range" if test_range in self.test_ranges else ""))
            return out + self._range_percent(active_range)
        if test_range and test_range not in self.test_ranges:
            allowed = " or ".join(range_text(r) for r in self.test_ranges)
            where = (f"{range_text(test_range)} in {segments:,} ActiveRange segments" if segments > 1
                     else f"the first {range_text(test_range)} of the LBA range")
            out.append(f"tests use {where} instead of the whole "
                       f"preconditioned range{' or ' + allowed if allowed else ''} ({self.title})")
        return self._range_percent(active_range) + out

    def _range_percent(self, active_range: Optional[int]) -> List[str]:
        out: List[str] = []
        low = self.min_precondition_range or self.active_range
        if active_range is not None and not (low <= active_range <= max(low, self.active_range)
                                             or active_range == self.active_range):
            allowed = f"{low}% to {self.active_range}%" if low != self.active_range else f"{self.active_range}%"
            out.append(f"active range {active_range}% instead of the {allowed} {self.title} requires")
        return out


def enterprise_only(what: str, revision: Revision) -> List[str]:
    """The deviation of a PTS-E test (``what``: XSR, HIR, DIRTH ...) run
    against PTS-C 1.1, which does not define it; empty for any other revision."""
    return [f"{what} is a PTS-E test, not part of PTS-C 1.1"] if revision.id == "pts-c-1.1" else []


def active_bytes(capacity: int, active_range: int, align: int = 1024 * 1024) -> int:
    """The active range in bytes: ``active_range`` percent of ``capacity``,
    rounded down to ``align`` (the whole capacity at 100%)."""
    if active_range >= 100:
        return capacity
    return max(align, capacity * active_range // 100 // align * align)


#: ActiveRange segments are whole multiples of 4 KiB (:mod:`tkperf.model.segments`).
SEGMENT_ALIGN = 4096


def tested_bytes(capacity: int, active_range: int, test_range: int) -> int:
    """The range the tests use: ``test_range`` when given, never beyond the
    preconditioned (active) range, else the active range."""
    active = active_bytes(capacity, active_range)
    return min(test_range, active) if test_range else active


def range_text(n: int) -> str:
    """A range as the header, the dry run and the verdict all write it: '8 GiB', '402,653,184 bytes'."""
    return f"{n / 2 ** 30:g} GiB" if n and n % 2 ** 30 == 0 else f"{n:,} bytes"


K = 1024
REVISIONS: Dict[str, Revision] = {r.id: r for r in (
    Revision("pts-e-2.0", "SNIA PTS 2.0.2, enterprise", "enterprise", 4, 32, 100, "WCD",
             (1024 * K, 128 * K), True, ((4 * K, 0), (64 * K, 65), (1024 * K, 100))),
    Revision("pts-c-2.0", "SNIA PTS 2.0.2, client", "client", 2, 16, 75, "WCE",
             (1024 * K,), True, ((4 * K, 0), (64 * K, 65), (1024 * K, 100))),
    Revision("pts-e-1.1", "SNIA PTS-E 1.1", "enterprise", 4, 32, 100, "WCD",
             (1024 * K, 128 * K), False, ((4 * K, 0),)),
    Revision("pts-c-1.1", "SNIA PTS-C 1.1", "client", 2, 16, 100, "WCE",
             (1024 * K,), False, ((4 * K, 0),), min_precondition_range=80, test_ranges=(8 * K ** 3,),
             test_range_segments=2048),
)}
DEFAULT = "pts-e-2.0"
#: ``--class`` is a short form of the current revision of a class.
BY_CLASS = {"enterprise": "pts-e-2.0", "client": "pts-c-2.0"}
_ALIASES = {"e2.0": "pts-e-2.0", "c2.0": "pts-c-2.0", "e1.1": "pts-e-1.1", "c1.1": "pts-c-1.1",
            "pts-e-2.0.2": "pts-e-2.0", "pts-c-2.0.2": "pts-c-2.0"}


def parse(text: str) -> str:
    """``--pts`` value -> revision id ('PTS-E-1.1', 'e1.1' -> 'pts-e-1.1')."""
    key = text.strip().lower().replace(" ", "-").replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in REVISIONS:
        raise UsageError(f"unknown PTS revision {text!r}; choose from {', '.join(REVISIONS)}")
    return key


def get(rev_id: str) -> Revision:
    """The revision ``rev_id``; a result file from before ``--pts`` existed
    (no id) followed the current revision of its class."""
    return REVISIONS.get(rev_id) or REVISIONS[DEFAULT]


def of_options(options: Dict[str, str]) -> Revision:
    """The revision a run's stored options name (older files: by class)."""
    rev_id = options.get("pts", "")
    if rev_id in REVISIONS:
        return REVISIONS[rev_id]
    return REVISIONS[BY_CLASS.get(options.get("device_class", "enterprise"), DEFAULT)]
