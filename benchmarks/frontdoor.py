"""How many of tkperf's files a run's request visits on its way to fio.

Runs ``tkperf ssd run LOOP --tests iops --quick --yes --no-report`` in this
process on a throw-away loop device, with a profile hook counting the
distinct files of ``tkperf/`` whose functions are called up to the start
of the first fio process (the run is stopped there): from the call of
``tkperf.cli.main`` (parsing included), from the call of the run
command's own code (``cli/run.py``'s ``cmd_run``: where the architecture
review of issue 36 started its count of 52), from the moment the command
line has become a request, and from the call of ``run(request)``.  Every module of tkperf is imported
first, so code run at import time is not counted.  Needs root.

Then each command's start beside a bare Python's (issue 59): wall and CPU
seconds (medians of 7 runs, 3 with ``--tiny``) of ``python -m tkperf
--version``, ``--help``, ``help``, ``completion bash``, ``show --help`` and
``check --help`` in a fresh interpreter, the ratio to ``python -c pass``,
and how many tkperf modules each loads.

    sudo python benchmarks/frontdoor.py [-v] [--tiny]

``--tiny`` is the same run (it is small already: it stops at the first fio),
with fewer repetitions of the starts.
"""
from __future__ import annotations

import os
import pkgutil
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import import_module

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tkperf  # noqa: E402
from tkperf import programs  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.target.loopdev import try_loop  # noqa: E402

PACKAGE = os.path.dirname(os.path.abspath(tkperf.__file__))
#: The module whose ``run(request)`` is the front door.
DOORS = (os.path.join("engine", "run.py"), os.path.join("cli", "run.py"))


class _AtFio(BaseException):
    """Raised in place of the first fio workload."""


def _import_all() -> None:
    for info in pkgutil.walk_packages([PACKAGE], "tkperf."):
        if ".remote" in info.name or info.name.endswith("__main__"):
            continue  # a local run never loads the remote side
        try:
            import_module(info.name)
        except ImportError:
            pass


def main_() -> None:
    _import_all()
    visits: list = []  # (file, since the request, since the front door, since the run command) in call order
    state = {"request": False, "door": False, "command": False}

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name != "<module>":
            path = frame.f_code.co_filename
            if path.startswith(PACKAGE):
                name = frame.f_code.co_name
                if name == "cmd_run" and path.endswith(os.path.join("cli", "run.py")):
                    state["command"] = True  # the run command's own code: where a reader of 'ssd run' starts
                if name == "__post_init__" and path.endswith(os.path.join("engine", "request.py")):
                    state["request"] = True  # the command line is a request now
                if name == "run" and path.endswith(DOORS):
                    state["door"] = True  # run(request): cli/run.py's before the engine had one
                visits.append((os.path.relpath(path, os.path.dirname(PACKAGE)), state["request"], state["door"],
                               state["command"]))

    start = programs.start

    def at_fio(argv, **kw):
        if os.path.basename(str(argv[0])) == "fio":
            sys.setprofile(None)
            raise _AtFio()
        return start(argv, **kw)

    programs.start = at_fio
    with tempfile.TemporaryDirectory() as tmp:
        loop, why = try_loop(256 * 2**20, tmp)
        if loop is None:
            sys.exit(f"needs a loop device: {why}")
        try:
            sys.setprofile(hook)
            try:
                main(["ssd", "run", loop.path, "--tests", "iops", "--quick", "--yes", "--no-report",
                      "-q", "--outdir", os.path.join(tmp, "out")])
            except _AtFio:
                pass
            finally:
                sys.setprofile(None)
        finally:
            loop.__exit__(None, None, None)
    every = list(dict.fromkeys(f for f, _, _, _ in visits))
    command = list(dict.fromkeys(f for f, _, _, c in visits if c))
    after = list(dict.fromkeys(f for f, r, _, _ in visits if r))
    door = list(dict.fromkeys(f for f, _, d, _ in visits if d))
    print(f"files visited from the command line to fio:  {len(every)}")
    print(f"files visited from the run command to fio:   {len(command)}")
    print(f"files visited from the request to fio:       {len(after)}")
    print(f"files visited from run(request) to fio:      {len(door)}")
    if "-v" in sys.argv:  # "*": from run(request) on; "+": from the request on; "-": before it
        print("\n".join(("* " if f in door else "+ " if f in after else "- ") + f for f in every))


STARTS = (("--version",), ("--help",), ("help",), ("completion", "bash"), ("show", "--help"), ("check", "--help"))


def _once(argv: list) -> tuple:
    """(wall s, CPU s, tkperf modules loaded) of one fresh interpreter running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(PACKAGE)))
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    modules = sum(1 for line in out.stderr.splitlines() if line.rstrip().split("|")[-1].strip().startswith("tkperf"))
    return wall, cpu, modules


def starts(repeat: int) -> None:
    bare = [_once(["-c", "pass"]) for _ in range(repeat)]
    base_wall = statistics.median(b[0] for b in bare)
    base_cpu = statistics.median(b[1] for b in bare)
    print(f"\ncommand starts (medians of {repeat}; load {os.getloadavg()[0]:.1f}):")
    print(f"  python -c pass                  {base_wall * 1e3:7.0f} ms wall {base_cpu * 1e3:6.0f} ms CPU")
    for args in STARTS:
        runs = [_once(["-m", "tkperf", *args]) for _ in range(repeat)]
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"  tkperf {' '.join(args):<24} {wall * 1e3:7.0f} ms wall {cpu * 1e3:6.0f} ms CPU "
              f"({wall / base_wall:4.1f}x wall, {cpu / base_cpu if base_cpu else 0:4.1f}x CPU), "
              f"{runs[0][2]} tkperf modules")


if __name__ == "__main__":
    main_()
    starts(3 if "--tiny" in sys.argv else 7)
