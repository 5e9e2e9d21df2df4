"""What tkperf decides from another program or library is told by a
structured signal (an exception's class, an errno, a message's level),
never by its words or by a leniency that differs between releases: the ssh
timeout, a device something else holds, docutils' warnings, the history's
start times, the agent's JSON."""
from __future__ import annotations

import errno
import io
import os
import sys

import pytest

from tkperf import programs
from tkperf.errors import RefusedError, RemoteError, ToolError, ToolTimeout
from tkperf.history.index import FileFacts
from tkperf.history.trends import when
from tkperf.model import segments
from tkperf.model.results import DeviceInfo
from tkperf.remote import ssh, wire
from tkperf.render import documents
from tkperf.target import armap, device


def test_a_program_past_its_time_is_a_tool_timeout():
    with pytest.raises(ToolTimeout):
        programs.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.3, what="a sleeper")


def test_an_ssh_without_an_answer_in_time_is_told_by_the_timeouts_class(monkeypatch):
    host = ssh.Ssh("host")
    monkeypatch.setattr(host, "argv", lambda remote: [sys.executable, "-c", "import time; time.sleep(30)"])
    with pytest.raises(RemoteError, match="^uname on host: no answer within 0 s$"):
        host.run(["uname"], "uname", timeout=0.3)

    def worded_otherwise(*args, **kwargs):
        raise ToolTimeout("ssh host: keine Antwort nach 1 s")
    monkeypatch.setattr(programs, "run", worded_otherwise)
    with pytest.raises(RemoteError, match="no answer within 1 s"):
        host.run(["uname"], "uname", timeout=1)


@pytest.mark.parametrize("said, held, refused", [
    # glibc's text for EBUSY in the user's language (LANG=de_DE.UTF-8): still something else's
    ("reload ioctl on tkperf-ar-1 (253:0) failed: Das Gerät oder die Ressource ist belegt", True, True),
    # a map of that name exists already (dm's create ioctl says EBUSY too) and nothing holds the
    # device: dmsetup's failure as it is, not "something else is using it"
    ("create ioctl on tkperf-ar-1 failed: Device or resource busy", False, False),
])
def test_a_map_refused_for_a_device_held_elsewhere_is_told_by_the_errno(tmp_path, monkeypatch, said, held,
                                                                        refused):
    node = tmp_path / "sdx"
    node.write_bytes(b"")
    dev = DeviceInfo(path="/dev/sdx", resolved=str(node), kind="block", size_bytes=1 << 30, devnum="8:16")
    real_open = os.open

    def kernel_open(path, flags, *args, **kwargs):
        if held and path == str(node) and flags & os.O_EXCL:
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), path)
        return real_open(path, flags, *args, **kwargs)

    def create(*args, **kwargs):
        raise ToolError(f"dmsetup create failed: device-mapper: {said}")
    monkeypatch.setattr(armap, "require", lambda count, load: "/sbin/dmsetup")
    monkeypatch.setattr(armap, "remove_stale", lambda dmsetup: [])
    monkeypatch.setattr(armap, "_maps", lambda: [])
    monkeypatch.setattr(armap, "create", create)
    monkeypatch.setattr(device, "check_still", lambda info: None)
    monkeypatch.setattr(os, "open", kernel_open)
    lay = segments.layout(1 << 30, 64 << 20, 16, seed=1)
    hold = armap.Hold(dev)
    with pytest.raises(RefusedError if refused else ToolError) as got:
        with hold.mapped(lay, 16):
            pass
    assert type(got.value) is (RefusedError if refused else ToolError)
    assert said in str(got.value)


@pytest.mark.parametrize("started, at", [
    ("2024-01-01T00:00:00+00:00", 1704067200.0),
    ("2024-01-01T00:00:00Z", 1704067200.0),      # fromisoformat reads Z only since Python 3.11
    ("2024-01-01T01:00:00.250+01:00", 1704067200.25),
    ("20240101T000000+00:00", float("-inf")),    # basic format: Python 3.11 reads it, 3.9 does not
    ("2024-W01-1T00:00:00+00:00", float("-inf")),  # a week date: the same
    ("2024-01-01T24:00:00+00:00", float("-inf")),  # 24:00: read by later Pythons only
    ("", float("-inf")),
])
def test_the_history_orders_by_the_start_times_tkperf_writes_on_every_python(started, at):
    assert when(FileFacts("r.xml", started, "serial:1", "", "", False, ())) == (at, "r.xml")


def test_docutils_warnings_are_told_by_their_level_not_by_their_words():
    """One line per message at WARNING level or above; the source a message
    quotes is no message of its own, whatever it says."""
    _tree, warnings = documents.parse_rst("Title\n=====\n\n.. foo:: (WARNING/2) quoted (ERROR/3)\n", "/x/r.rst")
    assert warnings == ['reST: /x/r.rst:4: (ERROR/3) Unknown directive type "foo".']


def test_the_html_writers_warnings_are_noted_from_its_own_reporter():
    from docutils.core import publish_doctree, publish_from_doctree
    settings = {"_disable_config": True, "warning_stream": io.StringIO(), "math_output": "mathjax"}
    tree = publish_doctree(":math:`x^2`", settings_overrides=settings)
    noted: list = []
    publish_from_doctree(tree, writer=documents._observed_html_writer(documents._noting("HTML", noted)),
                         settings_overrides=settings)
    assert len(noted) == 1 and "(WARNING/2) No MathJax URL specified" in noted[0], noted


@pytest.mark.parametrize("line", [b'{"ok": NaN}\n', b'{"ok": [1, Infinity]}\n', b'{"ok": -Infinity}\n'])
def test_the_wire_takes_json_only_not_pythons_extra_numbers(line):
    with pytest.raises(wire.WireError, match="not JSON"):
        wire.decode(line)
