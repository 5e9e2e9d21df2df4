"""Make the example result files again, as real --quick runs (root needed).

Each example runs ``tkperf ssd run`` on a 256 MiB loop device over a sparse
file that this script creates and always detaches: the figures describe the
page cache behind a loop device, not a drive, and --quick runs are not
PTS-conformant (the files say so).

``example-emulated`` runs on a 64 MiB emulated SSD instead (``tkperf
simdrive``, default model; labelled so in the file: transport "emulated
SSD").  Beside its result file go the model's own counters and per-second
history (``example-emulated-model.json``), and docs/images gets the
model's IOPS over the bytes written next to tkperf's WSAT plot of the same
run (``simdrive-model.png``, ``simdrive-wsat.png``, for docs/simdrive.rst).

    sudo python3 examples/regenerate.py [--only example-ssd,...] [--outdir examples]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tkperf.cli import main  # noqa: E402
from tkperf.simdrive import control as simdrive  # noqa: E402
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
    "example-emulated": ["--quick", "--tests", "wsat", "--wsat-tgbw", "6x", "--wsat-time", "3m"],
}
EMULATED = {"example-emulated": 64 * 1024 * 1024}
IMAGES = os.path.join(os.path.dirname(HERE), "docs", "images")


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


def regenerate_emulated(name: str, argv: list, outdir: str, scratch: str) -> int:
    device = simdrive.up(EMULATED[name], {}, "example")
    rundir = simdrive.find(device)
    try:
        run_dir = os.path.join(scratch, name)
        rc = main(["ssd", "run", device, "--name", name, "--outdir", run_dir, "--yes", "--quiet",
                   "--report-format", "rst", "--png", *argv])
        model = simdrive.stats(rundir, history=True)
    finally:
        simdrive.down(rundir)
    if rc != 0:
        return rc
    shutil.copyfile(os.path.join(run_dir, f"{name}.xml"), os.path.join(outdir, f"{name}.xml"))
    with open(os.path.join(outdir, f"{name}-model.json"), "w", encoding="utf-8") as fh:
        json.dump({k: v for k, v in model.items() if k not in ("pid", "device")}, fh, indent=1)
        fh.write("\n")
    wsat = [p for p in glob.glob(os.path.join(run_dir, "**", "*.png"), recursive=True) if "wsat" in p]
    if wsat:
        shutil.copyfile(sorted(wsat, key=len)[0], os.path.join(IMAGES, "simdrive-wsat.png"))
    plot_model(model, os.path.join(IMAGES, "simdrive-model.png"))
    return 0


def plot_model(model: dict, path: str) -> None:
    """The model's host write IOPS per model second over the bytes written, with
    its first foreground GC (the cliff) marked."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    hist = model["history"]
    cap = model["capacity_bytes"]
    xs, ys = [], []
    for (t0, _b0, n0), (t1, b1, n1) in zip(hist[:-1], hist[1:-1]):  # the last second is partial
        if n1 > n0:
            xs.append(b1 / cap)
            ys.append((n1 - n0) / (t1 - t0))
    fig, ax = plt.subplots(figsize=(7, 3.2), dpi=110)
    ax.plot(xs, ys, marker=".", linewidth=1, color="#1f5fa8", label="model: host writes per model second")
    cliff = model.get("first_fg_gc_host_write_bytes")
    if cliff:
        ax.axvline(cliff / cap, color="#b03030", linestyle="--", linewidth=1,
                   label=f"first foreground GC ({cliff / cap:.2f} capacities)")
    ax.set_xlabel("host bytes written, in capacities")
    ax.set_ylabel("IOPS (model)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"Emulated SSD, {cap >> 20} MiB, default model: WAF {model['waf']:.2f} at the end", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def cli() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="comma list of examples (default: all)")
    p.add_argument("--outdir", default=HERE)
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(EXAMPLES)
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix="tkperf-example-") as scratch:
            make = regenerate_emulated if name in EMULATED else regenerate
            rc = make(name, EXAMPLES[name], args.outdir, scratch)
            print(f"{name}: {'written' if rc == 0 else f'FAILED (exit {rc})'}")
            failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(cli())
