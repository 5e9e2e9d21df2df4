"""The result file's format: its version, its XML Schema and a safe parser.

Format versions (the ``format`` attribute of the root element):

* 1 -- first format: host, device, options, description, events, and per
  test (``name`` = its type) its purge, WIPC, rounds with every workload's
  figures and the steady-state verdict; a WSAT interval was a round.
* 2 -- a test's type is its ``type`` attribute (any test type, plug-ins'
  too); a test may declare series (``<series id name columns/>``) whose
  rows -- one per interval -- follow the root element's end tag as
  ``<?tkperf-row ID INDEX VALUE...?>`` lines, appended as they come
  (:class:`tkperf.model.xml_write.ResultWriter`); a test type's own data is an optional ``<data>``
  of ``<item name value/>``.

A change to the file's structure raises FORMAT_VERSION, adds a line here
and an upgrade step in :mod:`tkperf.legacy.format1`.
"""
from __future__ import annotations

import os
from typing import Dict, Optional

from lxml import etree

FORMAT_VERSION = 2
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


def safe_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=True,  # large WSAT files; entity expansion is off regardless
        remove_blank_text=True,
    )
