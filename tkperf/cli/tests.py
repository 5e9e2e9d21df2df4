"""``tkperf tests [--json]``: the test types this tkperf knows, built in and installed."""
from __future__ import annotations

import argparse
import sys

from tkperf import strictjson
from tkperf.errors import EXIT_OK
from tkperf.kit import registry
from tkperf.kit.base import runs_by_default
from tkperf.kit.rules import steps_of

#: What ``tests --json`` prints: its ``schema`` name and ``version``
#: (tkperf/model/data/tests.schema.json).  Version 1: an object whose
#: ``tests`` holds one object per test type (before it, a bare list).
JSON_SCHEMA = "tkperf-tests"
JSON_VERSION = 1


def cmd_tests(args: argparse.Namespace) -> int:
    kinds = list(registry.types().values())
    if args.json:
        listed = [{"name": k.name, "title": k.title, "short": k.short, "unit": steps_of(k).unit,
                   "default": runs_by_default(k, "ssd"),
                   "default_profiles": [p for p in ("ssd", "hdd") if runs_by_default(k, p)],
                   "module": type(getattr(k, "old", k)).__module__,
                   "options": [o.flags[0] for o in k.options]} for k in kinds]
        print(strictjson.dumps({"schema": JSON_SCHEMA, "version": JSON_VERSION, "tests": listed}, indent=2))
    else:
        width = max((len(k.name) for k in kinds), default=4)
        for k in kinds:
            runs = [p for p in ("ssd", "hdd") if runs_by_default(k, p)]
            print(f"{k.name:<{width}}  {k.title}" + (f"  ({' and '.join(runs)} run default)" if runs != ["ssd"]
                                                       and runs else "" if runs else "  (not run by default)"))
    for line in registry.adapted():  # below the list; beside --json's, where the JSON stays clean
        print(f"tkperf: note: {line}" if args.json else line, file=sys.stderr if args.json else sys.stdout)
    for problem in registry.problems():
        print(f"tkperf: warning: {problem}", file=sys.stderr)
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("tests", help="list the test types (built in and installed plug-ins)",
                       allow_abbrev=False)
    p.add_argument("--json", action="store_true", help="as a JSON list of objects")
    p.set_defaults(func=cmd_tests)
