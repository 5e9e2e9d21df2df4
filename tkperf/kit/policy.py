"""Steady-state policies: how a plan decides that it has reached steady state.

Each plan states its policy (:attr:`~tkperf.kit.base.Plan.steady`),
so the engine, the generic views and the conformance check read it instead
of guessing from whether a tracking figure exists.  A stored result does
not record it: :func:`stored_policy` reads it from what the file holds
(an API 2 type may still say it itself, :func:`tkperf.testtypes.steady_policy`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tkperf.model.steadystate import Steady

__all__ = ["Steady", "stored_policy"]

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.results import TestRun


def stored_policy(test: TestRun) -> Steady:
    """The policy a stored test followed, from what its file holds: no
    tracking figure means no steady state; figures tracked besides it
    (``also_tracking`` in its params, IOPS under PTS 2.0) the 20/10 rule
    on several; else the 20/10 rule on the one."""
    if not test.tracking_workload:
        return Steady.NONE
    return Steady.SEVERAL if test.params.get("also_tracking") else Steady.ONE
