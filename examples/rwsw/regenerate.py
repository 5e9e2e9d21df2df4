"""Make examples/rwsw/pgbench.xml and pgbench.iolog again (root needed).

A real application's capture: PostgreSQL, with its data directory on an
ext4 file system on a 512 MiB loop device over a sparse file made for it
(tests/lab/pgbench_lab.py; detached afterwards), runs pgbench's TPC-B-like
transactions with 4 clients while ``tkperf capture`` records the device for
10 s in steps of 1 s.  Its report is built from the file, not shipped;
two of its plots go to docs/images for docs/rwsw.rst (``rwsw-stream-map.png``,
``rwsw-cumulative.png``; ``--plots-only`` makes them again from the file
there is):

    sudo python3 examples/rwsw/regenerate.py [--outdir examples/rwsw] [--plots-only]
    tkperf show examples/rwsw/pgbench.xml
    tkperf report examples/rwsw/pgbench.xml --outdir /tmp/pgbench-report
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "lab")]

from pgbench_lab import PgbenchLab, why_not  # noqa: E402
from tkperf.cli import main  # noqa: E402

SECONDS = 10
IMAGES = os.path.join(ROOT, "docs", "images")
PLOTS = {"stream-map.png": "rwsw-stream-map.png", "cumulative-workload.png": "rwsw-cumulative.png"}


def plots(outdir: str) -> int:
    """The report of ``outdir/pgbench.xml`` (reST with PNG plots, in a temporary
    directory); two of its plots copied to docs/images."""
    with tempfile.TemporaryDirectory(prefix="tkperf-rwsw-report-") as tmp:
        rc = main(["report", os.path.join(outdir, "pgbench.xml"), "--outdir", tmp, "--format", "rst", "--png",
                   "-q"])
        for src, dst in PLOTS.items():
            shutil.copyfile(os.path.join(tmp, "pgbench-plots", src), os.path.join(IMAGES, dst))
    return rc


def regenerate(outdir: str) -> int:
    why = why_not()
    if why:
        print(f"cannot run PostgreSQL here: {why}", file=sys.stderr)
        return 2
    for suffix in (".xml", ".iolog"):
        path = os.path.join(outdir, "pgbench" + suffix)
        if os.path.exists(path):
            os.unlink(path)  # this script's own output, made again
    with tempfile.TemporaryDirectory(prefix="tkperf-rwsw-example-") as work:
        with PgbenchLab(work) as lab:
            load = lab.start_load(SECONDS + 4)
            try:
                rc = main(["capture", lab.device, "--duration", str(SECONDS), "--name", "pgbench",
                           "--outdir", outdir, "--step", "1s"])
            finally:
                out, _ = load.communicate(timeout=300)
            print(f"pgbench: {lab.tps(out):.0f} transactions per second")
    return rc or plots(outdir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", default=HERE)
    parser.add_argument("--plots-only", action="store_true",
                        help="only the plots of docs/images, from the file there is")
    args = parser.parse_args()
    sys.exit(plots(args.outdir) if args.plots_only else regenerate(args.outdir))
