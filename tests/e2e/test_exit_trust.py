"""Issue 54 item 2: exit codes a cron job can trust.

* A run on several targets exits with what its children achieved: a child
  that exits 0 without a complete run (it wrote no ``--json-summary``, or
  one whose run is not complete) counts as 14 (EXIT_NO_RESULT), so
  "2 targets: 2 no result" is never exit 0; targets that all failed alike
  give their own code.  A resume whose runs were already complete is still
  0, with both runs complete in the summary.
* A plug-in that calls ``sys.exit`` (0, 3), runs argparse on ``sys.argv``
  (SystemExit 2) or raises ``KeyboardInterrupt`` as it is imported, really
  installed (a distribution's ``.dist-info`` with its entry point on the
  path of ``python -m tkperf``): ``--version`` and ``show`` work as without
  it (exit 0, the same output), ``tkperf tests`` names it in one line; a
  real SIGINT while it is imported (by ``ssd run`` or ``tests``) still stops
  tkperf (130).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import needs_fio
from tkperf import __version__
from tkperf.cli import main
from tkperf.engine import multi, parallel
from tkperf.errors import EXIT_CODES, EXIT_NO_RESULT, EXIT_OK, EXIT_REFUSED

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "example-ssd.xml")
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "2",
         "-nj", "1", "-iod", "4", "--wipc-loops", "1", "--purge", "none", "--yes", "--report-format", "rst"]


def _doc(path):
    with open(path) as fh:
        return json.load(fh)


# --- several targets: the parent follows what the children achieved -----------------------

#: Children that stand in for ``tkperf ssd run DEV --request FILE``: argv[1] is the summary path.
CHILDREN = {
    "silent": "import sys; sys.exit(0)",  # exits 0, says nothing, writes nothing
    "failed-run": textwrap.dedent("""\
        import json, sys
        with open(sys.argv[1], "w") as fh:
            json.dump({"schema": "tkperf-summary", "status": "failed", "exit_code": 0}, fh)
        """),
    "refused": "import sys; sys.exit(3)",
}


MADE = parallel._target


def _several(tmp_path, monkeypatch, kinds):
    """``ssd run A B`` on two file targets whose children are ``kinds`` (of
    :data:`CHILDREN`); (exit code, combined summary, stdout)."""
    kinds = iter(kinds)

    def target(request, p, outdir, tmp):
        t = MADE(request, p, outdir, tmp)
        return multi.Target(t.name, t.device, t.outdir, (sys.executable, "-c", CHILDREN[next(kinds)],
                                                         t.summary_path), t.summary_path)

    monkeypatch.setattr(parallel, "_target", target)
    summary = tmp_path / "all.json"
    rc = main(["ssd", "run", str(tmp_path / "a.img"), str(tmp_path / "b.img"), "--size", "64m", "--yes",
               "--outdir", str(tmp_path / "out"), "--json-summary", str(summary)])
    return rc, _doc(summary)


def test_children_that_exit_0_without_a_result_make_the_run_fail(tmp_path, monkeypatch, capsys):
    rc, doc = _several(tmp_path, monkeypatch, ["silent", "silent"])
    out = capsys.readouterr().out
    assert rc == EXIT_NO_RESULT == 14
    assert "2 targets: 2 no result" in out and "exit code 14 (the worst of the targets')" in out
    assert doc["exit_code"] == 14
    assert [(t["status"], t["exit_code"], t["error"]) for t in doc["targets"]] == \
        [("no result", 14, "its process exited 0 without a result")] * 2
    assert "not built" in doc["comparison"]["note"]


def test_a_child_whose_run_is_not_complete_is_no_success(tmp_path, monkeypatch, capsys):
    rc, doc = _several(tmp_path, monkeypatch, ["failed-run", "silent"])
    assert rc == EXIT_NO_RESULT
    assert [(t["status"], t["exit_code"]) for t in doc["targets"]] == [("failed", 14), ("no result", 14)]
    assert doc["targets"][0]["error"] == "its process exited 0, but its run is failed"


def test_children_that_failed_alike_give_their_code(tmp_path, monkeypatch, capsys):
    rc, doc = _several(tmp_path, monkeypatch, ["refused", "refused"])
    assert rc == EXIT_REFUSED and doc["exit_code"] == EXIT_REFUSED
    (tmp_path / "2").mkdir()
    rc, doc = _several(tmp_path / "2", monkeypatch, ["refused", "silent"])
    assert rc == EXIT_NO_RESULT  # unlike: the highest, and never 0
    assert [t["exit_code"] for t in doc["targets"]] == [EXIT_REFUSED, EXIT_NO_RESULT]


def test_the_code_is_documented():
    with open(os.path.join(REPO, "docs", "exit-codes.rst"), encoding="utf-8") as fh:
        text = fh.read()
    assert "14    EXIT_NO_RESULT" in text and EXIT_NO_RESULT in EXIT_CODES
    with open(os.path.join(REPO, "docs", "parallel.rst"), encoding="utf-8") as fh:
        assert "exited 0 without a complete run" in " ".join(fh.read().split())


@needs_fio
def test_a_resume_of_runs_already_complete_is_still_a_success(tmp_path, capsys):
    """Each child of ``--resume`` finds its run complete and does nothing:
    its summary says the run is complete, and the command exits 0."""
    a, b = str(tmp_path / "a.img"), str(tmp_path / "b.img")
    out, summary = str(tmp_path / "out"), str(tmp_path / "all.json")
    assert main(["ssd", "run", a, b, "--size", "64m", *QUICK, "--outdir", out]) == EXIT_OK, \
        capsys.readouterr().err
    capsys.readouterr()
    rc = main(["ssd", "run", a, b, "--size", "64m", *QUICK, "--outdir", out, "--resume", "--json-summary", summary])
    said = capsys.readouterr()
    assert rc == EXIT_OK, said.out + said.err
    assert "2 targets: 2 complete" in said.out
    doc = _doc(summary)
    assert [(t["status"], t["exit_code"]) for t in doc["targets"]] == [("complete", 0), ("complete", 0)]
    assert all(t["summary"]["paths"]["result"] == t["result"] for t in doc["targets"])


# --- plug-ins that exit or interrupt as they are imported ---------------------------------

PLUGINS = {
    "exit0": ("import sys\nsys.exit(0)\n", "it called sys.exit(0) as it was imported"),
    "exit3": ("import sys\nsys.exit(3)\n", "it called sys.exit(3) as it was imported"),
    "argparse": ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--badplug-mode', required=True)\n"
                 "p.parse_args()\n",
                 "it called sys.exit(2) as it was imported (it printed: __main__.py: error: the following "
                 "arguments are required: --badplug-mode)"),
    "interrupt": ("raise KeyboardInterrupt\n", "it raised KeyboardInterrupt as it was imported"),
}


def _install(where, source: str) -> str:
    """A plug-in distribution ``badplug`` as pip leaves one in site-packages:
    its module and its ``.dist-info`` with the ``tkperf.tests`` entry point."""
    site = where / "site"
    info = site / "badplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: badplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tkperf.tests]\nbad = badplug:BadTest\n")
    (site / "badplug.py").write_text(source)
    return str(site)


def _tkperf(site, *args, cwd) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (REPO, site) if p)
    return subprocess.run([sys.executable, "-m", "tkperf", *args], cwd=str(cwd), capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=path))


@pytest.fixture(scope="module")
def without_plugin(tmp_path_factory):
    """What ``show`` prints without any plug-in."""
    done = _tkperf("", "show", EXAMPLE, cwd=tmp_path_factory.mktemp("plain"))
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("kind", list(PLUGINS))
def test_a_plugin_that_exits_as_it_is_imported_takes_nothing_down(kind, tmp_path, without_plugin):
    source, why = PLUGINS[kind]
    site = _install(tmp_path, source)
    version = _tkperf(site, "--version", cwd=tmp_path)
    assert (version.returncode, version.stdout, version.stderr) == (0, f"tkperf {__version__}\n", "")
    shown = _tkperf(site, "show", EXAMPLE, cwd=tmp_path)
    assert (shown.returncode, shown.stderr) == (0, "") and shown.stdout == without_plugin
    listed = _tkperf(site, "tests", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "bad" not in {t["name"] for t in json.loads(listed.stdout)["tests"]}
    assert listed.stderr.splitlines() == [f"tkperf: warning: test type bad (badplug:BadTest) could not be "
                                          f"loaded: {why}"]


@pytest.mark.parametrize("argv, said", [
    (("ssd", "run", "--help"), "tkperf: interrupted"),  # the types load to build the parser
    (("tests",), "tkperf: stopped: interrupted by SIGINT"),  # they load as the command runs, under its handlers
], ids=["parsing", "running"])
def test_a_real_sigint_while_a_plugin_is_imported_still_stops_tkperf(tmp_path, argv, said):
    """(--version loads no test type since issue 59: a command that loads them.)"""
    site = _install(tmp_path, "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n")
    done = _tkperf(site, *argv, cwd=tmp_path)
    assert done.returncode == 130 and done.stdout == "", (done.returncode, done.stdout, done.stderr)
    assert done.stderr.splitlines() == [said]
