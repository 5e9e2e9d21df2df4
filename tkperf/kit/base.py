"""The test-type interface: everything one kind of test contributes to tkperf.

A test type is one module (or one folder) with one :class:`TestType`
subclass.  It says

* who it is: ``name`` (the word for ``--tests`` and the result file),
  ``title`` and ``short`` (for headings and tables), ``unit`` (what one
  measured step is called: round, interval, point, phase);
* which options it adds to ``tkperf ssd run`` (:class:`Option`), with their
  defaults, their ``--quick`` values and how they are stored;
* what to run: :meth:`TestType.plan` returns one :class:`Plan` per test
  instance, each with a loop shape from :mod:`tkperf.kit.shapes`;
* what a reader looks at first: :meth:`TestType.headline`, figures with a
  unit and the direction that is better (they feed ``show``, ``show
  --json``, the summary page and comparisons);
* how its results are shown: :meth:`TestType.report_section` and
  :meth:`TestType.compare_section` return plain blocks
  (:mod:`tkperf.render.blocks`) that the renderer turns into reST, HTML,
  PDF and charts.

The engine, the store, the report, ``compare``, ``show``, ``resume`` and
the dry run loop over the registered test types (:mod:`tkperf.testtypes`)
and never name one.
"""
from __future__ import annotations

import abc
import importlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf.errors import UsageError
from tkperf.model.figures import Figure
from tkperf.kit.policy import Steady, stored_policy
from tkperf.kit.settings import Options

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.kit.shapes import Shape
    from tkperf.model.pts import Revision
    from tkperf.model.results import RunResult, TestRun


#: tkperf's generic report and comparison sections, for a type without a ``view``.
GENERIC_VIEW = "tkperf.report.generic"


class _NotSet:
    def __repr__(self) -> str:
        return "NOT_SET"


NOT_SET: Any = _NotSet()


@dataclass(frozen=True)
class Option:
    """One option a test type adds to ``ssd run`` / ``hdd run``.

    ``field`` names the value in :class:`~tkperf.kit.options.RunOptions`
    (read through the type's settings, ``opts.of(IopsSettings).bs``) and
    in the result file's ``<options>``.  A value
    option has ``parse(text, flag) -> value`` (raising ``UsageError``) and
    ``format(value) -> text``; a switch (``--wsat-steady``) has
    ``switch``, the value the flag sets.  ``default`` is a value or a
    function of the device class; ``quick`` is the value under ``--quick``.
    """

    field: str
    flags: Tuple[str, ...]
    help: str
    parse: Optional[Callable[[str, str], Any]] = None
    format: Callable[[Any], str] = str
    default: Any = None
    quick: Any = NOT_SET
    switch: Optional[bool] = None
    check: Optional[Callable[[Any], None]] = None
    #: The value's name in ``--help`` (``SIZES``); default: the field in capitals.
    metavar: str = ""

    def __post_init__(self) -> None:
        if (self.parse is None) == (self.switch is None):
            raise ValueError(f"option {self.field}: give either parse or switch")

    def default_for(self, device_class: str, quick: bool) -> Any:
        if quick and self.quick is not NOT_SET:
            return self.quick
        return self.default(device_class) if callable(self.default) else self.default

    def to_text(self, value: Any) -> str:
        if self.switch is not None:
            return "true" if value else "false"
        return self.format(value)

    def from_text(self, text: str) -> Any:
        if self.switch is not None:
            return text == "true"
        return self.parse(text, self.field)  # type: ignore[misc]


def in_range(lo: int, hi: int, flag: str, unit: str = "") -> Callable[[Any], None]:
    """An :class:`Option` check: the value lies in ``lo..hi`` (``unit`` after
    the numbers in the message, e.g. ' s'), else a one-line UsageError."""
    def check(value: Any) -> None:
        if not lo <= value <= hi:
            raise UsageError(f"{flag} {value}{unit} is out of range ({lo}..{hi}{unit})")
    return check


def parse_count(text: str, flag: str) -> int:
    """An :class:`Option` parser of a whole number (a count, a thread count)."""
    t = (text or "").strip()
    if not t.isdigit():
        raise UsageError(f"{flag} {text!r} is not a whole number")
    return int(t)


@dataclass(frozen=True)
class Tracking:
    """The figure whose rounds decide steady state: a workload's metric."""

    workload: str
    metric: str
    label: str


@dataclass(frozen=True)
class Plan:
    """One test instance to run (TP runs one per block size).

    ``steady`` states the plan's steady-state policy: none, the 20/10
    rule on the one tracking figure, or on several figures.
    ``judge(test, window)`` gives the steady-state verdict after a round
    (default: the 20/10 check of the one tracking figure,
    ``TestRun.evaluate``); a test type tracking several figures passes its
    own.  ``wipc_bs`` is the WIPC block size in bytes (0: SEQ 128KiB).
    ``histograms``: fio reports in json+ and every workload keeps its
    response-time histogram (``IoStats.bins``); ``--latency-histograms``
    turns it on for every plan.
    """

    key: str
    shape: "Shape"
    tracking: Optional[Tracking] = None
    params: Dict[str, str] = field(default_factory=dict)
    wipc: bool = True
    judge: Optional[Callable[["TestRun", int], Any]] = None
    wipc_bs: int = 0
    #: Keep every workload's response-time histogram (fio json+ bins).
    histograms: bool = False
    #: The steady-state policy; left out: the 20/10 rule on ``tracking``
    #: when there is one, else none (:class:`~tkperf.kit.policy.Steady`).
    steady: Optional[Steady] = None

    def __post_init__(self) -> None:
        policy = self.steady or (Steady.ONE if self.tracking is not None else Steady.NONE)
        object.__setattr__(self, "steady", policy)
        if policy is not Steady.NONE and self.tracking is None:
            raise ValueError(f"plan {self.key}: a steady state ({policy.value}) needs a tracking figure")
        if policy is Steady.SEVERAL and self.judge is None:
            raise ValueError(f"plan {self.key}: a steady state on several figures needs a judge")

    @property
    def policy(self) -> Steady:
        """The plan's steady-state policy (never None after construction)."""
        return self.steady or Steady.NONE

    def steady_state(self, test: "TestRun", window: int) -> Any:
        """The steady-state verdict of ``test`` now."""
        return self.judge(test, window) if self.judge is not None else test.evaluate(window)


@dataclass(frozen=True)
class SummaryValue:
    """A test's contribution to one line of the report's summary page.

    ``source`` says where the value was measured; empty means the test's
    own measurement window (the renderer words it).  When two tests offer
    the same line, the lower ``rank`` wins.  ``definition`` names what the
    figure is, the same in every run that measures it so (empty: the test's
    steady-state window average): a comparison sets side by side only
    figures of one definition.
    """

    value: float
    source: str = ""
    rank: int = 10
    definition: str = ""


#: The values of :attr:`TestType.oio`.
OIO_FIXED, OIO_OPERATOR, OIO_SWEEP = "fixed", "operator", "sweep"


#: The version of the plug-in interface, :mod:`tkperf.api` (``MAJOR, MINOR``).
#: MINOR grows when names or optional members are added; MAJOR when a name
#: is removed or a member changes meaning, so that a plug-in written for
#: another MAJOR could misbehave (docs/extending.rst, "API versions").
API_VERSION: Tuple[int, int] = (2, 1)


class TestType(abc.ABC):
    """Base class of every test type; see the module docstring."""

    __test__ = False  # not a pytest class, despite the name

    #: The MAJOR version of :mod:`tkperf.api` the type was written for; a
    #: type declaring a MAJOR this tkperf does not have is refused.
    api_version: int = API_VERSION[0]

    name: str = ""
    title: str = ""
    short: str = ""
    unit: str = "round"
    #: Runs with ``ssd run`` when ``--tests`` is not given.
    default_run: bool = False
    #: The profiles (``ssd``, ``hdd``) whose run without ``--tests`` runs it;
    #: empty: ``("ssd",)`` when ``default_run``.
    default_profiles: Tuple[str, ...] = ()
    #: Position in runs, reports and listings (lower first).
    order: int = 100
    options: Tuple[Option, ...] = ()
    #: The frozen dataclass of this type's option values, typed
    #: (``opts.of(kind.settings)``; see :mod:`tkperf.kit.settings`); every field
    #: is one of ``options``.  None: the type reads no option of its own.
    settings: Optional[type] = None
    #: A test interrupted after reaching steady state is kept on resume
    #: (round-based tests); a stream's steady state is only a stop rule.
    keeps_steady_on_resume: bool = True
    #: The module with this type's ``report_section(ctx, tests)`` and
    #: ``compare_section(ctx, runs, labels)``, imported only when a report or
    #: comparison is built (so ``show`` never loads charts); empty: tkperf's
    #: generic sections.
    view: str = ""
    #: One of the SNIA PTS tests; a run of any other test type is not a
    #: PTS-conformant measurement (see :meth:`deviations`).
    pts_test: bool = False
    #: How the PTS sets this test's OIO (TC x QD), by one rule for every PTS
    #: test (docs/method.rst, "One rule for the OIO"): :data:`OIO_FIXED`, the
    #: test's definition names it and any other is a deviation (LAT, TP,
    #: XSR); :data:`OIO_OPERATOR`, the test operator's choice, disclosed in
    #: the header and never a deviation (IOPS, WSAT, HIR); :data:`OIO_SWEEP`,
    #: the test sweeps it over its grid (DIRTH, CBW).  '' for a test outside the PTS.
    oio: str = ""
    #: The type's own report section shows its response-time histograms;
    #: otherwise the report adds tkperf's latency QoS part
    #: (:mod:`tkperf.report.qos`) to every test of it that kept them.
    shows_histograms: bool = False
    #: Round 1 measures what the window measures (a round loop), so the
    #: headline figures of round 1 alone are the test's FOB figures.
    fob_from_first_round: bool = False

    def runs_by_default(self, profile: str) -> bool:
        """Whether ``PROFILE run`` without ``--tests`` runs this type."""
        return profile in (self.default_profiles or (("ssd",) if self.default_run else ()))

    # --- running -------------------------------------------------------------
    @abc.abstractmethod
    def plan(self, opts: "Options", capacity: int) -> List[Plan]:
        """The test instances to run on a target of ``capacity`` bytes."""

    def largest_block(self, opts: "Options") -> int:
        """The largest block size the test issues (the target must fit it)."""
        return 0

    def smallest_block(self, opts: "Options") -> int:
        """The smallest transfer the test issues (a multiple of the target's
        logical sector, or the run is refused); 0: nothing below 4 KiB."""
        return 0

    # --- conformance -----------------------------------------------------------
    def deviations(self, options: Mapping[str, str], revision: "Revision") -> List[str]:
        """How this test's settings (the run's stored ``options``) depart from
        ``revision``, in words a reviewer understands; empty when they match.
        A test type that is not a PTS test says so."""
        if not self.pts_test:
            return [f"{self.name} ({self.title}) is not a SNIA PTS test"]
        return []

    def planned_deviations(self, options: Mapping[str, str], revision: "Revision") -> List[str]:
        """What only the dry run says: settings that make the run a deviation
        if they take effect (a limit that may end a test early).  After the
        run :meth:`result_deviations` judges what happened instead."""
        return []

    def result_deviations(self, test: "TestRun", options: Mapping[str, str], revision: "Revision",
                          capacity: int) -> List[str]:
        """Deviations only this test's results show (what ended it, say)."""
        return []

    def stored_values(self, options: Mapping[str, str]) -> Dict[str, Any]:
        """This type's option values as a run stored them (defaults where absent)."""
        device_class = options.get("device_class", "enterprise")
        quick = options.get("quick") == "true"
        out: Dict[str, Any] = {}
        for opt in self.options:
            text = options.get(opt.field)
            out[opt.field] = opt.from_text(text) if text is not None else opt.default_for(device_class, quick)
        return out

    # --- reading results -------------------------------------------------------
    def instance_title(self, test: "TestRun") -> str:
        """Short name of one instance in tables and lines: 'IOPS', 'TP 1024k'."""
        return self.short or self.name.upper()

    def headline(self, test: "TestRun") -> List[Figure]:
        """The figures a reader looks at first, over the measurement window."""
        return []

    def steady_policy(self, test: "TestRun") -> Steady:
        """The steady-state policy the plan of ``test`` stated (the file
        does not record it).  The default reads it from what the file holds
        (:func:`~tkperf.kit.policy.stored_policy`); a type whose plans
        state another policy than their stored tracking shows says so here."""
        return stored_policy(test)

    def tracking_variables(self, test: "TestRun") -> List["TestRun"]:
        """The test seen once per tracking variable (its ``tracking_*`` set
        to that variable, no recorded verdict), when the steady state needs
        more than one (PTS 2.0 IOPS); empty for one variable."""
        return []

    def unsteady_variables(self, test: "TestRun") -> List[str]:
        """Labels of the tracking variables that failed 20/10 in the window,
        when the test tracks more than one and is not steady."""
        if test.steady is None or test.steady.steady:
            return []
        window = test.steady.window or 5
        return [v.tracking_label for v in self.tracking_variables(test) if not v.evaluate(window).steady]

    def first_figures(self, test: "TestRun") -> List[Figure]:
        """The headline figures of the first round (or interval) alone,
        whatever came before it.  The default computes :meth:`headline` on
        round 1 when ``fob_from_first_round``; a stream overrides it."""
        if not self.fob_from_first_round or not test.rounds:
            return []
        first = replace(test, rounds=test.rounds[:1], steady=None, series={})
        return [f for f in self.headline(first) if f.key != "tracking"]

    def fob(self, test: "TestRun") -> List[Figure]:
        """Fresh out of box: the first figures measured after the purge and
        before any preconditioning (WSAT's first interval, XSR's first
        phase).  A round after the WIPC is not FOB (:meth:`round1_after_wipc`);
        neither is a test whose record does not say whether a WIPC ran (a
        round loop imported from the original TKperf, which ran one)."""
        if not started_from_purge(test) or test.wipc is not None:
            return []
        if test.rounds and test.purge is not None and test.purge.method == "not recorded":
            return []
        return self.first_figures(test)

    def round1_after_wipc(self, test: "TestRun") -> List[Figure]:
        """Round 1 of a test that ran a WIPC first: what a reader might take
        for FOB, shown as 'round 1, after WIPC'."""
        if test.wipc is None or not test.rounds:
            return []
        return self.first_figures(test)

    def summary(self, test: "TestRun") -> Dict[str, SummaryValue]:
        """Lines of the summary page (keys of :data:`tkperf.report.report`'s
        layout) this test measured."""
        return {}

    def check_data(self, test: "TestRun") -> None:  # noqa: B027 - optional: a type without checks accepts all
        """Raise ValueError when the test's stored data (``test.data``,
        ``test.series``) is not what this test type writes."""

    # --- showing results ---------------------------------------------------------
    def _view(self) -> Any:
        if self.view:
            return importlib.import_module(self.view)
        # By name, as every view is: the report's views sit above this interface.
        return _Generic(self, importlib.import_module(GENERIC_VIEW))

    def report_section(self, ctx: Any, tests: Sequence["TestRun"]) -> list:
        """Blocks of this type's section of a run report (all its instances)."""
        return self._view().report_section(ctx, tests)

    def compare_section(self, ctx: Any, runs: Sequence["RunResult"], labels: Sequence[str]) -> list:
        """Blocks of this type's section of a comparison of several runs."""
        return self._view().compare_section(ctx, runs, labels)


def started_from_purge(test: "TestRun") -> bool:
    """Whether the test began with a purge (any method but none)."""
    return test.purge is not None and test.purge.method not in ("", "none")


class _Generic:
    """tkperf's generic sections, bound to one test type."""

    def __init__(self, kind: TestType, generic: Any) -> None:
        self.kind, self.generic = kind, generic

    def report_section(self, ctx: Any, tests: Sequence["TestRun"]) -> list:
        return self.generic.report_section(self.kind, ctx, tests)

    def compare_section(self, ctx: Any, runs: Sequence["RunResult"], labels: Sequence[str]) -> list:
        return self.generic.compare_section(self.kind, ctx, runs, labels)
