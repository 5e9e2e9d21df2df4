"""Output in proportion to what was asked (issue 54 item 6).

A result file may hold megabytes where tkperf writes a few words (a run
name, a device's model, an event's message, an option's value, a test's
key), or a million options.  What ``show``, ``check``, ``compare`` and
``report`` print of such text is bounded (cut, with a note of how much was
cut, and one warning naming the field), and a file holding more options than
any run stores is refused in one line (exit 7).  The tests count the bytes
printed and written, never the time taken."""
from __future__ import annotations

import dataclasses
import json
import os
from typing import Callable, Dict, List, NamedTuple

import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.model import stored
from tkperf.model.results import Event, RunResult
from tkperf.report import checked

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
#: A field's size: 2 MiB of text where tkperf writes a few words.
BIG = 2 << 20
#: The most bytes a command may print (stdout and stderr together) for any of
#: these files: a summary's, a check's or a comparison's worth, far below BIG.
PRINTED = 64 << 10
#: The most bytes the reST report of one of them may have.
REPORT = 512 << 10


def _big(letter: str) -> str:
    return letter * BIG


def _name(run: RunResult) -> None:
    run.name = _big("N")


def _model(run: RunResult) -> None:
    run.device = dataclasses.replace(run.device, model=_big("M"))


def _serial(run: RunResult) -> None:
    run.device = dataclasses.replace(run.device, serial=_big("S"))


def _event(run: RunResult) -> None:
    run.events.append(Event(run.started, "warning", _big("E")))


def _description(run: RunResult) -> None:
    run.description = _big("D")


def _option(run: RunResult) -> None:
    run.options["purge"] = "cmd:" + _big("P")


def _key(run: RunResult) -> None:
    run.tests[0].key = _big("K")


def _workload(run: RunResult) -> None:
    t = run.tests[0]
    t.rounds = [dataclasses.replace(r, workloads=(dataclasses.replace(r.workloads[0], name=_big("W")),)
                                    + r.workloads[1:]) for r in t.rounds]


def _param(run: RunResult) -> None:
    run.tests[0].params["access"] = _big("A")


def _fact(run: RunResult) -> None:
    run.facts["host_sharing"] = {"runs": 2, "host_cpus": 2, "targets": [{"name": _big("F"), "device": "/dev/x"},
                                                                       {"name": "b", "device": "/dev/y"}]}


FIELDS: Dict[str, Callable[[RunResult], None]] = {
    "run name": _name, "device model": _model, "device serial": _serial, "event message": _event,
    "description": _description, "option purge": _option, "test key": _key, "workload name": _workload,
    "test param": _param, "fact": _fact}


def _file(tmp_path, change: Callable[[RunResult], None], name: str = "big.xml") -> str:
    run = store.load(EXAMPLE)
    for t in run.tests:
        t.raw = None  # written from the model
    change(run)
    path = str(tmp_path / name)
    store.save(run, path)
    return path


class Printed(NamedTuple):
    code: int
    out: str
    err: str

    @property
    def size(self) -> int:
        """The bytes printed, stdout and stderr together."""
        return len(self.out.encode()) + len(self.err.encode())


def _run(argv: List[str], capsys) -> Printed:
    """What ``argv`` printed; its exit code must be one of a reader's."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 1, 7, 12), (argv, code, err[-300:])
    assert "Traceback" not in err and "internal error" not in err
    return Printed(code, out, err)


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_huge_field_prints_a_bounded_amount(field, tmp_path, capsys):
    """The field at 2 MiB: show, show --json, check (both ways), compare and
    report print or write a bounded amount; the cut is said, once, with its
    size, and the text shown ends with a note of what was cut.  (A test's
    own params are not cut as the file is read, its code reads them: they
    are bounded where a check or a report shows them.)"""
    path = _file(tmp_path, FIELDS[field])
    commands = [["show", path], ["show", path, "--json"],
                ["check", path, "--baseline", EXAMPLE], ["check", EXAMPLE, "--baseline", path, "--json"],
                ["compare", path, EXAMPLE, "--format", "rst", "--outdir", str(tmp_path / "c")],
                ["compare", EXAMPLE, path, "--json", "--format", "rst", "--outdir", str(tmp_path / "cj")],
                ["report", path, "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"]]
    for argv in commands:
        got = _run(argv, capsys)
        assert got.size < PRINTED, argv
        if got.code in (0, 1) and field != "test param":
            (said,) = [line for line in got.err.splitlines() if "text longer than tkperf shows is cut" in line]
            assert f"({BIG:,} characters)" in said or f"({BIG + 4:,} characters)" in said, argv
        if argv[:2] == ["show", path]:
            assert all(len(line) < 4096 + 200 for line in got.out.splitlines()), argv
            if field in ("run name", "device model"):  # the summary shows them: cut, with the note
                assert f"[... {BIG - 4096:,} more characters not shown]" in got.out
    (rst,) = (tmp_path / "r").glob("*.rst")
    assert rst.stat().st_size < REPORT
    for made in (tmp_path / "c", tmp_path / "cj", tmp_path / "r"):
        assert all(len(f.name) < 200 for f in made.rglob("*"))


def test_the_file_itself_keeps_every_character(tmp_path, capsys):
    """Cutting is for showing: the file is not changed, and a reader of it (resume) gets it whole."""
    path = _file(tmp_path, _model)
    assert _run(["show", path], capsys).size < PRINTED
    assert store.load(path).device.model == _big("M")


def _options(count: int, size: int = 8) -> Callable[[RunResult], None]:
    def change(run: RunResult) -> None:
        run.options.update({f"x_option_{i}": "v" * size for i in range(count)})
    return change


def test_a_file_with_more_options_than_any_run_is_refused_in_one_line(tmp_path, capsys):
    """20,000 options: every reader refuses the file in one line (exit 7),
    while every example and recorded result is far within every limit
    (nothing refused, cut or left out)."""
    for folder in (os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests", "data", "golden", "inputs")):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".xml"):
                run = store.load(os.path.join(folder, name))
                assert len(run.options) < stored.MAX_OPTIONS // 10
                assert checked.problems(run) == [], name
    path = _file(tmp_path, _options(20_000))
    for argv in (["show", path], ["show", path, "--json"], ["check", path, "--baseline", EXAMPLE],
                 ["compare", path, EXAMPLE, "--format", "rst", "--outdir", str(tmp_path / "c")],
                 ["report", path, "--format", "rst", "--outdir", str(tmp_path / "r")]):
        got = _run(argv, capsys)
        assert got.code == 7 and got.size < 400 and got.err.count("\n") == 1, argv
        assert "20,030 run options, more than the 1,000" in got.err
    assert not (tmp_path / "r").exists()


def test_many_differing_options_are_counted_not_listed(tmp_path, capsys):
    """900 options (within the limit) of 1,000 characters each that the
    baseline does not have: check names the first few, cut, and counts the rest."""
    path = _file(tmp_path, _options(900, 1000))
    got = _run(["check", path, "--baseline", EXAMPLE], capsys)
    assert got.size < 16 << 10
    (line,) = [x for x in (got.err + got.out).splitlines() if "ran with different parameters" in x]
    assert f"and {900 - 12:,} more" in line and "... (1,000 characters)" in line
    got = _run(["check", path, "--baseline", EXAMPLE, "--json"], capsys)
    assert got.size < 16 << 10
    assert any(f"and {900 - 12:,} more" in w for w in json.loads(got.out)["warnings"])
