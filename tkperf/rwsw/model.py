"""The capture of a real-world workload and its file.

A capture (``tkperf capture``, docs/rwsw.rst) is the block I/O an
application did to a device -- or to several at once, on one timeline --
cut into time steps; per step and in total it is told as IO streams with
the step's queue depth, IOPS and throughput, and what the application saw
(:mod:`tkperf.rwsw.figures`).  This module is the capture and its XML file,
``<tkperf-capture version="4">``; the file's elements are read by
:mod:`tkperf.rwsw.capread`; the capture itself, the analysis and the replay
live beside it.

Numbers are SI: seconds, bytes, MB/s of 10**6 bytes.  Every figure read
back from a file must be finite and in its range, every share 0..1, or the
file is refused with one line (:class:`~tkperf.errors.ResultFileError`,
exit 7); the iolog name must be a plain file name in the XML's folder.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional, Tuple

from lxml import etree

from tkperf.errors import OutputError, ResultFileError
from tkperf.model.files import atomic_write, open_to_read
from tkperf.rwsw.capread import MAX_DEVICES as MAX_DEVICES
from tkperf.rwsw.capread import Reader
from tkperf.rwsw.figures import ACCESS as ACCESS
from tkperf.rwsw.figures import COMBINED as COMBINED
from tkperf.rwsw.figures import LOSS_NOTE as LOSS_NOTE
from tkperf.rwsw.figures import RW as RW
from tkperf.rwsw.figures import Device as Device
from tkperf.rwsw.figures import Latency as Latency
from tkperf.rwsw.figures import Seen as Seen
from tkperf.rwsw.figures import Source as Source
from tkperf.rwsw.figures import Step as Step
from tkperf.rwsw.figures import Stream as Stream
from tkperf.rwsw.figures import _Covered
from tkperf.rwsw.figures import coverage as coverage
from tkperf.rwsw.figures import dominant as dominant
from tkperf.rwsw.figures import size_text as size_text
from tkperf.store import seal
from tkperf.store.fileformat import MAX_FILE_BYTES, refuse_doctype, refuse_doctype_tree, safe_parser
from tkperf.untrusted import for_xml

ROOT_TAG = "tkperf-capture"
#: 1: steps indexed from 0; 2: steps numbered from 1, what the application
#: saw (:class:`Seen`); 3: the file ends with its closing record
#: (:mod:`tkperf.store.seal`), so a cut one is refused; 4: the host it was
#: recorded on (``host``), a capture of several devices (``<devices>``, each
#: device's own figures) and one combined from several (``<sources>``).  A
#: file of an earlier version is of one device, its host not recorded.
VERSION = 4
#: What ``show`` says of a capture of a version that records no completeness.
UNVERIFIED = ("written as capture version {version}, which records no completeness: "
              "a capture cut short cannot be told from a whole one")
SOURCES = ("tracefs", "blktrace", "import", "combined")
#: What may stop a capture early.
STOPPED_BY = ("SIGINT", "SIGTERM", "SIGHUP")


@dataclass(frozen=True)
class Capture(_Covered):
    """A whole capture: its facts, steps and streams; for several devices,
    the figures of the whole beside each device's (:attr:`devices`)."""

    name: str
    device: str        # the captured device as given (informative text, untrusted on read); several: joined by " + "
    size: int          # its size in bytes (replay maps addresses onto the target's range); several: their sum
    source: str        # "tracefs" | "blktrace" | "import" | "combined"
    started: str       # ISO 8601 UTC
    duration: float    # seconds
    step: float        # step length in seconds
    steps: Tuple[Step, ...]
    streams: Tuple[Stream, ...]   # whole capture, largest share first
    qd: float
    iops: float
    mbps: float
    iolog: Optional[str]   # file name beside the XML (packed, or fio's text iolog version 3), or None
    seen: Optional[Seen] = None   # None: not recorded (a version 1 capture)
    #: When the capture was stopped before its --duration (seconds from its
    #: start) and by what (``SIGINT``, ``SIGTERM``); None: it ran its course.
    stopped_at: Optional[float] = None
    stopped_by: Optional[str] = None
    #: The host it was recorded on (None: not recorded, before version 4).
    host: Optional[str] = None
    #: A capture of several devices: each device's figures (2 or more, in the
    #: order given); () for a capture of one device.
    devices: Tuple[Device, ...] = ()
    #: A combined capture: how (``days``, ``hosts``) and of which captures.
    combined: Optional[str] = None
    sources: Tuple[Source, ...] = ()
    #: What reading the file found about its completeness (never written): ""
    #: for a whole file whose closing record checked; else one line.
    integrity: str = field(default="", compare=False)

    @property
    def steps_touched_by_loss(self) -> Tuple[int, ...]:
        """The numbers (from 1) of the steps whose figures miss lost events (:attr:`Step.touched_by_loss`)."""
        return tuple(st.number for st in self.steps if st.touched_by_loss)

    @property
    def parts(self) -> Tuple[Device, ...]:
        """The devices, also of a capture of one device (then the whole, as its one device)."""
        if self.devices:
            return self.devices
        return (Device(name=self.device, size=self.size, offset=0, streams=self.streams, steps=self.steps,
                       qd=self.qd, iops=self.iops, mbps=self.mbps, seen=self.seen, host=self.host),)


# -- writing -----------------------------------------------------------------

def _num(x: float) -> str:
    return repr(float(x))


def _stream_el(parent: etree._Element, s: Stream) -> None:
    el = etree.SubElement(parent, "stream", access=s.access, rw=s.rw, bs=str(s.bs), ios=str(s.ios),
                          share=_num(s.share), attrib={"byte-share": _num(s.byte_share)})
    if s.flushes is not None:
        el.set("flushes", str(s.flushes))


def _seen_el(parent: etree._Element, seen: Optional[Seen]) -> None:
    if seen is None:
        return
    el = etree.SubElement(parent, "seen", flushes=str(seen.flushes), fua=str(seen.fua),
                          discards=str(seen.discards), attrib={"discard-bytes": str(seen.discard_bytes)})
    if seen.lost_events is not None:
        el.set("lost-events", str(seen.lost_events))
    if seen.loss_touched:
        el.set("touched-by-loss", "1")
    for rw, lat in (("all", seen.lat), ("read", seen.read), ("write", seen.write)):
        if lat is not None:
            etree.SubElement(el, "latency", rw=rw, ios=str(lat.ios), attrib={
                "mean-us": _num(lat.mean_us), "p99-us": _num(lat.p99_us), "max-us": _num(lat.max_us)})


def _figures_el(el: etree._Element, seen: Optional[Seen], streams: Tuple[Stream, ...],
                steps: Tuple[Step, ...]) -> None:
    """``<seen>``, ``<streams>`` and ``<steps>``: of the whole capture, or of one device."""
    _seen_el(el, seen)
    total = etree.SubElement(el, "streams")
    for s in streams:
        _stream_el(total, s)
    steps_el = etree.SubElement(el, "steps")
    for st in steps:
        one = etree.SubElement(steps_el, "step", number=str(st.number), start=_num(st.start),
                               duration=_num(st.duration), qd=_num(st.qd), iops=_num(st.iops), mbps=_num(st.mbps))
        _seen_el(one, st.seen)
        for s in st.streams:
            _stream_el(one, s)


def _sources_el(root: etree._Element, c: Capture) -> None:
    if not c.sources:
        return
    el = etree.SubElement(root, "sources", combined=c.combined or COMBINED[0])
    for s in c.sources:
        one = etree.SubElement(el, "source", file=for_xml(s.file), name=for_xml(s.name), devices=for_xml(s.devices),
                               started=for_xml(s.started), duration=_num(s.duration), at=_num(s.at))
        if s.host is not None:
            one.set("host", for_xml(s.host))


def _devices_el(root: etree._Element, c: Capture) -> None:
    if not c.devices:
        return
    el = etree.SubElement(root, "devices")
    for d in c.devices:
        one = etree.SubElement(el, "device", name=for_xml(d.name), size=str(d.size), offset=str(d.offset),
                               qd=_num(d.qd), iops=_num(d.iops), mbps=_num(d.mbps))
        if d.host is not None:
            one.set("host", for_xml(d.host))
        _figures_el(one, d.seen, d.streams, d.steps)


def to_element(capture: Capture) -> etree._Element:
    c = capture
    root = etree.Element(ROOT_TAG, version=str(VERSION), name=for_xml(c.name), device=for_xml(c.device),
                         size=str(c.size), source=c.source, started=for_xml(c.started),
                         duration=_num(c.duration), step=_num(c.step), qd=_num(c.qd), iops=_num(c.iops),
                         mbps=_num(c.mbps))
    if c.host is not None:
        root.set("host", for_xml(c.host))
    if c.iolog is not None:
        root.set("iolog", for_xml(c.iolog))
    if c.stopped_at is not None:
        root.set("stopped-early-at", _num(c.stopped_at))
        root.set("stopped-by", for_xml(c.stopped_by or "signal"))
    _sources_el(root, c)
    _figures_el(root, c.seen, c.streams, c.steps)
    _devices_el(root, c)
    return root


def dumps(capture: Capture) -> bytes:
    """The capture's file: its document, then its closing record."""
    return seal.sealed(etree.tostring(to_element(capture), xml_declaration=True, encoding="UTF-8",
                                      pretty_print=True))


def save(capture: Capture, path: str, overwrite: bool = False) -> None:
    """Write the capture atomically; an existing file is an OutputError unless ``overwrite``."""
    if not overwrite and os.path.lexists(path):
        raise OutputError(f"{path} exists; give another --name or remove it")
    atomic_write(path, dumps(capture))


# -- reading -----------------------------------------------------------------

def _parse(data: bytes, source: str) -> etree._Element:
    """The root element of a capture's document (its closing record checked where it has one)."""
    if not data.strip():
        raise ResultFileError(f"{source}: empty file, not a tkperf capture")
    refuse_doctype(data, source)
    if seal.find(data) >= 0 or _declared_version(data) >= 3:
        data = data[:seal.check(data, source, "capture")[0]]
    elif _START_TAG.search(data, 0, 8192) and _END_TAG.search(data) is None:  # from the bytes, not the parser
        raise seal.no_end_tag(data, source, ROOT_TAG)
    try:
        root = etree.fromstring(data, safe_parser(remove_comments=True, remove_pis=True))
    except etree.XMLSyntaxError as exc:
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {exc.msg or exc}") from None
    refuse_doctype_tree(root, source)
    if root.tag != ROOT_TAG:
        raise ResultFileError(f"{source}: XML of another kind (root <{root.tag}>), not a tkperf capture")
    return root


def loads(data: bytes, source: str = "<data>") -> Capture:
    """The capture in ``data``; every failure is a ResultFileError naming ``source``."""
    root = _parse(data, source)
    r = Reader(source)
    version = r.integer(root, "version", 1)
    if version > VERSION:
        raise ResultFileError(f"{source}: capture version {version} is newer than this tkperf reads "
                              f"({VERSION}); upgrade tkperf")
    steps = r.steps(root, version)
    step_len = r.number(root, "step")
    if step_len <= 0:
        raise r.fail(root, "step", "must be above 0")
    duration = r.number(root, "duration")
    stopped_at = None if root.get("stopped-early-at") is None else r.number(root, "stopped-early-at", duration)
    size = r.integer(root, "size")
    combined, sources = r.sources(root)
    return Capture(name=r.text(root, "name"), device=r.text(root, "device"), size=size,
                   source=r.choice(root, "source", SOURCES), started=r.text(root, "started"),
                   duration=duration, step=step_len, steps=steps,
                   streams=r.streams(root.find("streams")), qd=r.number(root, "qd"), iops=r.number(root, "iops"),
                   mbps=r.number(root, "mbps"), iolog=r.iolog_name(root), seen=r.seen(root, version),
                   stopped_at=stopped_at,
                   stopped_by=None if stopped_at is None else r.choice(root, "stopped-by", STOPPED_BY),
                   host=r.optional_text(root, "host"), devices=r.devices(root, version, len(steps), size),
                   combined=combined, sources=sources,
                   integrity=UNVERIFIED.format(version=version) if version < 3 else "")


_START_TAG = re.compile(rb"<" + ROOT_TAG.encode("ascii") + rb"[\s/>]")
_END_TAG = re.compile(rb"</" + ROOT_TAG.encode("ascii") + rb"\s*>")
_VERSION_ATTR = re.compile(rb"<" + ROOT_TAG.encode("ascii") + rb"\s[^>]*?\bversion=[\"']([0-9]{1,6})[\"']")


def _declared_version(data: bytes) -> int:
    """The version a capture's root start tag declares, read from its first
    bytes (0 when it cannot be told there): a file of version 3 or later
    without its closing record is cut, not old."""
    m = _VERSION_ATTR.search(data, 0, 8192)
    return int(m.group(1)) if m else 0


def is_capture(data: bytes) -> bool:
    """Whether ``data`` looks like a capture (its root element), for show and report to choose a reader."""
    head = data[:4096].lstrip()
    return (b"<" + ROOT_TAG.encode()) in head


def load(path: str) -> Capture:
    """Read a capture file; a ResultFileError (one line) says what is wrong with
    it.  A symbolic link of another user on its path is not followed, a FIFO
    or device not read (:func:`tkperf.model.files.open_to_read`)."""
    fd = open_to_read(path, "capture", ResultFileError)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_FILE_BYTES:
            raise ResultFileError(f"{path}: {size} bytes, larger than the {MAX_FILE_BYTES} byte limit")
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise ResultFileError(f"{path}: larger than the {MAX_FILE_BYTES} byte limit")
    return loads(data, path)
