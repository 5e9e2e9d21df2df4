"""The write rate estimates assume: how long a set amount of writing takes.

Writes whose length depends on an amount (a WIPC, WSAT's TGBW, a purge
that overwrites, a fill) are timed at this rate by the dry run and by the
ETA until the run has measured the drive.  It is :data:`DEFAULT` (an
assumption, said as one) unless the engine knows better for the target
(the emulated SSD's model speed, and its model's own timing of random
writes from a purged drive: :mod:`tkperf.engine.writerate`) and sets
it around the dry run and the run with :func:`assumed`.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple, Optional


class RandomTiming(NamedTuple):
    """Random writes of an amount from a purged drive, as the target's model times them."""

    seconds: float
    burst_bytes: float  #: written before garbage collection first slowed them (all when it never did)
    burst_s: float      #: the time those took
    waf: float          #: write amplification at the end (1: no garbage collection)


#: (bytes, block size, outstanding I/Os) -> how the target's model times random writes of them.
RandomTimer = Callable[[float, int, int], RandomTiming]


@dataclass(frozen=True)
class WriteRate:
    """A sequential write rate (bytes per second) and where it comes from."""

    bps: float
    source: str
    #: Random writes from a purged drive, whose garbage collection copies
    #: what they overwrite once the drive's free space is used (None: at ``bps``).
    random: Optional[RandomTimer] = field(default=None, compare=False)

    def seconds(self, amount: float, random: bool = False, bs: int = 4096, depth: int = 1) -> float:
        """How long writing ``amount`` bytes takes from a purged drive:
        sequential writes at ``bps``; random ``bs``-byte writes with ``depth``
        outstanding as :attr:`random` times them, when known."""
        if random and self.random is not None:
            return self.random(amount, bs, depth).seconds
        return amount / self.bps

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
