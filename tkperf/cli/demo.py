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

import fcntl
import fnmatch
import glob
import os
import shlex
import stat
import sys
import tempfile
import time
from typing import Callable, Dict, List, Sequence

from tkperf import programs, store
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


#: What a demo's work folder holds: the loop device's sparse file, or the file target.
WORK_FILES = ("tkperf-loop-*.img", "demo-target.img")


def _loop_backing_files() -> Dict[str, str]:
    """Each loop device's backing file -> the device."""
    out: Dict[str, str] = {}
    for path in glob.glob("/sys/block/loop*/loop/backing_file"):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                out[fh.read().strip()] = "/dev/" + path.split("/")[3]
        except OSError:
            continue
    return out


def clear_stale(base: str = "") -> List[str]:
    """Remove the work folders (``tkperf-demo-*`` in the temporary folder)
    that earlier demos left when they were killed: only a folder of this
    user, writable by no one else, not locked by a demo running now (each
    holds a lock on its folder), holding nothing but a demo's own files, none
    of them a loop device's backing file now; never through a link.  The
    folders removed.  A loop device still attached to such a folder's file
    (its demo was killed before it could detach it) is detached first."""
    base = base or tempfile.gettempdir()
    removed: List[str] = []
    try:
        names = sorted(n for n in os.listdir(base) if n.startswith("tkperf-demo-"))
    except OSError:
        return removed
    backing = _loop_backing_files()
    for name in names:
        path = os.path.join(base, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone, not a folder, or a link: not ours to touch
        try:
            st = os.fstat(fd)
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a demo running now
            inside = os.listdir(fd)
            if not inside and time.time() - st.st_mtime < 3600:
                continue  # made just now, by a demo that is about to lock it
            if not all(_stale_file(fd, n) for n in inside):
                continue
            attached = [backing[os.path.join(path, n)] for n in inside if os.path.join(path, n) in backing]
            for device in attached:
                programs.run([programs.require("losetup"), "--detach", device], timeout=60, check=False,
                             what="losetup --detach")
            if set(attached) & set(_loop_backing_files().values()):
                continue  # still attached (in use): left as it is
            for n in inside:
                os.unlink(n, dir_fd=fd)
            os.rmdir(path)
            removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _stale_file(fd: int, name: str) -> bool:
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in WORK_FILES):
        return False
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


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
    for path in clear_stale():
        print(f"tkperf demo: removed {path}, left by an earlier demo that was killed", file=sys.stderr)
    workdir = tempfile.mkdtemp(prefix="tkperf-demo-")
    held = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    fcntl.flock(held, fcntl.LOCK_EX)  # in use: another demo's clear_stale leaves it alone
    loop, why = None, ""
    try:
        loop, why = try_loop(size, workdir)
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
        with programs.signals_held():  # a second signal must not cut the clean-up in two
            try:
                if loop is not None:
                    loop.__exit__(None, None, None)
                for name in os.listdir(workdir):
                    os.unlink(os.path.join(workdir, name))
                os.rmdir(workdir)
            finally:
                os.close(held)


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
