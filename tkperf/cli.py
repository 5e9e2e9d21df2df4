"""Command line: the one place that prints errors and picks exit codes.

    tkperf ssd run DEVICE [options]     the PTS on an SSD
    tkperf hdd run DEVICE [options]     the same tests without purge and WIPC
    tkperf demo                         quick run on a throw-away loop device
    tkperf resume RESULT.xml            continue an interrupted run
    tkperf show RESULT.xml [--json]     the summary again, from the file
    tkperf report RESULT.xml            HTML/PDF report rebuilt from the file
    tkperf compare A.xml B.xml ...      several drives side by side
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import traceback
from typing import Optional, Sequence

from tkperf import __version__, device, guard, hostinfo, options, plan, resume, store, summary
from tkperf.errors import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_SIGINT,
    NotConfirmedError,
    ResumeError,
    Interrupted,
    TkperfError,
    UsageError,
)
from tkperf.fio import FioRunner, FioSettings
from tkperf.results import RunResult, now_iso
from tkperf.runner import Runner

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so every
    bad option gets the same one-line error and exit code."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _add_run_options(p: argparse.ArgumentParser, profile: str) -> None:
    p.add_argument("device", help="block device to test (e.g. /dev/nvme1n1, a /dev/disk/by-id link), "
                                   "or a file with --size")
    p.add_argument("--name", help="run name: names the output directory and files "
                                  "(default: the device's model or name)")
    p.add_argument("--outdir", help="directory for results (default: ./NAME)")
    p.add_argument("--yes", "-ft", dest="yes", action="store_true",
                   help="do not ask for confirmation before writing to the device")
    p.add_argument("--force", action="store_true",
                   help="test a device even if it looks in use (mounted, holders, swap, RAID/LVM member, holds /)")
    p.add_argument("--size", help="size of a file target, e.g. 1g (file targets only)")
    p.add_argument("--class", dest="device_class", default="enterprise", choices=("enterprise", "client"),
                   help="PTS device class: sets default OIO (enterprise TC4/QD32, client TC2/QD16) "
                        "and TP block sizes (default: enterprise)")
    p.add_argument("--tests", help="comma list of iops,tp,lat,wsat (default: all)")
    p.add_argument("--runtime", "-rt", type=int, help="seconds per workload (default 60)")
    p.add_argument("--numjobs", "-nj", type=int, help="fio numjobs, the thread count TC")
    p.add_argument("--iodepth", "-iod", type=int, help="fio iodepth, the queue depth QD")
    p.add_argument("--max-rounds", type=int, help="most rounds per test before giving up on steady state (default 25)")
    p.add_argument("--refill-buffers", "-rfb", action="store_true", default=None,
                   help="new random data for every write (for controllers that compress)")
    p.add_argument("--bs", help="IOPS block sizes, e.g. 4k,64k (default: 1024k,128k,64k,32k,16k,8k,4k,512)")
    p.add_argument("--mix", help="IOPS R/W mixes as read/write, e.g. 65/35,0/100 (default: all seven)")
    p.add_argument("--tp-bs", help="TP block sizes (default: enterprise 1024k,128k; client 1024k)")
    p.add_argument("--lat-bs", help="LAT block sizes (default: 8k,4k,512)")
    p.add_argument("--lat-mix", help="LAT R/W mixes (default: 100/0,65/35,0/100)")
    p.add_argument("--wsat-time", help="WSAT time limit: seconds or with s/m/h/d (default 24h)")
    p.add_argument("--wsat-tgbw", help="WSAT total GB written limit, or drive fills like 4x (default 4x)")
    p.add_argument("--wsat-interval", help="WSAT reporting interval (default 60s)")
    p.add_argument("--no-wsat-steady", dest="wsat_steady", action="store_false", default=None,
                   help="do not stop WSAT at steady state (checked only after one drive fill)")
    p.add_argument("--purge", choices=("auto", "ata", "nvme", "scsi", "discard", "none"),
                   help=f"PURGE method before each test (default {'none' if profile == 'hdd' else 'auto'})")
    p.add_argument("--wipc-loops", type=int,
                   help=f"WIPC: times the capacity written as SEQ 128KiB (default {0 if profile == 'hdd' else 2})")
    p.add_argument("--quick", action="store_true",
                   help="smoke-test profile: 1 s workloads, narrowed matrix, 5 rounds, short WSAT; "
                        "NOT a PTS-conformant measurement")
    p.add_argument("--description", "-dsc", dest="dsc",
                   help="description file: 'Key: value' lines fill what the device does not report")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run saved as OUTDIR/NAME.xml (same device and options)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the fio job files and the estimated duration; touch nothing")
    _add_report_options(p)


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report-format", default="rst,html,pdf",
                   help="formats of the report written at the end (default rst,html,pdf)")
    p.add_argument("--no-report", action="store_true", help="write no report at the end")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tkperf", allow_abbrev=False,
                     description="SNIA PTS performance tests for SSDs and HDDs, driven by fio.",
                     epilog="Exit codes are listed in docs/exit-codes.rst.")
    parser.add_argument("--version", action="version", version=f"tkperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for profile in ("ssd", "hdd"):
        p = sub.add_parser(profile, help=f"test an {profile.upper()}", allow_abbrev=False)
        psub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
        run = psub.add_parser("run", help="run the tests and write XML, log and summary",
                              allow_abbrev=False)
        _add_run_options(run, profile)
    demo = sub.add_parser("demo", help="quick run of all four tests on a throw-away loop device",
                          allow_abbrev=False)
    demo.add_argument("--outdir", default="tkperf-demo", help="where results go (default ./tkperf-demo)")
    demo.add_argument("--size", default="256m", help="size of the demo target (default 256m)")
    demo.add_argument("--quiet", "-q", action="store_true")
    rep = sub.add_parser("report", help="build the report (reST, HTML, PDF) from a result file",
                         allow_abbrev=False)
    rep.add_argument("result", help="a tkperf result XML file")
    rep.add_argument("--format", default="rst,html,pdf", help="comma list of rst,html,pdf (default all)")
    rep.add_argument("--outdir", help="where the report goes (default: beside the result file)")
    cmp_ = sub.add_parser("compare", help="compare 2 to 8 result files side by side", allow_abbrev=False)
    cmp_.add_argument("results", nargs="+", help="tkperf result XML files")
    cmp_.add_argument("--format", default="rst,html,pdf", help="comma list of rst,html,pdf (default all)")
    cmp_.add_argument("--outdir", default="comparison", help="where the comparison goes (default ./comparison)")
    cmp_.add_argument("--name", default="comparison", help="base name of the comparison files")
    res = sub.add_parser("resume", help="continue an interrupted run from its result file",
                         allow_abbrev=False)
    res.add_argument("result", help="the interrupted run's NAME.xml")
    res.add_argument("--yes", "-ft", dest="yes", action="store_true", help="do not ask for confirmation")
    res.add_argument("--force", action="store_true", help="as for ssd run")
    res.add_argument("--quiet", "-q", action="store_true")
    _add_report_options(res)
    show = sub.add_parser("show", help="print the summary of a result file", allow_abbrev=False)
    show.add_argument("result")
    show.add_argument("--json", action="store_true", help="machine-readable summary")
    for p in (rep, cmp_):
        p.add_argument("--quiet", "-q", action="store_true")
    return parser


# --- helpers -----------------------------------------------------------------

def _default_name(dev: device.DeviceInfo) -> str:
    base = dev.model if dev.kind == "block" and dev.model and not dev.model.startswith("loop") else \
        os.path.basename(dev.resolved)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-") or "tkperf-run"


def _check_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name):
        raise UsageError(f"--name {name!r}: use letters, digits, '.', '_' and '-' only")
    return name


def _prepare_outdir(path: str) -> str:
    return store.ensure_dir(path, "output directory")


def read_description(path: Optional[str]) -> tuple:
    """(text, fields) of a description file; 'Key: value' lines become fields."""
    if not path:
        return "", {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError as exc:
        raise UsageError(f"description file {path}: {exc.strerror}") from None
    text = "".join(ch for ch in text if ch in "\n\t" or ch.isprintable())
    fields = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z][A-Za-z0-9 _/-]{0,40}?)\s*[:=]\s*(\S.*?)\s*$", line)
        if m:
            fields.setdefault(m.group(1).strip().lower().replace(" ", "_"), m.group(2))
    return text, fields


def _confirm(dev: device.DeviceInfo, assume_yes: bool) -> None:
    if assume_yes:
        return
    if not sys.stdin.isatty():
        raise NotConfirmedError(f"{dev.path}: no terminal to confirm on; pass --yes to write to it")
    what = f"{dev.path} ({dev.model or 'unknown model'}, {dev.size_bytes / 1e9:.1f} GB)"
    answer = input(f"All data on {what} will be destroyed. Type 'yes' to continue: ")
    if answer.strip().lower() != "yes":
        raise NotConfirmedError("not confirmed; nothing was written")


def _setup_logging(log_path: Optional[str], quiet: bool) -> None:
    log.setLevel(logging.DEBUG)
    _close_logging()
    if log_path:
        fh = logging.FileHandler(log_path)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(fh)
    if not quiet:
        sh = logging.StreamHandler(sys.stderr)
        sh.setFormatter(logging.Formatter("tkperf: %(message)s"))
        progress.addHandler(sh)


# --- commands ----------------------------------------------------------------

# option attribute, RunOptions field, parser(text, what)
_PARSED = (
    ("tests", "tests", lambda text, what: options.parse_tests(text)),
    ("bs", "iops_bs", options.parse_block_sizes),
    ("mix", "iops_mixes", lambda text, what: options.parse_mixes(text)),
    ("tp_bs", "tp_bs", options.parse_block_sizes),
    ("lat_bs", "lat_bs", options.parse_block_sizes),
    ("lat_mix", "lat_mixes", lambda text, what: options.parse_mixes(text)),
    ("wsat_time", "wsat_time", options.parse_duration),
    ("wsat_tgbw", "wsat_tgbw", lambda text, what: options.parse_tgbw(text)),
    ("wsat_interval", "wsat_interval", options.parse_duration),
)


def _overrides(args: argparse.Namespace, profile: str) -> dict:
    o = dict(
        runtime=args.runtime, numjobs=args.numjobs, iodepth=args.iodepth, max_rounds=args.max_rounds,
        refill_buffers=args.refill_buffers, purge=args.purge, wipc_loops=args.wipc_loops,
        wsat_steady=args.wsat_steady,
    )
    if profile == "hdd":
        o["purge"] = args.purge or "none"
        o["wipc_loops"] = 0 if args.wipc_loops is None else args.wipc_loops
    for attr, key, parse in _PARSED:
        text = getattr(args, attr)
        if text:
            o[key] = parse(text, "--" + attr.replace("_", "-"))
    return o


def _run_from_args(args: argparse.Namespace, profile: str) -> tuple:
    """Options, target and names from the command line, all validated before
    anything touches the device."""
    opts = options.build(_overrides(args, profile), quick=args.quick, device_class=args.device_class)
    options.parse_report_formats(args.report_format)
    size = options.parse_size(args.size, "--size") if args.size else None
    if args.dsc and not os.path.isfile(args.dsc):
        raise UsageError(f"description file {args.dsc}: no such file")
    dev = device.resolve(args.device, size)
    options.check_fits(opts, dev.size_bytes)
    name = _check_name(args.name) if args.name else _default_name(dev)
    return opts, dev, name, args.outdir or name


def cmd_run(args: argparse.Namespace, profile: str) -> int:
    opts, dev, name, outdir = _run_from_args(args, profile)
    if args.dry_run:
        return _dry_run(dev, opts)
    saved = None
    xml_path = os.path.join(outdir, f"{name}.xml")
    if args.resume:
        if not os.path.exists(xml_path):
            raise UsageError(f"--resume: no saved run {xml_path} to resume")
        saved = store.load(xml_path)
        resume.check(saved, dev, opts)
        if saved.status == "complete":
            print("\n".join(summary.lines(saved)))
            print(f"results: {xml_path} (already complete, nothing to resume)")
            return EXIT_OK
    return _execute(args, profile, opts, dev, name, outdir, saved)


def cmd_resume(args: argparse.Namespace) -> int:
    options.parse_report_formats(args.report_format)
    saved = store.load(args.result)
    if saved.status == "complete":
        print("\n".join(summary.lines(saved)))
        print(f"results: {args.result} (already complete, nothing to resume)")
        return EXIT_OK
    if os.path.basename(args.result) != f"{saved.name}.xml":
        raise ResumeError(f"{args.result}: resume needs the file under its run name {saved.name}.xml")
    try:
        opts = options.RunOptions.from_dict(saved.options)
    except (UsageError, ValueError, TypeError) as exc:
        raise ResumeError(f"{args.result}: its options cannot be read back ({exc})") from None
    size = saved.device.size_bytes if saved.device.kind == "file" else None
    dev = device.resolve(saved.device.path, size)
    resume.check(saved, dev, opts)
    outdir = os.path.dirname(os.path.abspath(args.result))
    args.dsc = None
    return _execute(args, saved.profile, opts, dev, saved.name, outdir, saved)


def _dry_run(dev: device.DeviceInfo, opts: options.RunOptions) -> int:
    print("\n".join(plan.describe(dev, opts, FioSettings(filename=dev.resolved,
                                                         refill_buffers=opts.refill_buffers))))
    for p in device.safety_problems(dev):
        print(f"# a real run would refuse: {p} (unless --force)")
    return EXIT_OK


def _execute(args: argparse.Namespace, profile: str, opts: options.RunOptions, dev: device.DeviceInfo,
             name: str, outdir: str, saved: Optional[RunResult]) -> int:
    _prepare_outdir(outdir)
    desc_text, desc_fields = read_description(args.dsc)
    fio = FioRunner(FioSettings(filename=dev.resolved, refill_buffers=opts.refill_buffers), outdir)
    with guard.DeviceLock(dev):
        problems = device.check_safe(dev, args.force)
        _confirm(dev, args.yes)
        excl = device.open_exclusive(dev)
        try:
            return _run_locked(args, profile, opts, dev, name, outdir, saved, fio, problems,
                               desc_text, desc_fields)
        finally:
            if excl is not None:
                os.close(excl)


def _run_locked(args, profile, opts, dev, name, outdir, saved, fio, problems, desc_text,
                desc_fields) -> int:
    _setup_logging(os.path.join(outdir, f"{name}.log"), args.quiet)
    log.info("tkperf %s: %s %s of %s as %r", __version__, profile,
             "resumed run" if saved else "run", dev.path, name)
    for p in problems:
        log.warning("forced past: %s", p)
    if dev.kind == "file":
        device.prepare_file_target(dev)
        progress.info("%s is a file target: results describe the filesystem and host, not a drive",
                      dev.path)
    if saved is not None:
        for path in resume.clean_leftovers(outdir, name):
            log.info("removed leftover %s", path)
        for line in resume.prepare(saved):
            progress.info("resume: %s", line)
        run = saved
    else:
        run = RunResult(name=name, started=now_iso(), device=dev, host=hostinfo.collect(fio.version),
                        options=opts.to_dict(), profile=profile, quick=opts.quick,
                        description=desc_text, description_fields=desc_fields,
                        tkperf_version=__version__)
    runner = Runner(run=run, opts=opts, device=dev, fio=fio, xml_path=os.path.join(outdir, f"{name}.xml"))
    if saved is None:
        if opts.quick:
            runner.event("note", "--quick smoke-test profile: not a PTS-conformant measurement")
        if dev.kind == "file":
            runner.event("note", "file target: fio wrote to a file, not a raw block device")
    for p in problems:
        runner.event("warning", f"forced past safety check: {p}")
    try:
        with guard.signals_raise():
            runner.execute()
    finally:
        if not args.no_report:
            _final_report(run, outdir, args.report_format)
        print("\n".join(summary.lines(run)))
        print(f"results: {runner.xml_path}")
    return EXIT_OK


def _final_report(run: RunResult, outdir: str, formats_text: str) -> None:
    """The report at the end of a run, complete or partial; a failure here is
    a warning, since the XML (the record) is already saved."""
    try:
        from tkperf import report

        _print_report(report.build_report(run, outdir, options.parse_report_formats(formats_text)))
    except Exception as exc:  # noqa: BLE001 - never lose the run's exit status to the report
        log.error("report failed:\n%s", traceback.format_exc())
        print(f"tkperf: warning: no report: {exc}", file=sys.stderr)


def cmd_show(args: argparse.Namespace) -> int:
    run = store.load(args.result)
    if args.json:
        print(json.dumps(summary.as_dict(run), indent=2))
    else:
        print("\n".join(summary.lines(run)))
    return EXIT_OK


def _print_report(result) -> None:
    for w in result.warnings:
        print(f"tkperf: warning: {w}", file=sys.stderr)
    for path in result.paths:
        print(f"report: {path}")


def cmd_report(args: argparse.Namespace) -> int:
    from tkperf import report

    formats = options.parse_report_formats(args.format)
    run = store.load(args.result)
    outdir = _prepare_outdir(args.outdir or os.path.dirname(os.path.abspath(args.result)))
    _print_report(report.build_report(run, outdir, formats))
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from tkperf import compare

    formats = options.parse_report_formats(args.format)
    if not 2 <= len(args.results) <= 8:
        raise UsageError(f"compare takes 2 to 8 result files, not {len(args.results)}")
    name = _check_name(args.name)
    runs = [store.load(path) for path in args.results]
    outdir = _prepare_outdir(args.outdir)
    _print_report(compare.build_comparison(runs, outdir, formats, name=name))
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from tkperf import demo

    return demo.run_demo(args.outdir, options.parse_size(args.size, "--size"), args.quiet, main)


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.raiseExceptions = False  # a full disk must not print logging tracebacks
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        if args.command in ("ssd", "hdd"):
            if args.action != "run":
                raise UsageError(f"say what to do: tkperf {args.command} run DEVICE")
            return cmd_run(args, args.command)
        if args.command == "show":
            return cmd_show(args)
        if args.command == "resume":
            return cmd_resume(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "demo":
            return cmd_demo(args)
        parser.print_help()
        return EXIT_OK if not argv else 2
    except Interrupted as exc:
        log.error("%s", exc)
        print(f"tkperf: stopped: {exc}", file=sys.stderr)
        return exc.exit_code
    except TkperfError as exc:
        log.error("%s", exc)
        stderr = getattr(exc, "stderr", "")
        if stderr:
            log.error("stderr of the failed program:\n%s", stderr)
        print(f"tkperf: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("tkperf: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into a line
        log.error("unexpected error:\n%s", traceback.format_exc())
        print(f"tkperf: internal error: {type(exc).__name__}: {exc} (details in the run's log)",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        _close_logging()


def _close_logging() -> None:
    for logger in (log, progress):
        for h in list(logger.handlers):
            if not isinstance(h, logging.NullHandler):
                logger.removeHandler(h)
                h.close()


