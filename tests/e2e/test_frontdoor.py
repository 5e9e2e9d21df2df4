"""The engine's front door (``tkperf.engine.run``): a program hands it a
request and a listener, and gets an outcome; the engine itself never
prints, and the command line prints what the listener is told and what
the outcome says."""
from __future__ import annotations

import ast
import os
from typing import List, Tuple

from conftest import needs_fio
from tkperf import store
from tkperf.cli import build_parser, main, runargs
from tkperf.engine import run as engine
from tkperf.engine.listener import ParallelView, SeveralEnded
from tkperf.engine.request import RunRequest
from tkperf.model.results import DeviceInfo, RunResult
from tkperf.render.documents import ReportResult

ENGINE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tkperf", "engine")


class Recorded:
    """A listener that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, object]] = []

    def warning(self, text: str) -> None:
        self.calls.append(("warning", text))

    def confirm(self, dev: DeviceInfo, assume_yes: bool) -> None:
        self.calls.append(("confirm", (dev.path, assume_yes)))

    def show_progress(self, quiet: bool, debug: bool) -> None:
        self.calls.append(("show_progress", (quiet, debug)))

    def stop_progress(self) -> None:
        self.calls.append(("stop_progress", None))

    def report_written(self, result: ReportResult) -> None:
        self.calls.append(("report_written", result.paths))

    def run_ended(self, run: RunResult, xml_path: str) -> None:
        self.calls.append(("run_ended", (run.status, xml_path)))

    def combined(self, quiet: bool) -> ParallelView:
        raise AssertionError("one target has no combined view")

    def several_ended(self, ended: SeveralEnded) -> None:
        raise AssertionError("one target")

    def names(self) -> List[str]:
        return [name for name, _ in self.calls]


def test_no_engine_module_prints_or_asks():
    found = []
    for name in sorted(os.listdir(ENGINE)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(ENGINE, name), encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
                found.append(f"{name}:{node.lineno} {node.func.id}()")
            if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr", "stdin") \
                    and isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{name}:{node.lineno} sys.{node.attr}")
    assert not found, found


SHORT = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--runtime", "1", "--max-rounds", "2",
         "-nj", "1", "-iod", "4", "--wipc-loops", "1", "--quick"]


def _request(device: str, *more: str) -> RunRequest:
    """The request the command line ``ssd run DEVICE SHORT MORE`` makes."""
    return runargs.request_from_args(build_parser().parse_args(["ssd", "run", device, *SHORT, *more]), "ssd")


def test_a_dry_run_is_an_outcome_the_command_line_prints(loopdev, capsys):
    listener = Recorded()
    outcome = engine.run(_request(loopdev, "--dry-run", "--jobs"), listener)
    assert capsys.readouterr().out == ""  # the engine printed nothing
    assert listener.calls == []  # nothing ran, nothing to tell
    (dry,) = outcome.dry_runs
    assert outcome.exit_code == 0 and outcome.run is None
    assert dry.summary[0].startswith(f"# dry run: nothing is written to {loopdev}")
    assert dry.job_files and any(line.startswith("[") for line in dry.job_files)
    assert main(["ssd", "run", loopdev, *SHORT, "--dry-run", "--jobs"]) == 0
    text = capsys.readouterr().out
    printed = text.splitlines()
    assert printed[:len(dry.summary)] == list(dry.summary)
    assert f"# verdict on this target: {dry.verdict}" in printed
    assert text.endswith("\n".join(dry.job_files) + "\n")


@needs_fio
def test_a_run_tells_its_listener_and_returns_its_result(loopdev, tmp_path, capsys):
    listener = Recorded()
    out = tmp_path / "out"
    given = ("--outdir", str(out), "--name", "fd", "--yes", "-q", "--no-report")
    outcome = engine.run(_request(loopdev, *given), listener)
    assert capsys.readouterr().out == ""
    xml = str(out / "fd.xml")
    assert outcome.exit_code == 0 and outcome.xml_path == xml and not outcome.already_complete
    assert outcome.run is not None and outcome.run.status == "complete"
    assert store.load(xml).status == "complete"
    assert listener.names() == ["show_progress", "confirm", "stop_progress", "run_ended"]
    assert ("confirm", (loopdev, True)) in listener.calls and ("run_ended", ("complete", xml)) in listener.calls
    again = engine.run(_request(loopdev, *given, "--resume"), Recorded())
    assert again.already_complete and again.run is not None and again.xml_path == xml
