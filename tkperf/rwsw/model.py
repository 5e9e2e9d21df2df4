"""The capture of a real-world workload: its IO streams, time steps and file.

A capture (``tkperf capture``, docs/rwsw.rst) is the block I/O an
application did to a device, cut into time steps; per step and in total it
is told as IO streams -- one combination of access (random or sequential),
direction (read or write) and transfer size -- with their I/O count and
their share of the I/Os and of the bytes, and the step's queue depth, IOPS
and throughput.  Since version 2 it also keeps what the application saw
(:class:`Seen`): the response times (issue to completion at the block
layer; mean, 99th percentile and largest, of reads, of writes and of
both), the flushes, FUA writes and discards, and the events the kernel's
trace buffer lost; and whether the capture was stopped early (Ctrl-C,
SIGTERM), at what time; and which steps lost events touched (their
figures miss what was lost: ``touched-by-loss``, :attr:`Step.touched_by_loss`).
A version 1 file reads with these as not recorded (None).  This module is the data and its XML file,
``<tkperf-capture version="2">``; the capture itself, the analysis and
the replay live beside it.  Steps are numbered from 1 wherever a user sees
them (``number`` in the file); :attr:`Step.index` counts from 0.

Numbers are SI: seconds, bytes, MB/s of 10**6 bytes.  Every figure read
back from a file must be finite and in its range, every share 0..1, or the
file is refused with one line (:class:`~tkperf.errors.ResultFileError`,
exit 7); the iolog name must be a plain file name in the XML's folder.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import List, Optional, Sequence, Tuple

from lxml import etree

from tkperf.errors import OutputError, ResultFileError
from tkperf.model.files import atomic_write, open_to_read
from tkperf.store import seal
from tkperf.store.fileformat import MAX_FILE_BYTES, refuse_doctype, refuse_doctype_tree, safe_parser
from tkperf.untrusted import for_xml

ROOT_TAG = "tkperf-capture"
#: 1: steps indexed from 0; 2: steps numbered from 1, what the application
#: saw (:class:`Seen`); 3: the file ends with its closing record
#: (:mod:`tkperf.store.seal`), so a cut one is refused.
VERSION = 3
#: What ``show`` says of a capture of a version that records no completeness.
UNVERIFIED = ("written as capture version {version}, which records no completeness: "
              "a capture cut short cannot be told from a whole one")
ACCESS = ("random", "sequential")
RW = ("read", "write")
SOURCES = ("tracefs", "blktrace", "import")
#: What may stop a capture early.
STOPPED_BY = ("SIGINT", "SIGTERM", "SIGHUP")
_SHORT = {"random": "RND", "sequential": "SEQ"}
_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def size_text(n: int) -> str:
    """A transfer size in the largest binary unit that divides it: 4KiB, 1MiB, 1536B."""
    for unit, name in _UNITS:
        if n >= unit and n % unit == 0:
            return f"{n // unit}{name}"
    return f"{n}B"


@dataclass(frozen=True)
class Stream:
    """One IO stream: access, direction and transfer size, with its count and shares."""

    access: str        # "random" | "sequential"
    rw: str            # "read" | "write"
    bs: int            # transfer size in bytes
    ios: int           # I/O count
    share: float       # share of the I/Os, 0..1
    byte_share: float  # share of the bytes, 0..1
    #: Flushes this write stream issued (those that followed one of its writes,
    #: :mod:`tkperf.rwsw.steps`); None: not recorded (a read stream, a file
    #: written before tkperf kept them).
    flushes: Optional[int] = None

    @property
    def key(self) -> str:
        """``RND 4KiB read``, ``SEQ 64KiB write``."""
        return f"{_SHORT[self.access]} {size_text(self.bs)} {self.rw}"


@dataclass(frozen=True)
class Latency:
    """Response times of the I/Os whose completion was seen: issue to
    completion at the block layer, microseconds (tkperf.rwsw.latency)."""

    ios: int           # I/Os timed
    mean_us: float
    p99_us: float
    max_us: float


@dataclass(frozen=True)
class Seen:
    """What the application saw, beyond its streams (capture version 2).
    A latency is None when no I/O of that kind was timed."""

    lat: Optional[Latency]     # reads and writes together
    read: Optional[Latency]
    write: Optional[Latency]
    flushes: int       # requests asking the device to flush its write cache (a flush, or a write with preflush)
    fua: int           # writes with Force Unit Access
    discards: int      # discard (and secure erase) requests
    discard_bytes: int
    lost_events: Optional[int]  # trace events the kernel's ring buffer lost; None: not known (an import)
    #: Whether lost events fell in this step's time (or the whole capture's):
    #: its figures miss the I/Os whose events were lost, and the I/Os in
    #: flight at the loss have no response time (:data:`LOSS_NOTE`).  False in
    #: a file written before tkperf recorded it: there a step is touched when
    #: its own ``lost_events`` is above 0 (:attr:`Step.touched_by_loss`).
    loss_touched: bool = False


#: What the figures of a step touched by lost events are (show, report, replay verdicts).
LOSS_NOTE = ("events lost by the trace buffer fell in this time: its I/O count, queue depth and response "
             "times miss the I/Os whose events were lost (pairing restarted after the loss)")


def coverage(streams: Sequence[Stream], share: float = 0.8) -> Optional[Tuple[float, float]]:
    """The dominant streams' (:func:`dominant`) share of the I/Os and of the
    bytes, in percent, or None when there is no I/O."""
    chosen = _chosen(streams, share)
    if not chosen:
        return None
    return 100.0 * min(1.0, sum(s.share for s in chosen)), 100.0 * min(1.0, sum(s.byte_share for s in chosen))


class _Covered:
    """The coverage of a step's or a whole capture's streams."""

    streams: Tuple[Stream, ...]

    @property
    def coverage_ios_pct(self) -> Optional[float]:
        """The dominant streams' (80% of the I/Os) share of the I/Os (%), None without I/O."""
        c = coverage(self.streams)
        return None if c is None else c[0]

    @property
    def coverage_bytes_pct(self) -> Optional[float]:
        """The dominant streams' (80% of the I/Os) share of the bytes (%), None without I/O:
        far below the I/O share when the large transfers are in the streams left out."""
        c = coverage(self.streams)
        return None if c is None else c[1]


@dataclass(frozen=True)
class Step(_Covered):
    """One time step of a capture."""

    index: int         # 0-based (shown as :attr:`number`, from 1)
    start: float       # seconds from the capture's start
    duration: float    # seconds
    streams: Tuple[Stream, ...]   # largest share first
    qd: float          # mean outstanding I/Os over the step
    iops: float
    mbps: float        # MB/s, 10**6 bytes
    seen: Optional[Seen] = None   # None: not recorded (a version 1 capture)

    @property
    def number(self) -> int:
        """The step's number as users see it, from 1."""
        return self.index + 1

    @property
    def touched_by_loss(self) -> Optional[bool]:
        """Whether the step's figures miss events the trace lost (:data:`LOSS_NOTE`):
        lost events fell in its time; None where not recorded (a version 1 capture).
        A replay verdict that compares this step's figures must say so or leave it out."""
        if self.seen is None:
            return None
        return self.seen.loss_touched or bool(self.seen.lost_events)


@dataclass(frozen=True)
class Capture(_Covered):
    """A whole capture: its facts, steps and streams."""

    name: str
    device: str        # the captured device as given (informative text, untrusted on read)
    size: int          # its size in bytes (replay maps addresses onto the target's range)
    source: str        # "tracefs" | "blktrace" | "import"
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
    #: What reading the file found about its completeness (never written): ""
    #: for a whole file whose closing record checked; else one line.
    integrity: str = field(default="", compare=False)

    @property
    def steps_touched_by_loss(self) -> Tuple[int, ...]:
        """The numbers (from 1) of the steps whose figures miss lost events (:attr:`Step.touched_by_loss`)."""
        return tuple(st.number for st in self.steps if st.touched_by_loss)


def _chosen(streams: Sequence[Stream], share: float) -> List[Stream]:
    ordered = sorted(streams, key=lambda s: (-s.share, s.key))
    chosen: List[Stream] = []
    total = 0.0
    for s in ordered:
        if total >= share - 1e-9 and chosen:
            break
        chosen.append(s)
        total += s.share
    return chosen if total > 0 else []


def dominant(streams: Sequence[Stream], share: float = 0.8) -> Tuple[Stream, ...]:
    """The fewest largest streams whose shares add up to at least ``share``,
    re-normalised so that their shares (and byte shares) sum to 1."""
    chosen = _chosen(streams, share)
    if not chosen:
        return ()
    total = sum(s.share for s in chosen)
    byte_total = sum(s.byte_share for s in chosen)
    return tuple(replace(s, share=s.share / total,
                         byte_share=(s.byte_share / byte_total) if byte_total > 0 else 0.0) for s in chosen)


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


def to_element(capture: Capture) -> etree._Element:
    c = capture
    root = etree.Element(ROOT_TAG, version=str(VERSION), name=for_xml(c.name), device=for_xml(c.device),
                         size=str(c.size), source=c.source, started=for_xml(c.started),
                         duration=_num(c.duration), step=_num(c.step), qd=_num(c.qd), iops=_num(c.iops),
                         mbps=_num(c.mbps))
    if c.iolog is not None:
        root.set("iolog", for_xml(c.iolog))
    if c.stopped_at is not None:
        root.set("stopped-early-at", _num(c.stopped_at))
        root.set("stopped-by", for_xml(c.stopped_by or "signal"))
    _seen_el(root, c.seen)
    total = etree.SubElement(root, "streams")
    for s in c.streams:
        _stream_el(total, s)
    steps = etree.SubElement(root, "steps")
    for st in c.steps:
        el = etree.SubElement(steps, "step", number=str(st.number), start=_num(st.start),
                              duration=_num(st.duration), qd=_num(st.qd), iops=_num(st.iops), mbps=_num(st.mbps))
        _seen_el(el, st.seen)
        for s in st.streams:
            _stream_el(el, s)
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

class _Reader:
    """Attribute readers that name the element and attribute of a bad value."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, el: etree._Element, attr: str, why: str) -> ResultFileError:
        return ResultFileError(f"{self.source}: <{el.tag}> {attr}: {why}")

    def text(self, el: etree._Element, attr: str) -> str:
        v = el.get(attr)
        if v is None:
            raise self.fail(el, attr, "missing")
        return v

    def number(self, el: etree._Element, attr: str, top: float = math.inf) -> float:
        raw = self.text(el, attr)
        try:
            v = float(raw)
        except ValueError:
            raise self.fail(el, attr, f"not a number ({raw[:40]!r})") from None
        if not math.isfinite(v) or v < 0 or v > top:
            raise self.fail(el, attr, f"{raw[:40]!r} is not a finite number in 0..{top:g}")
        return v

    def integer(self, el: etree._Element, attr: str, low: int = 0) -> int:
        raw = self.text(el, attr)
        try:
            v = int(raw)
        except ValueError:
            raise self.fail(el, attr, f"not a whole number ({raw[:40]!r})") from None
        if v < low:
            raise self.fail(el, attr, f"{v} is below {low}")
        return v

    def choice(self, el: etree._Element, attr: str, allowed: Sequence[str]) -> str:
        v = self.text(el, attr)
        if v not in allowed:
            raise self.fail(el, attr, f"{v[:40]!r} is not one of {', '.join(allowed)}")
        return v

    def stream(self, el: etree._Element) -> Stream:
        return Stream(access=self.choice(el, "access", ACCESS), rw=self.choice(el, "rw", RW),
                      bs=self.integer(el, "bs", 1), ios=self.integer(el, "ios"),
                      share=self.number(el, "share", 1.0), byte_share=self.number(el, "byte-share", 1.0),
                      flushes=None if el.get("flushes") is None else self.integer(el, "flushes"))

    def streams(self, el: Optional[etree._Element]) -> Tuple[Stream, ...]:
        if el is None:
            return ()
        out = tuple(self.stream(s) for s in el.iterfind("stream"))
        if any(x.tag not in ("stream", "seen") for x in el if isinstance(x.tag, str)):
            raise ResultFileError(f"{self.source}: <{el.tag}> holds an element other than <stream>")
        return out

    def latency(self, el: etree._Element) -> Latency:
        lat = Latency(ios=self.integer(el, "ios", 1), mean_us=self.number(el, "mean-us"),
                      p99_us=self.number(el, "p99-us"), max_us=self.number(el, "max-us"))
        if lat.mean_us > lat.max_us * (1 + 1e-9) or lat.p99_us > lat.max_us * (1 + 1e-9):
            raise self.fail(el, "max-us", "below the mean or the 99th percentile")
        return lat

    def seen(self, parent: etree._Element, version: int) -> Optional[Seen]:
        """The figures of ``<seen>`` under ``parent``; None (not recorded) for a
        version 1 file, which has none, or where the writer had none."""
        els = parent.findall("seen")
        if version < 2 or not els:
            return None
        if len(els) != 1:
            raise ResultFileError(f"{self.source}: <{parent.tag}> holds {len(els)} <seen>, not one")
        el = els[0]
        lats = {}
        for x in el:
            if not isinstance(x.tag, str):
                continue
            rw = self.choice(x, "rw", ("all", "read", "write")) if x.tag == "latency" else None
            if rw is None or rw in lats:
                raise ResultFileError(f"{self.source}: <seen> holds <{x.tag}> twice or unknown")
            lats[rw] = self.latency(x)
        lost = None if el.get("lost-events") is None else self.integer(el, "lost-events")
        touched = el.get("touched-by-loss") is not None and self.choice(el, "touched-by-loss", ("0", "1")) == "1"
        return Seen(lat=lats.get("all"), read=lats.get("read"), write=lats.get("write"),
                    flushes=self.integer(el, "flushes"), fua=self.integer(el, "fua"),
                    discards=self.integer(el, "discards"), discard_bytes=self.integer(el, "discard-bytes"),
                    lost_events=lost, loss_touched=touched)


def _iolog_name(r: _Reader, root: etree._Element) -> Optional[str]:
    name = root.get("iolog")
    if name is None:
        return None
    if (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name
            or name != os.path.basename(name) or any(ord(ch) < 32 for ch in name)):
        raise r.fail(root, "iolog", "not a plain file name beside the capture")
    return name


def loads(data: bytes, source: str = "<data>") -> Capture:
    """The capture in ``data``; every failure is a ResultFileError naming ``source``."""
    if not data.strip():
        raise ResultFileError(f"{source}: empty file, not a tkperf capture")
    refuse_doctype(data, source)
    integrity = ""
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
    r = _Reader(source)
    version = r.integer(root, "version", 1)
    if version > VERSION:
        raise ResultFileError(f"{source}: capture version {version} is newer than this tkperf reads "
                              f"({VERSION}); upgrade tkperf")
    if version < 3:
        integrity = UNVERIFIED.format(version=version)
    steps: List[Step] = []
    steps_el = root.find("steps")
    for el in (steps_el.iterfind("step") if steps_el is not None else ()):
        # version 1 counted its steps from 0 (index), version 2 from 1 (number)
        index = r.integer(el, "index") if version < 2 else r.integer(el, "number", 1) - 1
        steps.append(Step(index=index, start=r.number(el, "start"),
                          duration=r.number(el, "duration"), streams=r.streams(el), qd=r.number(el, "qd"),
                          iops=r.number(el, "iops"), mbps=r.number(el, "mbps"), seen=r.seen(el, version)))
    if [s.index for s in steps] != list(range(len(steps))):
        raise ResultFileError(f"{source}: <step> {'indexes are not 0' if version < 2 else 'numbers are not 1'}, "
                              f"{'1, 2' if version < 2 else '2, 3'}, ... in order")
    step_len = r.number(root, "step")
    if step_len <= 0:
        raise r.fail(root, "step", "must be above 0")
    duration = r.number(root, "duration")
    stopped_at = None if root.get("stopped-early-at") is None else r.number(root, "stopped-early-at", duration)
    stopped_by = None if stopped_at is None else r.choice(root, "stopped-by", STOPPED_BY)
    return Capture(name=r.text(root, "name"), device=r.text(root, "device"), size=r.integer(root, "size"),
                   source=r.choice(root, "source", SOURCES), started=r.text(root, "started"),
                   duration=duration, step=step_len, steps=tuple(steps),
                   streams=r.streams(root.find("streams")), qd=r.number(root, "qd"), iops=r.number(root, "iops"),
                   mbps=r.number(root, "mbps"), iolog=_iolog_name(r, root), seen=r.seen(root, version),
                   stopped_at=stopped_at, stopped_by=stopped_by, integrity=integrity)


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
