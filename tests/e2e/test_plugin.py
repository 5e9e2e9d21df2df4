"""The example plug-in (examples/plugin, test type ``rw4k``) as a user meets it.

A fresh virtual environment that sees the system's packages (tkperf and its
dependencies), the plug-in pip-installed into it from a copy of its source,
and then ``python -m tkperf`` of that environment end to end on a loop
device this test creates and always detaches: list, run, show, report, run
again, compare.  The system's own Python, which has not got the plug-in,
must still read the result file.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_fio
from tkperf import store

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SRC = REPO / "examples" / "plugin"
SECOND_PLUGIN = REPO / "tests" / "data" / "plugin_bsweep" / "tkperf_bsweep.py"
#: The smallest plug-in (examples/plugin-rr4k): 4 KiB random reads until the 20/10 rule holds.
RR4K = REPO / "examples" / "plugin-rr4k" / "tkperf_rr4k.py"
TKPERF_SRC = REPO / "tkperf"
TITLE = "Random 4KiB R/W mix"


def venv_available() -> bool:
    return importlib.util.find_spec("venv") is not None and importlib.util.find_spec("ensurepip") is not None


needs_venv = pytest.mark.skipif(not venv_available(),
                                reason="python3 -m venv is unavailable (no venv/ensurepip module; "
                                       "on Debian: apt-get install python3-venv)")


def run(argv, cwd, timeout=600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # tkperf comes from the system site-packages, as for a user
    env.pop("PYTHONHOME", None)
    return subprocess.run([str(a) for a in argv], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=timeout)


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def can_build_wheels(python: Path, cwd: Path) -> bool:
    """setuptools builds wheels itself from 70.1 on; before, it needs ``wheel``."""
    code = ("import importlib.util, setuptools, sys\n"
            "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2] if x.isdigit())\n"
            "sys.exit(0 if v >= (70, 1) or importlib.util.find_spec('wheel') else 1)")
    return run([python, "-c", code], cwd).returncode == 0


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """(python of a fresh venv with the plug-in installed, a scratch directory)."""
    base = tmp_path_factory.mktemp("plugin")
    env_dir, src = base / "venv", base / "src"
    made = run([sys.executable, "-m", "venv", "--system-site-packages", env_dir], base)
    if made.returncode != 0:
        pytest.skip(f"python3 -m venv is unavailable: {made.stderr.strip().splitlines()[-1:]}")
    python, pip = env_dir / "bin" / "python", env_dir / "bin" / "pip"
    if sys.prefix != sys.base_prefix:
        # tkperf itself lives in a virtual environment (as the README installs
        # it): a venv made from it sees the base Python's packages, so point
        # the new one at tkperf's environment too, as --system-site-packages would.
        new_site = run([python, "-c", "import site; print(site.getsitepackages()[0])"], base).stdout.strip()
        (Path(new_site) / "tkperf-parent-env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    if run([python, "-c", "import tkperf"], base).returncode != 0:
        pytest.skip("tkperf is not installed in the system site-packages (pip install '.[test]')")
    if not can_build_wheels(python, base):
        # Old setuptools (as ensurepip bundles it) cannot build a wheel without
        # the 'wheel' package; fetch it with pip as a user would.
        got = run([pip, "install", "--quiet", "wheel"], base)
        if got.returncode != 0:
            pytest.skip("cannot build the plug-in: setuptools < 70.1 without the 'wheel' package, "
                        f"and pip could not install it: {got.stderr.strip()[-300:]}")
    # A copy, so that no build/ or *.egg-info lands in the repository.
    shutil.copytree(PLUGIN_SRC, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    ok(run([pip, "install", "--no-deps", "--no-build-isolation", src], base))
    yield python, base


def tkperf(python: Path, cwd: Path, *args) -> subprocess.CompletedProcess:
    return run([python, "-m", "tkperf", *args], cwd)


# --- without a venv ----------------------------------------------------------------

def test_no_tkperf_file_names_the_plugin():
    files = [p for p in TKPERF_SRC.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len(files) > 50  # the package's sources were searched, not an empty folder
    hits = [str(p.relative_to(REPO)) for p in files if b"rw4k" in p.read_bytes().lower()]
    assert hits == []


def test_plugin_uses_nothing_private_of_tkperf():
    tree = ast.parse((PLUGIN_SRC / "tkperf_rw4k.py").read_text())
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tkperf"):
            used += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            used += [a.name for a in node.names if a.name.startswith("tkperf")]
    assert used, "the plug-in imports nothing of tkperf?"
    # only the public API module (issue 25): every import names tkperf.api
    assert {u for u in used if not u.startswith("tkperf.api")} == {"tkperf"}, used
    private = [u for u in used if any(part.startswith("_") for part in u.split("."))]
    assert private == []
    # and no private attribute of what it imported
    attrs = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr.startswith("_")
             and not n.attr.startswith("__")]
    assert attrs == []


def test_api_names_everything_it_lists():
    from tkperf import api
    assert api.__all__ and all(hasattr(api, name) for name in api.__all__)
    assert api.API_VERSION[0] == 3


def test_a_type_for_another_api_major_is_refused_in_one_line(monkeypatch, capsys):
    """A plug-in declaring an API MAJOR this tkperf does not have is left out
    with one line, the rest of tkperf unharmed."""
    from tkperf.cli import main
    from tkperf.kit import registry
    from tkperf.testtypes.iops import IopsTest

    class FromTheFuture(IopsTest):
        api_version = 4
        name = "future"

    class EntryPoint:  # what importlib.metadata hands over for an installed plug-in
        def load(self):
            return FromTheFuture

    monkeypatch.setattr(registry, "_entry_points", lambda: [("future", "mod:FromTheFuture", EntryPoint())])
    registry.reset()
    try:
        assert main(["tests"]) == 0
        out, err = capsys.readouterr()
        assert "future" not in out.split() and out.split()[0] == "iops"
        assert err.splitlines() == ["tkperf: warning: test type future (mod:FromTheFuture) could not be loaded: "
                                    "ValueError: test type future (mod:FromTheFuture) is written for tkperf API "
                                    "4; this tkperf has API 3.5 (update the plug-in or tkperf)"]
    finally:
        registry.reset()


def test_a_plugin_cannot_take_a_built_in_name(monkeypatch):
    """The built-ins load first (entry points into tkperf.testtypes, read from
    pyproject.toml's table when tkperf's own are not installed); a plug-in
    named like one is left out with a warning."""
    from tkperf.kit import registry
    from tkperf.testtypes.iops import IopsTest

    class Impostor(IopsTest):
        pass

    class EntryPoint:
        def load(self):
            return Impostor

    monkeypatch.setattr(registry, "_entry_points", lambda: [("iops", "evil:Impostor", EntryPoint())])
    registry.reset()
    try:
        assert type(registry.get("iops")) is IopsTest
        assert list(registry.types())[:4] == ["iops", "tp", "lat", "wsat"]
        assert any("evil:Impostor" in p and "the name 'iops' is taken" in p for p in registry.problems())
    finally:
        registry.reset()
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '[project.entry-points."tkperf.tests"]' in text
    assert {name for name, _v, _ep in registry._source_tree_builtins()} == set(registry.types())


def test_built_ins_come_through_the_plug_in_door():
    """tkperf's own test types are entry points of the group plug-ins use:
    installed, the registry finds them there, and they are the ones the
    source tree's pyproject.toml lists (one list, nothing else)."""
    from tkperf.kit import registry
    installed = [(name, value) for name, value, _ep in registry._entry_points()
                 if value.startswith(registry.BUILTIN_PACKAGE)]
    listed = [(name, value) for name, value, _ep in registry._source_tree_builtins()]
    assert len(listed) == 16 and sorted(installed) == sorted(listed)
    assert all(ep is not None for _n, _v, ep in registry.builtins())


def test_plugin_declares_its_entry_point():
    text = (PLUGIN_SRC / "pyproject.toml").read_text()
    assert 'name = "tkperf-rw4k"' in text
    assert '[project.entry-points."tkperf.tests"]' in text
    assert 'rw4k = "tkperf_rw4k:RandomRW4kTest"' in text


# --- in the venv ------------------------------------------------------------------------

@needs_venv
def test_tests_lists_plugin(venv):
    python, base = venv
    proc = ok(tkperf(python, base, "tests", "--json"))
    listed = json.loads(proc.stdout)
    assert (listed["schema"], listed["version"]) == ("tkperf-tests", 1)
    kinds = {k["name"]: k for k in listed["tests"]}
    assert {"iops", "tp", "lat", "wsat", "rw4k"} <= set(kinds)
    rw4k = kinds["rw4k"]
    assert rw4k["title"] == TITLE and rw4k["module"] == "tkperf_rw4k"
    assert rw4k["default"] is False
    assert rw4k["options"] == ["--rw4k-mix", "--rw4k-qd"]
    assert "rw4k" not in proc.stderr  # loaded without a warning
    plain = ok(tkperf(python, base, "tests")).stdout
    assert any(line.startswith("rw4k") and TITLE in line for line in plain.splitlines())
    short = " ".join(ok(tkperf(python, base, "ssd", "run", "--help")).stdout.split())
    # the short help counts the plug-in's options among those left out ...
    assert "rw4k (2)" in short and "--rw4k-qd" not in short
    # ... and --help-all shows them under the plug-in's title
    full = ok(tkperf(python, base, "ssd", "run", "--help-all")).stdout
    assert f"{TITLE} test (rw4k)" in full and "--rw4k-qd" in full


@needs_venv
@pytest.mark.parametrize("plugin", [PLUGIN_SRC / "tkperf_rw4k.py", SECOND_PLUGIN, RR4K])
def test_a_type_checker_sees_the_api_of_the_installed_package(venv, tmp_path, plugin):
    """tkperf ships py.typed: mypy, run on a plug-in (the example, and a
    second one written from docs/extending.rst alone) against tkperf
    installed as a user installs it (a wheel, not the source tree), sees
    every name of tkperf.api with its type, and the plug-in passes --strict."""
    python, base = venv
    target = base / "tkperf-installed"
    if not target.exists():
        ok(run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--target", target,
                REPO], base, timeout=900))
    assert (target / "tkperf" / "py.typed").is_file()
    work = tmp_path / "plugin"
    work.mkdir()
    shutil.copy(plugin, work / plugin.name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}

    def mypy() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                               str(python), "--cache-dir", str(tmp_path / "cache"), plugin.name],
                              cwd=str(work), capture_output=True, text=True, timeout=600,
                              env=dict(env, PYTHONPATH=str(target)))

    proc = mypy()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the same plug-in with a wrong type is caught, so the check above is not vacuous
    (work / plugin.name).write_text(plugin.read_text() + "\n\nWRONG: int = API_VERSION\n"
                                    "from tkperf.api import API_VERSION  # noqa: E402\n")
    proc = mypy()
    assert proc.returncode == 1 and "Incompatible types in assignment" in proc.stdout, proc.stdout


@pytest.mark.parametrize("plugin", [SECOND_PLUGIN, RR4K])
def test_the_other_plugins_use_nothing_but_the_api(plugin):
    """The plug-ins written from docs/extending.rst alone import tkperf only
    as tkperf.api, the plug-in contract (not tkperf.pts, the built-ins' layer)."""
    tree = ast.parse(plugin.read_text())
    used = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in used if m and m.startswith("tkperf")} == {"tkperf.api"}


def _with_plugin(monkeypatch, path: Path, name: str, cls: str):
    """The registry with the plug-in at ``path`` found through the entry-point
    group, as pip would install it."""
    import importlib

    from tkperf.kit import registry

    monkeypatch.syspath_prepend(str(path.parent))
    module = importlib.import_module(path.stem)

    class EntryPoint:
        def load(self):
            return getattr(module, cls)

    found = registry._entry_points()
    monkeypatch.setattr(registry, "_entry_points", lambda: found + [(name, f"{path.stem}:{cls}", EntryPoint())])
    registry.reset()
    return registry


@needs_fio
def test_rr4k_runs_until_its_20_10_verdict(loopdev, tmp_path, monkeypatch):
    """rr4k, the smallest plug-in, runs on a loop device with real fio: its
    rounds of 4 KiB random reads at QD 4 (--quick), each judged by the 20/10
    rule on the tracking figure; the stored verdict is the rule's on the
    stored rounds, and its own paragraph follows the generic section."""
    from tkperf.cli import main
    from tkperf.model.steadystate import evaluate

    registry = _with_plugin(monkeypatch, RR4K, "rr4k", "RandomRead4kTest")
    try:
        out = tmp_path / "out"
        rc = main(["ssd", "run", loopdev, "--tests", "rr4k", "--quick", "--yes", "--quiet", "--write-cache", "keep",
                   "--name", "r", "--outdir", str(out), "--report-format", "rst"])
        assert rc in (0, 1), rc  # 1: not PTS-conformant (a plug-in), which the run says
        run = store.load(str(out / "r.xml"))
        (test,) = run.tests
        assert test.type == "rr4k" and test.params["iodepth"] == "4"
        assert test.rounds and all([w.name for w in r.workloads] == ["rr4k"] for r in test.rounds)
        assert all(w.read.ios > 0 and w.write.ios == 0 for r in test.rounds for w in r.workloads)
        assert all(w.read.ios * 4096 == w.read.io_bytes for r in test.rounds for w in r.workloads)
        assert test.steady is not None
        values = [r.workload("rr4k").read.iops for r in test.rounds]
        assert test.steady == evaluate([r.index for r in test.rounds], values, window=5)
        assert test.steady.steady or len(test.rounds) == 5  # --quick: at most five rounds
        text = (out / "r.rst").read_text()
        assert "Random 4KiB read" in text and "one thread at one queue depth" in text
    finally:
        monkeypatch.undo()
        registry.reset()


@needs_fio
def test_the_second_plugin_runs_and_reports(loopdev, tmp_path, monkeypatch):
    """bsweep, found through the entry-point group as any plug-in, runs its
    sweep on a loop device (a point per block size), and its own view's
    table and chart are in the report."""
    import importlib

    from tkperf.cli import main
    from tkperf.kit import registry

    monkeypatch.syspath_prepend(str(SECOND_PLUGIN.parent))
    module = importlib.import_module("tkperf_bsweep")

    class EntryPoint:
        def load(self):
            return module.BlockSizeSweepTest

    found = registry._entry_points()
    monkeypatch.setattr(registry, "_entry_points",
                        lambda: found + [("bsweep", "tkperf_bsweep:BlockSizeSweepTest", EntryPoint())])
    registry.reset()
    try:
        out = tmp_path / "out"
        rc = main(["ssd", "run", loopdev, "--tests", "bsweep", "--bsweep-sizes", "4k,128k", "--quick", "--yes",
                   "--quiet", "--write-cache", "keep", "--name", "b", "--outdir", str(out), "--report-format", "rst"])
        assert rc in (0, 1), rc  # 1: not PTS-conformant (a plug-in), which the run says
        run = store.load(str(out / "b.xml"))
        (test,) = run.tests
        assert [w.bs for r in test.rounds for w in r.workloads] == [4096, 131072]
        assert all(w.read.bw_bytes > 0 for r in test.rounds for w in r.workloads)
        text = (out / "b.rst").read_text()
        assert "Throughput by block size" in text and "bsweep-mbs" in text
        assert (out / "b-plots" / "bsweep-mbs.svg").is_file() or any(
            "bsweep-mbs" in p for p in os.listdir(out / "b-plots"))
    finally:
        registry.reset()


@needs_venv
def test_plugin_options_are_checked(venv):
    python, base = venv
    bad = tkperf(python, base, "ssd", "run", "/nonexistent", "--tests", "rw4k", "--rw4k-qd", "0",
                 "--dry-run")
    assert bad.returncode == 2 and "--rw4k-qd" in bad.stderr
    bad = tkperf(python, base, "ssd", "run", "/nonexistent", "--tests", "rw4k", "--rw4k-mix", "70/40",
                 "--dry-run")
    assert bad.returncode == 2 and "--rw4k-mix" in bad.stderr
    bad = tkperf(python, base, "ssd", "run", "/nonexistent", "--tests", "iops", "--rw4k-qd", "8",
                 "--dry-run")
    assert bad.returncode == 2 and "--rw4k-qd" in bad.stderr  # not among --tests


@needs_venv
@needs_fio
def test_plugin_end_to_end(venv, loopdev, tmp_path):
    loop = loopdev  # a fresh loop device over a sparse file, detached afterwards (conftest)
    python, _ = venv
    out = tmp_path / "out"

    def run_named(name: str, *report: str) -> Path:
        proc = ok(tkperf(python, tmp_path, "ssd", "run", loop, "--tests", "rw4k", "--quick", "--yes",
                         "--quiet", "--name", name, "--outdir", out, *report))
        assert f"{name}.xml" in proc.stdout and "no report" not in proc.stderr
        return out / f"{name}.xml"

    # dry run: the plug-in's job as fio will get it
    dry = ok(tkperf(python, tmp_path, "ssd", "run", loop, "--tests", "rw4k", "--quick",
                    "--rw4k-mix", "65/35", "--dry-run", "--jobs")).stdout
    assert "[rw4k-65-35]" in dry and "rwmixread=65" in dry and "iodepth=4" in dry

    a = run_named("a", "--report-format", "rst")
    assert TITLE in (out / "a.rst").read_text()  # the report at the end of the run
    run_a = store.load(str(a))  # this (system) process has no rw4k: the file reads all the same
    (t,) = run_a.tests
    assert run_a.status == "complete" and run_a.quick
    assert t.type == "rw4k" and t.key == "rw4k" and t.status == "complete"
    assert run_a.options["rw4k_mix"] == "70/30" and run_a.options["rw4k_qd"] == "4"
    assert t.params["mix"] == "70/30" and t.params["iodepth"] == "4"
    assert t.tracking_workload == "rw4k-70-30" and t.tracking_metric == "iops"
    assert 1 <= len(t.rounds) <= 5
    for r in t.rounds:
        (w,) = r.workloads
        assert (w.name, w.rw, w.bs, w.rwmixread, w.numjobs, w.iodepth) == \
            ("rw4k-70-30", "randrw", 4096, 70, 1, 4)
        assert w.read.iops > 0 and w.write.iops > 0
    assert t.stop_reason in ("steady state", "max rounds")

    shown = json.loads(ok(tkperf(python, tmp_path, "show", a, "--json")).stdout)
    (st,) = shown["tests"]
    assert st["key"] == "rw4k" and st["status"] == "complete" and st["rounds"] == len(t.rounds)
    assert st["headline"]["rnd_4k_mixed_iops"] > 0
    assert st["headline"]["rnd_4k_mixed_lat_mean_us"] > 0
    text = ok(tkperf(python, tmp_path, "show", a)).stdout
    assert "IOPS" in text and "lat AVE" in text

    report_dir = tmp_path / "report"
    ok(tkperf(python, tmp_path, "report", a, "--format", "rst,html", "--outdir", report_dir))
    rst = (report_dir / "a.rst").read_text()
    assert TITLE in rst  # the plug-in's section (the generic one) ...
    assert "RW4K: headline figures" in rst and "rw4k-70-30" in rst  # ... with its figures and workload
    assert (report_dir / "a.html").stat().st_size > 0

    b = run_named("b", "--no-report")
    cmp_dir = tmp_path / "cmp"
    proc = ok(tkperf(python, tmp_path, "compare", a, b, "--format", "rst,html", "--outdir", cmp_dir))
    written = "".join(p.read_text(errors="replace") for p in cmp_dir.glob("*.rst"))
    assert "comparison.rst" in proc.stdout
    assert TITLE in written and "rw4k" in written.lower()

    # The system Python has tkperf but not the plug-in: the file still shows.
    plain = ok(run([sys.executable, "-m", "tkperf", "show", a, "--json"], tmp_path))
    (st,) = json.loads(plain.stdout)["tests"]
    assert st["key"] == "rw4k" and st["status"] == "complete"


def test_a_sweep_without_tracking_reports(tmp_path, capsys):
    """A plug-in test that tracks no figure (one pass over settings) is
    reported: its rounds as measured, no steady state claimed or denied
    (issue 25: the generic view guessed a tracking figure and crashed)."""
    from tkperf import store
    from tkperf.cli import main
    from tkperf.kit import registry
    from tkperf.kit.base import TestType
    from tkperf.model.results import DeviceInfo, HostInfo, IoStats, Round, RunResult, TestRun, Workload

    class SweepOnly(TestType):
        name, title, short, order = "sweeponly", "A queue-depth sweep", "SWEEP", 200

        def plan(self, opts, capacity):
            return []

    def w(name, iops):
        return Workload(name, "randread", 4096, 100, 1, 1, 1000, read=IoStats(iops=iops, ios=int(iops)))

    t = TestRun(type="sweeponly", key="sweeponly", tracking_workload="", tracking_metric="", tracking_label="",
                status="complete", stop_reason="sweep complete")
    t.rounds.append(Round(1, "", 2.0, 2.0, (w("qd1", 100.0), w("qd2", 180.0))))
    run = RunResult(name="sw", started="", device=DeviceInfo("/dev/x", "/dev/x", "block", 1 << 30),
                    host=HostInfo(), options={"tests": "sweeponly"}, status="complete", tests=[t])
    path = tmp_path / "sw.xml"
    store.save(run, str(path))
    registry.reset()
    registry.types()["sweeponly"] = SweepOnly()
    try:
        assert main(["report", str(path), "--format", "rst", "--outdir", str(tmp_path / "rep"), "-q"]) == 0
        text = " ".join((tmp_path / "rep" / "sw.rst").read_text().split())
        assert "SWEEP tracks no figure for a steady state: its rounds are shown as measured." in text
        assert "not sought: the test tracks no figure (a sweep or a single pass)" in text
        assert "SWEEP: every round" in text and "not tracked" in text
        capsys.readouterr()
        assert main(["show", str(path)]) == 0
        assert "Traceback" not in capsys.readouterr().err
    finally:
        registry.reset()
