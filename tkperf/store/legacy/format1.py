"""Reading result files of older formats into the current model.

Format 1 (tkperf 0.x) differs from format 2 in three ways, undone here:

* a test's type was its ``name`` attribute (now ``type``);
* a Write Saturation test kept every interval as a ``<round>`` with one
  workload.  Such rounds become the test's series ``intervals`` (columns
  ``wall_s fio_s ios io_bytes iops lat_mean_us``: the round's times and its
  workload's write figures), exactly as the file says them -- no rounding,
  so reports print the same -- and the test keeps no rounds.  Its
  steady-state record stays as it was;
* its ``lat-*`` figures are fio's completion latency (clat), not the
  response time (fio's total latency) format 2 keeps there.  There is no
  other value, so they stay in ``lat_*`` and are copied to ``clat_*`` too,
  and the upgraded run gets one note event saying so.

The file is checked against the format-1 schema while it streams in, as a
current one is; the rounds of a WSAT test go straight into the series, so a
day of 1-second intervals is not held as objects.  Saving an upgraded run
writes the current format.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Optional

from lxml import etree

from tkperf.errors import ResultFileError
from tkperf.model.results import Event, IoStats, Round, RunResult, TestRun
from tkperf.model.series import Series
from tkperf.store.fileformat import SCHEMA_PATH, schema
from tkperf.store.xml_read import parse_document

SCHEMA_1_PATH = os.path.join(os.path.dirname(SCHEMA_PATH), "tkperf-result-1.xsd")

#: The series a format-1 WSAT test's rounds become, and its columns.
WSAT_TYPE = "wsat"
WSAT_SERIES = "intervals"
WSAT_COLUMNS = ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us")


#: The note an upgraded format-1 run carries about its latency figures.
COMPLETION_LATENCY_NOTE = (
    "This file came from tkperf result format 1, which recorded completion latency "
    "(fio clat), not response time (fio's total latency, submission to completion): "
    "the latency figures of this run are completion latency.")


def _clat_from_lat(s: IoStats) -> IoStats:
    """A format-1 direction: its ``lat_*`` figures were completion latency."""
    return dataclasses.replace(s, clat_mean_us=s.lat_mean_us, clat_min_us=s.lat_min_us,
                               clat_max_us=s.lat_max_us, clat_stddev_us=s.lat_stddev_us)


def _upgrade_round(rnd: Round) -> Round:
    """A format-1 round with its completion latency in ``clat_*`` as well."""
    workloads = tuple(dataclasses.replace(w, read=_clat_from_lat(w.read), write=_clat_from_lat(w.write))
                      for w in rnd.workloads)
    return dataclasses.replace(rnd, workloads=workloads)


class _WsatIntervals:
    """Takes the rounds of format-1 WSAT tests into a series, one row each."""

    def __init__(self) -> None:
        self.series: Optional[Series] = None

    def take_round(self, test_el: etree._Element, rnd: Round) -> bool:
        if test_el is None or test_el.get("name") != WSAT_TYPE:
            return False
        if self.series is None:
            self.series = Series(WSAT_SERIES, WSAT_COLUMNS, digits=None)
        if len(rnd.workloads) != 1:
            raise ValueError(f"WSAT round {rnd.index} has {len(rnd.workloads)} workloads; "
                             "an interval has one")
        if rnd.index != len(self.series) + 1:
            raise ValueError(f"WSAT round {rnd.index} follows round {len(self.series)}; "
                             "intervals count up from 1")
        w = rnd.workloads[0].write
        self.series.append((rnd.wall_s, rnd.fio_s, w.ios, w.io_bytes, w.iops, w.lat_mean_us))
        return True

    def finish_test(self, test_el: etree._Element, test: TestRun) -> None:
        if self.series is not None:
            test.series[WSAT_SERIES] = self.series
        self.series = None


def _finish_test(wsat: _WsatIntervals, test_el: etree._Element, test: TestRun) -> None:
    """A format-1 test read: its WSAT intervals as a series, clat in its rounds."""
    wsat.finish_test(test_el, test)
    test.rounds = [_upgrade_round(r) for r in test.rounds]


def loads(data: bytes, source: str = "<data>", version: int = 1) -> RunResult:
    """Read a result file of format ``version`` (older than the current one)."""
    if version != 1:
        raise ResultFileError(f"{source}: unknown format version {version}")
    wsat = _WsatIntervals()
    run = parse_document(data, source, schema(SCHEMA_1_PATH), type_attr="name",
                               take_round=wsat.take_round,
                               finish_test=lambda el, t: _finish_test(wsat, el, t))
    run.events.insert(0, Event(time=run.started, kind="note", message=COMPLETION_LATENCY_NOTE))
    return run
