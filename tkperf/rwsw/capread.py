"""Reading a capture file's elements into its figures (:mod:`tkperf.rwsw.figures`),
for :func:`tkperf.rwsw.model.loads`.

A capture file is untrusted input: every number must be finite and in its
range, every share at most 1, the steps numbered 1, 2, 3 ... (version 1:
``index`` 0, 1, 2 ...); otherwise one line names the element and the
attribute (:class:`~tkperf.errors.ResultFileError`, exit 7).  Text (a
device's name, a host, a source's file name) is kept as text, never markup.
"""
from __future__ import annotations

import math
import os
from typing import List, Optional, Sequence, Tuple

from lxml import etree

from tkperf.errors import ResultFileError
from tkperf.rwsw.figures import ACCESS, COMBINED, RW, Device, Latency, Seen, Source, Step, Stream

#: The most devices a capture holds (a request's kind keeps its device's index in 3 bits, tkperf.rwsw.trace).
MAX_DEVICES = 8


class Reader:
    """Attribute and element readers that name the element and attribute of a bad value."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, el: etree._Element, attr: str, why: str) -> ResultFileError:
        return ResultFileError(f"{self.source}: <{el.tag}> {attr}: {why}")

    def text(self, el: etree._Element, attr: str) -> str:
        v = el.get(attr)
        if v is None:
            raise self.fail(el, attr, "missing")
        return v

    def optional_text(self, el: etree._Element, attr: str) -> Optional[str]:
        return el.get(attr)

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

    def steps(self, parent: etree._Element, version: int) -> Tuple[Step, ...]:
        """The ``<steps>`` under ``parent``, numbered 1, 2, 3 ... in order (version 1: indexed 0, 1, 2 ...)."""
        out: List[Step] = []
        steps_el = parent.find("steps")
        for el in (steps_el.iterfind("step") if steps_el is not None else ()):
            # version 1 counted its steps from 0 (index), version 2 on from 1 (number)
            index = self.integer(el, "index") if version < 2 else self.integer(el, "number", 1) - 1
            out.append(Step(index=index, start=self.number(el, "start"), duration=self.number(el, "duration"),
                            streams=self.streams(el), qd=self.number(el, "qd"), iops=self.number(el, "iops"),
                            mbps=self.number(el, "mbps"), seen=self.seen(el, version)))
        if [s.index for s in out] != list(range(len(out))):
            raise ResultFileError(f"{self.source}: <step> {'indexes are not 0' if version < 2 else 'numbers are not 1'}"
                                  f", {'1, 2' if version < 2 else '2, 3'}, ... in order")
        return tuple(out)

    def device(self, el: etree._Element, version: int) -> Device:
        return Device(name=self.text(el, "name"), size=self.integer(el, "size"), offset=self.integer(el, "offset"),
                      streams=self.streams(el.find("streams")), steps=self.steps(el, version),
                      qd=self.number(el, "qd"), iops=self.number(el, "iops"), mbps=self.number(el, "mbps"),
                      seen=self.seen(el, version), host=self.optional_text(el, "host"))

    def devices(self, root: etree._Element, version: int, steps: int, size: int) -> Tuple[Device, ...]:
        """The devices of a capture of several (version 4); () for one of one
        device.  Each has the capture's steps, and their address ranges in the
        iolog follow one another within the capture's size."""
        el = root.find("devices")
        if el is None:
            return ()
        out = tuple(self.device(d, version) for d in el.iterfind("device"))
        if not 2 <= len(out) <= MAX_DEVICES:
            raise ResultFileError(f"{self.source}: <devices> holds {len(out)} <device>, not 2 to {MAX_DEVICES}")
        end = 0
        for d in out:
            if len(d.steps) != steps:
                raise ResultFileError(f"{self.source}: <device> {d.name[:40]!r} has {len(d.steps)} steps, "
                                      f"the capture {steps}")
            if d.offset < end:
                raise ResultFileError(f"{self.source}: <device> {d.name[:40]!r}: offset {d.offset} lies within "
                                      "the device before it")
            end = d.offset + d.size
        if end > size:
            raise ResultFileError(f"{self.source}: <devices> end at byte {end}, beyond the capture's size {size}")
        return out

    def sources(self, root: etree._Element) -> Tuple[Optional[str], Tuple[Source, ...]]:
        """How a combined capture was combined and the captures it was made of; (None, ()) for any other."""
        el = root.find("sources")
        if el is None:
            return None, ()
        how = self.choice(el, "combined", COMBINED)
        out = tuple(Source(file=self.text(s, "file"), name=self.text(s, "name"), host=self.optional_text(s, "host"),
                           devices=self.text(s, "devices"), started=self.text(s, "started"),
                           duration=self.number(s, "duration"), at=self.number(s, "at"))
                    for s in el.iterfind("source"))
        if len(out) < 2:
            raise ResultFileError(f"{self.source}: <sources> holds {len(out)} <source>, not 2 or more")
        return how, out

    def iolog_name(self, root: etree._Element) -> Optional[str]:
        """The iolog's file name: a plain name beside the capture, or None."""
        name = root.get("iolog")
        if name is None:
            return None
        if (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name
                or name != os.path.basename(name) or any(ord(ch) < 32 for ch in name)):
            raise self.fail(root, "iolog", "not a plain file name beside the capture")
        return name
