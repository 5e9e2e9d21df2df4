"""The parts of a test type besides its identity and plan (API 3).

A :class:`~tkperf.testtypes.base.TestType` names two optional parts:

* ``pts``: a :class:`PtsRules` when the type is one of the SNIA PTS tests
  (how the PTS sets its OIO, how a run's settings and results depart from
  the PTS revision); ``None`` for any other type, whose runs are then not
  PTS-conformant measurements.
* ``view``: a :class:`View` subclass, how its results are shown: its
  report and comparison sections, its lines of the summary page, its
  instance titles and the check of its stored data.  The report layer
  builds it with its type (``view(kind)``); a type without one is shown by
  tkperf's generic sections.
"""
from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.pts import Revision
    from tkperf.model.results import RunResult, TestRun
    from tkperf.testtypes.base import SummaryValue, TestType

#: The values of :attr:`PtsRules.oio`.
OIO_FIXED, OIO_OPERATOR, OIO_SWEEP = "fixed", "operator", "sweep"


class PtsRules:
    """What makes a type one of the SNIA PTS tests: its OIO rule and its
    deviations from a PTS revision.  Each method gets the type it judges."""

    #: How the PTS sets this test's OIO (TC x QD), by one rule for every PTS
    #: test (docs/method.rst, "One rule for the OIO"): :data:`OIO_FIXED`, the
    #: test's definition names it and any other is a deviation (LAT, TP,
    #: XSR); :data:`OIO_OPERATOR`, the test operator's choice, disclosed in
    #: the header and never a deviation (IOPS, WSAT, HIR); :data:`OIO_SWEEP`,
    #: the test sweeps it over its grid (DIRTH, CBW).
    oio: str = OIO_OPERATOR

    def deviations(self, kind: "TestType", options: Mapping[str, str], revision: "Revision") -> List[str]:
        """How this test's settings (the run's stored ``options``) depart from
        ``revision``, in words a reviewer understands; empty when they match."""
        return []

    def planned_deviations(self, kind: "TestType", options: Mapping[str, str], revision: "Revision") -> List[str]:
        """What only the dry run says: settings that make the run a deviation
        if they take effect (a limit that may end a test early).  After the
        run :meth:`result_deviations` judges what happened instead."""
        return []

    def result_deviations(self, kind: "TestType", test: "TestRun", options: Mapping[str, str],
                          revision: "Revision", capacity: int) -> List[str]:
        """Deviations only this test's results show (what ended it, say)."""
        return []


class View(abc.ABC):
    """How one test type's results are shown; built with its type."""

    #: The type's own report section shows its response-time histograms;
    #: otherwise the report adds tkperf's latency QoS part to every test of
    #: it that kept them.
    shows_histograms: bool = False

    def __init__(self, kind: "TestType") -> None:
        self.kind = kind

    @abc.abstractmethod
    def report_section(self, ctx: Any, tests: Sequence["TestRun"]) -> list:
        """Blocks of this type's section of a run report (all its instances)."""

    @abc.abstractmethod
    def compare_section(self, ctx: Any, runs: Sequence["RunResult"], labels: Sequence[str]) -> list:
        """Blocks of this type's section of a comparison of several runs."""

    def summary(self, test: "TestRun") -> Dict[str, "SummaryValue"]:
        """Lines of the summary page this test measured (keys of the page's layout)."""
        return {}

    def instance_title(self, test: "TestRun") -> str:
        """Short name of one instance in tables and lines: 'IOPS', 'TP 1024k'."""
        return instance_title(self.kind, test)

    def check_data(self, test: "TestRun") -> None:  # noqa: B027 - optional: a type without checks accepts all
        """Raise ValueError when the test's stored data (``test.data``,
        ``test.series``) is not what this test type writes."""


def instance_title(kind: "TestType", test: "TestRun") -> str:
    """The default short name of an instance: the type's ``short``."""
    return kind.short or kind.name.upper()
