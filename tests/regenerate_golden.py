"""Write the golden files of tests/test_golden.py again from examples/*.xml
with this checkout's code, after a change that is meant to alter the output:

    python tests/regenerate_golden.py

Then read ``git diff tests/data/golden`` line by line and give the reason in
the commit: the golden files pin what users see.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from tkperf.cli import main  # noqa: E402

GOLDEN = os.path.join(HERE, "data", "golden")
EXAMPLES = os.path.join(REPO, "examples")
NAMES = ("example-ssd", "example-ssd-2", "example-client", "example-full")


def _stdout(argv) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(argv)
    if rc != 0:
        raise SystemExit(f"tkperf {' '.join(argv)} exited {rc}")
    return buf.getvalue()


def _write(name: str, text: str) -> None:
    with open(os.path.join(GOLDEN, name), "w", encoding="utf-8") as fh:
        fh.write(text)


def regenerate() -> None:
    tmp = tempfile.mkdtemp(prefix="tkperf-golden-")
    try:
        for n in NAMES:
            xml = os.path.join(EXAMPLES, f"{n}.xml")
            _write(f"{n}.show.json", _stdout(["show", xml, "--json"]))
            _write(f"{n}.show.txt", _stdout(["show", xml]))
            _stdout(["report", xml, "--format", "rst", "--outdir", os.path.join(tmp, n), "-q"])
            shutil.copyfile(os.path.join(tmp, n, f"{n}.rst"), os.path.join(GOLDEN, f"{n}.report.rst"))
        _stdout(["compare", *(os.path.join(EXAMPLES, f"{n}.xml") for n in NAMES), "--format", "rst",
                 "--outdir", os.path.join(tmp, "cmp"), "-q"])
        shutil.copyfile(os.path.join(tmp, "cmp", "comparison.rst"), os.path.join(GOLDEN, "compare-all.report.rst"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    regenerate()
    print(f"golden files written to {GOLDEN}; review: git diff tests/data/golden")
