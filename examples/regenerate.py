"""Make the example result files again, as real --quick runs (root needed).

Each example runs ``tkperf ssd run`` on a 256 MiB loop device over a sparse
file that this script creates and always detaches: the figures describe the
page cache behind a loop device, not a drive, and --quick runs are not
PTS-conformant (the files say so).

    sudo python3 examples/regenerate.py [--only example-ssd,...] [--outdir examples]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tkperf.cli import main  # noqa: E402
from tkperf.target.loopdev import LoopDevice  # noqa: E402

SIZE = 256 * 1024 * 1024
DESCRIPTION = """Vendor: Example Co.
Model: Loop-256 demo drive
Serial: EX-0003
Firmware: 1.0
Interface: loop (virtual)
Sponsor: tkperf project (example data)
"""
EXAMPLES = {
    "example-ssd": ["--quick"],
    "example-ssd-2": ["--quick", "--description", "{desc}"],
    "example-client": ["--quick", "--class", "client", "-iod", "4", "--tests", "iops,wsat",
                       "--wsat-tgbw", "24x"],
    "example-full": ["--quick", "--bs", "1024k,128k,64k,32k,16k,8k,4k,512",
                     "--mix", "100/0,95/5,65/35,50/50,35/65,5/95,0/100", "--tp-bs", "1024k,128k",
                     "--lat-bs", "8k,4k,512", "--lat-mix", "100/0,65/35,0/100"],
}


def regenerate(name: str, argv: list, outdir: str, scratch: str) -> int:
    desc = os.path.join(scratch, "description.txt")
    with open(desc, "w") as fh:
        fh.write(DESCRIPTION)
    with LoopDevice(SIZE, scratch) as dev:
        run_dir = os.path.join(scratch, name)
        rc = main(["ssd", "run", dev, "--name", name, "--outdir", run_dir, "--yes", "--quiet",
                   "--no-report", *[a.format(desc=desc) for a in argv]])
        if rc == 0:
            shutil.copyfile(os.path.join(run_dir, f"{name}.xml"), os.path.join(outdir, f"{name}.xml"))
        return rc


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="comma list of examples (default: all)")
    p.add_argument("--outdir", default=HERE)
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(EXAMPLES)
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix="tkperf-example-") as scratch:
            rc = regenerate(name, EXAMPLES[name], args.outdir, scratch)
            print(f"{name}: {'written' if rc == 0 else f'FAILED (exit {rc})'}")
            failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(cli())
