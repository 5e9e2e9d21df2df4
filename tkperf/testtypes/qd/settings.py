"""The queue-depth sweep's options as typed values (``opts.of(QdSettings)``), and its depths' parser."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence, Tuple

from tkperf.pts import check_depths as api_check_depths
from tkperf.pts import format_depths
from tkperf.pts import parse_depths as api_parse_depths


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
    return api_parse_depths(text, flag)


def check_depths(depths: Sequence[int], flag: str = "--qd-depths") -> None:
    api_check_depths(depths, flag)


depths_text = format_depths
