"""Where the target lives: everything a run does to the target other than fio.

A run talks to its target through a :class:`TargetSide`: resolving the
path, the safety refusals, the lock and ``O_EXCL``, the device facts, the
host's facts, the write cache, the purge and the health snapshots.
:class:`LocalSide` does all of it on this host with :mod:`tkperf.target`'s
modules; :class:`tkperf.remote.proxy.RemoteSide` asks a ``tkperf agent`` on
a test host to run the very same code there, over SSH.
"""
from __future__ import annotations

import abc
import contextlib
import os
from typing import Callable, Iterator, List, Optional, Tuple

from tkperf.model.results import DeviceInfo, HealthSnapshot, HostInfo, PurgeRecord
from tkperf.target import device, facts, guard, health, hostinfo, purge, writecache

#: (source, values) of a health reading, or None (:func:`tkperf.target.health.read_health`).
HeatReading = Optional[Tuple[str, Tuple[Tuple[str, float], ...]]]
Recorder = Callable[[str, str], None]


class CacheHandle(abc.ABC):
    """What a run holds of the write cache: its state now, and a restore."""

    @property
    @abc.abstractmethod
    def state(self) -> str:
        """What the drive reports: 'WCE', 'WCD' or '' (unknown)."""

    @abc.abstractmethod
    def restore(self) -> None:
        """Put back the state found at the start if the run changed it."""


class TargetSide(abc.ABC):
    """The target's host, as the run sees it."""

    #: The test host's name for a remote target; '' on this host.
    host: str = ""

    @abc.abstractmethod
    def resolve(self, path: str, size: Optional[int] = None) -> DeviceInfo:
        """The target at ``path`` (a file target needs ``size``)."""

    @abc.abstractmethod
    def safety_problems(self, dev: DeviceInfo) -> List[str]:
        """Why writing to ``dev`` could destroy data in use (empty: none found)."""

    @abc.abstractmethod
    def locked(self, dev: DeviceInfo) -> contextlib.AbstractContextManager[object]:
        """Hold the device's lock (a second run on it is refused) for the block."""

    @abc.abstractmethod
    def check_safe(self, dev: DeviceInfo, force: bool) -> List[str]:
        """Raise RefusedError for the first safety problem unless ``force``; the problems."""

    @abc.abstractmethod
    def exclusive(self, dev: DeviceInfo) -> contextlib.AbstractContextManager[object]:
        """Hold the device open with O_EXCL for the block."""

    @abc.abstractmethod
    def prepare_file(self, dev: DeviceInfo) -> None:
        """Create or extend a file target to its size."""

    @abc.abstractmethod
    def host_info(self, fio_version: str) -> HostInfo:
        """The test host's facts for the report header."""

    @abc.abstractmethod
    def device_facts(self, dev: DeviceInfo) -> dict:
        """Everything the tools say about the drive (:func:`tkperf.target.facts.collect`)."""

    @abc.abstractmethod
    def write_cache(self, dev: DeviceInfo, wanted: str, record: Recorder) -> CacheHandle:
        """Read and set the write cache as ``wanted`` asks (events to ``record``)."""

    @abc.abstractmethod
    def purge(self, method: str, dev: DeviceInfo) -> PurgeRecord:
        """Purge ``dev`` by ``method`` and say how it went."""

    @abc.abstractmethod
    def health(self, dev: DeviceInfo, when: str) -> Optional[HealthSnapshot]:
        """The drive's health counters now (``when``: before, after), or None."""

    @abc.abstractmethod
    def heat(self, dev: DeviceInfo) -> HeatReading:
        """A health reading without thresholds, for temperature sampling."""

    def describe(self) -> str:
        """How the run reaches the target, for its log ('' on this host)."""
        return ""

    def close(self) -> None:  # noqa: B027 - an optional hook: a local side holds nothing
        """Let go of the host (a remote side ends its SSH session)."""


class _LocalCache(CacheHandle):
    def __init__(self, cache: writecache.WriteCache) -> None:
        self.cache = cache

    @property
    def state(self) -> str:
        return self.cache.state

    def restore(self) -> None:
        self.cache.restore()


class LocalSide(TargetSide):
    """The target is on this host."""

    def resolve(self, path: str, size: Optional[int] = None) -> DeviceInfo:
        return device.resolve(path, size)

    def safety_problems(self, dev: DeviceInfo) -> List[str]:
        return device.safety_problems(dev)

    def locked(self, dev: DeviceInfo) -> guard.DeviceLock:
        return guard.DeviceLock(dev)

    def check_safe(self, dev: DeviceInfo, force: bool) -> List[str]:
        return device.check_safe(dev, force)

    @contextlib.contextmanager
    def exclusive(self, dev: DeviceInfo) -> Iterator[None]:
        fd = device.open_exclusive(dev)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)

    def prepare_file(self, dev: DeviceInfo) -> None:
        device.prepare_file_target(dev)

    def host_info(self, fio_version: str) -> HostInfo:
        return hostinfo.collect(fio_version)

    def device_facts(self, dev: DeviceInfo) -> dict:
        return facts.collect(dev)

    def write_cache(self, dev: DeviceInfo, wanted: str, record: Recorder) -> CacheHandle:
        cache = writecache.WriteCache(dev, wanted, record)
        cache.start()
        return _LocalCache(cache)

    def purge(self, method: str, dev: DeviceInfo) -> PurgeRecord:
        device.check_still(dev)  # the path still names the node resolved
        return purge.purge(method, dev)

    def health(self, dev: DeviceInfo, when: str) -> Optional[HealthSnapshot]:
        return health.snapshot(dev, when)

    def heat(self, dev: DeviceInfo) -> HeatReading:
        return health.read_health(dev, thresholds=False)
