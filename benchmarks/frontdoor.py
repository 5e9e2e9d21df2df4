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
milliseconds (the minimum of 7 runs, 3 with ``--tiny``) of ``python -m
tkperf --version``, ``--help``, ``help``, ``completion bash``, ``show
FILE``, ``check FILE --baseline FILE`` and ``tests`` in a fresh
interpreter, the ratio to ``python -c pass``, how many tkperf modules each
loads and whether it loads matplotlib, the report's document builders
(:data:`HEAVY`) or test types.  tkperf's modules are compiled once first
(as an installed package is), whatever ``PYTHONDONTWRITEBYTECODE`` says.

    sudo python benchmarks/frontdoor.py [-v] [--tiny] [--starts]

``--starts``: the command starts alone (no loop device, no root).

``--tiny`` is the same run (it is small already: it stops at the first fio),
with fewer repetitions of the starts.
"""
from __future__ import annotations

import os
import pkgutil
import resource
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


EXAMPLE = os.path.join(os.path.dirname(PACKAGE), "examples", "example-ssd.xml")
STARTS = (("--version",), ("--help",), ("help",), ("completion", "bash"), ("show", EXAMPLE),
          ("check", EXAMPLE, "--baseline", EXAMPLE), ("tests",))
#: What a command that builds no report should not load: plotting and the report's document builders.
HEAVY = ("matplotlib", "tkperf.report.report", "tkperf.render.documents", "tkperf.render.pdf",
         "tkperf.render.charts")


#: Runs ``python -m tkperf ARGS`` and writes the names of the modules loaded at its exit to the file named first.
PROBE = ("import atexit, runpy, sys\n"
         "out = sys.argv.pop(1)\n"
         "atexit.register(lambda: open(out, 'w').write('\\n'.join(sys.modules)))\n"
         "runpy.run_module('tkperf', run_name='__main__', alter_sys=True)\n")


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.dirname(PACKAGE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _once(argv: list) -> tuple:
    """(wall s, CPU s) of one fresh interpreter running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([sys.executable, *argv], capture_output=True, env=_env())
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _modules(args: tuple) -> list:
    """The modules ``tkperf ARGS`` loads, in a run of its own (which also
    compiles tkperf's modules, as an installed package has them)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "modules")
        subprocess.run([sys.executable, "-c", PROBE, out, *args], capture_output=True, env=_env())
        with open(out, encoding="utf-8") as fh:
            return fh.read().split()


def starts(repeat: int) -> None:
    bare = [_once(["-c", "pass"]) for _ in range(repeat)]
    base_wall, base_cpu = min(b[0] for b in bare), min(b[1] for b in bare)
    print(f"\ncommand starts (the minimum of {repeat} runs; load {os.getloadavg()[0]:.1f}):")
    print(f"  {'python -c pass':<28} {base_wall * 1e3:6.0f} ms wall {base_cpu * 1e3:5.0f} ms CPU")
    for args in STARTS:
        loaded = _modules(args)
        runs = [_once(["-m", "tkperf", *args]) for _ in range(repeat)]
        wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        ours = [m for m in loaded if m.startswith("tkperf")]
        heavy = [m for m in HEAVY if m in loaded]
        kinds = len({m.split(".")[2] for m in ours if m.startswith("tkperf.testtypes.")})
        words = " ".join(a if a != EXAMPLE else "FILE" for a in args)
        print(f"  tkperf {words:<21} {wall * 1e3:6.0f} ms wall {cpu * 1e3:5.0f} ms CPU "
              f"({wall / base_wall:4.1f}x wall, {cpu / base_cpu if base_cpu else 0:4.1f}x CPU), "
              f"{len(ours)} tkperf modules, {kinds} test types, heavy: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    if "--starts" not in sys.argv:
        main_()
    starts(3 if "--tiny" in sys.argv else 7)
