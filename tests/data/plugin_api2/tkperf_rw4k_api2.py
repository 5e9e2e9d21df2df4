"""rw4k: a tkperf test type from outside tkperf.

4 KiB random I/O at one read/write mix (70/30 unless told otherwise) and
one fixed outstanding-I/O count (1 job, QD 16 unless told otherwise), in
rounds until its mixed IOPS are steady (the PTS 20/10 rule over the last
``--window`` rounds).  It is what a database-like load looks like at a
queue depth an application really reaches, which none of the PTS tests
measures on its own.

The whole test type is this one class.  tkperf finds it through the entry
point in pyproject.toml::

    [project.entry-points."tkperf.tests"]
    rw4k = "tkperf_rw4k:RandomRW4kTest"

and from then on ``--tests rw4k``, ``--rw4k-mix``, ``--rw4k-qd``, ``show``,
``report``, ``compare``, ``resume`` and ``--dry-run`` know it.  It uses
only tkperf's public interface, :mod:`tkperf.api` (API version 2): the
test-type interface, the ``Rounds`` loop shape, ``FioJob`` and a value
parser.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Dict, List

from tkperf import api
from tkperf.api import (
    MAX_IODEPTH,
    Figure,
    FioJob,
    Option,
    Options,
    Plan,
    Rounds,
    Steady,
    SummaryValue,
    TestRun,
    TestType,
    Tracking,
    UsageError,
    mix_label,
)

__version__ = "0.1.0"

BLOCK_SIZE = 4096
DEFAULT_MIX = 70          # read share in percent: 70/30
DEFAULT_QD = 16
QUICK_QD = 4
NUMJOBS = 1


def workload_name(rwmixread: int) -> str:
    """The one workload of a round: ``rw4k-70-30``."""
    return f"rw4k-{rwmixread}-{100 - rwmixread}"


def parse_mix(text: str, flag: str) -> int:
    """'70/30' or '70' (the read share) -> 70; a UsageError names the flag."""
    try:
        return api.parse_mix(text)
    except UsageError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def parse_qd(text: str, flag: str) -> int:
    """The queue depth: a whole number."""
    try:
        return int(text.strip())
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not a whole number") from None


def check_qd(value: int) -> None:
    if not 1 <= value <= MAX_IODEPTH:
        raise UsageError(f"--rw4k-qd {value} is out of range (1..{MAX_IODEPTH})")


@dataclass(frozen=True)
class RW4kSettings:
    """The values of rw4k's options, typed: field ``mix`` holds ``rw4k_mix``."""

    option_prefix: ClassVar[str] = "rw4k_"

    mix: int    # read share in percent
    qd: int     # queue depth of the one job


class RandomRW4kTest(TestType):
    """RND 4KiB R/W mix at a fixed OIO, in rounds until its IOPS are steady."""

    api_version = 2          # the tkperf.api MAJOR version this was written for
    name = "rw4k"
    title = "Random 4KiB R/W mix"
    short = "RW4K"
    unit = "round"
    default_run = False      # only with --tests rw4k
    order = 60               # after the four PTS tests
    settings = RW4kSettings  # its options' values, read as opts.of(RW4kSettings)
    options = (
        Option("rw4k_mix", ("--rw4k-mix",), "rw4k R/W mix as read/write (default 70/30)",
               parse=parse_mix, format=mix_label, default=DEFAULT_MIX, metavar="MIX"),
        Option("rw4k_qd", ("--rw4k-qd",),
               f"rw4k queue depth of its one job (default {DEFAULT_QD}; {QUICK_QD} with --quick)",
               parse=parse_qd, default=DEFAULT_QD, quick=QUICK_QD, check=check_qd, metavar="QD"),
    )

    # --- running ---------------------------------------------------------------
    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        cfg = opts.of(RW4kSettings)
        mix, qd = cfg.mix, cfg.qd
        job = FioJob(name=workload_name(mix), rw="randrw", bs=BLOCK_SIZE, rwmixread=mix,
                     runtime=opts.runtime, numjobs=NUMJOBS, iodepth=qd)
        return [Plan(
            key=self.name,
            shape=Rounds((job,)),
            tracking=Tracking(job.name, "iops", f"RND 4k {mix_label(mix)} QD{qd} IOPS"),
            steady=Steady.ONE,   # the 20/10 rule on that one figure
            params={"block_size": "4k", "access": "random", "mix": mix_label(mix),
                    "numjobs": str(NUMJOBS), "iodepth": str(qd), "runtime": str(opts.runtime)},
        )]

    def largest_block(self, opts: Options) -> int:
        return BLOCK_SIZE

    # --- reading results -----------------------------------------------------------
    def headline(self, test: TestRun) -> List[Figure]:
        # The workload is the one the test tracked (its name holds the mix),
        # so results of any --rw4k-mix read back right.
        iops = test.window_average(test.tracking_workload, "iops")
        if iops is None:
            return []
        lat = test.window_average(test.tracking_workload, "lat_mean_us") or 0.0
        label = f"4k {test.params.get('mix', '')}".strip()
        return [Figure("rnd_4k_mixed_iops", label, iops, "IOPS", "higher"),
                Figure("rnd_4k_mixed_lat_mean_us", "lat AVE", lat, "us", "lower", "{:,.1f}")]

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        # The summary page has lines for the PTS figures only; rw4k adds none.
        return {}

    def check_data(self, test: TestRun) -> None:
        if test.series:
            raise ValueError("an rw4k test keeps rounds, not series")
        for r in test.rounds:
            if len(r.workloads) != 1:
                raise ValueError(f"rw4k round {r.index} has {len(r.workloads)} workloads, not 1")

    # report_section and compare_section are not overridden: tkperf's generic
    # sections (the tracking figure per round, the steady-state window and
    # the headline figures) are enough for one workload.
