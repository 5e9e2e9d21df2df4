"""API 2 test types, run through API 3 for one release.

An API 2 type (``api_version = 2``, or one that still defines members API 3
moved to the parts: ``unit``, ``pts_test``, ``deviations``, ``summary``,
``report_section`` ...) is wrapped by the registry in an :class:`Api2Type`:
an API 3 :class:`~tkperf.kit.base.TestType` whose parts ask the old
type.  ``tkperf tests`` says which types run so; API 2 ends with
:data:`API2_ENDS`.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence

from tkperf.kit.base import (
    OIO_OPERATOR,
    Blocks,
    OptionSet,
    Plan,
    PtsRules,
    SummaryValue,
    TestType,
    View,
    instance_title,
    own,
)
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.kit.settings import Options
from tkperf.kit.steps import Headline, Steps
from tkperf.model.figures import Figure

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.pts import Revision
    from tkperf.model.results import RunResult, TestRun

#: The tkperf release without the API 2 adapter.
API2_ENDS = "tkperf 0.2.0"



class Api2Pts(PtsRules):
    """An API 2 type's ``pts_test``, ``oio`` and deviation methods."""

    def __init__(self, old: Any) -> None:
        self.old = old
        self.oio = getattr(old, "oio", "") or OIO_OPERATOR

    def deviations(self, kind: TestType, options: Mapping[str, str], revision: Revision) -> List[str]:
        method = own(self.old, "deviations")
        return list(method(options, revision)) if method else []

    def planned_deviations(self, kind: TestType, options: Mapping[str, str], revision: Revision) -> List[str]:
        method = own(self.old, "planned_deviations")
        return list(method(options, revision)) if method else []

    def result_deviations(self, kind: TestType, test: TestRun, options: Mapping[str, str],
                          revision: Revision, capacity: int) -> List[str]:
        method = own(self.old, "result_deviations")
        return list(method(test, options, revision, capacity)) if method else []


class Api2View(View):
    """An API 2 type's sections (its ``view`` module or its own methods),
    summary, instance titles and data check; what it does not define is
    tkperf's generic view (``generic``, set by the report)."""

    generic: Optional[View] = None

    def __init__(self, kind: TestType) -> None:
        super().__init__(kind)
        self.old = kind.old if isinstance(kind, Api2Type) else kind
        self.shows_histograms = bool(getattr(self.old, "shows_histograms", False))

    def _section(self, name: str) -> Optional[Callable[..., list]]:
        method = own(self.old, name)
        if method is not None:
            return method
        module = getattr(self.old, "view", None)
        return getattr(importlib.import_module(module), name) if isinstance(module, str) and module else None

    def report_section(self, ctx: ReportContext, tests: Sequence[TestRun]) -> list:
        section = self._section("report_section")
        if section is not None:
            return section(ctx, tests)
        return self.generic.report_section(ctx, tests) if self.generic is not None else []

    def compare_section(self, ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        section = self._section("compare_section")
        if section is not None:
            return section(ctx, runs, labels)
        return self.generic.compare_section(ctx, runs, labels) if self.generic is not None else []

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        method = own(self.old, "summary")
        return dict(method(test)) if method else {}

    def instance_title(self, test: TestRun) -> str:
        method = own(self.old, "instance_title")
        return str(method(test)) if method else instance_title(self.kind, test)

    def check_data(self, test: TestRun) -> None:
        method = own(self.old, "check_data")
        if method:
            method(test)


class Api2Steps(Steps):
    """What an API 2 type said of its steps (``unit``, FOB, tracking
    variables, with API 2's defaults where it said nothing), over what its
    plans' shape decides (``shape``: how many steps a test holds)."""

    def __init__(self, old: Any, shape: Steps) -> None:
        self.old, self.shape = old, shape
        self.unit = str(own(old, "unit") or shape.unit)  # type: ignore[misc]
        keep = own(old, "keeps_steady_on_resume")
        self.keeps_steady_on_resume = True if keep is None else bool(keep)  # type: ignore[misc]
        self.first_round_is_fob = bool(own(old, "fob_from_first_round"))  # type: ignore[misc]

    def steps_done(self, test: TestRun) -> int:
        return self.shape.steps_done(test)

    def tracking_variables(self, test: TestRun) -> List[TestRun]:
        method = own(self.old, "tracking_variables")
        return list(method(test)) if method else self.shape.tracking_variables(test)

    def first_figures(self, headline: Headline, test: TestRun) -> List[Figure]:
        method = own(self.old, "first_figures")
        return list(method(test)) if method else super().first_figures(headline, test)

    def fob(self, headline: Headline, test: TestRun) -> List[Figure]:
        method = own(self.old, "fob")
        return list(method(test)) if method else super().fob(headline, test)

    def round1_after_wipc(self, headline: Headline, test: TestRun) -> List[Figure]:
        method = own(self.old, "round1_after_wipc")
        return list(method(test)) if method else super().round1_after_wipc(headline, test)


class Api2Type(TestType):
    """An API 2 test type seen through API 3 (see the module doc)."""

    def __init__(self, old: Any) -> None:
        self.old = old
        self.name, self.title, self.short, self.order = old.name, old.title, old.short, old.order
        profiles = tuple(getattr(old, "default_profiles", ()) or ())
        self.default_profiles = profiles or (("ssd",) if getattr(old, "default_run", False) else ())
        self.options = OptionSet(getattr(old, "settings", None), tuple(old.options or ()))
        self.pts = Api2Pts(old) if getattr(old, "pts_test", False) else None
        self.view = Api2View

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        return list(self.old.plan(opts, capacity))

    def blocks(self, opts: Options) -> Blocks:
        small, large = own(self.old, "smallest_block"), own(self.old, "largest_block")
        return Blocks(small(opts) if small else 0, large(opts) if large else 0)

    def headline(self, test: TestRun) -> List[Figure]:
        return list(self.old.headline(test))

    def steps(self, shape: Steps) -> Steps:
        """The old type's steps over ``shape``, what its plans decide."""
        return Api2Steps(self.old, shape)
