"""The response-time capture after a test (LAT, WSAT): RND 4KiB 100% W at
TC1/QD1, in its own fio process right after the test's rounds or stream,
from which the test's response-time histogram and confidence plot come.

The PTS 2.0 text is not at hand; the capture follows the PTS 2.0
implementation Alan-ADATA/SSS-PTS-TEST, which runs a 20-minute one after
LAT's and after WSAT's steady state (test/lib/BlockStorageTestLatency.php,
test/lib/BlockStorageTestWsat.php); ``docs/method.rst`` says so.  Each test
has its own option (``--lat-capture``, ``--wsat-capture``) and its own
stored form; what they share is here: the default, the job, how the option
is read and how a departure from the implementation's capture is worded.
"""
from __future__ import annotations

from typing import List, Optional

from tkperf.durations import duration
from tkperf.fio.jobs import FioJob
from tkperf.kit.options import parse_duration
from tkperf.kit.sections import ReportContext
from tkperf.model.results import Round, TestRun
from tkperf.report.qos import qos_blocks

#: The PTS 2.0 implementation's capture: 20 minutes.
CAPTURE_S = 20 * 60
#: The capture's workload: RND 4KiB 100% W at TC1/QD1.
CAPTURE_WORKLOAD = "capture-rnd-4k-0-100"


def parse_capture(text: str, flag: str) -> int:
    """``--lat-capture`` / ``--wsat-capture``: a duration, or 0 for no capture."""
    return 0 if (text or "").strip() in ("0", "0s", "0m", "none", "off") else parse_duration(text, flag)


def capture_job(seconds: int) -> FioJob:
    """The capture's fio job: RND 4KiB 100% W, one thread at queue depth 1, ``seconds`` long."""
    return FioJob(name=CAPTURE_WORKLOAD, rw="randwrite", bs=4096, runtime=seconds, numjobs=1, iodepth=1)


def capture_deviation(test: str, seconds: int, revision, after: str = "", without: str = "") -> List[str]:
    """The deviation of a capture of ``seconds`` (0: skipped) from the
    implementation's, under the PTS 2.0 revisions only (the 1.1 revisions
    have no such implementation): ``test`` the test's short name, ``after``
    what the capture follows (words), ``without`` what a skipped one costs."""
    if revision is None or not revision.id.endswith("-2.0") or seconds == CAPTURE_S:
        return []
    return [f"{test} response-time capture {'skipped' if not seconds else duration(seconds, rough=True)} "
            f"instead of the PTS 2.0 implementation's 20-minute RND 4k 100% W TC1/QD1 capture{after} "
            "(Alan-ADATA/SSS-PTS-TEST)" + (f"; {without}" if without and not seconds else "")]


def stored_seconds(options, key: str, value: Optional[int]) -> int:
    """The capture a stored run asked for: ``value`` when the options hold
    ``key``; a file from before the capture stored none (and ran none,
    which the test's result deviations say): the default, no deviation."""
    return int(value or 0) if key in options else CAPTURE_S


def capture_qos_blocks(ctx: ReportContext, test: TestRun, capture: Round, source: str, after: str, tail: str,
                       level: int = 2) -> list:
    """The response-time histogram and confidence ("nines") plots of a
    test's ``capture`` round, drawn as every tkperf histogram is, with where
    they come from said first: the capture's length and ``source`` (what it
    is), ``after`` (when it ran), the implementation and the Primer's
    sections it follows, then ``tail`` (what the test's other figures are)."""
    seconds = test.params.get("capture_s", "")
    length = duration(float(seconds), rough=True) if seconds.isdigit() else "the"
    return qos_blocks(ctx, test, f"the {length} capture", level=level, rounds=[capture], source=(
        f"The histogram and confidence plots come from the {length} {source}, {after}; the PTS 2.0 text is not "
        "at hand and tkperf follows that implementation (SNIA SSSI, 'SSD Performance - A Primer', 2013, "
        f"'Response Time (RT) Histograms' and 'Confidence Plots', shows the plots).  {tail}"))
