"""Writing a result file: the run as an XML document, series rows after its
end tag, and :class:`ResultWriter`, which saves whole files and appends rows."""
from __future__ import annotations

import json
import math
import os
from typing import Dict, Optional, Sequence

from lxml import etree

from tkperf.errors import OutputError
from tkperf.model import files, histogram
from tkperf.model.files import atomic_write
from tkperf.model.results import IoStats, RunResult, TestRun
from tkperf.model.series import check_id, format_row, format_rows
from tkperf.store import seal
from tkperf.store.fileformat import FORMAT_VERSION, safe_parser
from tkperf.untrusted import for_xml


def _num(value: float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return "0"
    return repr(float(value))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _set(el: etree._Element, **attrs: object) -> etree._Element:
    for key, value in attrs.items():
        name = key.replace("_", "-")
        if isinstance(value, bool):
            el.set(name, _bool(value))
        elif isinstance(value, (int, float)):
            el.set(name, _num(value))
        else:
            el.set(name, "" if value is None else for_xml(value))  # a device's string may hold anything
    return el


def _iostats(parent: etree._Element, tag: str, s: IoStats) -> None:
    el = _set(
        etree.SubElement(parent, tag),
        iops=s.iops, bw_bytes=s.bw_bytes, io_bytes=int(s.io_bytes), ios=int(s.ios),
        lat_mean_us=s.lat_mean_us, lat_min_us=s.lat_min_us, lat_max_us=s.lat_max_us,
        lat_stddev_us=s.lat_stddev_us,
        clat_mean_us=s.clat_mean_us, clat_min_us=s.clat_min_us, clat_max_us=s.clat_max_us,
        clat_stddev_us=s.clat_stddev_us,
        slat_mean_us=s.slat_mean_us, slat_min_us=s.slat_min_us, slat_max_us=s.slat_max_us,
        slat_stddev_us=s.slat_stddev_us,
    )
    for p, us in s.percentiles:
        _set(etree.SubElement(el, "percentile"), p=p, us=float(us))
    if s.bins:
        etree.SubElement(el, "latency-bins", unit="ns").text = histogram.to_text(s.bins)


def _namevalues(parent: etree._Element, tag: str, items: Dict[str, str]) -> None:
    for key, value in items.items():
        _set(etree.SubElement(parent, tag), name=key, value=str(value))


def to_element(run: RunResult) -> etree._Element:
    root = _set(
        etree.Element("tkperf"),
        format=str(FORMAT_VERSION), tkperf_version=run.tkperf_version, name=run.name,
        started=run.started, finished=run.finished, status=run.status,
        profile=run.profile, quick=run.quick,
    )
    h = run.host
    _set(etree.SubElement(root, "host"), hostname=h.hostname, kernel=h.kernel, os=h.os,
         cpu=h.cpu, cores=int(h.cores), memory_bytes=int(h.memory_bytes),
         fio_version=h.fio_version, tkperf_version=h.tkperf_version, python=h.python)
    d = run.device
    _set(etree.SubElement(root, "device"), path=d.path, resolved=d.resolved, kind=d.kind,
         size_bytes=int(d.size_bytes), logical_sector=int(d.logical_sector),
         physical_sector=int(d.physical_sector), vendor=d.vendor, model=d.model,
         serial=d.serial, firmware=d.firmware, rotational=d.rotational,
         transport=d.transport, write_cache=d.write_cache,
         # what identifies the target beyond path and size: only those it has
         **{k: v for k, v in (("wwn", d.wwn), ("eui64", d.eui64), ("nguid", d.nguid),
                              ("nsid", d.nsid), ("inode", d.inode)) if v})
    _namevalues(etree.SubElement(root, "options"), "option", run.options)
    desc = etree.SubElement(root, "description")
    etree.SubElement(desc, "text").text = for_xml(run.description)
    _namevalues(desc, "field", run.description_fields)
    events = etree.SubElement(root, "events")
    for e in run.events:
        ev = _set(etree.SubElement(events, "event"), time=e.time, kind=e.kind, test=e.test,
                  round=int(e.round))
        ev.text = for_xml(e.message)
    if run.facts:
        etree.SubElement(root, "facts").text = json.dumps(run.facts, sort_keys=True, default=str)
    if run.health:
        health = etree.SubElement(root, "health")
        for snap in run.health:
            el = _set(etree.SubElement(health, "snapshot"), time=snap.time, when=snap.when, source=snap.source)
            for name, value in snap.values:
                _set(etree.SubElement(el, "value"), name=name, value=float(value))
    if run.features:
        features = etree.SubElement(root, "features")
        for name, text in run.features:
            _set(etree.SubElement(features, "feature"), name=name, value=text)
    for t in run.tests:
        _test(root, t)
    return root


def series_id(test: TestRun, name: str) -> str:
    """The id of a test's series in the file: ``wsat.intervals``."""
    return f"{test.key}.{name}"


def _data_element(raw: bytes) -> etree._Element:
    try:
        el = etree.fromstring(raw, safe_parser())
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"stored test data is not XML: {exc.msg}") from None
    if el.tag != "data":
        raise ValueError(f"stored test data is a <{el.tag}>, not a <data> element")
    return el


def _test(root: etree._Element, t: TestRun) -> None:
    el = _set(etree.SubElement(root, "test"), type=t.type, key=t.key, status=t.status,
              started=t.started, finished=t.finished, stop_reason=t.stop_reason)
    _set(etree.SubElement(el, "tracking"), workload=t.tracking_workload,
         metric=t.tracking_metric, label=t.tracking_label)
    _namevalues(etree.SubElement(el, "params"), "param", t.params)
    if t.purge is not None:
        p = t.purge
        pe = _set(etree.SubElement(el, "purge"), requested=p.requested, method=p.method,
                  seconds=float(p.seconds), pts_purge=p.pts_purge, command=p.command, note=p.note)
        if p.verification:
            pe.set("verification", p.verification)
    if t.wipc is not None:
        wipc = t.wipc
        _set(etree.SubElement(el, "wipc"), loops=int(wipc.loops), bs=int(wipc.bs),
             iodepth=int(wipc.iodepth), numjobs=int(wipc.numjobs),
             bytes_written=int(wipc.bytes_written), seconds=float(wipc.seconds),
             bw_bytes=float(wipc.bw_bytes))
    for r in t.rounds:
        rel = _set(etree.SubElement(el, "round"), index=int(r.index), started=r.started,
                   wall_s=float(r.wall_s), fio_s=float(r.fio_s))
        for w in r.workloads:
            wel = _set(etree.SubElement(rel, "workload"), name=w.name, rw=w.rw, bs=int(w.bs),
                       rwmixread=int(w.rwmixread), numjobs=int(w.numjobs),
                       iodepth=int(w.iodepth), runtime_ms=int(w.runtime_ms), error=int(w.error))
            _iostats(wel, "read", w.read)
            _iostats(wel, "write", w.write)
    if t.steady is not None:
        s = t.steady
        sel = _set(etree.SubElement(el, "steadystate"), steady=s.steady, window=int(s.window),
                   average=float(s.average), range=float(s.range), slope=float(s.slope),
                   intercept=float(s.intercept), slope_excursion=float(s.slope_excursion))
        for rnd, val in zip(s.rounds, s.values):
            _set(etree.SubElement(sel, "point"), round=int(rnd), value=float(val))
    for name, series in t.series.items():
        if name != series.name:
            raise ValueError(f"test {t.key}: series {series.name!r} is filed as {name!r}")
        _set(etree.SubElement(el, "series"), id=check_id(series_id(t, name)), name=name,
             columns=" ".join(series.columns))
    if t.raw is not None:
        el.append(_data_element(t.raw))  # a test type not installed: its data as it was
    elif t.data:
        _namevalues(etree.SubElement(el, "data"), "item", t.data)


def _all_rows(run: RunResult) -> bytes:
    """Every row of every series, in the order of the tests."""
    seen = set()
    parts = []
    for t in run.tests:
        for name, series in t.series.items():
            sid = series_id(t, name)
            if sid in seen:
                raise ValueError(f"two series have the id {sid!r} (two tests with the key {t.key!r}?)")
            seen.add(sid)
            parts.append(format_rows(sid, series))
    return b"".join(parts)


def dumps(run: RunResult) -> bytes:
    """The whole file: the document, then every series row after its end
    tag, then the closing record of all that (:mod:`tkperf.store.seal`)."""
    main = etree.tostring(to_element(run), xml_declaration=True, encoding="UTF-8",
                          pretty_print=True)
    return seal.sealed(main + _all_rows(run))



class ResultWriter:
    """The result file of a run as it grows: full saves, and rows appended.

    :meth:`save` rewrites the whole file atomically, sealed by its closing
    record, and then opens it for appending; :meth:`append` adds one series
    row, carrying its own check, with one ``write`` on an
    ``O_APPEND`` descriptor: no Python buffering, no run object, no fsync,
    the same cost for the first row and the 86,400th.  A kill leaves every
    row whose write returned; a power loss may also lose what was not yet
    synced (:meth:`sync`) -- at most a torn last line, which loading drops.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: Optional[int] = None
        self._broken = ""

    @property
    def closed(self) -> bool:
        return self._fd is None

    def save(self, run: RunResult) -> None:
        """Rewrite the whole file (atomically), then append to the new one."""
        atomic_write(self.path, dumps(run))
        self._close_fd()
        try:
            # Not following a link someone swapped in since the replace.
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
                               | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise OutputError(f"cannot append to {self.path}: {exc.strerror or exc}") from None
        self._broken = ""

    def append(self, series_id: str, index: int, values: Sequence[float]) -> None:
        """Append row ``index`` (1-based; the last row's index replaces it) of
        the series ``series_id`` (``test key.series name``)."""
        if self._fd is None:
            raise OutputError(f"cannot append to {self.path}: not saved through this writer "
                              "(or closed)")
        if self._broken:
            raise OutputError(self._broken)
        line = format_row(series_id, index, values, check=True)  # after the closing record
        done = 0
        try:
            while done < len(line):
                n = os.write(self._fd, line[done:] if done else line)
                if n <= 0:
                    raise OSError(0, "nothing written")
                done += n
        except OSError as exc:
            msg = f"cannot append to {self.path}: {exc.strerror or exc}"
            if done:
                # Half a line is in the file: rows after it would be read as
                # corrupt, so nothing more is appended until a full save.
                self._broken = msg + " (half a row written; the next full save repairs it)"
            raise OutputError(msg) from None

    def sync(self) -> None:
        """Flush the appended rows to the device (``fdatasync``)."""
        if self._fd is None:
            return
        try:
            os.fdatasync(self._fd)
        except OSError as exc:
            raise OutputError(f"cannot sync {self.path}: {exc.strerror or exc}") from None

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        files.close_quietly(fd)

    def close(self) -> None:
        """Sync what was appended and close; a later :meth:`save` reopens."""
        if self._fd is not None:
            try:
                os.fdatasync(self._fd)
            except OSError:
                pass
        self._close_fd()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
