"""``tkperf import OLD.xml [-o NEW.xml]``: a result file of the original
TKperf (2.x, 1.x) as a tkperf result file.

The new file holds every number of the old one (docs/tkperf2.rst), is
marked as imported (an ``import`` event and ``facts["imported"]`` with the
source file's name and TKperf version) and reads back before the command
says it is done.  ``report``, ``show``, ``check`` and ``compare`` read old
files directly too; importing gives a file that keeps the import's record
and loads without converting again.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, List

from tkperf import store
from tkperf.errors import EXIT_OK, OutputError, ResultFileError, UsageError
from tkperf.model import ranges
from tkperf.model.results import RunResult
from tkperf.store.legacy import tkperf2, tkperf2_run
from tkperf.store.xml_read import check_head
from tkperf.verdict import conformance

SUFFIX = ".tkperf.xml"


def default_output(old: str) -> str:
    """``intel320.xml`` -> ``intel320.tkperf.xml``, beside the old file."""
    base, _ = os.path.splitext(old)
    return base + SUFFIX


def import_run(path: str) -> RunResult:
    """The run an original TKperf file holds; a tkperf file or any other is refused."""
    data = store.read_bytes(path)
    if not tkperf2.detect(data):
        check_head(data, path)  # says what else it is: empty, a DOCTYPE, not XML, another kind
        raise ResultFileError(f"{path}: already a tkperf result file; there is nothing to import")
    return ranges.check_run(tkperf2_run.loads(data, path), path)


def lines(run: RunResult, old: str, new: str) -> List[str]:
    """What the import did, in words: the tests, the steady-state comparison, what is not recorded."""
    info: Any = run.facts["imported"]  # tkperf2_run.build_run's record (JSON-like)
    out = [f"imported {old} (original TKperf {info['version'] or '1.x'}, {info['mode']} mode) -> {new}"]
    for t in run.tests:
        out.append(f"  {t.key}: {t.done} {'interval' if t.series and not t.rounds else 'round'}"
                   f"{'s' if t.done != 1 else ''}")
    for key, rec in info["steady_state"].items():
        if rec["file"] is None:
            continue
        mine = rec["tkperf"]
        state = "steady" if mine["steady"] else "NOT steady"
        if rec["agree"]:
            out.append(f"  steady state {key}: TKperf's verdict agrees with tkperf's 20/10 check ({state})")
        else:
            out.append(f"  steady state {key}: TKperf's verdict and tkperf's 20/10 check DISAGREE; "
                       f"tkperf's verdict ({state}) is used (the report's run notes say why)")
    out += [f"  warning: {w}" for w in conformance.imported_caveats(run)]
    out.append("  not recorded: " + "; ".join(info["not_recorded"]))
    if info.get("control_characters_replaced"):
        out.append("  control characters replaced by U+FFFD in "
                   + ", ".join(info["control_characters_replaced"]))
    return out


def cmd_import(args: argparse.Namespace) -> int:
    out = args.output or default_output(args.old)
    if os.path.abspath(out) == os.path.abspath(args.old):
        raise UsageError(f"-o {out}: that is the file being imported; give another name")
    if os.path.lexists(out) and not args.force:
        raise OutputError(f"{out} exists; give another -o or --force to replace it")
    run = import_run(args.old)
    store.save(run, out)
    store.load(out)  # what was written reads back
    print("\n".join(lines(run, args.old, out)))
    return EXIT_OK


def register(sub) -> None:
    imp = sub.add_parser("import", help="convert a result file of the original TKperf to a tkperf result file",
                         allow_abbrev=False)
    imp.add_argument("old", metavar="OLD.xml", help="a result file of the original TKperf (2.x or 1.x)")
    imp.add_argument("-o", "--output", metavar="NEW.xml",
                     help=f"where the tkperf result file goes (default: beside OLD.xml, ending {SUFFIX})")
    imp.add_argument("--force", action="store_true", help="replace NEW.xml if it exists")
    imp.set_defaults(func=cmd_import)
