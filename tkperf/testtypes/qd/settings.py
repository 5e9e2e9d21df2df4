"""The queue-depth sweep's options as typed values (``opts.of(QdSettings)``), and its depths' parser."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Sequence, Tuple

from tkperf.api import MAX_IODEPTH, UsageError


@dataclass(frozen=True)
class QdSettings:
    """The values of the ``--qd-*`` options."""

    option_prefix: ClassVar[str] = "qd_"

    #: Queue depths swept, in order.
    depths: Tuple[int, ...]
    #: Seconds per queue depth.
    time: int
    #: The workload words swept (``rnd4k-w``, ...).
    workloads: Tuple[str, ...]
    #: Seconds of the random-write preconditioning.
    precondition_time: int


def parse_depths(text: str, flag: str = "--qd-depths") -> Tuple[int, ...]:
    """'1,2,4,32' -> (1, 2, 4, 32): the points in the order given, each once."""
    out: List[int] = []
    for part in (text or "").split(","):
        p = part.strip()
        if not p:
            continue
        if not p.isdigit() or not 1 <= int(p) <= MAX_IODEPTH:
            raise UsageError(f"{flag} {p!r} is not a queue depth from 1 to {MAX_IODEPTH}")
        if int(p) not in out:
            out.append(int(p))
    check_depths(tuple(out), flag)
    return tuple(out)


def check_depths(depths: Sequence[int], flag: str = "--qd-depths") -> None:
    if not depths:
        raise UsageError(f"{flag} names no queue depth (give e.g. 1,2,4,8)")
    for d in depths:
        if not 1 <= d <= MAX_IODEPTH:
            raise UsageError(f"{flag} {d} is not a queue depth from 1 to {MAX_IODEPTH}")


def depths_text(depths: Sequence[int]) -> str:
    return ",".join(str(d) for d in depths)
