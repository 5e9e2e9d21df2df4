"""The test-type interface: everything one kind of test contributes to tkperf.

A test type is one module (or one folder) with one :class:`TestType`
subclass.  It says

* who it is: ``name`` (the word for ``--tests`` and the result file),
  ``title`` and ``short`` (for headings and tables), ``order`` and
  ``default_profiles``;
* which options it adds to ``tkperf ssd run`` (:class:`Option`, in an
  :class:`OptionSet` with the dataclass of their values), with their
  defaults, their ``--quick`` values and how they are stored;
* what to run: :meth:`TestType.plan` returns one :class:`Plan` per test
  instance, each with a loop shape from :mod:`tkperf.kit.shapes`, which
  also decides what its test's steps are called, which figures come first
  and how its steady state is tracked (:mod:`tkperf.kit.steps`);
  :meth:`TestType.blocks` the transfer sizes it issues;
* what a reader looks at first: :meth:`TestType.headline`, figures with a
  unit and the direction that is better (they feed ``show``, ``show
  --json``, the summary page and comparisons);
* its two optional parts: ``pts``, its :class:`PtsRules` when it is a SNIA
  PTS test, and ``view``, its :class:`View` (report and comparison
  sections of plain blocks, :mod:`tkperf.render.blocks`, summary lines,
  instance titles and the check of its stored data).

That is the whole class, twelve members (API 3).

The engine, the store, the report, ``compare``, ``show``, ``resume`` and
the dry run loop over the registered test types (:mod:`tkperf.testtypes`)
and never name one.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Type, Union

from tkperf.errors import UsageError
from tkperf.kit.policy import Steady
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.kit.settings import Options
from tkperf.kit.steps import started_from_purge  # noqa: F401 - its old home; views import it from here
from tkperf.model.figures import Figure

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.kit.shapes import Shape
    from tkperf.model.pts import Revision
    from tkperf.model.results import RunResult, TestRun
    from tkperf.render.blocks import Block


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
    #: For a flag tests share with *other* meanings (``--workload``: the
    #: consistency test's rnd4k|jedec, the real-world tests' capture file):
    #: whether a value given to it is this option's.  The command line hands
    #: the value to the one option that claims it and refuses one no option,
    #: or more than one, claims.
    claims: Optional[Callable[[str], bool]] = None

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
    shape: Shape
    tracking: Optional[Tracking] = None
    params: Dict[str, str] = field(default_factory=dict)
    wipc: bool = True
    judge: Optional[Callable[[TestRun, int], Any]] = None
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

    def steady_state(self, test: TestRun, window: int) -> Any:
        """The steady-state verdict of ``test`` now."""
        return self.judge(test, window) if self.judge is not None else test.evaluate(window)


@dataclass(frozen=True)
class SummaryValue:
    """A test's contribution to one line of the report's summary page.

    ``source`` says where the value was measured; empty means the test's
    own measurement window (the renderer words it).  When two tests offer
    the same line, the lower ``rank`` wins.  ``definition`` names what the
    figure is, the same in every run that measures it so (empty: the test's
    steady-state window average, or the mean of its last rounds where it
    reached no steady state): a comparison sets side by side only figures
    of one definition.
    """

    value: float
    source: str = ""
    rank: int = 10
    definition: str = ""


class OptionSet(Tuple[Option, ...]):
    """A test type's options (a tuple of :class:`Option`) and ``settings``,
    the frozen dataclass of their values (``opts.of(kind.options.settings)``;
    see :mod:`tkperf.kit.settings`) whose every field is one of the
    options; None when the type reads no option of its own."""

    settings: Optional[type]

    def __new__(cls, settings: Optional[type] = None, options: Sequence[Option] = ()) -> OptionSet:
        self = super().__new__(cls, tuple(options))
        self.settings = settings
        return self

    def __getnewargs__(self) -> Tuple[Optional[type], Tuple[Option, ...]]:
        return self.settings, tuple(self)  # copies and pickles keep both


class Blocks(NamedTuple):
    """The smallest transfer and the largest block a test issues, in bytes (0: none said)."""

    smallest: int = 0
    largest: int = 0


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

    def deviations(self, kind: TestType, options: Mapping[str, str], revision: Revision) -> List[str]:
        """How this test's settings (the run's stored ``options``) depart from
        ``revision``, in words a reviewer understands; empty when they match."""
        return []

    def planned_deviations(self, kind: TestType, options: Mapping[str, str], revision: Revision) -> List[str]:
        """What only the dry run says: settings that make the run a deviation
        if they take effect (a limit that may end a test early).  After the
        run :meth:`result_deviations` judges what happened instead."""
        return []

    def result_deviations(self, kind: TestType, test: TestRun, options: Mapping[str, str],
                          revision: Revision, capacity: int) -> List[str]:
        """Deviations only this test's results show (what ended it, say)."""
        return []


class View(abc.ABC):
    """How one test type's results are shown; built with its type."""

    #: The type's own report section shows its response-time histograms;
    #: otherwise the report adds tkperf's latency QoS part to every test of
    #: it that kept them.
    shows_histograms: bool = False

    def __init__(self, kind: TestType) -> None:
        self.kind = kind

    @abc.abstractmethod
    def report_section(self, ctx: ReportContext, tests: Sequence[TestRun]) -> List[Block]:
        """Blocks of this type's section of a run report (all its instances)."""

    @abc.abstractmethod
    def compare_section(self, ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str]) -> List[Block]:
        """Blocks of this type's section of a comparison of several runs."""

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        """Lines of the summary page this test measured (keys of the page's layout)."""
        return {}

    def instance_title(self, test: TestRun) -> str:
        """Short name of one instance in tables and lines: 'IOPS', 'TP 1024k'."""
        return instance_title(self.kind, test)

    def check_data(self, test: TestRun) -> None:  # noqa: B027 - optional: a type without checks accepts all
        """Raise ValueError when the test's stored data (``test.data``,
        ``test.series``) is not what this test type writes."""


def instance_title(kind: TestType, test: TestRun) -> str:
    """The default short name of an instance: the type's ``short``."""
    return kind.short or kind.name.upper()



#: The version of the plug-in interface, :mod:`tkperf.api` (``MAJOR, MINOR``).
#: MINOR grows when names or optional members are added; MAJOR when a name
#: is removed or a member changes meaning, so that a plug-in written for
#: another MAJOR could misbehave (docs/extending.rst, "API versions").
API_VERSION: Tuple[int, int] = (3, 5)


class TestType(abc.ABC):
    """Base class of every test type; see the module docstring."""

    __test__ = False  # not a pytest class, despite the name

    #: The MAJOR version of :mod:`tkperf.api` the type was written for; a
    #: type declaring a MAJOR this tkperf does not have is refused (API 2
    #: types run through :mod:`tkperf.kit.adapter` for one release).
    api_version: int = API_VERSION[0]

    name: str = ""
    title: str = ""
    short: str = ""
    #: The profiles (``ssd``, ``hdd``) whose run without ``--tests`` runs it.
    default_profiles: Tuple[str, ...] = ()
    #: Position in runs, reports and listings (lower first).
    order: int = 100
    #: The options this type adds to ``PROFILE run`` and, as the first item,
    #: the frozen dataclass of their values, read typed as
    #: ``opts.of(MySettings)`` (:class:`OptionSet`).
    options: OptionSet = OptionSet()
    #: One of the SNIA PTS tests: its OIO rule and deviations
    #: (:class:`PtsRules`); None: a run of it is not a PTS-conformant
    #: measurement.
    pts: Optional[PtsRules] = None
    #: How its results are shown: a :class:`View` subclass, built with the
    #: type by the report; or its name, ``"package.module:Class"``, loaded
    #: by the registry (:func:`tkperf.testtypes.view_class`; for a view
    #: whose module imports the type's own); None: tkperf's generic sections.
    view: Union[Type[View], str, None] = None

    # --- running -------------------------------------------------------------
    @abc.abstractmethod
    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        """The test instances to run on a target of ``capacity`` bytes."""

    def blocks(self, opts: Options) -> Blocks:
        """The smallest transfer the test issues (a multiple of the target's
        logical sector, or the run is refused; 0: nothing below 4 KiB) and
        the largest block size (the target must fit it many times over)."""
        return Blocks()

    # --- reading results -------------------------------------------------------
    def headline(self, test: TestRun) -> List[Figure]:
        """The figures a reader looks at first, over the measurement window."""
        return []


def runs_by_default(kind: TestType, profile: str) -> bool:
    """Whether ``PROFILE run`` without ``--tests`` runs ``kind``."""
    return profile in kind.default_profiles


def stored_values(kind: TestType, options: Mapping[str, str]) -> Dict[str, Any]:
    """``kind``'s option values as a run stored them (defaults where absent)."""
    device_class = options.get("device_class", "enterprise")
    quick = options.get("quick") == "true"
    out: Dict[str, Any] = {}
    for opt in kind.options:
        text = options.get(opt.field)
        out[opt.field] = opt.from_text(text) if text is not None else opt.default_for(device_class, quick)
    return out


def own(obj: object, name: str) -> Any:
    """``obj``'s member ``name`` when its class (not API 3's TestType) defines it, else None."""
    for cls in type(obj).__mro__:
        if cls is TestType:
            return None
        if name in vars(cls):
            return getattr(obj, name)
    return None
