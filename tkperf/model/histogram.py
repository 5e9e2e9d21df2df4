"""Response-time histograms: fio's json+ latency bins, merged and read.

fio (``--output-format=json+`` with ``lat_percentiles=1``) reports, per
job and direction, the total-latency histogram as ``lat_ns.bins``: a map
from a bin's value in nanoseconds to the I/Os that fell into it, only the
bins that hold any, and no bins at all for a direction without I/O.
tkperf keeps them as :data:`Bins`, a tuple of ``(ns, count)`` pairs
sorted by ``ns``, every count positive.

Histograms add: two jobs of a workload, or one workload over the rounds of
a measurement window, merge by summing the counts of equal bins
(:func:`merge`), which gives the exact histogram of all their I/Os --
unlike percentiles, which do not average.

A percentile ``p`` is the value of the first bin at which the cumulative
count reaches ``p`` % of all I/Os, the comparison made exactly (integers,
``p`` as the decimal it is written as): when ``p`` % of the count falls
exactly on a bin's cumulative count, that bin (fio's own list compares in
binary floating point and can name the bin above).  fio labels a bin by
a value within it that can lie above the largest I/O it recorded, so a
bin above the recorded maximum is labelled with the maximum
(:func:`clamp`): no percentile exceeds the largest I/O.  The per-round
percentiles tkperf stores (XML, CSV) are these values, computed from the
round's bins (:func:`normalized`); docs/export.rst.  Whether a sample
can support it (:func:`supported`): at least one I/O must lie beyond it,
i.e. ``N x (100 - p) / 100 >= 1`` -- 99.99 % needs 10,000 I/Os, 99.9999 %
a million.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np

Bins = Tuple[Tuple[int, int], ...]

#: The percentiles the "nines" table and the confidence plot consider.
NINES: Tuple[str, ...] = ("99", "99.9", "99.99", "99.999", "99.9999")


def from_fio(bins: Optional[Mapping[str, object]]) -> Bins:
    """fio's ``bins`` object (``{"3696": 1, ...}``) as :data:`Bins`; empty
    when fio wrote none (no I/O in that direction, or not json+)."""
    if not bins:
        return ()
    out: Dict[int, int] = {}
    for key, count in bins.items():
        n = int(count)  # type: ignore[call-overload]
        if n < 0:
            raise ValueError(f"negative count in latency bin {key}")
        if n:
            ns = int(float(key))
            out[ns] = out.get(ns, 0) + n
    return tuple(sorted(out.items()))


def merge(*histograms: Iterable[Tuple[int, int]]) -> Bins:
    """The sum of several histograms (jobs of a workload, rounds of a window)."""
    out: Dict[int, int] = {}
    for h in histograms:
        for ns, count in h:
            if count:
                out[ns] = out.get(ns, 0) + int(count)
    return tuple(sorted(out.items()))


def total(bins: Bins) -> int:
    """How many I/Os the histogram counts."""
    return sum(c for _, c in bins)


def percentile_us(bins: Bins, p: float) -> Optional[float]:
    """The ``p`` th percentile (0 < p <= 100) in µs; None for an empty histogram.
    The first bin whose cumulative count ``c`` has ``100 c >= p N``, exactly."""
    if not bins:
        return None
    if not 0 < p <= 100:
        raise ValueError(f"percentile {p} is not in (0, 100]")
    exact = Fraction(str(p))
    need = exact.numerator * total(bins)
    cum = 0
    for ns, count in bins:
        cum += count
        if cum * 100 * exact.denominator >= need:
            return ns / 1000.0
    return bins[-1][0] / 1000.0


def bin_top_ns(ns: int) -> int:
    """The top of the fio bin labelled ``ns``: no I/O the bin counts took
    longer.  fio (``plat_idx_to_val`` in its ``stat.c``) labels a bin by the
    middle of its range; values below 128 ns have a bin each, and above
    them each power of two is cut into 64 bins, so the range of a bin
    labelled ``ns`` is 2^(bit_length(ns) - 7) ns wide."""
    if ns < 128:
        return ns
    return ns + (1 << (ns.bit_length() - 7)) // 2


def clamp(bins: Bins, max_us: float) -> Bins:
    """The histogram with every bin above the recorded maximum (``max_us``)
    labelled with the maximum: fio's label of the top bin can lie above the
    slowest I/O it holds.  Unchanged when no maximum is known (0)."""
    if max_us <= 0 or not bins or bins[-1][0] <= max_us * 1000.0:
        return bins
    top = int(max_us * 1000.0)  # whole ns, not above the maximum
    return merge(((min(ns, top), c) for ns, c in bins))


def normalized(bins: Bins, percentiles: Sequence[Tuple[str, float]],
               max_us: float) -> Tuple[Bins, Tuple[Tuple[str, float], ...]]:
    """One direction's histogram and percentile list as tkperf keeps them:
    the bins clamped to the maximum, each percentile computed from them
    (:func:`percentile_us`) when there are bins, else fio's value capped at
    the maximum."""
    if not all(math.isfinite(v) and v >= 0 for _, v in percentiles) or not math.isfinite(max_us):
        return bins, tuple(percentiles)  # not figures at all: left as they are for the range check to refuse
    bins = clamp(bins, max_us)
    if bins:
        return bins, tuple((p, percentile_us(bins, float(p)) if _number(p) else v)  # type: ignore[misc]
                           for p, v in percentiles)
    if max_us > 0:
        return bins, tuple((p, min(v, max_us)) for p, v in percentiles)
    return bins, tuple(percentiles)


def _number(p: str) -> bool:
    """Whether a percentile's label is a percentage (a file from elsewhere may
    hold any text there: it is kept as text, its value as recorded)."""
    try:
        return 0.0 <= float(p) <= 100.0
    except ValueError:
        return False


def supported(ios: int, p: str) -> bool:
    """Whether ``ios`` I/Os can support percentile ``p`` ('99.99'): at least
    one of them lies beyond it."""
    tail = round(100.0 - float(p), 10)
    return ios * tail / 100.0 >= 1.0 - 1e-9


def most_supported(ios: int) -> str:
    """The highest of :data:`NINES` that ``ios`` I/Os support ('' for none)."""
    found = [p for p in NINES if supported(ios, p)]
    return found[-1] if found else ""


def confidence(bins: Bins) -> Tuple[np.ndarray, np.ndarray]:
    """(response time in µs, share of I/Os completed within it): the
    cumulative distribution at every bin, rising to 1.0."""
    if not bins:
        return np.zeros(0), np.zeros(0)
    ns = np.fromiter((b for b, _ in bins), dtype=float, count=len(bins))
    counts = np.fromiter((c for _, c in bins), dtype=float, count=len(bins))
    cum = np.cumsum(counts)
    return ns / 1000.0, cum / cum[-1]


def to_text(bins: Bins) -> str:
    """The stored form: 'ns:count ns:count ...'."""
    return " ".join(f"{ns}:{c}" for ns, c in bins)


def from_text(text: str) -> Bins:
    """Inverse of :func:`to_text`; a malformed pair is a ValueError."""
    out = []
    for pair in text.split():
        ns, sep, count = pair.partition(":")
        if not sep:
            raise ValueError(f"latency bin {pair!r} is not ns:count")
        out.append((int(ns), int(count)))
    return merge(out)


def nines_rows(bins: Bins, max_us: float = 0.0) -> Sequence[Tuple[str, Optional[float], bool]]:
    """(percentile, value in µs, whether the sample supports it) for each of
    :data:`NINES`; none above ``max_us`` (the largest I/O, when known)."""
    bins = clamp(bins, max_us)
    n = total(bins)
    return [(p, percentile_us(bins, float(p)), supported(n, p)) for p in NINES]
