"""Reading a result file: one streaming pass that validates the document and
turns it into the result model, then the series rows after its end tag."""
from __future__ import annotations

import json
import re
from typing import Callable, Dict, List, Optional, Tuple

from lxml import etree

from tkperf.errors import ResultFileError
from tkperf.model import histogram
from tkperf.model.results import (
    DeviceInfo,
    Event,
    HealthSnapshot,
    HostInfo,
    IoStats,
    PurgeRecord,
    Round,
    RunResult,
    TestRun,
    WipcRecord,
    Workload,
)
from tkperf.model.series import Series
from tkperf.model.steadystate import SteadyState
from tkperf.store.fileformat import FORMAT_VERSION, refuse_doctype, refuse_doctype_tree, safe_iterparse


def _f(el: etree._Element, name: str) -> float:
    return float(el.get(name, "0"))


def _i(el: etree._Element, name: str) -> int:
    return int(el.get(name, "0"))


def _b(el: etree._Element, name: str) -> bool:
    return el.get(name, "false") in ("true", "1")


def _s(el: etree._Element, name: str) -> str:
    return el.get(name, "")


def _child(el: etree._Element, tag: str) -> etree._Element:
    """A child the schema requires (a ValueError if it is missing after all)."""
    found = el.find(tag)
    if found is None:
        raise ValueError(f"<{el.tag}> has no <{tag}>")
    return found


def _nv(el: Optional[etree._Element], tag: str) -> Dict[str, str]:
    if el is None:
        return {}
    return {c.get("name", ""): c.get("value", "") for c in el.iterfind(tag)}


def _read_iostats(el: etree._Element) -> IoStats:
    """A <read> or <write>; the clat/slat figures are optional (0 when absent:
    files written before they were kept).  Its histogram and percentiles as
    tkperf defines them (:func:`histogram.normalized`: none above the
    largest I/O, from the bins where there are bins), also in older files."""
    bins, pct = histogram.normalized(_bins(el.find("latency-bins")), tuple(
        (p.get("p", ""), _f(p, "us")) for p in el.iterfind("percentile")), _f(el, "lat-max-us"))
    return IoStats(
        iops=_f(el, "iops"), bw_bytes=_f(el, "bw-bytes"), io_bytes=_i(el, "io-bytes"),
        ios=_i(el, "ios"), lat_mean_us=_f(el, "lat-mean-us"), lat_min_us=_f(el, "lat-min-us"),
        lat_max_us=_f(el, "lat-max-us"), lat_stddev_us=_f(el, "lat-stddev-us"),
        percentiles=pct,
        clat_mean_us=_f(el, "clat-mean-us"), clat_min_us=_f(el, "clat-min-us"),
        clat_max_us=_f(el, "clat-max-us"), clat_stddev_us=_f(el, "clat-stddev-us"),
        slat_mean_us=_f(el, "slat-mean-us"), slat_min_us=_f(el, "slat-min-us"),
        slat_max_us=_f(el, "slat-max-us"), slat_stddev_us=_f(el, "slat-stddev-us"),
        bins=bins,
    )


def _bins(el: Optional[etree._Element]) -> Tuple[Tuple[int, int], ...]:
    """A <latency-bins> element's histogram; none when absent."""
    if el is None or not (el.text or "").strip():
        return ()
    try:
        return histogram.from_text(el.text or "")
    except ValueError as exc:
        raise ResultFileError(f"bad latency-bins: {exc}") from None


def _read_round(r: etree._Element) -> Round:
    workloads = tuple(
        Workload(name=_s(x, "name"), rw=_s(x, "rw"), bs=_i(x, "bs"),
                 rwmixread=_i(x, "rwmixread"), numjobs=_i(x, "numjobs"),
                 iodepth=_i(x, "iodepth"), runtime_ms=_i(x, "runtime-ms"),
                 read=_read_iostats(_child(x, "read")), write=_read_iostats(_child(x, "write")),
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
    tr = _child(el, "tracking")
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
                              command=_s(p, "command"), note=_s(p, "note"),
                              verification=_s(p, "verification"))
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
    h = _child(root, "host")
    d = _child(root, "device")
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
                          transport=_s(d, "transport"), write_cache=_s(d, "write-cache"),
                          wwn=_s(d, "wwn"), eui64=_s(d, "eui64"), nguid=_s(d, "nguid"),
                          nsid=_s(d, "nsid"), inode=_s(d, "inode")),
        options=_nv(root.find("options"), "option"),
        description=(desc.findtext("text") or "") if desc is not None else "",
        description_fields=_nv(desc, "field"),
        tests=tests,
    )
    for e in _child(root, "events").iterfind("event"):
        run.events.append(Event(time=_s(e, "time"), kind=_s(e, "kind"), message=e.text or "",
                                test=_s(e, "test"), round=_i(e, "round")))
    facts = root.findtext("facts")
    if facts:
        try:
            run.facts = json.loads(facts)
        except ValueError as exc:
            raise ResultFileError(f"the device facts are not JSON ({exc})") from None
        if not isinstance(run.facts, dict):
            raise ResultFileError("the device facts are not a JSON object")
    health = root.find("health")
    for snap in (health.iterfind("snapshot") if health is not None else ()):
        run.health.append(HealthSnapshot(time=_s(snap, "time"), when=_s(snap, "when"), source=_s(snap, "source"),
                                         values=tuple((_s(v, "name"), _f(v, "value"))
                                                      for v in snap.iterfind("value"))))
    features = root.find("features")
    if features is not None:
        run.features = [(_s(f, "name"), _s(f, "value")) for f in features.iterfind("feature")]
    return run


def check_head(data: bytes, source: str) -> int:
    """What can be told before validation, said in plain words: empty, a
    DOCTYPE, another kind of XML, a format version this tkperf cannot read."""
    if not data.strip():
        raise ResultFileError(f"{source}: empty file, not a tkperf result")
    refuse_doctype(data, source)  # wherever it stands, in any encoding
    try:
        _, root = next(safe_iterparse(data, ("start",), huge_tree=False))
    except (etree.XMLSyntaxError, StopIteration) as exc:
        msg = getattr(exc, "msg", "") or "no element"
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {msg}") from None
    refuse_doctype_tree(root, source)
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
    of an older format (:mod:`tkperf.store.legacy.format1`) take rounds and finish tests."""
    tests: List[TestRun] = []
    rounds: List[Round] = []
    root = None
    # lxml raises schema errors only when the whole file is parsed, after the
    # events; a value that does not convert is kept until then, so the
    # schema's more precise message wins.
    bad_value: Optional[Exception] = None
    checked = False
    try:
        for _event, el in safe_iterparse(head, ("end",), schema=sch, remove_blank_text=True):
            if not checked:  # the first element's end: the prologue has been read
                refuse_doctype_tree(el, source)
                checked = True
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
        # Told by where the error came from (libxml2's error domain), not its wording.
        if _schema_error(exc):
            raise ResultFileError(f"{source}: not a valid tkperf result ({msg})") from None
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {msg}") from None
    if bad_value is not None:
        raise ResultFileError(f"{source}: not a valid tkperf result ({bad_value})")
    if root is None:
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?)")
    return _read_run(root, tests)


def _schema_error(exc: etree.XMLSyntaxError) -> bool:
    """Whether the parse failed on the XML Schema (the document is XML, but
    not a tkperf result) rather than on the XML itself."""
    # The log's last entry is the error raised (it may hold earlier ones of the thread).
    last = getattr(getattr(exc, "error_log", None), "last_error", None)
    return last is not None and last.domain in (etree.ErrorDomains.SCHEMASV, etree.ErrorDomains.SCHEMASP)


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
