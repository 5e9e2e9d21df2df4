"""The slowest tests and the total, from a pytest junit XML file.

    python -m pytest -q -n 4 tests --junitxml=suite.xml
    python tests/lab/durations.py suite.xml [--top 20]

Prints the run's wall time (the ``time`` of the test suite element), the
tests' own time summed over the workers, the share of it the slowest
``--top`` tests take, those tests one a line, and the time per folder
(unit, e2e, vm).  Times are the host's: say what else ran beside them.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

from lxml import etree


def read(path: str) -> Tuple[float, List[Tuple[float, str]]]:
    """(wall seconds of the run, [(seconds, test id)]) of a junit XML file."""
    root = etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    wall = sum(float(s.get("time") or 0) for s in suites)
    cases = []
    for case in root.iter("testcase"):
        cls, name = case.get("classname") or "", case.get("name") or ""
        cases.append((float(case.get("time") or 0), f"{cls.replace('.', '/')}.py::{name}" if cls else name))
    return wall, cases


def folder(test_id: str) -> str:
    parts = test_id.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit", help="pytest --junitxml file")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    try:
        wall, cases = read(args.junit)
    except (OSError, etree.XMLSyntaxError) as exc:
        print(f"durations: cannot read {args.junit}: {exc}", file=sys.stderr)
        return 2
    total = sum(t for t, _ in cases)
    cases.sort(reverse=True)
    top = cases[:args.top]
    share = sum(t for t, _ in top) / total * 100 if total else 0.0
    print(f"{len(cases)} tests, wall {wall / 60:.1f} min, {total / 60:.1f} min of test time in all workers; "
          f"the slowest {len(top)} take {share:.0f}% of it")
    for t, name in top:
        print(f"{t:8.1f} s  {name}")
    per: Dict[str, List[float]] = defaultdict(list)
    for t, name in cases:
        per[folder(name)].append(t)
    for name, times in sorted(per.items()):
        print(f"tests/{name}: {len(times)} tests, {sum(times) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
