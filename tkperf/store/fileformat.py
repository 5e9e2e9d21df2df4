"""The result file's format: its version, its XML Schema and a safe parser.

Format versions (the ``format`` attribute of the root element):

* 1 -- first format: host, device, options, description, events, and per
  test (``name`` = its type) its purge, WIPC, rounds with every workload's
  figures and the steady-state verdict; a WSAT interval was a round.
* 2 -- a test's type is its ``type`` attribute (any test type, plug-ins'
  too); a test may declare series (``<series id name columns/>``) whose
  rows -- one per interval -- follow the root element's end tag as
  ``<?tkperf-row ID INDEX VALUE...?>`` lines, appended as they come
  (:class:`tkperf.store.xml_write.ResultWriter`); a test type's own data is an optional ``<data>``
  of ``<item name value/>``.
* 3 -- the file records its own completeness: every full save ends with a
  closing record ``<?tkperf-seal BYTES sha256:HEX?>`` over all bytes before
  it (:mod:`tkperf.store.seal`), and every row appended after it carries its
  own CRC-32 (``... cXXXXXXXX?>``).  A file cut anywhere before the record's
  end is refused, whatever the XML parser forgives; one cut among the
  appended rows reads as the rows before the cut, and says so.  The
  document itself is as in format 2.

A change to the file's structure raises FORMAT_VERSION, adds a line here
and an upgrade step in :mod:`tkperf.store.legacy.format1`.
"""
from __future__ import annotations

import io
import os
from typing import Any, Dict, Iterator, Optional, Tuple

from lxml import etree

from tkperf.errors import ResultFileError

FORMAT_VERSION = 3
MAX_FILE_BYTES = 1 << 30
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "tkperf-result.xsd")

_schemas: Dict[str, etree.XMLSchema] = {}


def schema(path: Optional[str] = None) -> etree.XMLSchema:
    """The XML Schema of the current format (or the one at ``path``), parsed once."""
    path = path or SCHEMA_PATH
    sch = _schemas.get(path)
    if sch is None:
        sch = _schemas[path] = etree.XMLSchema(etree.parse(path, safe_parser()))
    return sch


#: How every XML document from elsewhere is parsed (result files of every
#: format, the original TKperf's files, imports): entities are never
#: substituted, no DTD is loaded, nothing is fetched.  ``huge_tree`` stays on
#: for large WSAT files; with every DTD refused (:func:`refuse_doctype`) no
#: entity can be declared, so nothing can expand.
PARSER_OPTIONS: Dict[str, Any] = dict(resolve_entities=False, no_network=True, load_dtd=False,
                                      dtd_validation=False, huge_tree=True)
DOCTYPE_REFUSED = "has a DOCTYPE; tkperf result files never do, refusing it"


def safe_parser(**extra: Any) -> etree.XMLParser:
    """The parser for a whole document (:data:`PARSER_OPTIONS`; ``extra``
    adds options such as ``remove_comments``)."""
    return etree.XMLParser(**{**PARSER_OPTIONS, "remove_blank_text": True, **extra})


def safe_iterparse(data: bytes, events: Tuple[str, ...], **extra: Any) -> Iterator[Tuple[str, Any]]:
    """:func:`lxml.etree.iterparse` over ``data`` with :data:`PARSER_OPTIONS`."""
    return iter(etree.iterparse(io.BytesIO(data), events=events, **{**PARSER_OPTIONS, **extra}))


class _Found(Exception):
    """The prologue probe met a DOCTYPE (True) or the root element (False)."""


class _Prologue:
    """A parser target that stops at a DOCTYPE or at the root element."""

    def doctype(self, *_args: Any) -> None:
        raise _Found(True)

    def start(self, *_args: Any) -> None:
        raise _Found(False)

    def end(self, *_args: Any) -> None:
        """Nothing ends before the root starts."""

    def data(self, *_args: Any) -> None:
        """Text before the root is whitespace; nothing to keep."""

    def comment(self, *_args: Any) -> None:
        """A comment before the root: read on."""

    def pi(self, *_args: Any) -> None:
        """A processing instruction before the root: read on."""

    def close(self) -> None:
        """The probe keeps nothing."""


_PROBE_CHUNK = 1 << 16


def has_doctype(data: bytes) -> bool:
    """Whether the parser meets a DOCTYPE before the root element of ``data``:
    wherever it stands (behind comments or processing instructions) and in
    whatever encoding (UTF-16 with or without a byte order mark, an encoding
    declaration), since the parser tells, not a look at the bytes.  A
    document that is not XML has none here (its parse then says what is wrong)."""
    parser = etree.XMLParser(target=_Prologue(), **{**PARSER_OPTIONS, "huge_tree": False})
    try:
        for pos in range(0, len(data), _PROBE_CHUNK):
            parser.feed(data[pos:pos + _PROBE_CHUNK])
        parser.close()
    except _Found as found:
        return bool(found.args[0])
    except etree.XMLSyntaxError:
        return False
    return False


def refuse_doctype(data: bytes, source: str) -> None:
    """A ResultFileError when ``data`` has a DOCTYPE (:func:`has_doctype`)."""
    if has_doctype(data):
        raise ResultFileError(f"{source}: {DOCTYPE_REFUSED}")


def refuse_doctype_tree(el: Any, source: str) -> None:
    """A ResultFileError when the parsed document ``el`` is in has a DTD (its
    ``docinfo``): the second look, after the parse, for every reader."""
    info = el.getroottree().docinfo
    if (info.doctype or info.internalDTD is not None or info.externalDTD is not None
            or info.system_url or info.public_id):
        raise ResultFileError(f"{source}: {DOCTYPE_REFUSED}")
