"""``tkperf show RESULT.xml [--json]``: the summary again, from the file.

Reads the file and the test types' headline figures only; never imports
matplotlib, so it is quick enough for a cron job's every run.
"""
from __future__ import annotations

import argparse
import sys

from tkperf import strictjson
from tkperf.durations import micro_unit
from tkperf.errors import EXIT_OK
from tkperf.report import checked, summary
from tkperf.rwsw import model as rwsw_model
from tkperf.rwsw import summary as rwsw_summary

#: What ``show --json`` prints: its ``schema`` name and ``version``
#: (tkperf/model/data/show.schema.json).  Version 1: the summary of
#: ``--json-summary`` without the run's paths and exit code.
JSON_SCHEMA = "tkperf-show"
JSON_VERSION = 1


def cmd_show(args: argparse.Namespace) -> int:
    if rwsw_summary.is_capture_file(args.result):  # a capture (tkperf capture), not a run
        capture = rwsw_model.load(args.result)
        print(strictjson.dumps(rwsw_summary.as_dict(capture), indent=2) if args.json
              else "\n".join(rwsw_summary.lines(capture)))
        return EXIT_OK
    run = checked.load(args.result, say_integrity=False)  # the summary says it
    if args.json:
        print(strictjson.dumps({"schema": JSON_SCHEMA, "version": JSON_VERSION, **summary.as_dict(run)}, indent=2))
    else:
        print("\n".join(summary.lines(run, micro_unit(sys.stdout))))
    return EXIT_OK


def register(sub) -> None:
    show = sub.add_parser("show", help="print the summary of a result file", allow_abbrev=False)
    show.add_argument("result", help="a result file (RUN/RUN.xml) or a capture (tkperf capture)")
    show.add_argument("--json", action="store_true", help="machine-readable summary")
    show.set_defaults(func=cmd_show)
