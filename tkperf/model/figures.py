"""A headline figure: one number a test type puts first, with its unit and
the direction that is better.

It lives in the model because what reads stored runs (``show``, the summary
page, ``tkperf check``'s regressions) compares figures without running
anything; test types make them (:meth:`tkperf.kit.base.TestType.headline`).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """A headline figure: ``better`` is ``higher``, ``lower`` or ``""`` (neither)."""

    key: str
    label: str
    value: float
    unit: str
    better: str = "higher"
    text: str = "{:,.0f}"

    def __post_init__(self) -> None:
        if self.better not in ("higher", "lower", ""):
            raise ValueError(f"figure {self.key}: better must be higher, lower or empty")

    def shown(self) -> str:
        """The value as ``show`` prints it, with its unit: '93,332 IOPS'."""
        return self.text.format(self.value) + (f" {self.unit}" if self.unit else "")
