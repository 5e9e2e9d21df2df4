"""Durations as text, the one place tkperf words them."""
from __future__ import annotations


def duration(seconds: float, rough: bool = False) -> str:
    """A duration as a reader takes it in.

    Measured durations (reports): '4.0 s', '45 s', '12.5 min', '24.0 h'.
    ``rough`` for estimates and ETAs, which claim no more than they know:
    '45 s', '12 min', '3.5 h'.
    """
    if rough:
        if seconds < 120:
            return f"{seconds:.0f} s"
        if seconds < 7200:
            return f"{seconds / 60:.0f} min"
        return f"{seconds / 3600:.1f} h"
    if seconds >= 3 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 180:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
