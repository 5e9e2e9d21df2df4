"""The XML result file: dump, load, validate, atomic writes and appends.

Format versions (the ``format`` attribute of the root element):

* 1 -- first format: host, device, options, description, events, and per
  test (``name`` = its type) its purge, WIPC, rounds with every workload's
  figures and the steady-state verdict; a WSAT interval was a round.
* 2 -- a test's type is its ``type`` attribute (any test type, plug-ins'
  too); a test may declare series (``<series id name columns/>``) whose
  rows -- one per interval -- follow the root element's end tag as
  ``<?tkperf-row ID INDEX VALUE...?>`` lines, appended as they come
  (:class:`ResultWriter`); a test type's own data is an optional ``<data>``
  of ``<item name value/>``.

Files of a newer version are refused with a clear message; format 1 files
are upgraded on load (:mod:`tkperf.model.legacy`).  Files are parsed with
entity expansion, DTD loading and network access off; a DOCTYPE is refused
outright, since tkperf never writes one.  Reading streams: the XML Schema is
checked while the document is parsed and every round is turned into objects
and dropped from the tree at once; the series rows after the root are read
line by line into numpy columns (:func:`tkperf.model.series.parse_rows`),
and a torn last line -- a kill or power loss in the middle of an append --
is dropped.
"""
from __future__ import annotations

import io
import math
import os
import re
import tempfile
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from lxml import etree

from tkperf.errors import OutputError, ResultFileError
from tkperf.model.results import (
    DeviceInfo,
    Event,
    HostInfo,
    IoStats,
    PurgeRecord,
    Round,
    RunResult,
    TestRun,
    WipcRecord,
    Workload,
)
from tkperf.model.series import Series, check_id, format_row, format_rows, parse_rows
from tkperf.engine.steadystate import SteadyState

FORMAT_VERSION = 2
MAX_FILE_BYTES = 1 << 30
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "tkperf-result.xsd")

_schemas: Dict[str, etree.XMLSchema] = {}


def schema(path: Optional[str] = None) -> etree.XMLSchema:
    """The XML Schema of the current format (or the one at ``path``), parsed once."""
    path = path or SCHEMA_PATH
    sch = _schemas.get(path)
    if sch is None:
        sch = _schemas[path] = etree.XMLSchema(etree.parse(path, _safe_parser()))
    return sch


def _safe_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=True,  # large WSAT files; entity expansion is off regardless
        remove_blank_text=True,
    )


# --- writing ---------------------------------------------------------------

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
            el.set(name, "" if value is None else str(value))
    return el


def _iostats(parent: etree._Element, tag: str, s: IoStats) -> None:
    el = _set(
        etree.SubElement(parent, tag),
        iops=s.iops, bw_bytes=s.bw_bytes, io_bytes=int(s.io_bytes), ios=int(s.ios),
        lat_mean_us=s.lat_mean_us, lat_min_us=s.lat_min_us, lat_max_us=s.lat_max_us,
        lat_stddev_us=s.lat_stddev_us,
    )
    for p, us in s.percentiles:
        _set(etree.SubElement(el, "percentile"), p=p, us=float(us))


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
         transport=d.transport, write_cache=d.write_cache)
    _namevalues(etree.SubElement(root, "options"), "option", run.options)
    desc = etree.SubElement(root, "description")
    etree.SubElement(desc, "text").text = run.description
    _namevalues(desc, "field", run.description_fields)
    events = etree.SubElement(root, "events")
    for e in run.events:
        ev = _set(etree.SubElement(events, "event"), time=e.time, kind=e.kind, test=e.test,
                  round=int(e.round))
        ev.text = e.message
    for t in run.tests:
        _test(root, t)
    return root


def series_id(test: TestRun, name: str) -> str:
    """The id of a test's series in the file: ``wsat.intervals``."""
    return f"{test.key}.{name}"


def _data_element(raw: bytes) -> etree._Element:
    try:
        el = etree.fromstring(raw, _safe_parser())
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
        _set(etree.SubElement(el, "purge"), requested=p.requested, method=p.method,
             seconds=float(p.seconds), pts_purge=p.pts_purge, command=p.command, note=p.note)
    if t.wipc is not None:
        w = t.wipc
        _set(etree.SubElement(el, "wipc"), loops=int(w.loops), bs=int(w.bs),
             iodepth=int(w.iodepth), numjobs=int(w.numjobs),
             bytes_written=int(w.bytes_written), seconds=float(w.seconds),
             bw_bytes=float(w.bw_bytes))
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
    """The whole file: the document, then every series row after its end tag."""
    main = etree.tostring(to_element(run), xml_declaration=True, encoding="UTF-8",
                          pretty_print=True)
    return main + _all_rows(run)


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old or the new file, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                   dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        # mkstemp makes the file owner-only; give it what any new file gets.
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        # Also on a signal mid-write: the old file stays, the temp file goes.
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def ensure_dir(path: str, what: str = "output directory") -> str:
    """Create ``path`` (and parents) if needed; an OutputError says why it cannot be."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {what} {path}: {exc.strerror or exc}") from None
    if not os.path.isdir(path):
        raise OutputError(f"{what} {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path} is not writable")
    return path


def save(run: RunResult, path: str) -> None:
    """Write the whole file atomically (a :class:`ResultWriter` appending to
    ``path`` must save through its own :meth:`ResultWriter.save`)."""
    atomic_write(path, dumps(run))


class ResultWriter:
    """The result file of a run as it grows: full saves, and rows appended.

    :meth:`save` rewrites the whole file atomically and then opens it for
    appending; :meth:`append` adds one series row with one ``write`` on an
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
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
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
        line = format_row(series_id, index, values)
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
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        """Sync what was appended and close; a later :meth:`save` reopens."""
        if self._fd is not None:
            try:
                os.fdatasync(self._fd)
            except OSError:
                pass
        self._close_fd()

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- reading ---------------------------------------------------------------

def _f(el: etree._Element, name: str) -> float:
    return float(el.get(name, "0"))


def _i(el: etree._Element, name: str) -> int:
    return int(el.get(name, "0"))


def _b(el: etree._Element, name: str) -> bool:
    return el.get(name, "false") in ("true", "1")


def _s(el: etree._Element, name: str) -> str:
    return el.get(name, "")


def _nv(el: Optional[etree._Element], tag: str) -> Dict[str, str]:
    if el is None:
        return {}
    return {c.get("name", ""): c.get("value", "") for c in el.iterfind(tag)}


def _read_iostats(el: etree._Element) -> IoStats:
    return IoStats(
        iops=_f(el, "iops"), bw_bytes=_f(el, "bw-bytes"), io_bytes=_i(el, "io-bytes"),
        ios=_i(el, "ios"), lat_mean_us=_f(el, "lat-mean-us"), lat_min_us=_f(el, "lat-min-us"),
        lat_max_us=_f(el, "lat-max-us"), lat_stddev_us=_f(el, "lat-stddev-us"),
        percentiles=tuple((p.get("p", ""), _f(p, "us")) for p in el.iterfind("percentile")),
    )


def _read_round(r: etree._Element) -> Round:
    workloads = tuple(
        Workload(name=_s(x, "name"), rw=_s(x, "rw"), bs=_i(x, "bs"),
                 rwmixread=_i(x, "rwmixread"), numjobs=_i(x, "numjobs"),
                 iodepth=_i(x, "iodepth"), runtime_ms=_i(x, "runtime-ms"),
                 read=_read_iostats(x.find("read")), write=_read_iostats(x.find("write")),
                 error=_i(x, "error"))
        for x in r.iterfind("workload")
    )
    return Round(index=_i(r, "index"), started=_s(r, "started"), wall_s=_f(r, "wall-s"),
                 fio_s=_f(r, "fio-s"), workloads=workloads)


def _read_test(el: etree._Element, rounds: List[Round], type_attr: str = "type",
               declared: Optional[Dict[str, Series]] = None) -> TestRun:
    """A <test> whose <round> children were already read (and dropped) as
    ``rounds``; its <series> come back empty (their rows follow the root) and
    are entered in ``declared`` under their ids.  ``type_attr`` names the
    attribute holding the test type (format 1: ``name``)."""
    tr = el.find("tracking")
    t = TestRun(
        type=_s(el, type_attr), key=_s(el, "key"),
        tracking_workload=_s(tr, "workload"), tracking_metric=_s(tr, "metric"),
        tracking_label=_s(tr, "label"), status=_s(el, "status"), started=_s(el, "started"),
        finished=_s(el, "finished"), stop_reason=_s(el, "stop-reason"),
        params=_nv(el.find("params"), "param"), rounds=rounds,
    )
    p = el.find("purge")
    if p is not None:
        t.purge = PurgeRecord(requested=_s(p, "requested"), method=_s(p, "method"),
                              seconds=_f(p, "seconds"), pts_purge=_b(p, "pts-purge"),
                              command=_s(p, "command"), note=_s(p, "note"))
    w = el.find("wipc")
    if w is not None:
        t.wipc = WipcRecord(loops=_i(w, "loops"), bs=_i(w, "bs"), iodepth=_i(w, "iodepth"),
                            numjobs=_i(w, "numjobs"), bytes_written=_i(w, "bytes-written"),
                            seconds=_f(w, "seconds"), bw_bytes=_f(w, "bw-bytes"))
    s = el.find("steadystate")
    if s is not None:
        points = list(s.iterfind("point"))
        t.steady = SteadyState(
            steady=_b(s, "steady"), rounds=tuple(_i(p, "round") for p in points),
            values=tuple(_f(p, "value") for p in points), slope=_f(s, "slope"),
            intercept=_f(s, "intercept"), average=_f(s, "average"), range=_f(s, "range"),
            slope_excursion=_f(s, "slope-excursion"), window=_i(s, "window"),
        )
    for decl in el.iterfind("series"):
        name = _s(decl, "name")
        if name in t.series:
            raise ValueError(f"test {t.key} declares series {name!r} twice")
        t.series[name] = Series(name, _s(decl, "columns").split())
        if declared is not None:
            sid = _s(decl, "id")
            if sid in declared:
                raise ValueError(f"two series have the id {sid!r}")
            declared[sid] = t.series[name]
    d = el.find("data")
    if d is not None:
        t.data = _nv(d, "item")
        # Kept as written: the registry drops it for an installed test type,
        # whose own code reads ``data``; for one not installed it is written back.
        t.raw = etree.tostring(d, encoding="UTF-8", with_tail=False)
    return t


def _read_run(root: etree._Element, tests: List[TestRun]) -> RunResult:
    h = root.find("host")
    d = root.find("device")
    desc = root.find("description")
    run = RunResult(
        name=_s(root, "name"), started=_s(root, "started"), finished=_s(root, "finished"),
        status=_s(root, "status"), profile=_s(root, "profile"), quick=_b(root, "quick"),
        tkperf_version=_s(root, "tkperf-version"),
        host=HostInfo(hostname=_s(h, "hostname"), kernel=_s(h, "kernel"), os=_s(h, "os"),
                      cpu=_s(h, "cpu"), cores=_i(h, "cores"), memory_bytes=_i(h, "memory-bytes"),
                      fio_version=_s(h, "fio-version"), tkperf_version=_s(h, "tkperf-version"),
                      python=_s(h, "python")),
        device=DeviceInfo(path=_s(d, "path"), resolved=_s(d, "resolved"), kind=_s(d, "kind"),
                          size_bytes=_i(d, "size-bytes"), logical_sector=_i(d, "logical-sector"),
                          physical_sector=_i(d, "physical-sector"), vendor=_s(d, "vendor"),
                          model=_s(d, "model"), serial=_s(d, "serial"),
                          firmware=_s(d, "firmware"), rotational=_b(d, "rotational"),
                          transport=_s(d, "transport"), write_cache=_s(d, "write-cache")),
        options=_nv(root.find("options"), "option"),
        description=(desc.findtext("text") or "") if desc is not None else "",
        description_fields=_nv(desc, "field"),
        tests=tests,
    )
    for e in root.find("events").iterfind("event"):
        run.events.append(Event(time=_s(e, "time"), kind=_s(e, "kind"), message=e.text or "",
                                test=_s(e, "test"), round=_i(e, "round")))
    return run


def _check_head(data: bytes, source: str) -> int:
    """What can be told before validation, said in plain words: empty, a
    DOCTYPE, another kind of XML, a format version this tkperf cannot read."""
    if not data.strip():
        raise ResultFileError(f"{source}: empty file, not a tkperf result")
    root_start = re.search(rb"<[A-Za-z_]", data)
    if b"<!DOCTYPE" in data[: root_start.start() if root_start else len(data)]:
        raise ResultFileError(f"{source}: has a DOCTYPE; tkperf result files never do, refusing it")
    try:
        _, root = next(etree.iterparse(io.BytesIO(data), events=("start",), resolve_entities=False,
                                       no_network=True, load_dtd=False, huge_tree=True))
    except (etree.XMLSyntaxError, StopIteration) as exc:
        msg = getattr(exc, "msg", "") or "no element"
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {msg}") from None
    if root.tag != "tkperf":
        raise ResultFileError(f"{source}: XML of another kind (root <{root.tag}>), not a tkperf result")
    try:
        version = int(root.get("format", ""))
    except ValueError:
        raise ResultFileError(f"{source}: no format version on <tkperf> (truncated, or not a tkperf result)") from None
    if version > FORMAT_VERSION:
        raise ResultFileError(
            f"{source}: format version {version} is newer than this tkperf reads "
            f"({FORMAT_VERSION}); upgrade tkperf")
    if version < 1:
        raise ResultFileError(f"{source}: unknown format version {version}")
    return version


#: ``take_round(test_element, round) -> bool``: a round that an upgrade takes
#: (True) instead of the test's rounds; ``finish_test(test_element, test)``.
RoundHook = Callable[[etree._Element, Round], bool]
TestHook = Callable[[etree._Element, TestRun], None]


def parse_document(head: bytes, source: str, sch: etree.XMLSchema, type_attr: str = "type",
                   take_round: Optional[RoundHook] = None,
                   finish_test: Optional[TestHook] = None,
                   declared: Optional[Dict[str, Series]] = None) -> RunResult:
    """Parse, validate and read the XML document in one streaming pass; every
    failure is a ResultFileError naming ``source``.  Declared series are
    entered in ``declared`` (id -> empty Series).  The hooks let an upgrade
    of an older format (:mod:`tkperf.model.legacy`) take rounds and finish tests."""
    tests: List[TestRun] = []
    rounds: List[Round] = []
    root = None
    # lxml raises schema errors only when the whole file is parsed, after the
    # events; a value that does not convert is kept until then, so the
    # schema's more precise message wins.
    bad_value: Optional[Exception] = None
    try:
        for event, el in etree.iterparse(io.BytesIO(head), events=("end",), schema=sch,
                                         resolve_entities=False, no_network=True, load_dtd=False,
                                         huge_tree=True, remove_blank_text=True):
            try:
                if el.tag == "round":
                    if bad_value is None:
                        rnd = _read_round(el)
                        if take_round is None or not take_round(el.getparent(), rnd):
                            rounds.append(rnd)
                    el.clear()
                    el.getparent().remove(el)  # the parser is done with it
                elif el.tag == "test" and el.getparent() is not None and el.getparent().tag == "tkperf":
                    if bad_value is None:
                        t = _read_test(el, rounds, type_attr, declared)
                        if finish_test is not None:
                            finish_test(el, t)
                        tests.append(t)
                    rounds = []
                    el.clear()
                elif el.tag == "tkperf":
                    root = el
            except (ValueError, TypeError, AttributeError) as exc:
                bad_value = bad_value or exc
    except etree.XMLSyntaxError as exc:
        msg = exc.msg or str(exc)
        if "truncated" in msg.lower() or "end of data" in msg.lower() or "Premature" in msg:
            raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {msg}") from None
        raise ResultFileError(f"{source}: not a valid tkperf result ({msg})") from None
    if bad_value is not None:
        raise ResultFileError(f"{source}: not a valid tkperf result ({bad_value})")
    if root is None:
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?)")
    return _read_run(root, tests)


_END_TAG = b"</tkperf"
_END_REST = re.compile(rb"\s*>")


def split_tail(data: bytes) -> Tuple[bytes, bytes, int]:
    """(document, what follows its root end tag, the file's line number
    where that starts).  Text, comments and attributes cannot hold ``</tkperf``
    unescaped, so its first occurrence ends the root (in the files tkperf
    writes; anything else fails validation)."""
    pos = data.find(_END_TAG)
    while pos >= 0:
        m = _END_REST.match(data, pos + len(_END_TAG))
        if m:
            end = m.end()
            return data[:end], data[end:], data.count(b"\n", 0, end) + 1
        pos = data.find(_END_TAG, pos + 1)
    return data, b"", 0


def loads(data: bytes, source: str = "<data>") -> RunResult:
    """Parse, validate and read a result file's bytes (any format this tkperf
    reads; older ones are upgraded); every failure is a ResultFileError
    naming ``source``."""
    version = _check_head(data, source)
    if version < FORMAT_VERSION:
        from tkperf.model import legacy

        return legacy.loads(data, source, version)
    head, tail, first_line = split_tail(data)
    declared: Dict[str, Series] = {}
    run = parse_document(head, source, schema(), declared=declared)
    if tail:
        parse_rows(tail, declared, source, first_line)
    return run


def load(path: str) -> RunResult:
    """Read a result file; a ResultFileError says plainly what is wrong with it."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from exc
    if not os.path.isfile(path):
        raise ResultFileError(f"{path}: not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise ResultFileError(f"{path}: {st.st_size} bytes, larger than the {MAX_FILE_BYTES} byte limit")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from exc
    return loads(data, path)


def validate(run: RunResult) -> List[str]:
    """Schema errors of the XML this run would be written as (empty when valid)."""
    root = to_element(run)
    sch = schema()
    if sch.validate(root):
        return []
    return [f"line {e.line}: {e.message}" for e in sch.error_log]

