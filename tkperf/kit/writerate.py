"""The write rate estimates assume: how long a set amount of writing takes.

Writes whose length depends on an amount (a WIPC, WSAT's TGBW, a purge
that overwrites, a fill) are timed at this rate by the dry run and by the
ETA until the run has measured the drive.  It is :data:`DEFAULT` (an
assumption, said as one) unless the engine knows better for the target
(the emulated SSD's model speed, :mod:`tkperf.engine.writerate`) and sets
it around the dry run and the run with :func:`assumed`.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class WriteRate:
    """A sequential write rate (bytes per second) and where it comes from."""

    bps: float
    source: str
    #: Random writes once the drive is past its fresh-out-of-box burst, whose
    #: garbage collection copies what they overwrite (0: as ``bps``).
    random_bps: float = 0.0
    #: Bytes a purged drive takes at ``bps`` before random writes slow down (0: none known).
    burst_bytes: float = 0.0

    def seconds(self, amount: float, random: bool = False) -> float:
        """How long writing ``amount`` bytes takes from a purged drive:
        sequential writes at ``bps``; random writes at ``bps`` for the burst,
        then at ``random_bps``."""
        if not random or self.random_bps <= 0:
            return amount / self.bps
        burst = min(amount, self.burst_bytes)
        return burst / self.bps + (amount - burst) / self.random_bps

    def text(self) -> str:
        """'500 MB/s, an assumed rate ...': the rate and its source, for the dry run."""
        return f"{self.bps / 1e6:,.1f} MB/s, {self.source}" if self.bps < 100e6 else \
            f"{self.bps / 1e6:,.0f} MB/s, {self.source}"


#: The rate assumed for a drive tkperf knows nothing of.
DEFAULT = WriteRate(500e6, "an assumed rate (a slower drive takes longer; the ETA corrects itself "
                           "once the run has measured the WIPC and rounds)")
_RATE: contextvars.ContextVar[WriteRate] = contextvars.ContextVar("tkperf_write_rate", default=DEFAULT)


def current() -> WriteRate:
    """The rate the estimates of this dry run or run assume."""
    return _RATE.get()


def bps() -> float:
    """:func:`current`'s bytes per second."""
    return _RATE.get().bps


@contextlib.contextmanager
def assumed(rate: WriteRate) -> Iterator[WriteRate]:
    """Estimates made inside assume ``rate``."""
    token = _RATE.set(rate)
    try:
        yield rate
    finally:
        _RATE.reset(token)
