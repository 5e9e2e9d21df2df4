"""What a loop shape decides about the test it runs, read back from the result.

Every :class:`~tkperf.kit.shapes.Shape` is a :class:`Steps`: it says
what one of its measured steps is called (``unit``: round, interval,
point, phase) and how many of them a stored test holds, whether a test
interrupted after reaching steady state is kept on resume, which tracking
variables its steady state judged, and which figures are the test's first
ones (fresh out of box, or round 1 after the WIPC).  The defaults are those
of a round loop whose rounds measure no single first figure; the shapes
override what they decide (:class:`~tkperf.kit.shapes.Rounds`: round 1
is measured like the window, so it is FOB-able; a stream: its first
interval, and so on).
"""
from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, List, Protocol

from tkperf.model.figures import Figure
from tkperf.model.results import TestRun


class Headline(Protocol):
    """What a shape is handed to compute first figures: the test type's
    ``headline(test) -> figures``."""

    def __call__(self, test: TestRun) -> List[Figure]: ...


class Steps:
    """What a shape decides about its test (see the module doc)."""

    #: What one measured step is called: round, interval, point, phase.
    unit: ClassVar[str] = "round"
    #: A test interrupted after reaching steady state is kept on resume
    #: (a round loop); a stream's steady state is only a stop rule.
    keeps_steady_on_resume: ClassVar[bool] = True
    #: Round 1 measures what the window measures, so the headline figures of
    #: round 1 alone are the test's first figures.
    first_round_is_fob: ClassVar[bool] = False

    def steps_done(self, test: TestRun) -> int:
        """How many steps (each called ``unit``) the test measured."""
        return test.done

    def tracking_variables(self, test: TestRun) -> List[TestRun]:
        """The test seen once per tracking variable (its ``tracking_*`` set
        to that variable, no recorded verdict), when the steady state needs
        more than one; empty for one variable."""
        return []

    def unsteady_variables(self, test: TestRun) -> List[str]:
        """Labels of the tracking variables that failed 20/10 in the window,
        when the test is not steady: of several, those that failed; of one,
        that one (a verdict of no steady state always names what failed)."""
        if test.steady is None or test.steady.steady:
            return []
        window = test.steady.window or 5
        several = self.tracking_variables(test)
        if not several:
            return [test.tracking_label] if test.tracking_label else []
        return [v.tracking_label for v in several if not v.evaluate(window).steady]

    def first_figures(self, headline: Headline, test: TestRun) -> List[Figure]:
        """The headline figures of the first step alone, whatever came
        before it: round 1's when ``first_round_is_fob``, else none."""
        if not self.first_round_is_fob or not test.rounds:
            return []
        first = replace(test, rounds=test.rounds[:1], steady=None, series={})
        return [f for f in headline(first) if f.key != "tracking"]

    def fob(self, headline: Headline, test: TestRun) -> List[Figure]:
        """Fresh out of box: the first figures measured after the purge and
        before any preconditioning (WSAT's first interval, XSR's first
        phase).  A round after the WIPC is not FOB (:meth:`round1_after_wipc`);
        neither is a test whose record does not say whether a WIPC ran (a
        round loop imported from the original TKperf, which ran one)."""
        if not started_from_purge(test) or test.wipc is not None:
            return []
        if test.rounds and test.purge is not None and test.purge.method == "not recorded":
            return []
        return self.first_figures(headline, test)

    def round1_after_wipc(self, headline: Headline, test: TestRun) -> List[Figure]:
        """Round 1 of a test that ran a WIPC first: what a reader might take
        for FOB, shown as 'round 1, after WIPC'."""
        if test.wipc is None or not test.rounds:
            return []
        return self.first_figures(headline, test)


def started_from_purge(test: TestRun) -> bool:
    """Whether the test began with a purge (any method but none)."""
    return test.purge is not None and test.purge.method not in ("", "none")
