"""The total-GB-written limit (TGBW) a write saturation stream stops at
(PTS WSAT: 4 drive fills by default), as an option's text and in bytes.
WSAT and the real-world WSAT read it from their own option."""
from __future__ import annotations

import re

from tkperf.errors import UsageError


def parse_tgbw(text: str, flag: str = "--wsat-tgbw") -> str:
    """'4x' (drive fills) or a GB figure ('800', '1.5') -> normalised text."""
    t = (text or "").strip().lower()
    # at most 12 digits (a zettabyte, a trillion fills): a figure, not thousands of digits that make no number
    if re.fullmatch(r"\d{1,12}(\.\d{1,9})?x?", t) and float(t.rstrip("x")) > 0:
        return t
    raise UsageError(f"--wsat-tgbw {text!r} is not a GB figure (e.g. 800) or drive fills (e.g. 4x)")


def tgbw_bytes(tgbw: str, capacity: int) -> int:
    """The bytes a TGBW limit allows on a target of ``capacity`` bytes."""
    if tgbw.endswith("x"):
        return int(float(tgbw[:-1]) * capacity)
    return int(float(tgbw) * 1e9)
