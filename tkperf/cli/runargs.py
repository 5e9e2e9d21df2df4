"""A run's command line: the options of ``ssd run`` and ``hdd run``, turned
once into the run's request (:func:`request_from_args`,
:class:`tkperf.engine.request.RunRequest`), which ``tkperf.cli.run`` hands
to the engine's front door (:func:`tkperf.engine.run.run`).
"""
from __future__ import annotations

import argparse
from typing import Dict, List, Mapping

from tkperf import durations, notify
from tkperf.engine.opening import DEFAULT_REMOTE_TKPERF
from tkperf.engine.request import MailRequest, RemoteSettings, RunRequest
from tkperf.errors import UsageError
from tkperf.kit import options, registry
from tkperf.kit.base import Option, runs_by_default
from tkperf.model import pts as pts_model
from tkperf.remote import FIO_PORT
from tkperf.target import purge


def add_run_options(p: argparse.ArgumentParser, profile: str) -> None:
    """Every option of ``PROFILE run``, in the order ``--help`` shows them."""
    _add_target_options(p)
    _add_pts_options(p)
    _add_workload_options(p, profile)
    _add_preparation_options(p, profile)
    _add_control_options(p)
    add_report_options(p)
    add_unattended_options(p)
    add_remote_options(p)
    shared = shared_flags()
    _add_shared_options(p, shared)
    _add_test_options(p, profile, shared)


def _add_target_options(p: argparse.ArgumentParser) -> None:
    """The targets, and what the run's results are called and where they go."""
    p.add_argument("device", nargs="+",
                   help="block device to test (e.g. /dev/nvme1n1, a /dev/disk/by-id link), "
                        "or a file with --size, or HOST:/dev/... on a test host (fio's client/server "
                        "mode and SSH, 'tkperf help remote'); several: one independent run per device, all "
                        "at once, and a comparison of them ('tkperf help parallel')")
    p.add_argument("--name", help="run name: names the output directory and files "
                                  "(default: the device's model or name)")
    p.add_argument("--outdir", help="directory for results (default: ./NAME)")
    p.add_argument("--yes", "-ft", dest="yes", action="store_true",
                   help="do not ask for confirmation before writing to the device")
    p.add_argument("--force", action="store_true",
                   help="test a device even if it looks in use (mounted, holders, swap, RAID/LVM member, holds /); "
                        "with --resume, also one that cannot be matched to the saved run's device")
    p.add_argument("--size", help="size of a file target, e.g. 1g (file targets only)")


def _add_pts_options(p: argparse.ArgumentParser) -> None:
    """The PTS revision and the settings it sets: the active and test range, the write cache."""
    p.add_argument("--pts", metavar="REVISION",
                   help="the SNIA PTS revision the run follows: " + ", ".join(pts_model.REVISIONS)
                        + f" (default {pts_model.DEFAULT}); sets OIO, active range, write cache, "
                          "TP block sizes and preconditioning, IOPS steady-state tracking")
    p.add_argument("--class", dest="device_class", default=None, choices=("enterprise", "client"),
                   help="short form of --pts: the current revision of that class "
                        f"({pts_model.BY_CLASS['enterprise']} or {pts_model.BY_CLASS['client']})")
    p.add_argument("--active-range", type=int, metavar="PCT",
                   help="percent of the LBA range preconditioned and tested (default: the "
                        "revision's: 100 for enterprise, 75 for PTS 2.0 client)")
    p.add_argument("--test-range", metavar="SIZE",
                   help="bytes of the preconditioned --active-range that IOPS, TP and LAT use (and the "
                        "HDD tests), when narrower (PTS-C 1.1: --active-range 80 --test-range 8g): in "
                        "--ar-segments segments spread across the active range, or one span at the start "
                        "of the LBA range; every other test (WSAT ...) uses the whole active range; "
                        "default: the active range")
    p.add_argument("--ar-segments", type=int, metavar="N",
                   help="split the test range into N ActiveRange segments of equal size, 4 KiB aligned, "
                        "spread randomly across the active range, none touching another (SNIA PTS test "
                        "terminology), and mapped by device-mapper into one device IOPS, TP and LAT run "
                        "on (needs --test-range, a block "
                        "device on this host, dmsetup; the seed is stored with the run); default: the "
                        "revision's with --test-range (PTS-C 1.1: 2048), else 1 (one span at the start "
                        "of the LBA range)")
    p.add_argument("--write-cache", choices=("on", "off", "keep"),
                   help="set the drive's write cache for the run and restore it after: on (WCE), "
                        "off (WCD) or keep (default: what the revision requires, WCD for enterprise, "
                        "WCE for client; keep for hdd run)")


def _add_workload_options(p: argparse.ArgumentParser, profile: str) -> None:
    """The tests, and how their workloads run: time, TC/QD, rounds, the data written."""
    p.add_argument("--tests", help=f"comma list of {','.join(registry.names())} "
                                   f"(default: {','.join(registry.default_names(profile))}; "
                                   "'tkperf tests' lists them)")
    p.add_argument("--runtime", "-rt", metavar="DURATION",
                   help=f"time per workload: {durations.FORMS}; a number alone is seconds (default 60)")
    p.add_argument("--numjobs", "-nj", type=int, metavar="TC",
                   help="fio numjobs, the thread count TC (default: the revision's, "
                        + _default_of("numjobs") + ")")
    p.add_argument("--iodepth", "-iod", type=int, metavar="QD",
                   help="fio iodepth, the queue depth QD per thread (default: the revision's, "
                        + _default_of("iodepth") + ")")
    p.add_argument("--max-rounds", type=int, help="most rounds per test before giving up on steady state (default 25)")
    p.add_argument("--data-pattern", metavar="PATTERN",
                   help="data written: random (incompressible, the PTS's; default), compressible:PCT "
                        "(fio buffer_compress_percentage with refill_buffers) or zero (zero_buffers)")
    p.add_argument("--refill-buffers", "-rfb", action="store_true", default=None,
                   help="new random data for every write: wholly incompressible, the PTS's random data "
                        "(the default; accepted for old command lines)")
    p.add_argument("--no-refill-buffers", dest="refill_buffers", action="store_false", default=None,
                   help="reuse fio's random buffers (scrambled, not refilled: mostly, not wholly "
                        "incompressible; less CPU per write); a deviation from the PTS's random data")
    p.add_argument("--latency-histograms", action="store_true", default=None,
                   help="keep every workload's response-time histogram (fio json+ bins) for every "
                        "test: histogram, confidence plot and nines table in the report (LAT always keeps them)")


def _add_preparation_options(p: argparse.ArgumentParser, profile: str) -> None:
    """What each test starts with: its PURGE and the WIPC."""
    p.add_argument("--purge", choices=purge.METHODS, metavar="METHOD",
                   help="PURGE method before each test: " + ", ".join(purge.METHODS)
                        + f" (default {'none' if profile == 'hdd' else 'auto'}: what the drive supports; "
                          "'tkperf help purge')")
    p.add_argument("--purge-cmd", metavar="'CMD {device}'",
                   help="purge with this command instead (a vendor tool): {device} becomes the device "
                        "path, split like a shell line but run without a shell; recorded as method cmd, "
                        "not a PTS PURGE")
    p.add_argument("--wipc-loops", type=int,
                   help=f"WIPC: times the capacity written as SEQ 128KiB (default {0 if profile == 'hdd' else 2})")


def _add_control_options(p: argparse.ArgumentParser) -> None:
    """The profile, the descriptions, the output on the terminal and the run's mode (resume, dry run)."""
    p.add_argument("--quick", action="store_true",
                   help="smoke-test profile: 1 s workloads, narrowed matrices, 5 rounds, short streams; "
                        "NOT a PTS-conformant measurement")
    p.add_argument("--description", "-dsc", dest="dsc", metavar="FILE",
                   help="description file: 'Key: value' lines (model, NAND type, form factor, interface, "
                        "test sponsor ...) for what the tools cannot read ('tkperf help description')")
    p.add_argument("--features", "-fm", dest="features", metavar="FILE",
                   help="feature matrix: 'Feature: value' lines shown as a table in the report "
                        "('tkperf help description')")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    p.add_argument("--debug", action="store_true",
                   help="debug detail in the run's log (and on stderr when it shows plain lines): "
                        "every steady-state evaluation, fio's full stderr")
    p.add_argument("--resume", action="store_true",
                   help="continue the interrupted run saved as OUTDIR/NAME.xml (same device and options)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the result of an earlier run of the same name in OUTDIR (without it, "
                        "such a run is refused: tkperf resume continues it)")
    p.add_argument("--dry-run", action="store_true",
                   help="print how long each test would take and the conformance verdict this target "
                        "would get; touch nothing")
    p.add_argument("--jobs", action="store_true",
                   help="with --dry-run: print the fio job files after the summary")
    # A child of a run of several targets: the whole request as a JSON file
    # (tkperf.engine.request; docs/parallel.rst), not for use by hand.
    p.add_argument("--request", metavar="FILE", help=argparse.SUPPRESS)


def _add_shared_options(p: argparse.ArgumentParser, shared: Dict[str, List[Option]]) -> None:
    """The flags several tests share (each value for one of them: :func:`shared_flags`)."""
    if shared:
        g = p.add_argument_group("Options several tests share, each value for one of them")
        for flag, opts in shared.items():
            uses = "; ".join(f"{', '.join(_users(o))}: {o.metavar or o.field.upper()}" for o in opts)
            g.add_argument(flag, dest=_shared_dest(flag), metavar="|".join(o.metavar or o.field.upper() for o in opts),
                           help=f"{uses} (the value says which; {', '.join(_own_flags(o, shared)[0] for o in opts)} "
                                "give it to one alone)")


def _add_test_options(p: argparse.ArgumentParser, profile: str, shared: Dict[str, List[Option]]) -> None:
    """Each test type's own options, in a group of its own (shown under its profile's --help only)."""
    added = set()
    for kind in registry.types().values():
        if not kind.options:
            continue
        # the other profile's tests' options are taken (--tests may name any
        # test) but shown under that profile's --help only
        shown = _profile_of(kind) == profile
        group = p.add_argument_group(f"{kind.title} test ({kind.name})") if shown else p
        for opt in kind.options:
            flags = _own_flags(opt, shared)
            if flags[0] in added:  # an option several types share (--streams-share): added with the first
                continue
            added.add(flags[0])
            # argparse formats help with %: a type's words ("100% writes") are text
            text = opt.help.replace("%", "%%") if shown else argparse.SUPPRESS
            if opt.switch is not None:
                group.add_argument(*flags, dest=opt.field, default=None, help=text,
                                   action="store_true" if opt.switch else "store_false")
            else:
                group.add_argument(*flags, dest=opt.field, help=text,
                                   metavar=opt.metavar or opt.field.upper())


def shared_flags() -> Dict[str, List[Option]]:
    """The flags tests share with different meanings (``--workload``), each
    with its options (one per field, in the order of the types)."""
    by_flag: Dict[str, Dict[str, Option]] = {}
    for kind in registry.types().values():
        for opt in kind.options:
            for flag in opt.flags:
                by_flag.setdefault(flag, {}).setdefault(opt.field, opt)
    out = {flag: list(opts.values()) for flag, opts in by_flag.items() if len(opts) > 1}
    for flag, opts in out.items():
        for opt in opts:
            if opt.claims is None or opt.switch is not None or len(_own_flags(opt, out)) == 0:
                raise ValueError(f"{flag} is shared by {', '.join(o.field for o in opts)}: each needs claims "
                                 "and a flag of its own")
    return out


def _own_flags(opt: Option, shared: Mapping[str, object]) -> List[str]:
    return [f for f in opt.flags if f not in shared]


def _shared_dest(flag: str) -> str:
    return "shared" + flag.replace("-", "_")


def _users(opt: Option) -> List[str]:
    return [k.name for k in registry.types().values() if any(o.field == opt.field for o in k.options)]


def _route_shared(args: argparse.Namespace) -> Dict[str, str]:
    """The value of each shared flag, given to the one option that claims it;
    the flag each value came by, by field."""
    came_by: Dict[str, str] = {}
    shared = shared_flags()
    for flag, opts in shared.items():
        value = getattr(args, _shared_dest(flag), None)
        if value is None:
            continue
        takers = [opt for opt in opts if opt.claims(value)]  # type: ignore[misc]  # shared_flags checked claims
        if len(takers) != 1:
            choices = " or ".join(f"{opt.metavar or opt.field.upper()} ({', '.join(_users(opt))})" for opt in opts)
            why = "more than one test takes it" if takers else "no test takes it"
            raise UsageError(f"{flag} {value!r}: {why}: give {choices}, or use "
                             f"{' / '.join(_own_flags(opt, shared)[0] for opt in opts)}")
        (opt,) = takers
        if getattr(args, opt.field, None) is not None:
            raise UsageError(f"{flag} and {_own_flags(opt, shared)[0]} both give "
                             f"{', '.join(_users(opt))} a value: give one")
        setattr(args, opt.field, value)
        came_by[opt.field] = flag
    return came_by


def _profile_of(kind: registry.TestType) -> str:
    """``hdd`` for the HDD tests (run by ``hdd run`` alone by default), else ``ssd``."""
    return "hdd" if runs_by_default(kind, "hdd") and not runs_by_default(kind, "ssd") else "ssd"


def _default_of(field: str) -> str:
    """'4 enterprise, 2 client' for ``numjobs``: the revisions' defaults."""
    by_class = {cls: getattr(pts_model.REVISIONS[rev], field) for cls, rev in pts_model.BY_CLASS.items()}
    return ", ".join(f"{value} {cls}" for cls, value in by_class.items())


def epilog(profile: str) -> str:
    """A few examples, and where the other profile's options are."""
    other = "hdd" if profile == "ssd" else "ssd"
    tests = "iops,lat" if profile == "ssd" else "hdd-iops,hdd-lat"
    examples = [
        (f"tkperf {profile} run /dev/nvme1n1", "the PTS's default tests, asking before it writes")
        if profile == "ssd" else (f"tkperf {profile} run /dev/sdb", "zones, IOPS and latency of a hard disk"),
        (f"tkperf {profile} run /dev/sdb --dry-run", "the time each test would take and the verdict; "
                                                  "--jobs adds the fio job files"),
        (f"tkperf {profile} run /dev/sdb --quick --yes", "a short smoke test, not a PTS measurement"),
        (f"tkperf {profile} run /dev/sdb --tests {tests} --runtime 1m", "two tests, 1 minute a workload"),
        (f"tkperf {profile} run /dev/sdb /dev/sdc", "two drives at once, and a comparison"),
    ]
    return "\n".join(["examples:"] + [f"  {cmd}\n      {what}" for cmd, what in examples] + [
        "",
        f"Durations take the forms {durations.FORMS} (a number alone is seconds).",
        f"The {other.upper()} tests' options: 'tkperf {other} run --help' (--tests runs any test)."])


def add_unattended_options(p: argparse.ArgumentParser) -> None:
    """``--json-summary`` and ``--mail``: what tells a script or a person that a run ended."""
    g = p.add_argument_group("Unattended runs")
    g.add_argument("--json-summary", metavar="FILE",
                   help="at the end of the run (complete, failed or interrupted) write a JSON "
                        "summary to FILE ('tkperf help result-format')")
    g.add_argument("--mail", metavar="ADDR", action="append", default=[],
                   help="mail ADDR when the run ends (repeatable; needs --smtp)")
    g.add_argument("--smtp", metavar="HOST[:PORT]", help="SMTP server for --mail (default port 25)")
    g.add_argument("--smtp-starttls", action="store_true", help="use STARTTLS with the SMTP server")
    g.add_argument("--smtp-user", metavar="USER",
                   help=f"log in to the SMTP server as USER; the password comes from "
                        f"${notify.PASSWORD_ENV} or --smtp-password-file")
    g.add_argument("--smtp-password-file", metavar="FILE", help="file whose first line is the SMTP password")
    g.add_argument("--mail-from", metavar="ADDR", help="sender of the mail (default tkperf@HOSTNAME)")


def mail_of(args: argparse.Namespace) -> MailRequest:
    """The mail options as given (``ssd run`` and ``resume``)."""
    return MailRequest(recipients=tuple(args.mail), smtp=args.smtp, starttls=args.smtp_starttls,
                       user=args.smtp_user, password_file=args.smtp_password_file, sender=args.mail_from)


def overrides(args: argparse.Namespace, profile: str) -> dict:
    o = dict(
        runtime=options.parse_duration(args.runtime, "--runtime") if args.runtime is not None else None,
        numjobs=args.numjobs, iodepth=args.iodepth, max_rounds=args.max_rounds,
        refill_buffers=args.refill_buffers,
        data_pattern=options.parse_data_pattern(args.data_pattern) if args.data_pattern is not None else None,
        latency_histograms=args.latency_histograms, purge=args.purge, wipc_loops=args.wipc_loops,
        active_range=args.active_range, write_cache=args.write_cache,
        test_range=options.parse_size(args.test_range, "--test-range") if args.test_range is not None else None,
        ar_segments=args.ar_segments,
    )
    if profile == "hdd":
        o["purge"] = args.purge or "none"
        o["wipc_loops"] = 0 if args.wipc_loops is None else args.wipc_loops
    if args.purge_cmd is not None:
        if args.purge is not None:
            raise UsageError("--purge-cmd replaces --purge: give one, not both")
        purge.cmd_argv(args.purge_cmd, "/dev/DEVICE")  # a bad template is refused before anything runs
        o["purge"] = purge.CMD_PREFIX + args.purge_cmd
    if args.tests:
        o["tests"] = options.parse_tests(args.tests)
    came_by = _route_shared(args)
    shared = shared_flags()
    for kind in registry.types().values():
        for opt in kind.options:
            value = getattr(args, opt.field, None)
            if value is None:
                continue
            flag = came_by.get(opt.field) or _own_flags(opt, shared)[0]
            if value == "":
                raise options.UsageError(f"{flag} needs a value (leave it out for the default)")
            parse = opt.parse  # None for a switch
            o[opt.field] = value if parse is None else parse(value, flag)
    return o


def request_from_args(args: argparse.Namespace, profile: str) -> RunRequest:
    """The command line of ``PROFILE run`` as a request, its options and
    formats checked; the targets are checked when they are opened
    (:func:`tkperf.engine.opening.open_run`)."""
    opts = options.build(overrides(args, profile), quick=args.quick, device_class=args.device_class,
                         pts=args.pts, profile=profile)
    return RunRequest(
        profile=profile, devices=tuple(args.device), options=opts,
        size=options.parse_size(args.size, "--size") if args.size else None,
        name=args.name, outdir=args.outdir,
        report_formats=options.parse_report_formats(args.report_format), no_report=args.no_report, png=args.png,
        resume=args.resume, overwrite=args.overwrite, force=args.force, yes=args.yes,
        quiet=args.quiet, debug=args.debug, dry_run=args.dry_run, jobs=args.jobs, json_summary=args.json_summary,
        mail=mail_of(args), description=args.dsc, features=args.features,
        remote=settings_of(args))


def add_remote_options(p: argparse.ArgumentParser, fio: bool = True) -> None:
    g = p.add_argument_group("Remote targets (HOST:/dev/...; 'tkperf help remote')")
    if fio:
        g.add_argument("--fio-port", type=int, metavar="PORT",
                       help=f"port of the fio server on the test hosts (default {FIO_PORT})")
    g.add_argument("--ssh-config", metavar="FILE",
                   help="OpenSSH client configuration to use instead of ~/.ssh/config (ssh -F)")
    g.add_argument("--remote-tkperf", metavar="CMD",
                   help=f"how to start tkperf on the test hosts (default '{DEFAULT_REMOTE_TKPERF}'; "
                        "e.g. 'sudo -n /opt/tkperf/bin/tkperf' for a login that is not root)")


def settings_of(args: argparse.Namespace) -> RemoteSettings:
    """The remote-target options as given (a command may lack some of them)."""
    return RemoteSettings(fio_port=getattr(args, "fio_port", None), ssh_config=getattr(args, "ssh_config", None),
                          remote_tkperf=getattr(args, "remote_tkperf", None))


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report-format", default="rst,html,pdf",
                   help="formats of the report written at the end (default rst,html,pdf)")
    p.add_argument("--no-report", action="store_true", help="write no report at the end")
    add_png_option(p)


def add_png_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--png", action="store_true",
                   help="draw the plots as PNG files too, and have the reST refer to them (for reST "
                        "viewers that show no SVG); the HTML and PDF keep the vector plots")
