"""``tkperf report RESULT.xml``: the report (reST, HTML, PDF) rebuilt from a result file."""
from __future__ import annotations

import argparse
import os
import sys

from tkperf.cli import common, runargs
from tkperf.errors import EXIT_OK
from tkperf.kit import options
from tkperf.report import checked
from tkperf.rwsw import model as rwsw_model
from tkperf.rwsw import summary as rwsw_summary


def cmd_report(args: argparse.Namespace) -> int:
    from tkperf.report import report  # matplotlib loads only for a command that draws

    formats = options.parse_report_formats(args.format)
    if rwsw_summary.is_capture_file(args.result):  # a capture (tkperf capture), not a run
        from tkperf.rwsw import report as rwsw_report  # matplotlib, as above

        with report.ready_drawers() as drawers:
            capture = rwsw_model.load(args.result)
            outdir = common.prepare_outdir(args.outdir or os.path.dirname(os.path.abspath(args.result)))
            common.print_report(rwsw_report.build_report(capture, outdir, formats, png=args.png, drawers=drawers))
        return EXIT_OK
    with report.ready_drawers() as drawers:  # matplotlib loads while the file does
        run = checked.load(args.result)
        outdir = common.prepare_outdir(args.outdir or os.path.dirname(os.path.abspath(args.result)))
        common.print_report(report.build_report(run, outdir, formats, png=args.png, drawers=drawers,
                                                 tell=None if args.quiet else _phase))
    return EXIT_OK


def _phase(text: str) -> None:
    """A phase of the report, as it starts, on stderr (a terminal or not)."""
    print(f"tkperf report: {text}", file=sys.stderr, flush=True)


def register(sub) -> None:
    rep = sub.add_parser("report", help="build the report (reST, HTML, PDF) from a result file",
                         allow_abbrev=False)
    rep.add_argument("result", help="a tkperf result XML file or a capture (tkperf capture)")
    rep.add_argument("--format", default="rst,html,pdf", help="comma list of rst,html,pdf (default all)")
    rep.add_argument("--outdir", help="where the report goes (default: beside the result file)")
    runargs.add_png_option(rep)
    rep.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    rep.set_defaults(func=cmd_report)
