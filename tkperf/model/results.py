"""The result models: what a run measured, independent of how it is stored.

The runner builds these, :mod:`tkperf.store` writes and reads them, the
report only reads them.  Figures keep fio's own units converted once:
IOPS, bytes per second, bytes, microseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from tkperf.model.steadystate import WINDOW, SteadyState, evaluate

if TYPE_CHECKING:
    from tkperf.model.series import Series

PERCENTILES: Tuple[str, ...] = ("99", "99.9", "99.99", "99.999")

def format_bs(size: int) -> str:
    """fio-style block size name: 512, 4k, 1024k (binary units, as fio reads them)."""
    if size % 1024 == 0:
        return f"{size // 1024}k"
    return str(size)


def format_gb(nbytes: float) -> str:
    """Decimal gigabytes as tkperf prints sizes: '480.1 GB', '1,920.4 GB';
    below 0.1 GB three significant digits ('0.0336 GB' for 32 MiB), below
    1 MB in bytes: never '0.0 GB' for a size that is not 0."""
    gb = nbytes / 1e9
    if gb >= 0.1 or nbytes == 0:
        return f"{gb:,.1f} GB"
    return f"{gb:.3g} GB" if nbytes >= 1e6 else f"{nbytes:,.0f} byte{'s' if nbytes != 1 else ''}"


def mix_label(rwmixread: int) -> str:
    """R/W mix as the PTS writes it, read share first: 65/35."""
    return f"{rwmixread}/{100 - rwmixread}"


@dataclass(frozen=True)
class IoStats:
    """One direction (read or write) of one workload.

    ``lat_*`` is the response time (fio's total latency ``lat``), which the
    SNIA PTS reports; ``clat_*`` (completion) and ``slat_*`` (submission)
    are kept beside it.  ``percentiles`` and ``bins`` are of the response time.
    """

    iops: float = 0.0
    bw_bytes: float = 0.0
    io_bytes: int = 0
    ios: int = 0
    lat_mean_us: float = 0.0
    lat_min_us: float = 0.0
    lat_max_us: float = 0.0
    lat_stddev_us: float = 0.0
    percentiles: Tuple[Tuple[str, float], ...] = ()
    clat_mean_us: float = 0.0
    clat_min_us: float = 0.0
    clat_max_us: float = 0.0
    clat_stddev_us: float = 0.0
    slat_mean_us: float = 0.0
    slat_min_us: float = 0.0
    slat_max_us: float = 0.0
    slat_stddev_us: float = 0.0
    #: The response-time histogram, ``(ns, count)`` pairs (fio's json+
    #: ``lat_ns`` bins, :mod:`tkperf.model.histogram`); empty unless the
    #: test kept histograms (LAT, ``--latency-histograms``).
    bins: Tuple[Tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        for name in ("iops", "bw_bytes", "io_bytes", "ios", "lat_mean_us", "lat_max_us",
                     "clat_mean_us", "clat_max_us", "slat_mean_us", "slat_max_us"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} is negative")

    def percentile(self, p: str) -> Optional[float]:
        for key, value in self.percentiles:
            if key == p:
                return value
        return None


@dataclass(frozen=True)
class Workload:
    """One fio job section of a round: a block size, an access pattern, a mix."""

    name: str
    rw: str
    bs: int
    rwmixread: int
    numjobs: int
    iodepth: int
    runtime_ms: int
    read: IoStats = IoStats()
    write: IoStats = IoStats()
    error: int = 0
    cpu_pct: float = field(default=0.0, compare=False)  # fio's usr+sys % of one CPU per job; not stored

    def __post_init__(self) -> None:
        if not 0 <= self.rwmixread <= 100:
            raise ValueError(f"rwmixread {self.rwmixread} is not a percentage")
        if self.bs <= 0:
            raise ValueError("block size must be positive")

    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops

    @property
    def bw_bytes(self) -> float:
        return self.read.bw_bytes + self.write.bw_bytes

    @property
    def lat_mean_us(self) -> float:
        """Mean response time over both directions, weighted by I/O count."""
        ios = self.read.ios + self.write.ios
        if ios == 0:
            return 0.0
        return (self.read.lat_mean_us * self.read.ios + self.write.lat_mean_us * self.write.ios) / ios

    @property
    def lat_max_us(self) -> float:
        return max(self.read.lat_max_us, self.write.lat_max_us)

    @staticmethod
    def is_metric(key: str) -> bool:
        """Whether :meth:`metric` knows ``key`` (a stored tracking metric is checked with it)."""
        if "." in key:
            side, name = key.split(".", 1)
            return side in ("read", "write") and name in _IO_FIGURES
        return key in _WORKLOAD_FIGURES

    def metric(self, key: str) -> float:
        """A figure by name: ``iops``, ``lat_mean_us``, ``cpu_pct`` or any field of :class:`IoStats`
        after ``read.`` or ``write.`` (``write.iops``, ``read.bw_bytes``, ``write.clat_mean_us`` ...)."""
        if "." in key:
            side, name = key.split(".", 1)
            return float(getattr(self.read if side == "read" else self.write, name))
        return float(getattr(self, key))


#: The figures :meth:`Workload.metric` reads: a side's (``read.iops``) and a workload's own.
_IO_FIGURES = frozenset(f.name for f in fields(IoStats) if f.type in ("float", "int", float, int))
_WORKLOAD_FIGURES = frozenset({"iops", "bw_bytes", "lat_mean_us", "lat_max_us", "cpu_pct", "bs", "rwmixread",
                               "numjobs", "iodepth", "runtime_ms", "error"})


@dataclass(frozen=True)
class Round:
    """One pass over a test's loop (for WSAT: one interval)."""

    index: int
    started: str
    wall_s: float
    fio_s: float
    workloads: Tuple[Workload, ...]

    def __post_init__(self) -> None:
        if self.index < 1:
            raise ValueError("rounds count from 1")

    def workload(self, name: str) -> Optional[Workload]:
        for w in self.workloads:
            if w.name == name:
                return w
        return None


@dataclass(frozen=True)
class PurgeRecord:
    requested: str
    method: str
    seconds: float
    pts_purge: bool
    command: str = ""
    note: str = ""
    #: What checking the purge found (a zeros read after a discard); '' if unchecked.
    verification: str = ""


@dataclass(frozen=True)
class WipcRecord:
    loops: int
    bs: int
    iodepth: int
    numjobs: int
    bytes_written: int
    seconds: float
    bw_bytes: float


@dataclass
class TestRun:
    """One test of a run: an instance of a test type with its measurements.

    ``type`` names the test type (``iops``, ``tp``, ... or a plug-in's), the
    one that knows how to plan, store and show it; ``key`` names this
    instance within the run (``tp-1024k``: the TP test type runs once per
    block size).  Round-based tests fill ``rounds``; continuous ones fill
    ``series`` (columns of per-interval figures, appended as they come).
    ``data`` is the test type's own (plain, text) data, written and read by
    the test type; ``raw`` keeps the stored data of a test type that is not
    installed, so that such a file is written back unchanged.
    """
    __test__ = False  # not a pytest class, despite the name

    type: str
    key: str
    tracking_workload: str
    tracking_metric: str
    tracking_label: str
    status: str = "running"
    started: str = ""
    finished: str = ""
    stop_reason: str = ""
    params: Dict[str, str] = field(default_factory=dict)
    purge: Optional[PurgeRecord] = None
    wipc: Optional[WipcRecord] = None
    rounds: List[Round] = field(default_factory=list)
    steady: Optional[SteadyState] = None
    series: Dict[str, Series] = field(default_factory=dict)
    data: Dict[str, str] = field(default_factory=dict)
    raw: Optional[bytes] = None

    @property
    def name(self) -> str:
        """The test type's name (an alias of ``type``, as format 1 called it)."""
        return self.type

    @property
    def done(self) -> int:
        """How many steps were measured: rounds, else rows of the series
        holding the tracking figure, else of the longest series."""
        if self.rounds:
            return len(self.rounds)
        found = self._tracking_series()  # the intervals, not a series beside them (WSAT's capture histogram)
        if found is not None:
            return len(found[0])
        return max((len(s) for s in self.series.values()), default=0)

    def _tracking_series(self) -> Optional[Tuple[Series, str]]:
        """(series, column) holding the tracking figure of a stream: the
        column named like the tracking metric's last part (``write.iops`` ->
        ``iops``)."""
        column = self.tracking_metric.rsplit(".", 1)[-1]
        for s in self.series.values():
            if column in s.columns:
                return s, column
        return None

    def tracking_values(self) -> List[Tuple[int, float]]:
        """(round or interval number, tracking figure) of every step measured."""
        if not self.rounds and self.series:
            found = self._tracking_series()
            if found is None:
                return []
            s, column = found
            return [(i + 1, float(v)) for i, v in enumerate(s.column(column))]
        out = []
        for r in self.rounds:
            w = r.workload(self.tracking_workload)
            if w is not None:
                out.append((r.index, w.metric(self.tracking_metric)))
        return out

    def evaluate(self, window: int = WINDOW) -> SteadyState:
        """The 20/10 verdict over the last ``window`` steps; for a stream only
        the last values are read, so checking after every interval stays cheap."""
        if not self.rounds and self.series:
            found = self._tracking_series()
            if found is None:
                return evaluate([], [], window)
            s, column = found
            tail = s.column(column)[-window:]
            first = len(s) - len(tail) + 1
            return evaluate(list(range(first, len(s) + 1)), [float(v) for v in tail], window)
        pairs = self.tracking_values()
        return evaluate([p[0] for p in pairs], [p[1] for p in pairs], window)

    def window_rounds(self) -> List[Round]:
        """The rounds the report averages: the steady-state window, else the
        last rounds of the window's length."""
        if self.steady is not None and self.steady.rounds:
            wanted = set(self.steady.rounds)
            return [r for r in self.rounds if r.index in wanted]
        return self.rounds[-(self.steady.window if self.steady is not None else WINDOW):]

    def workload_names(self) -> List[str]:
        names: List[str] = []
        for r in self.rounds:
            for w in r.workloads:
                if w.name not in names:
                    names.append(w.name)
        return names

    def window_average(self, workload: str, metric: str) -> Optional[float]:
        vals = [w.metric(metric) for r in self.window_rounds() for w in r.workloads if w.name == workload]
        return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class HostInfo:
    hostname: str = ""
    kernel: str = ""
    os: str = ""
    cpu: str = ""
    cores: int = 0
    memory_bytes: int = 0
    fio_version: str = ""
    tkperf_version: str = ""
    python: str = ""


@dataclass(frozen=True)
class DeviceInfo:
    path: str
    resolved: str
    kind: str  # "block" or "file"
    size_bytes: int
    logical_sector: int = 512
    physical_sector: int = 512
    vendor: str = ""
    model: str = ""
    serial: str = ""
    firmware: str = ""
    rotational: bool = False
    transport: str = ""
    write_cache: str = ""
    #: What identifies the target beyond path and size (tkperf.target.identity):
    #: world-wide names, and 'MAJ:MIN:INODE' of a loop device's backing file
    #: or of a file target; '' when the target has none (or an older file).
    wwn: str = ""
    eui64: str = ""
    nguid: str = ""
    nsid: str = ""
    inode: str = ""
    #: 'MAJ:MIN' of the device node resolved on the target's host, to check
    #: that what is opened later is that node; not kept in the result file,
    #: so not part of what makes two records of a device equal.
    devnum: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("block", "file"):
            raise ValueError(f"unknown target kind {self.kind!r}")
        if self.size_bytes < 0:
            raise ValueError("device size must not be negative")

    @property
    def capacity_known(self) -> bool:
        """False for an original TKperf file that records no capacity (size 0)."""
        return self.size_bytes > 0


@dataclass(frozen=True)
class Event:
    """Something worth telling the reader: a warning, an interruption, a resume."""

    time: str
    kind: str
    message: str
    test: str = ""
    round: int = 0


@dataclass(frozen=True)
class HealthSnapshot:
    """The drive's health counters at one moment (``when``: ``before``,
    ``sample`` or ``after`` the run), by tkperf's names
    (:mod:`tkperf.target.health`); ``source`` names the tool."""

    time: str
    when: str
    source: str
    values: Tuple[Tuple[str, float], ...] = ()

    def value(self, name: str) -> Optional[float]:
        for key, v in self.values:
            if key == name:
                return v
        return None


@dataclass
class RunResult:
    name: str
    started: str
    device: DeviceInfo
    host: HostInfo
    options: Dict[str, str]
    profile: str = "ssd"
    quick: bool = False
    status: str = "running"
    finished: str = ""
    description: str = ""
    description_fields: Dict[str, str] = field(default_factory=dict)
    tests: List[TestRun] = field(default_factory=list)
    events: List[Event] = field(default_factory=list)
    tkperf_version: str = ""
    #: What ``tkperf info`` knew of the device at the start: JSON by source.
    facts: Dict[str, object] = field(default_factory=dict)
    health: List[HealthSnapshot] = field(default_factory=list)  #: before, samples, after
    #: The feature matrix of ``-fm FILE``: (feature, value) in file order.
    features: List[Tuple[str, str]] = field(default_factory=list)
    #: What reading the file found about its completeness, for the reader
    #: (never written): "" for a whole file whose closing record checked, else
    #: one line (cut: a torn last row dropped; or an older format, which
    #: records no completeness, so a cut cannot be told).
    integrity: str = field(default="", compare=False)

    def test(self, key: str) -> Optional[TestRun]:
        for t in self.tests:
            if t.key == key:
                return t
        return None

    def tests_of(self, type_name: str) -> List[TestRun]:
        """Every test of one test type, in run order (TP has one per block size)."""
        return [t for t in self.tests if t.type == type_name]

    @property
    def resumed(self) -> bool:
        return any(e.kind == "resume" for e in self.events)


def gb(value_bytes: float) -> float:
    """Decimal gigabytes, as drive capacities and TGBW are quoted."""
    return value_bytes / 1e9


def mb(value_bytes: float) -> float:
    """Decimal megabytes (MB/s for throughput)."""
    return value_bytes / 1e6


def now_iso() -> str:
    """Local time with its UTC offset, to the second: when a run, test or round started."""
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
