"""``tkperf demo``: the quick profile of the default tests on a throw-away target.

Makes a loop device over a sparse file (or, where that cannot be made, a
plain file target, and says so), runs ``tkperf ssd run --quick`` on it,
and removes the target again whatever happens.
"""
from __future__ import annotations

import os
import sys
import tempfile
from typing import Callable, List, Sequence

from tkperf.engine import options
from tkperf.model import store
from tkperf.target.loopdev import try_loop


def demo_name(outdir: str, overwrite: bool) -> str:
    """'demo', or with an earlier demo's result in ``outdir`` (the README's
    line run again, after an upgrade) the first free 'demo-N': the earlier
    result is kept and the new demo runs; ``--overwrite`` replaces it."""
    if overwrite or not os.path.lexists(store.run_file(outdir, "demo")):
        return "demo"
    n = 2
    while os.path.lexists(store.run_file(outdir, f"demo-{n}")):
        n += 1
    print(f"tkperf demo: {store.run_file(outdir, 'demo')} holds an earlier demo, kept; this one is "
          f"demo-{n} (--overwrite replaces the earlier one)", file=sys.stderr)
    return f"demo-{n}"


def run_demo(outdir: str, size: int, quiet: bool, main: Callable[[Sequence[str]], int],
             debug: bool = False, overwrite: bool = False) -> int:
    workdir = tempfile.mkdtemp(prefix="tkperf-demo-")
    loop, why = try_loop(size, workdir)
    try:
        argv: List[str] = ["ssd", "run", "--quick", "--yes", "--name", demo_name(outdir, overwrite),
                           "--outdir", outdir]
        if quiet:
            argv.append("--quiet")
        if debug:
            argv.append("--debug")
        if overwrite:
            argv.append("--overwrite")
        if loop is not None:
            print(f"tkperf demo: testing a {size >> 20} MiB loop device {loop.path} "
                  f"over a sparse file", file=sys.stderr)
            argv.append(loop.path)
        else:
            target = os.path.join(workdir, "demo-target.img")
            print(f"tkperf demo: {why}; testing a {size >> 20} MiB file target {target} instead",
                  file=sys.stderr)
            argv += [target, "--size", str(size)]
        return main(argv)
    finally:
        if loop is not None:
            loop.__exit__(None, None, None)
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


def cmd_demo(args) -> int:
    return run_demo(args.outdir, options.parse_size(args.size, "--size"), args.quiet, args.main,
                    getattr(args, "debug", False), getattr(args, "overwrite", False))


def register(sub) -> None:
    demo = sub.add_parser("demo", help="quick run of the default tests on a throw-away loop device",
                          allow_abbrev=False)
    demo.add_argument("--outdir", default="tkperf-demo", help="where results go (default ./tkperf-demo)")
    demo.add_argument("--size", default="256m", help="size of the demo target (default 256m)")
    demo.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    demo.add_argument("--debug", action="store_true", help="debug detail in the run's log (as for ssd run)")
    demo.add_argument("--overwrite", action="store_true",
                      help="replace the result of an earlier demo in OUTDIR (without it, a second demo "
                           "there is kept and the new one is named demo-2, demo-3 ...)")
    demo.set_defaults(func=cmd_demo)
