"""``tkperf compare A.xml B.xml ...``: 2 to 8 runs side by side."""
from __future__ import annotations

import argparse
import sys

from tkperf import strictjson
from tkperf.cli import common, runargs
from tkperf.errors import EXIT_OK, UsageError
from tkperf.kit import options
from tkperf.report import checked


def cmd_compare(args: argparse.Namespace) -> int:
    from tkperf.report import compare  # matplotlib loads only for a command that draws

    formats = options.parse_report_formats(args.format)
    if not compare.MIN_RUNS <= len(args.results) <= compare.MAX_RUNS:
        raise UsageError(f"compare takes {compare.MIN_RUNS} to {compare.MAX_RUNS} result files, "
                         f"not {len(args.results)}")
    name = common.check_name(args.name)
    runs = [checked.load(path) for path in args.results]
    outdir = common.prepare_outdir(args.outdir)
    result = compare.build_comparison(runs, outdir, formats, name=name, png=args.png)
    if args.json:
        for w in result.warnings:
            print(f"tkperf: warning: {w}", file=sys.stderr)
        doc = compare.as_dict(runs, args.results)
        print(strictjson.dumps({**doc, "reports": list(result.paths)}, indent=2))
        return EXIT_OK
    if not args.quiet:
        print("\n".join(compare.terminal_table(runs)))
    else:  # the caveats are said however quiet
        for caveat in compare.comparison_caveats(runs, compare.run_labels(runs)):
            print(f"warning: {caveat}")
    common.print_report(result)
    return EXIT_OK


def register(sub) -> None:
    cmp_ = sub.add_parser("compare", help="compare 2 to 8 result files side by side", allow_abbrev=False)
    cmp_.add_argument("results", nargs="+", help="tkperf result XML files")
    cmp_.add_argument("--format", default="rst,html,pdf", help="comma list of rst,html,pdf (default all)")
    cmp_.add_argument("--outdir", default="comparison", help="where the comparison goes (default ./comparison)")
    cmp_.add_argument("--name", default="comparison", help="base name of the comparison files")
    runargs.add_png_option(cmp_)
    cmp_.add_argument("--quiet", "-q", action="store_true",
                      help="no table of figures on the terminal (its caveats are still printed)")
    cmp_.add_argument("--json", action="store_true",
                      help="print the figures side by side, the caveats and the reports written as one JSON "
                           "object (schema tkperf-compare, 'tkperf help report')")
    cmp_.set_defaults(func=cmd_compare)
