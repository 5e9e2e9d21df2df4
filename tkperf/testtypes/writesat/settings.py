"""WSAT's options as typed values, and its total-GB-written limit (TGBW)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from tkperf.api import UsageError


def parse_tgbw(text: str, flag: str = "--wsat-tgbw") -> str:
    """'4x' (drive fills) or a GB figure ('800', '1.5') -> normalised text."""
    t = (text or "").strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?x", t) and float(t[:-1]) > 0:
        return t
    if re.fullmatch(r"\d+(\.\d+)?", t) and float(t) > 0:
        return t
    raise UsageError(f"--wsat-tgbw {text!r} is not a GB figure (e.g. 800) or drive fills (e.g. 4x)")


def tgbw_bytes(tgbw: str, capacity: int) -> int:
    """The bytes a TGBW limit allows on a target of ``capacity`` bytes."""
    if tgbw.endswith("x"):
        return int(float(tgbw[:-1]) * capacity)
    return int(float(tgbw) * 1e9)


@dataclass(frozen=True)
class WsatSettings:
    """The values of WSAT's ``--wsat-*`` options."""

    option_prefix: ClassVar[str] = "wsat_"

    #: Time limit in seconds.
    time: int
    #: Total written limit: drive fills ('4x') or GB ('800'), as :func:`parse_tgbw` gives it.
    tgbw: str
    #: Reporting interval in seconds.
    interval: int
    #: 'random' or 'sequential'.
    access: str
    #: Block size in bytes.
    bs: int
    #: Also stop at steady state.
    steady: bool
    #: Spacing of the steady-state points in seconds.
    steady_spacing: int

    def tgbw_bytes(self, capacity: int) -> int:
        """The TGBW limit in bytes on a target of ``capacity`` bytes."""
        return tgbw_bytes(self.tgbw, capacity)
