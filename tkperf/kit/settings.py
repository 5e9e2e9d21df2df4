"""Typed settings: a test type's option values as one frozen dataclass.

A test type declares its options (:class:`~tkperf.kit.base.Option`)
and a small frozen dataclass of their values, typed::

    @dataclass(frozen=True)
    class IopsSettings:
        option_prefix: ClassVar[str] = "iops_"
        bs: Tuple[int, ...]
        mixes: Tuple[int, ...]

and reads them in one call, ``opts.of(IopsSettings).bs``, so a type
checker sees every value's type and a misspelt name fails at once.
"""
from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, Dict, Mapping, Protocol, Tuple, Type, TypeVar, cast

from tkperf.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.pts import Revision

S = TypeVar("S")


class Options(Protocol):
    """What a test type is handed: a run's options
    (:class:`tkperf.kit.options.RunOptions`, which is built from the
    registered test types and so sits above this interface; described here,
    not imported): the settings every test shares (``opts.runtime``) and,
    through :meth:`of`, the chosen type's own options as its typed
    settings (``opts.of(IopsSettings).bs``)."""

    # Read-only (properties): RunOptions is a frozen dataclass.
    @property
    def tests(self) -> Tuple[str, ...]: ...

    @property
    def quick(self) -> bool: ...

    @property
    def device_class(self) -> str: ...

    @property
    def runtime(self) -> int: ...

    @property
    def numjobs(self) -> int: ...

    @property
    def iodepth(self) -> int: ...

    @property
    def max_rounds(self) -> int: ...

    @property
    def window(self) -> int: ...

    @property
    def wipc_loops(self) -> int: ...

    @property
    def revision(self) -> Revision: ...

    def active_bytes(self, capacity: int, align: int = ...) -> int: ...

    def test_bytes(self, capacity: int) -> int: ...

    @property
    def segmented(self) -> bool: ...

    def of(self, kind: Type[S]) -> S:
        """The run's values of a test type's options as ``kind``, that
        type's frozen settings dataclass (see :func:`~tkperf.kit.settings.settings_from`)."""


def settings_from(kind: Type[S], values: Mapping[str, Any]) -> S:
    """Build ``kind``, a test type's frozen settings dataclass, from option
    values by field: field ``bs`` of a class with ``option_prefix =
    "iops_"`` holds option ``iops_bs`` (a trailing ``_`` is dropped, so
    ``return_`` holds ``hir_return``).  An option not among ``values`` is a
    one-line UsageError (its test type is not among the run's tests)."""
    prefix = getattr(kind, "option_prefix", "")
    kwargs: Dict[str, Any] = {}
    for f in fields(cast(Any, kind)):
        key = prefix + f.name.rstrip("_")
        if key not in values:
            raise UsageError(f"no option {key!r} (is its test type among --tests?)")
        kwargs[f.name] = values[key]
    return kind(**kwargs)


def settings_fields(kind: type) -> Tuple[str, ...]:
    """The option fields a settings dataclass holds (``iops_bs``, ...)."""
    prefix = getattr(kind, "option_prefix", "")
    return tuple(prefix + f.name.rstrip("_") for f in fields(cast(Any, kind)))
