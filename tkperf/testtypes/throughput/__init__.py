"""Throughput: per block size, purge, WIPC, then rounds of SEQ 100% W and
SEQ 100% R until the write MB/s are steady (PTS test 2).

Each block size is its own test instance (key ``tp-1024k``) with its own
steady state.  PTS 2.0 preconditions with the test's block size
(``Plan.wipc_bs``), PTS 1.1 with SEQ 128KiB.

The rounds sweep the whole test range (the active range, unless
``--test-range`` narrows it to one span or ActiveRange segments): each SEQ
workload starts where the last one of its kind (write, read) stopped,
aligned down to the block size, with ``size`` reaching to the end of the
range, since fio wraps to
the job's own offset.  When the bytes the last one moved predict that the
rest of the range would run out, the workload starts that many bytes before
the end instead (at 0 when they exceed the range), so the end is covered
without fio looping over a short region, and the next one starts at 0.
The offsets are kept in the test's data as ``offset.ROUND.WORKLOAD``.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import ClassVar, List, Sequence, Tuple

from tkperf import api
from tkperf.pts import advance as advance  # TP's placement rule, named here too (as before)
from tkperf.pts import continuing, nonempty
from tkperf.pts import place as place
from tkperf.pts import tp_workload as workload_name

BLOCK_SIZES = {"enterprise": (1024 * 1024, 128 * 1024), "client": (1024 * 1024,)}
#: The block size the summary page quotes.
SUMMARY_BS = 1024 * 1024


def block_size(test: api.TestRun) -> int:
    """The block size of a TP test instance, from its workloads or its parameters."""
    for r in test.rounds:
        for w in r.workloads:
            return w.bs
    m = re.fullmatch(r"(\d{1,18})(k?)", test.params.get("block_size", ""))  # a number, not 5,000 digits
    if not m:
        return 0
    return int(m.group(1)) * (1024 if m.group(2) else 1)


@dataclasses.dataclass(frozen=True)
class SequentialSweep:
    """``jobs_for`` of the TP round loop: ``write`` and ``read`` (with offset
    0) placed where the workloads of the same name in earlier rounds left
    off, within the first ``active`` bytes (see the module's docstring)."""

    write: api.FioJob
    read: api.FioJob
    active: int

    def __call__(self, test: api.TestRun, index: int) -> Tuple[api.FioJob, ...]:
        earlier = [r for r in test.rounds if r.index < index]
        return tuple(self.placed(job, earlier) for job in (self.write, self.read))

    def placed(self, job: api.FioJob, earlier: Sequence[api.Round]) -> api.FioJob:
        """``job`` as it runs after the rounds ``earlier``."""
        runs = (r.workload(job.name) for r in earlier)
        return continuing(job, self.active, (w.read.io_bytes + w.write.io_bytes for w in runs if w is not None))


#: TP's OIO in every revision tkperf knows: one job at QD 32 (the PTS-C
#: TP sample header in SNIA SSSI's "SSD Performance - A Primer", 2013, TC1/QD32; the PTS 2.0 implementation).  Before
#: ``--tp-oio`` existed TP ran one job at QD numjobs x iodepth.
TP_OIO: Tuple[int, int] = (1, 32)


def parse_oio(text: str, flag: str) -> Tuple[int, int]:
    """``1x32``, ``1/32`` or ``TC1/QD32`` -> (thread count, queue depth)."""
    t = (text or "").strip().upper().replace("TC", "").replace("QD", "").replace("/", "X")
    parts = t.split("X")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise api.UsageError(f"{flag} {text!r}: give TCxQD, e.g. 1x32")
    tc, qd = (int(p) for p in parts)
    if tc != 1:  # the sweep follows one stream; several jobs would write the same blocks
        raise api.UsageError(f"{flag} {text!r}: TP runs one sequential stream, TC must be 1")
    if not 1 <= qd <= 1024:
        raise api.UsageError(f"{flag} {text!r}: QD is out of range (1..1024)")
    return tc, qd


def format_oio(value: Tuple[int, int]) -> str:
    return f"{value[0]}x{value[1]}"


def _default_sizes(device_class: str) -> Tuple[int, ...]:
    return BLOCK_SIZES.get(device_class, BLOCK_SIZES["enterprise"])


@dataclass(frozen=True)
class ThroughputSettings:
    """The values of throughput's options (typed; ``opts.of(ThroughputSettings)``)."""

    option_prefix: ClassVar[str] = "tp_"

    #: Block sizes in bytes.
    bs: Tuple[int, ...]
    #: (numjobs, iodepth).
    oio: Tuple[int, int]


class ThroughputPts(api.PtsRules):
    """Throughput's SNIA PTS rules."""

    oio = api.OIO_FIXED

    def deviations(self, kind: api.TestType, options, revision) -> List[str]:
        v = api.stored_values(kind, options)
        sizes = tuple(v["tp_bs"])
        out = []
        if set(sizes) != set(revision.tp_block_sizes):
            out.append(f"TP block sizes {api.format_block_sizes(sorted(sizes, reverse=True))} instead of "
                       f"{api.format_block_sizes(revision.tp_block_sizes)} ({revision.title})")
        if "tp_oio" in options or options.get("quick") == "true":
            tc, qd = v["tp_oio"]
        else:  # a file from before --tp-oio: one job at QD numjobs x iodepth
            tc, qd = 1, _int(options.get("numjobs"), 1) * _int(options.get("iodepth"), 1)
        if (tc, qd) != TP_OIO:
            out.append(f"TP at TC{tc}/QD{qd} instead of TC{TP_OIO[0]}/QD{TP_OIO[1]} ({revision.title})")
        return out


class ThroughputTest(api.TestType):
    pts = ThroughputPts()
    #: Runs over the test range (``--test-range``, in its ActiveRange segments):
    #: SNIA defines them for IOPS, TP and LAT; every other test runs over the
    #: whole active range (``RunOptions.for_test``).
    uses_test_range = True
    name = "tp"
    title = "Throughput"
    short = "TP"
    default_profiles = ("ssd",)
    order = 20
    view = "tkperf.testtypes.throughput.view:ThroughputView"
    options = api.OptionSet(ThroughputSettings, (
        api.Option("tp_bs", ("--tp-bs",), "TP block sizes (default: enterprise 1024k,128k; client 1024k)",
                   parse=api.parse_block_sizes, format=api.format_block_sizes, default=_default_sizes,
                   quick=(1024 * 1024,), check=nonempty("--tp-bs"), metavar="SIZES"),
        api.Option("tp_oio", ("--tp-oio",), "TP thread count x queue depth (default 1x32, TC1/QD32 as the PTS "
                   "runs TP; --numjobs and --iodepth do not apply to TP)", parse=parse_oio, format=format_oio,
                   default=TP_OIO, quick=(1, 8), metavar="TCxQD"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        # the test range: one span at the start of the LBA range, the segments'
        # map (its offsets), or the active range when no --test-range narrows it
        # (each job's own size= reaches to the end of it)
        active = opts.test_bytes(capacity)
        return [self.plan_size(opts, bs, active) for bs in sorted(opts.of(ThroughputSettings).bs, reverse=True)]

    def plan_size(self, opts: api.Options, bs: int, active: int) -> api.Plan:
        """The test instance of one block size over ``active`` bytes."""
        name = api.format_bs(bs)
        tc, qd = opts.of(ThroughputSettings).oio
        write = api.FioJob(name=workload_name(bs, "w"), rw="write", bs=bs, runtime=opts.runtime,
                           numjobs=tc, iodepth=qd)
        read = api.FioJob(name=workload_name(bs, "r"), rw="read", bs=bs, runtime=opts.runtime,
                          numjobs=tc, iodepth=qd)
        return api.Plan(
            key=f"{self.name}-{name}", shape=api.Rounds(jobs_for=SequentialSweep(write, read, active)),
            tracking=api.Tracking(write.name, "write.bw_bytes", f"SEQ {name} 100% W MB/s"),
            params={"block_size": name, "access": "sequential", "numjobs": str(tc),
                    "iodepth": str(qd), "runtime": str(opts.runtime)},
            wipc_bs=bs if opts.revision.tp_wipc_with_test_bs else 0,
        )

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        bs = block_size(test)
        out = []
        for side, key, label in (("w", "seq_write_mb_s", "W"), ("r", "seq_read_mb_s", "R")):
            v = test.window_average(workload_name(bs, side), "bw_bytes") if bs else None
            if v is not None:
                out.append(api.Figure(key, label, v / 1e6, "MB/s", "higher", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, max(opts.of(ThroughputSettings).bs))


def _int(text, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default
