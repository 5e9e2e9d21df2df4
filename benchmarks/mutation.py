"""Mutation testing of the modules that decide tkperf's verdicts.

Runs mutmut (the ``mutation`` extra: ``pip install -e '.[mutation]'``) over
the steady-state rule, the conformance verdict, the nightly regression
check with its noise test and change points, the latency histograms, fio's
JSON output and the TP placement, with
the unit tests that need no device, and prints the score of each::

    python benchmarks/mutation.py                      # every module, minutes
    python benchmarks/mutation.py steadystate histogram
    python benchmarks/mutation.py --survivors steadystate   # and each survivor's diff

A mutant is a small change of the code (``<=`` to ``<``, ``0.10`` to
``1.1``, a string changed); it is *killed* when a test fails.  A mutant
that survives is a change of behaviour no test notices -- or an equivalent
one, which cannot change behaviour at all.  Those are listed, each with its
reason, in ``tests/data/mutation-equivalents.txt`` and reported apart; the
score leaves them out.  A listed mutant that is now killed, or no longer
made, is reported as stale.

The work happens in a copy of the repository (a temporary directory, or
``--workdir`` to keep mutmut's results for ``--report-only``), never in the
checkout.  Not part of the test suite: it takes minutes.  See
docs/testing.rst.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tests" / "data" / "mutation-equivalents.txt"


@dataclass(frozen=True)
class Module:
    name: str
    path: str
    #: Only the mutants of these functions or classes count (None: all of the file).
    parts: Optional[Tuple[str, ...]] = None

    @property
    def dotted(self) -> str:
        p = self.path[:-3].replace("/", ".")
        return p[: -len(".__init__")] if p.endswith(".__init__") else p


MODULES: Tuple[Module, ...] = (
    Module("steadystate", "tkperf/model/steadystate.py"),
    Module("conformance", "tkperf/verdict/conformance.py"),
    Module("regression", "tkperf/verdict/regression.py"),
    Module("comparable", "tkperf/verdict/comparable.py"),
    Module("persisting", "tkperf/verdict/persisting.py"),
    Module("noise", "tkperf/model/noise.py"),
    Module("family", "tkperf/model/family.py"),
    Module("changepoints", "tkperf/history/changepoints.py"),
    Module("histogram", "tkperf/model/histogram.py"),
    Module("fio-output", "tkperf/fio/output.py"),
    Module("placement", "tkperf/pts/placement.py"),
    Module("tp-sweep", "tkperf/testtypes/throughput/__init__.py", ("SequentialSweep",)),
)
#: The verdict modules whose joint score the method's guard is measured by.
VERDICT = ("steadystate", "conformance", "regression", "comparable", "noise", "histogram")

#: The unit tests run against the mutants: none needs a device or fio.
TESTS: Tuple[str, ...] = (
    "tests/unit/test_steadystate.py",
    "tests/unit/test_method_limits.py",
    "tests/e2e/test_conformance.py",
    "tests/unit/test_conformance_paths.py",
    "tests/e2e/test_dryrun.py",
    "tests/unit/test_check.py",
    "tests/unit/test_history.py",
    "tests/unit/test_noise.py",
    "tests/unit/test_changepoints.py",
    "tests/unit/test_histogram.py",
    "tests/unit/test_interval_response_times.py",
    "tests/unit/test_steady_points.py",
    "tests/unit/test_fio_json.py",
    "tests/unit/test_fio_output_limits.py",
    "tests/e2e/test_response_time.py",
    "tests/unit/test_tp_sweep.py",
    "tests/unit/test_tp_placement.py",
)
#: Tests of those files that need a loop device (and fio), or start a new
#: Python: they are left out.
DESELECT: Tuple[str, ...] = (
    "tests/e2e/test_conformance.py::test_dry_run_says_conformant_or_lists_deviations",
    "tests/e2e/test_dryrun.py::test_the_dry_runs_verdict_is_the_one_the_run_reaches",
    "tests/unit/test_check.py::test_check_leaves_matplotlib_out",
    "tests/unit/test_history.py::test_the_nightly_example_keeps_a_regression_red_until_it_is_accepted",
    "tests/unit/test_history.py::test_the_nightly_example_tells_a_new_change_point_once",
    "tests/unit/test_history.py::test_a_change_point_at_a_step_of_the_host_is_said_to_be_and_the_job_tells_"
    "only_the_drives",
    "tests/unit/test_history.py::test_the_nightly_example_leaves_out_what_a_loaded_host_set",
    "tests/unit/test_history.py::test_the_recorded_nights_benchmark_runs",
)

#: What the tests read besides the code.
COPIED = ("tkperf", "tests", "examples", "benchmarks")  # some tests run a benchmark script

KILLED = {1, 3, 36, 24, -24, 152, 255, 37}  # a failing test, a timeout, the type check
SURVIVED = {0}


def read_equivalents(path: Path = EQUIVALENTS) -> Dict[str, str]:
    """``mutant name -> reason`` from the equivalents file (``name  reason``
    per line, ``#`` comments)."""
    out: Dict[str, str] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        out[name] = reason.strip()
    return out


def part_of(module: Module, mutant: str) -> Optional[str]:
    """The function (or class) of ``module`` a mutant name belongs to."""
    prefix = module.dotted + "."
    if not mutant.startswith(prefix):
        return None
    rest = mutant[len(prefix):].rsplit("__mutmut_", 1)[0]
    if rest.startswith("xǁ"):
        return rest.split("ǁ")[1]  # a method: its class
    return rest[2:] if rest.startswith("x_") else rest


def prepare(workdir: Path, modules: Sequence[Module]) -> None:
    """Copy what the tests need into ``workdir`` and write mutmut's settings
    there.  mutmut's earlier mutants are removed: it would keep those of a
    file older than them, and the copy keeps the files' times."""
    if (workdir / "mutants").exists():
        shutil.rmtree(workdir / "mutants")
    for name in COPIED:
        if (workdir / name).exists():
            shutil.rmtree(workdir / name)
        shutil.copytree(ROOT / name, workdir / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # mutmut reads [tool.mutmut] from pyproject.toml, else [mutmut] from setup.cfg
    shutil.copy(ROOT / "pyproject.toml", workdir / "pyproject.toml")
    tests = [t for t in TESTS if (ROOT / t).exists()]
    tests += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_regression*.py"))
    selection = tests + [arg for d in DESELECT for arg in ("--deselect", d)]
    lines = ["[mutmut]", "source_paths = tkperf", "also_copy =", "    examples", "    benchmarks", "only_mutate ="]
    lines += [f"    {m.path}" for m in modules]
    lines += ["pytest_add_cli_args_test_selection ="] + [f"    {a}" for a in selection]
    lines += ["pytest_add_cli_args =", "    -p", "    no:cacheprovider", ""]
    (workdir / "setup.cfg").write_text("\n".join(lines), encoding="utf-8")


def results(workdir: Path, module: Module) -> Dict[str, Optional[int]]:
    """``mutant name -> exit code`` of one module (None: not run)."""
    meta = workdir / "mutants" / (module.path + ".meta")
    if not meta.exists():
        return {}
    codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
    if module.parts is None:
        return dict(codes)
    return {k: v for k, v in codes.items() if part_of(module, k) in module.parts}


@dataclass
class Score:
    module: Module
    total: int
    killed: int
    survivors: List[str]
    equivalent: List[str]
    stale: List[str]
    not_run: int

    @property
    def counted(self) -> int:
        return self.total - self.not_run - len(self.equivalent)

    @property
    def raw(self) -> float:
        run = self.total - self.not_run
        return 100.0 * self.killed / run if run else 100.0

    @property
    def pct(self) -> float:
        return 100.0 * self.killed / self.counted if self.counted else 100.0


def score(module: Module, codes: Dict[str, Optional[int]], equivalents: Dict[str, str]) -> Score:
    killed = [k for k, v in codes.items() if v in KILLED]
    not_run = [k for k, v in codes.items() if v is None]
    alive = sorted((k for k in codes if codes[k] not in KILLED and codes[k] is not None), key=_natural)
    mine = [k for k in equivalents if part_of(module, k) is not None
            and (module.parts is None or part_of(module, k) in module.parts)]
    equivalent = [k for k in alive if k in equivalents]
    stale = sorted((k for k in mine if k not in codes or codes[k] in KILLED), key=_natural)
    if not_run or not codes:
        stale = [k for k in stale if k in codes]  # a partial run, or none, cannot tell
    return Score(module, len(codes), len(killed), [k for k in alive if k not in equivalents],
                 equivalent, stale, len(not_run))


def _natural(name: str) -> Tuple[str, int]:
    base, _, n = name.rpartition("__mutmut_")
    return base, int(n) if n.isdigit() else 0


def show(workdir: Path, mutant: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "mutmut", "show", mutant], cwd=workdir,
                          capture_output=True, text=True)
    return proc.stdout.strip()


def report(scores: Sequence[Score], workdir: Path, diffs: bool) -> None:
    print(f"{'module':<14} {'mutants':>7} {'not run':>7} {'killed':>7} {'equiv.':>6} {'raw':>7} {'score':>7}")
    for s in scores:
        print(f"{s.module.name:<14} {s.total:>7} {s.not_run:>7} {s.killed:>7} {len(s.equivalent):>6} "
              f"{s.raw:>6.1f}% {s.pct:>6.1f}%")
    print("raw: killed of the mutants run; score: leaving out the equivalent ones listed in "
          + str(EQUIVALENTS.relative_to(ROOT)))
    verdict = [s for s in scores if s.module.name in VERDICT]
    if len(verdict) > 1:
        killed = sum(s.killed for s in verdict)
        counted = sum(s.counted for s in verdict)
        names = "+".join(s.module.name for s in verdict)
        print(f"{names}: {killed}/{counted} = {100.0 * killed / counted if counted else 100.0:.1f}%")
    for s in scores:
        for k in s.stale:
            print(f"stale equivalent (killed or no longer made): {k}")
        if s.survivors:
            print(f"\n{s.module.name}: {len(s.survivors)} survivor(s)")
        for k in s.survivors:
            print(f"  {k}")
            if diffs:
                print("    " + show(workdir, k).replace("\n", "\n    "))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Mutation scores of tkperf's verdict modules (mutmut).")
    ap.add_argument("modules", nargs="*", metavar="MODULE",
                    help="modules to mutate (default: all): " + ", ".join(m.name for m in MODULES))
    ap.add_argument("--workdir", type=Path, help="keep the copy and mutmut's results here (for --report-only)")
    ap.add_argument("--max-children", type=int, help="mutants tested at once (mutmut's default: the CPUs)")
    ap.add_argument("--survivors", action="store_true", help="print the diff of each surviving mutant")
    ap.add_argument("--report-only", action="store_true", help="only report the results already in --workdir")
    ap.add_argument("--tiny", action="store_true",
                    help="prepare the copy and read the equivalents, without mutmut: does it run")
    args = ap.parse_args(argv)
    by_name = {m.name: m for m in MODULES}
    unknown = [n for n in args.modules if n not in by_name]
    if unknown:
        ap.error(f"unknown module {unknown[0]!r}; known: {', '.join(by_name)}")
    if args.report_only and not args.workdir:
        ap.error("--report-only needs --workdir")
    modules = [by_name[n] for n in args.modules] or list(MODULES)
    temp = None
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="tkperf-mutation-")
        workdir = Path(temp.name)
    try:
        if args.tiny:
            prepare(workdir, modules)
            missing = [t for t in TESTS if not (workdir / t).is_file()]
            if missing:
                print(f"tests not in the copy: {', '.join(missing)}", file=sys.stderr)
                return 1
            print(f"prepared {workdir}: {len(modules)} modules, {len(TESTS)} test files, "
                  f"{len(read_equivalents())} listed equivalents (mutmut not run)")
            return 0
        if not args.report_only:
            prepare(workdir, modules)
            cmd = [sys.executable, "-m", "mutmut", "run"]
            if args.max_children:
                cmd += ["--max-children", str(args.max_children)]
            proc = subprocess.run(cmd, cwd=workdir, stdout=subprocess.DEVNULL)
            if proc.returncode != 0:
                print(f"mutmut run failed (exit {proc.returncode}); run it in {workdir} to see why",
                      file=sys.stderr)
                return 1
        equivalents = read_equivalents()
        scores = [score(m, results(workdir, m), equivalents) for m in modules]
        report(scores, workdir, args.survivors)
    finally:
        if temp is not None:
            temp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
