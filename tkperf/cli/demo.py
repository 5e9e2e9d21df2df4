"""``tkperf demo``: the quick profile of the default tests on a throw-away target.

Makes an emulated SSD (``tkperf simdrive``: an FTL model with a burst, a
write cliff and a steady state, so WSAT shows what it is for), or with
``--loop`` or where that cannot be made a loop device over a sparse file
(or, where that cannot be made either, a plain file target), says which,
runs ``tkperf ssd run --quick`` on it, and removes the target again
whatever happens.  An interrupted demo is never told to resume (its device
is gone, and a device of the same number may be another one by then): it
says to run the demo again.
"""
from __future__ import annotations

import os
import shlex
import sys
import tempfile
from typing import Callable, List, Sequence

from tkperf import store
from tkperf.cli import advice
from tkperf.errors import EXIT_SIGHUP, EXIT_SIGINT, EXIT_SIGTERM, TkperfError
from tkperf.kit import options
from tkperf.simdrive import control as simdrive
from tkperf.target.loopdev import try_loop

LOOP_SIZE = 256 << 20
EMULATED_SIZE = 32 << 20
#: WSAT on the emulated SSD: on to 6x its capacity, where its model is steady
#: (the PTS stops at 4x; the transition of a 7% over-provisioned drive takes
#: about 5 fills), at most this long.
EMULATED_WSAT = ["--wsat-tgbw", "6x", "--wsat-time", "90s"]


def _emulated(size: int):
    """(its runtime directory and loop device, or None; why not)."""
    why = simdrive.available()
    if why:
        return None, why
    try:
        device = simdrive.up(size, {}, "")
    except TkperfError as exc:
        return None, f"no emulated SSD ({exc})"
    return (simdrive.find(device), device), ""


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
             debug: bool = False, overwrite: bool = False, plain_loop: bool = False) -> int:
    """``size`` 0 is the target's default: 32 MiB emulated, 256 MiB otherwise."""
    emulated, why_not = (None, "") if plain_loop else _emulated(size or EMULATED_SIZE)
    if emulated is not None:
        try:
            print(f"tkperf demo: testing a {(size or EMULATED_SIZE) >> 20} MiB emulated SSD {emulated[1]} "
                  "(tkperf simdrive: an FTL model with a burst, a write cliff and a steady state; "
                  "--loop for a plain loop device)", file=sys.stderr)
            return _throwaway(main, _argv(outdir, quiet, debug, overwrite) + EMULATED_WSAT + [emulated[1]], outdir)
        finally:
            simdrive.down(emulated[0])
    size = size or LOOP_SIZE
    workdir = tempfile.mkdtemp(prefix="tkperf-demo-")
    loop, why = try_loop(size, workdir)
    try:
        argv = _argv(outdir, quiet, debug, overwrite)
        if loop is not None:
            instead = f"{why_not}; " if why_not else ""
            print(f"tkperf demo: {instead}testing a {size >> 20} MiB loop device {loop.path} "
                  f"over a sparse file" + (" instead" if why_not else ""), file=sys.stderr)
            argv.append(loop.path)
        else:
            target = os.path.join(workdir, "demo-target.img")
            print(f"tkperf demo: {why_not + '; ' if why_not else ''}{why}; testing a {size >> 20} MiB file "
                  f"target {target} instead",
                  file=sys.stderr)
            argv += [target, "--size", str(size)]
        return _throwaway(main, argv, outdir)
    finally:
        if loop is not None:
            loop.__exit__(None, None, None)
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


def _throwaway(main: Callable[[Sequence[str]], int], argv: List[str], outdir: str) -> int:
    """Runs the demo's ``ssd run``; its target goes when it ends, so it is never told to resume."""
    with advice.throwaway_target():
        code = main(argv)
    if code in (EXIT_SIGHUP, EXIT_SIGINT, EXIT_SIGTERM):
        again = "tkperf demo --overwrite" + (f" --outdir {shlex.quote(outdir)}" if outdir != "tkperf-demo" else "")
        print("tkperf demo: interrupted; its throw-away target is removed now, so this run cannot be "
              f"resumed: run the demo again ({again})", file=sys.stderr)
    return code


def _argv(outdir: str, quiet: bool, debug: bool, overwrite: bool) -> List[str]:
    argv: List[str] = ["ssd", "run", "--quick", "--yes", "--name", demo_name(outdir, overwrite), "--outdir", outdir]
    if quiet:
        argv.append("--quiet")
    if debug:
        argv.append("--debug")
    if overwrite:
        argv.append("--overwrite")
    return argv


def cmd_demo(args) -> int:
    size = options.parse_size(args.size, "--size") if args.size else 0
    return run_demo(args.outdir, size, args.quiet, args.main, getattr(args, "debug", False),
                    getattr(args, "overwrite", False), getattr(args, "loop", False))


def register(sub) -> None:
    demo = sub.add_parser("demo", help="quick run of the default tests on a throw-away emulated SSD",
                          allow_abbrev=False)
    demo.add_argument("--outdir", default="tkperf-demo", help="where results go (default ./tkperf-demo)")
    demo.add_argument("--size", help="size of the demo target (default 32m emulated, 256m with --loop)")
    demo.add_argument("--loop", action="store_true",
                      help="a plain loop device over a sparse file instead of the emulated SSD (which has a "
                           "burst, a write cliff and a steady state: tkperf help simdrive)")
    demo.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    demo.add_argument("--debug", action="store_true", help="debug detail in the run's log (as for ssd run)")
    demo.add_argument("--overwrite", action="store_true",
                      help="replace the result of an earlier demo in OUTDIR (without it, a second demo "
                           "there is kept and the new one is named demo-2, demo-3 ...)")
    demo.set_defaults(func=cmd_demo)
