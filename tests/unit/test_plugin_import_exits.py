"""Issue 54 item 2, in this process: a plug-in that exits or interrupts as it
is imported is left out in one line; a real Ctrl-C while plug-ins load
still stops tkperf; what a plug-in prints as it loads stays out of
tkperf's output.  (tests/e2e/test_exit_trust.py installs such plug-ins
for real and runs ``python -m tkperf``.)"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

import pytest

from tkperf.cli import main
from tkperf.kit import registry


class EntryPoint:
    """What importlib.metadata hands over for an installed plug-in: load() runs its import."""

    def __init__(self, body):
        self.body = body

    def load(self):
        return self.body()


def _exit(code):
    def body():
        sys.exit(code)
    return body


def _argparse():
    parser = argparse.ArgumentParser(prog="plugin")
    parser.add_argument("--plugin-only", required=True)
    parser.parse_args(["--not-ours"])  # what a module that parses sys.argv on import meets


def _interrupt():
    raise KeyboardInterrupt


def _prints_then_fails():
    print('{"not": "tkperf\'s"}')
    print("a line on stderr", file=sys.stderr)
    raise ImportError("no module named thing")


@pytest.fixture
def installed(monkeypatch):
    """installed(body): a plug-in ``bad`` whose import runs ``body``."""

    def install(body):
        monkeypatch.setattr(registry, "_entry_points", lambda: [("bad", "badplug:Bad", EntryPoint(body))])
        registry.reset()

    yield install
    registry.reset()


@pytest.mark.parametrize("body, why", [
    (_exit(0), "it called sys.exit(0) as it was imported"),
    (_exit(3), "it called sys.exit(3) as it was imported"),
    (_exit(None), "it called sys.exit(None) as it was imported"),
    (_exit("goodbye"), "it called sys.exit() as it was imported: goodbye"),
    (_argparse, "it called sys.exit(2) as it was imported (it printed: plugin: error: the following "
                "arguments are required: --plugin-only)"),
    (_interrupt, "it raised KeyboardInterrupt as it was imported"),
], ids=["exit0", "exit3", "exit-none", "exit-text", "argparse", "interrupt"])
def test_a_plugin_that_exits_as_it_is_imported_is_left_out_in_one_line(installed, capsys, body, why):
    installed(body)
    assert main(["tests"]) == 0
    out, err = capsys.readouterr()
    assert out.split()[0] == "iops" and "bad" not in out.split()
    assert err.splitlines() == [f"tkperf: warning: test type bad (badplug:Bad) could not be loaded: {why}"]
    assert main(["--version"]) == 0  # every other command works as before
    assert capsys.readouterr().out.startswith("tkperf ")
    assert "iops" in registry.names() and "bad" not in registry.names()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_what_a_plugin_prints_as_it_loads_stays_out_of_the_output(installed, capsys):
    installed(_prints_then_fails)
    assert main(["tests", "--json"]) == 0
    out, err = capsys.readouterr()
    listed = json.loads(out)  # still one JSON document: nothing of the plug-in's in it
    assert "bad" not in {t["name"] for t in listed["tests"]}
    assert err.splitlines() == ["tkperf: warning: test type bad (badplug:Bad) could not be loaded: "
                                "ImportError: no module named thing (it printed: a line on stderr)"]


def test_a_real_ctrl_c_while_plugins_load_still_stops_tkperf(installed, capsys):
    """SIGINT that arrives while a plug-in is imported is the user's: tkperf
    stops (130) as it would without the plug-in, whatever the plug-in's
    import does with the KeyboardInterrupt it gets."""

    def slow_import():
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, while the import takes its time
        time.sleep(5)
        raise AssertionError("the signal never came")

    installed(slow_import)
    assert main(["tests"]) == 130
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "interrupted" in err[0] and "could not be loaded" not in err[0], err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_under_another_handler_reaches_that_handler(installed):
    """Under a handler of tkperf's own (a run's), the signal goes to it: what
    it raises goes on, and the plug-in is not blamed."""

    class Stop(BaseException):
        pass

    def handler(signum, frame):
        raise Stop()

    def slow_import():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        installed(slow_import)
        with pytest.raises(Stop):
            registry.types()
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)
