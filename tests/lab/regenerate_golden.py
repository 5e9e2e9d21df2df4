"""Write the golden files of tests/docs/test_golden.py again with this checkout's
code, after a change that is meant to alter the output:

    python tests/lab/regenerate_golden.py

writes ``show``, ``show --json`` and the report's reST of the four
``examples/*.xml`` and of every recorded input under
``tests/data/golden/inputs/`` (one short real run per other built-in test
type), and the comparison of the four examples.  Then read
``git diff tests/data/golden`` line by line and give the reason in the
commit: the golden files pin what users see.

    sudo python tests/lab/regenerate_golden.py --record [--only dirth,cbw]

first makes the recorded inputs again as real ``--quick`` runs (root and fio
needed), each on its own 256 MiB loop device over a sparse file that is
always detached and deleted, then writes the golden files as above.  The
inputs describe the page cache behind a loop device, not a drive.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from tkperf.cli import main  # noqa: E402

GOLDEN = os.path.join(HERE, "data", "golden")
INPUTS = os.path.join(GOLDEN, "inputs")
EXAMPLES = os.path.join(REPO, "examples")
NAMES = ("example-ssd", "example-ssd-2", "example-client", "example-full")
LOOP_SIZE = 256 * 1024 * 1024

# One recorded run per built-in test type that the examples do not cover:
# input name -> the tkperf command line after the device (each under a minute).
SSD = ["ssd", "run", "{dev}", "--quick", "--wipc-loops", "1"]
HDD = ["hdd", "run", "{dev}", "--quick"]
RECORDED = {
    "consistency": [*SSD, "--tests", "consistency"],
    "qd": [*SSD, "--tests", "qd"],
    "dirth": [*SSD, "--tests", "dirth"],
    "cbw": [*SSD, "--tests", "cbw"],
    "hir": [*SSD, "--tests", "hir"],
    "xsr": [*SSD, "--tests", "xsr", "--xsr-seq1", "5s", "--xsr-rnd", "5s", "--xsr-seq2", "5s"],
    "hdd-zones": [*HDD, "--tests", "hdd-zones"],
    "hdd-iops": [*HDD, "--tests", "hdd-iops"],
    "hdd-lat": [*HDD, "--tests", "hdd-lat"],
    # the real-world workload tests run the capture tests/lab/rwsw_captures.py writes (recorded from REPO)
    "replay": [*SSD, "--tests", "replay", "--workload", "tests/data/rwsw/golden-capture.xml"],
    "rwsw-wsat": [*SSD, "--tests", "rwsw-wsat", "--workload", "tests/data/rwsw/golden-capture.xml",
                  "--rwsw-wsat-time", "4"],
    "rwsw-dirth": [*SSD, "--tests", "rwsw-dirth", "--workload", "tests/data/rwsw/golden-capture.xml",
                   "--rwsw-dirth-structure", "steady-sweep"],
}


def inputs() -> list:
    """(name, path) of every golden input: the examples, then the recorded runs."""
    return ([(n, os.path.join(EXAMPLES, f"{n}.xml")) for n in NAMES]
            + [(n, os.path.join(INPUTS, f"{n}.xml")) for n in RECORDED])


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


def record(name: str) -> None:
    """Run RECORDED[name] on a fresh loop device; keep its result file in INPUTS."""
    from tkperf.target.loopdev import LoopDevice

    with tempfile.TemporaryDirectory(prefix="tkperf-golden-rec-") as scratch:
        with LoopDevice(LOOP_SIZE, scratch) as dev:
            run_dir = os.path.join(scratch, name)
            argv = [a.format(dev=dev) for a in RECORDED[name]]
            rc = main([*argv, "--name", name, "--outdir", run_dir, "--yes", "--quiet", "--no-report",
                       "--description", os.path.join(EXAMPLES, "description.txt")])
            if rc != 0:
                raise SystemExit(f"recording {name}: tkperf {' '.join(argv)} exited {rc}")
            os.makedirs(INPUTS, exist_ok=True)
            shutil.copyfile(os.path.join(run_dir, f"{name}.xml"), os.path.join(INPUTS, f"{name}.xml"))


def write_provenance() -> None:
    """INPUTS/README.rst: for every recorded input the command line, tkperf's
    and fio's versions, the host's kernel and the date, read from its file."""
    from tkperf import store

    out = ["Recorded golden inputs", "======================", "",
           "Written by ``sudo python tests/lab/regenerate_golden.py --record`` (do not edit): one short",
           "real ``--quick`` run per built-in test type that the four ``examples/`` files do not",
           "run, each on its own 256 MiB loop device over a sparse file (the figures describe the",
           "page cache behind a loop device, not a drive; none is PTS-conformant).  Every run also",
           "had ``--name NAME --outdir DIR --yes --quiet --no-report --description "
           "examples/description.txt``.", ""]
    for name, argv in RECORDED.items():
        path = os.path.join(INPUTS, f"{name}.xml")
        if not os.path.exists(path):
            continue
        run = store.load(path)
        title = f"{name}.xml"
        out += [title, "-" * len(title), "",
                f"Recorded {run.started} with tkperf {run.host.tkperf_version}, "
                f"{run.host.fio_version}, Linux {run.host.kernel}::", "",
                "    tkperf " + " ".join(a.format(dev="/dev/loopN") for a in argv), ""]
    with open(os.path.join(INPUTS, "README.rst"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))


def regenerate() -> None:
    tmp = tempfile.mkdtemp(prefix="tkperf-golden-")
    try:
        for n, xml in inputs():
            _write(f"{n}.show.json", _stdout(["show", xml, "--json"]))
            _write(f"{n}.show.txt", _stdout(["show", xml]))
            _stdout(["report", xml, "--format", "rst", "--outdir", os.path.join(tmp, n), "-q"])
            shutil.copyfile(os.path.join(tmp, n, f"{n}.rst"), os.path.join(GOLDEN, f"{n}.report.rst"))
        _stdout(["compare", *(os.path.join(EXAMPLES, f"{n}.xml") for n in NAMES), "--format", "rst",
                 "--outdir", os.path.join(tmp, "cmp"), "-q"])
        shutil.copyfile(os.path.join(tmp, "cmp", "comparison.rst"), os.path.join(GOLDEN, "compare-all.report.rst"))
        # the summary page's table of example-ssd (tests/docs/test_report.py)
        from tkperf import store
        from tkperf.render import rst
        from tkperf.report import page

        figures = page.summary_figures(store.load(os.path.join(EXAMPLES, "example-ssd.xml")))
        with open(os.path.join(os.path.dirname(GOLDEN), "example-ssd-summary.rst"), "w", encoding="utf-8") as fh:
            fh.write(rst.to_rst([page.summary_table(figures)]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cli(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", action="store_true",
                   help="first make the recorded inputs again as real runs on loop devices (root)")
    p.add_argument("--only", help=f"with --record: comma list of inputs to record (default all: "
                                  f"{','.join(RECORDED)})")
    args = p.parse_args(argv)
    if args.only and not args.record:
        p.error("--only needs --record")
    if args.record:
        names = args.only.split(",") if args.only else list(RECORDED)
        unknown = [n for n in names if n not in RECORDED]
        if unknown:
            p.error(f"unknown input {','.join(unknown)} (known: {','.join(RECORDED)})")
        os.chdir(REPO)  # the recorded command lines name files relative to the repository
        for n in names:
            print(f"recording {n} ...", flush=True)
            record(n)
        write_provenance()
    regenerate()
    print(f"golden files written to {GOLDEN}; review: git diff tests/data/golden")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
