"""Issue 54 item 3, the capture's tracefs mount: a capture unmounts only the
mount a capture made (its identity recorded: the mount's ID and its unique
ID, which the kernel never reuses until the next boot), never a tracefs
someone mounted again at the same point; a damaged registry under
``/run/tkperf-capture`` is one line and exit 8, and leaves no tracefs
mounted.

Each scenario runs in a private mount namespace (``unshare --mount
--propagation private``, tests/lab/tracefs_ns.py): its mounts are its own
and go with it, at a folder of the test's, and the registry is a folder of
the test's too; the machine's ``/sys/kernel/tracing`` is not touched.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tkperf.errors import EXIT_OUTPUT

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab", "tracefs_ns.py")


def _why_not() -> str:
    if os.geteuid() != 0:
        return "mounting tracefs needs root"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is missing"
    with open("/proc/filesystems") as fh:
        if "tracefs" not in fh.read():
            return "this kernel has no tracefs"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True)
    return "" if probe.returncode == 0 else f"no private mount namespace here: {probe.stderr.strip()}"


pytestmark = pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "-")


def scenario(name: str, work, device: str = "") -> dict:
    argv = ["unshare", "--mount", "--propagation", "private", sys.executable, LAB, name, str(work)]
    done = subprocess.run(argv + ([device] if device else []), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_tracefs_mounted_again_by_someone_else_is_left(tmp_path):
    got = scenario("remounted", tmp_path)
    ours, theirs = got["ours"], got["theirs"]
    assert ours["kind"] == theirs["kind"] == "tracefs" and ours != theirs
    assert got["capture"]["mounted"] == theirs  # the capture used the tracefs it found
    assert got["after"] == theirs  # and left it: it is not the one the killed capture mounted
    said = got["capture"]["problems"]
    assert len(said) == 1 and said[0].startswith(f"{tmp_path / 'tracing'} stays mounted: the tracefs mounted "
                                                 "there now") and "someone else's" in said[0], said
    assert got["capture"]["foreign_instance_kept"]  # tkperf-capture-backup is not a name tkperf makes
    assert got["registry"] == ["lock"] and got["instances"] == []  # the killed capture's are gone


def test_a_killed_captures_own_mount_is_still_undone(tmp_path):
    got = scenario("still-ours", tmp_path)
    assert got["ours"]["kind"] == "tracefs" and got["capture"]["mounted"] == got["ours"]
    assert got["capture"]["problems"] == []
    assert got["after"] is None and got["registry"] == ["lock"]


def test_a_record_that_names_no_mount_undoes_nothing(tmp_path):
    got = scenario("old-record", tmp_path)
    assert got["after"] == got["theirs"]
    said = got["capture"]["problems"]
    assert len(said) == 1 and "its record, of an older tkperf, does not say which mount" in said[0], said
    assert got["registry"] == ["lock"]


def test_a_registry_damaged_while_a_capture_runs_is_one_error_and_its_mount_goes(tmp_path):
    got = scenario("damaged-while-running", tmp_path)
    assert got["during"]["kind"] == "tracefs" and got["after"] is None
    error = got["error"]
    assert error["type"] == "OutputError" and error["exit"] == EXIT_OUTPUT
    assert error["text"] == (f"the capture registry {tmp_path / 'state'} is damaged: "
                             f"{tmp_path / 'state' / 'mounted'} is a directory; not using it (remove "
                             f"{tmp_path / 'state'} when no capture runs)")


@pytest.mark.parametrize("kind, entry, what", [
    ("lock-link", "lock", "a symbolic link"),
    ("lock-dir", "lock", "a directory"),
    ("lock-fifo", "lock", "a FIFO"),
    ("mounted-dir", "mounted", "a directory"),
    ("mounted-link", "mounted", "a symbolic link"),
    ("own-entry-dir", None, "a directory"),
    ("dead-entry-dir", None, "a directory"),
])
def test_a_damaged_registry_is_one_line_and_exit_8(kind, entry, what, tmp_path, loopdev):
    got = scenario(f"damaged-{kind}", tmp_path, loopdev)
    assert got["rc"] == EXIT_OUTPUT == 8, got
    line, = got["err"]
    state = tmp_path / "state"
    where = f"{state / entry}" if entry else f"{state}/"
    assert line.startswith(f"tkperf: error: the capture registry {state} is damaged: {where}"), line
    assert line.endswith(f" is {what}; not using it (remove {state} when no capture runs)"), line
    assert got["after"] == []  # no tracefs left mounted (the capture mounted one for "mounted-*")
    assert got["written"] == [] and not got["victim"] and got["instances"] == []
