"""``tkperf capture DEVICE --duration D --name N``: a real application's
block I/O recorded read-only (SNIA RWSW PTS, docs/rwsw.rst), or an existing
blktrace capture imported (``--import FILE``); both write ``N.xml`` (streams
and steps) and ``N.iolog`` (the I/Os for an exact replay) into ``--outdir``.
``tkperf show N.xml`` and ``tkperf report N.xml`` read the capture."""
from __future__ import annotations

import argparse

from tkperf import durations
from tkperf.cli import common
from tkperf.errors import EXIT_OK, UsageError
from tkperf.rwsw import capture, daylong, summary


def _combine(args: argparse.Namespace, name: str) -> capture.Written:
    if args.device or args.import_file is not None or args.duration is not None:
        raise UsageError("--combine reads captures: give no DEVICE, --import or --duration with it")
    if args.combine_as is None:
        raise UsageError("--combine needs --as days (one after the other in time) or --as hosts (side by side "
                         "from a common start)")
    return capture.combine_files(args.combine, args.combine_as, name, args.outdir, args.force)


def _record(args: argparse.Namespace, name: str, step: float) -> capture.Written:
    if not args.device:
        raise UsageError("give the DEVICE to record (tkperf capture /dev/sdX --duration 10m --name N), "
                         "or --import FILE")
    if args.duration is None:
        raise UsageError("--duration is required: how long to record (e.g. 10m)")
    seconds = durations.parse(args.duration, "--duration")
    expect = daylong.parse_iops(args.expect_iops)

    # before recording; and whether the events are analysed while recording or after it
    need = daylong.check_disk(list(args.device), seconds, args.outdir, expect, args.force, analysis=args.analysis)
    live = need.live if need is not None else args.analysis == "during"

    def announce() -> None:
        if not args.quiet:
            print(f"capturing the block I/O of {' and '.join(args.device)} for {durations.duration(seconds)} "
                  "(read-only; Ctrl-C stops it early and keeps what was recorded, twice aborts)", flush=True)
            if need is not None:
                print(need.line(args.outdir), flush=True)

    return capture.record(args.device, seconds, name, args.outdir, step, on_start=announce, live=live)


def cmd_capture(args: argparse.Namespace) -> int:
    name = common.check_name(args.name)
    step = durations.parse(args.step, "--step")
    if args.force and args.import_file is not None:
        raise UsageError("--force is for recording (past the disk check) or --combine; an import never replaces "
                         "a file")
    if args.combine_as is not None and args.combine is None:
        raise UsageError("--as is for --combine")
    if args.combine is not None:
        done = _combine(args, name)
    elif args.import_file is not None:
        if args.device:
            raise UsageError("give a DEVICE to record or --import FILE, not both")
        if args.duration is not None:
            raise UsageError("--duration is for recording a DEVICE; an import lasts as long as its trace")
        done = capture.import_file(args.import_file, name, args.outdir, step)
    else:
        done = _record(args, name, step)
    for note in done.notes:
        print(f"tkperf: note: {note}")
    if not args.quiet:
        print("\n".join(summary.lines(done.capture)))
    print(f"capture: {done.xml}")
    print(f"iolog: {done.iolog or 'none'}")
    return EXIT_OK


def register(sub) -> None:
    cap = sub.add_parser(
        "capture", allow_abbrev=False,
        help="record an application's block I/O (read-only, root) or import a blktrace capture: its IO streams "
             "and steps (SNIA RWSW)",
        description="Record the block I/O that reaches DEVICE -- or several devices at once, on one timeline "
                    "(a database's data and log drives: each device's streams and steps are kept beside the "
                    "whole's) -- for --duration through the kernel's block "
                    "tracepoints (tracefs; root; the device is never opened), or read an existing capture "
                    "(--import: blkparse's text output, or blktrace's binary records through blkparse), or "
                    "combine captures (--combine A.xml B.xml --as days|hosts), and "
                    "write OUTDIR/NAME.xml -- the IO streams (random/sequential, read/write, transfer size) with "
                    "their shares, queue depth, IOPS and MB/s, per --step and in total -- and OUTDIR/NAME.iolog "
                    "(packed; several devices laid end to end) for an exact replay. The disk a recording needs is "
                    "estimated first, and one that would not fit in OUTDIR is refused (exit 8; --force records "
                    "anyway). Per step and in total it keeps the response "
                    "times (issue to completion: mean, p99, max), flushes, FUA writes, discards and events the "
                    "trace buffer lost, the steps a loss touched marked. The first Ctrl-C (or SIGTERM) ends the "
                    "recording early and keeps it, marked as stopped early; a second aborts. Neither file "
                    "replaces an existing one (but --combine's with --force). The same device twice, or a "
                    "partition with its disk, is exit 2; a device that is not a block device exit 4. A replay of a "
                    "capture of several devices runs them on its one target, their addresses end to end, and its "
                    "verdict names them. "
                    "'tkperf help rwsw' explains the method.")
    cap.add_argument("device", nargs="*", metavar="DEVICE",
                     help="the block device(s) to record (e.g. /dev/nvme0n1, or /dev/sdb /dev/sdc at once, at most "
                          "8); they are only watched")
    cap.add_argument("--import", dest="import_file", metavar="FILE",
                     help="read this blkparse text output (or blktrace binary file) instead of recording")
    cap.add_argument("--combine", nargs="+", metavar="N.xml",
                     help="combine these captures (of one --step) into one workload, stating its sources; "
                          "needs --as")
    cap.add_argument("--as", dest="combine_as", choices=("days", "hosts"),
                     help="--combine's way: days = one after the other in time, in the order given (the days of "
                          "one workload; the same number of devices); hosts = side by side from a common start "
                          "(each capture's devices become devices of the combined one)")
    cap.add_argument("--force", action="store_true",
                     help="recording: record even where the capture's files are estimated not to fit in --outdir; "
                          "--combine: replace an existing OUTDIR/NAME.xml and NAME.iolog (never a source)")
    cap.add_argument("--duration", metavar="D", help=f"how long to record: {durations.FORMS}")
    cap.add_argument("--name", required=True, metavar="N", help="the capture's name: OUTDIR/N.xml and N.iolog")
    cap.add_argument("--outdir", default=".", metavar="DIR",
                     help="an existing directory, not on a captured disk (default: the current directory)")
    cap.add_argument("--step", default="5m", metavar="S",
                     help=f"the length of a time step (default 5m; not for --combine): {durations.FORMS}")
    cap.add_argument("--expect-iops", metavar="N",
                     help="the I/Os a second the devices are expected to see, for the disk the capture needs "
                          "(default: their counters over half a second before recording)")
    cap.add_argument("--analysis", choices=daylong.ANALYSIS, default="auto",
                     help="when the recorded events are analysed: after the recording (the application under "
                          "capture loses no CPU to it; the raw events, some 160 bytes an I/O, wait on disk until "
                          "then), during it (a part at a time on idle CPU: the disk holds the iolog and a few parts, "
                          "but a CPU-bound application loses throughput), or auto (default): after, unless its raw "
                          "events would not fit in --outdir")
    cap.add_argument("--quiet", "-q", action="store_true", help="print only the files written")
    cap.set_defaults(func=cmd_capture)
