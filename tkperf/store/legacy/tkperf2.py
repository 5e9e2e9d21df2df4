"""Result files of the original TKperf (thomas-krenn/TKperf, 1.x and 2.x):
found by content, read safely, turned into tkperf's result model.

The format, as TKperf's source writes it (docs/tkperf2.rst has the whole
account and how each part maps onto tkperf's model):

* one XML document per run, without declaration or DOCTYPE; the root
  element is named after the run (``tkperf ssd intel320 ...`` writes
  ``<intel320>``);
* every element's text is JSON (``json.dumps``): ``testdate``, ``devinfo``
  (the device as ``hdparm -I``, ``sginfo``/``sg_readcap``, ``nvme id-ctrl``,
  ``udevadm`` or a description file gave it), ``featmatrix`` (optional),
  ``kernel``, ``lsb``, ``ioperfversion``, ``cmdline``;
* one element per test: ``iops``, ``lat``, ``tp``, ``writesat`` (SSD and
  RAID mode) or ``iops``, ``tp`` (HDD mode, other shapes), each holding
  ``fioversion``, ``numjobs``, ``iodepth``, ``runtime`` (2.x), ``xargs``,
  ``roundmat`` and, for the steady-state tests, ``stdyrounds``,
  ``stdyvalues``, ``stdyslope``, ``stdyavg``, ``reachstdystate`` and
  ``rndnr``.

Files of TKperf 1.x differ: no ``runtime`` (fixed at 60 s), early ones no
``fioversion``, ``reachStdyState`` spelt in camel case, LAT's ``numjobs``
and ``iodepth`` holding the user's values though fio ran it at 1/1, and a
``featmatrix`` but no ``kernel``, ``lsb`` or ``cmdline`` in 1.0.  Files of
other major versions are refused.

Parsing is as careful as for tkperf's own files: a DOCTYPE is refused
wherever it stands and in any encoding (the parser reports it:
:func:`tkperf.store.fileformat.refuse_doctype`), entities are never expanded, nothing is fetched; JSON that does
not parse, nests absurdly, holds NaN or Infinity, or has the wrong shape
is refused with one line naming the element.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from lxml import etree

from tkperf.errors import ResultFileError
from tkperf.store.fileformat import MAX_FILE_BYTES, refuse_doctype, refuse_doctype_tree, safe_parser
from tkperf.untrusted import replace_controls

#: Elements of the root that describe the run (not tests).  ``featmat`` is
#: accepted as a spelling of ``featmatrix``.
RUN_ELEMENTS = ("testdate", "devinfo", "featmatrix", "featmat", "kernel", "lsb", "ioperfversion",
                "cmdline")
#: Test elements, in the order TKperf lists them.
TEST_ELEMENTS = ("iops", "lat", "tp", "writesat")
#: Byte strings one of which every TKperf result file holds.
MARKERS = (b"<ioperfversion>", b"<devinfo>", b"<roundmat>")
#: Major versions whose files this module reads.
MAJORS = (1, 2)
MODES = ("ssd", "hdd", "raid")
_ROOT_RE = re.compile(rb"<([A-Za-z_][\w.\-]*)")


@dataclass
class OldTest:
    """One test element: its children's JSON values and their text as written."""

    tag: str
    values: Dict[str, object] = field(default_factory=dict)
    texts: Dict[str, str] = field(default_factory=dict)

    def where(self, name: str = "") -> str:
        return f"<{self.tag}>" + (f"/<{name}>" if name else "")


@dataclass
class OldFile:
    """An original TKperf result file, parsed and checked for JSON, not yet for shapes."""

    name: str
    version: str
    mode: str
    run: Dict[str, object]
    tests: Dict[str, OldTest]
    ignored: List[str]
    #: Where control characters were replaced by U+FFFD (``<devinfo>`` ...).
    replaced: List[str] = field(default_factory=list)

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0]) if self.version else 1


def detect(data: bytes) -> bool:
    """Whether ``data`` looks like an original TKperf file: its root element
    is not ``<tkperf>`` and it holds an element only TKperf writes.  A file
    with a DOCTYPE is left to tkperf's own check, which refuses it."""
    m = _ROOT_RE.search(data)
    if m is None or b"<!DOCTYPE" in data[: m.start()]:
        return False
    if m.group(1) == b"tkperf" and re.match(rb"<tkperf[^>]*\sformat\s*=", data[m.start():m.start() + 4096]):
        return False  # tkperf's own (a TKperf run named "tkperf" has no format attribute)
    return any(marker in data for marker in MARKERS)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number TKperf writes")


def parse_json(text: str, where: str, source: str) -> object:
    """One element's JSON text; a ResultFileError naming the element when it is not JSON."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ResultFileError(f"{source}: {where} nests too deeply to be TKperf's JSON") from None
    except ValueError as exc:
        raise ResultFileError(f"{source}: {where} is not JSON ({exc})") from None


def _children(el: etree._Element, where: str, source: str) -> Dict[str, etree._Element]:
    """An element's children by tag; two of one name, or text among them, is refused."""
    out: Dict[str, etree._Element] = {}
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag in out:
            raise ResultFileError(f"{source}: {where} has two <{child.tag}> elements")
        out[child.tag] = child
    return out


def _value(el: etree._Element, where: str, source: str) -> Optional[object]:
    """An element's JSON value; None for an empty element (TKperf read those as absent)."""
    if len(el):
        raise ResultFileError(f"{source}: {where} holds elements; TKperf writes JSON text there")
    text = (el.text or "").strip()
    return parse_json(text, where, source) if text else None


def _test(el: etree._Element, source: str) -> OldTest:
    t = OldTest(el.tag)
    for name, child in _children(el, t.where(), source).items():
        value = _value(child, t.where(name), source)
        if value is not None:
            t.values[name] = value
            t.texts[name] = (child.text or "").strip()
    return t


def _version(value: object, source: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)?", value.strip()):
        raise ResultFileError(f"{source}: <ioperfversion> {value!r} is not a TKperf version")
    version = value.strip()
    if int(version.split(".")[0]) not in MAJORS:
        raise ResultFileError(f"{source}: written by TKperf {version}; this tkperf reads files of "
                              f"TKperf {' and '.join(f'{m}.x' for m in MAJORS)}")
    return version


def cmdline_words(run: Dict[str, object]) -> List[str]:
    """The recorded command line as words (empty when none was recorded)."""
    cmd = run.get("cmdline")
    return cmd.split() if isinstance(cmd, str) else []


def _mode(run: Dict[str, object], tests: Dict[str, OldTest], source: str) -> str:
    """ssd, hdd or raid: from the command line, else from what the tests hold."""
    words = cmdline_words(run)
    for w in words[1:2]:
        if w in MODES:
            return w
    if "lat" in tests or "writesat" in tests:
        return "ssd"
    if any("stdyrounds" in t.values or "stdyvalues" in t.values for t in tests.values()):
        return "ssd"
    mat = tests["iops"].values.get("roundmat") if "iops" in tests else None
    if isinstance(mat, list) and mat and isinstance(mat[0], list) and len(mat[0]) == 3:
        return "hdd"  # TKperf's HDD IOPS: 3 R/W mixes per round, the SSD one 7
    tp = tests["tp"].values.get("roundmat") if "tp" in tests else None
    if isinstance(tp, list) and len(tp) == 2:
        return "hdd"  # HDD TP: 1024k and 4k, without steady state
    return "ssd"


def parse(data: bytes, source: str = "<data>") -> OldFile:
    """Parse an original TKperf file: XML, every element's JSON, version and mode."""
    if len(data) > MAX_FILE_BYTES:
        raise ResultFileError(f"{source}: {len(data)} bytes, larger than the {MAX_FILE_BYTES} byte limit")
    refuse_doctype(data, source)
    try:
        root = etree.fromstring(data, safe_parser(remove_blank_text=False, remove_comments=True, remove_pis=True))
    except etree.XMLSyntaxError as exc:
        raise ResultFileError(f"{source}: not valid XML (truncated or corrupt?): {exc.msg or exc}") from None
    refuse_doctype_tree(root, source)
    if root.tag == "tkperf" and root.get("format") is not None:
        raise ResultFileError(f"{source}: a tkperf result file, not one of the original TKperf")
    run: Dict[str, object] = {}
    tests: Dict[str, OldTest] = {}
    ignored: List[str] = []
    for tag, child in _children(root, f"<{root.tag}>", source).items():
        if tag in TEST_ELEMENTS:
            tests[tag] = _test(child, source)
        elif tag in RUN_ELEMENTS:
            value = _value(child, f"<{tag}>", source)
            if value is not None:
                run["featmatrix" if tag == "featmat" else tag] = value
        else:
            ignored.append(f"<{tag}> (an element this tkperf does not know)")
    if not tests:
        raise ResultFileError(f"{source}: an original TKperf file without any test "
                              f"({', '.join(TEST_ELEMENTS)}) in it")
    version = _version(run.get("ioperfversion"), source)
    replaced: List[str] = []
    for name in ("testdate", "devinfo", "featmatrix", "kernel", "lsb", "cmdline"):
        if name in run and not isinstance(run[name], str):
            raise ResultFileError(f"{source}: <{name}> is not a JSON string")
        if name in run:  # JSON's \u001b escapes can carry what XML could not
            run[name], n = replace_controls(str(run[name]))
            if n:
                replaced.append(f"<{name}> ({n})")
    return OldFile(name=root.tag, version=version, mode=_mode(run, tests, source), run=run, tests=tests,
                   ignored=ignored, replaced=replaced)

