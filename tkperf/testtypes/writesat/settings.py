"""WSAT's options as typed values."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tkperf.pts import tgbw_bytes


@dataclass(frozen=True)
class WsatSettings:
    """The values of WSAT's ``--wsat-*`` options."""

    option_prefix: ClassVar[str] = "wsat_"

    #: Time limit in seconds.
    time: int
    #: Total written limit: drive fills ('4x') or GB ('800'), as ``tkperf.api.parse_tgbw`` gives it.
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
    #: Seconds of the response-time capture after the stream (0: none).
    capture: int

    def tgbw_bytes(self, capacity: int) -> int:
        """The TGBW limit in bytes on a target of ``capacity`` bytes."""
        return tgbw_bytes(self.tgbw, capacity)
