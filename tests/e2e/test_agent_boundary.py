"""The test-host agent is a privilege boundary, and the wire is untrusted
both ways (issue 20, classes 1 and 2).

The agent is driven here as a plain user's sudo rule would let it be
driven: a real ``tkperf agent`` process fed request lines on its stdin,
against loop devices made here (one of them mounted).  The controlling side
is tried against a hostile peer: a small program in place of the agent,
reached through the real SSH lab (tests/lab/remote_lab.py), that answers with
what a compromised test host could send.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tkperf.cli import main
from tkperf.errors import EXIT_REMOTE, LockedError
from tkperf.model.results import DeviceInfo
from tkperf.target import guard
from tkperf.target.loopdev import try_loop

MiB = 1024 * 1024
AGENT = [sys.executable, "-m", "tkperf", "agent"]


@pytest.fixture
def loop(tmp_path):
    made, why = try_loop(64 * MiB, str(tmp_path))
    if made is None:
        pytest.skip(f"needs a loop device: {why}")
    try:
        yield made.path
    finally:
        made.__exit__(None, None, None)


@pytest.fixture
def mounted(loop, tmp_path):
    """The loop device with an ext4 file system mounted, and a file on it."""
    if subprocess.run(["mkfs.ext4", "-q", "-F", loop], capture_output=True).returncode != 0:
        pytest.skip("mkfs.ext4 failed")
    where = tmp_path / "mnt"
    where.mkdir()
    if subprocess.run(["mount", loop, str(where)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a loop device here")
    (where / "precious").write_text("data in use\n")
    try:
        yield loop, where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def policy_file(tmp_path, text: str, mode: int = 0o644) -> str:
    path = tmp_path / "agent.conf"
    path.write_text(textwrap.dedent(text))
    os.chmod(path, mode)
    return str(path)


class AgentProcess:
    """A real ``tkperf agent`` on pipes, as sshd would start it."""

    def __init__(self, policy: str) -> None:
        self.proc = subprocess.Popen([*AGENT, "--policy", policy], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        self.hello = self.next_message()
        self.ids = 0

    def next_message(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, self.stderr()
        msg = json.loads(line)
        self.lines.append(msg)
        return msg

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def call(self, op: str, **args) -> dict:
        self.ids += 1
        self.send_raw(json.dumps({"id": self.ids, "op": op, "args": args}).encode() + b"\n")
        while True:
            msg = self.next_message()
            if msg.get("id") == self.ids:
                return msg

    def finish(self, timeout: float = 30) -> int:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        rest = self.proc.stdout.read()
        self.lines += [json.loads(x) for x in rest.splitlines() if x.strip()]
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        return self.proc.stderr.read().decode("utf-8", "replace") if self.proc.poll() is not None else ""


def refused(reply: dict, text: str) -> bool:
    err = reply.get("error") or {}
    return err.get("type") == "RefusedError" and text in err.get("message", "")


def lock_is_free(path: str) -> bool:
    dev = DeviceInfo(path=path, resolved=path, kind="block", size_bytes=1)
    try:
        with guard.DeviceLock(dev):
            return True
    except LockedError:  # held by someone else; any other error fails the test
        return False


# --- the agent enforces what a local run enforces ----------------------------------

def test_a_mounted_device_is_refused_even_when_the_request_says_force(mounted, tmp_path):
    loop, where = mounted
    agent = AgentProcess(policy_file(tmp_path, "# no allow_force\n"))
    assert agent.call("resolve", path=loop).get("ok")["resolved"] == loop
    assert "ok" in agent.call("lock")
    reply = agent.call("check_safe", force=True)
    assert refused(reply, "--force is not allowed over SSH by this test host's policy"), reply
    assert "mounted" in reply["error"]["message"]
    # nothing that writes is served without a passed check
    assert refused(agent.call("purge", method="discard"), "the agent writes to")
    assert refused(agent.call("cache_start", wanted="off"), "the agent writes to")
    assert agent.finish() == 0
    assert (where / "precious").read_text() == "data in use\n"
    assert lock_is_free(loop)
    logs = [m["log"][2] for m in agent.lines if "log" in m]
    assert any(t.startswith("agent refused: refusing to write:") for t in logs), logs


def test_force_counts_only_where_the_hosts_policy_allows_it(mounted, tmp_path):
    loop, _ = mounted
    # writable by others: not trusted, so the defaults (no force) apply
    loose = policy_file(tmp_path, "allow_force = yes\n", mode=0o666)
    agent = AgentProcess(loose)
    agent.call("resolve", path=loop)
    assert refused(agent.call("check_safe", force=True), "not allowed over SSH")
    logs = [m["log"][2] for m in agent.lines if "log" in m]
    assert any("must be owned by root and writable by no one else" in t for t in logs), logs
    agent.finish()
    strict = policy_file(tmp_path, "allow_force = yes\n", mode=0o644)
    agent = AgentProcess(strict)
    agent.call("resolve", path=loop)
    reply = agent.call("check_safe", force=True)
    assert reply.get("ok") and "mounted" in " ".join(reply["ok"])
    assert agent.finish() == 0


def test_no_command_line_from_the_wire(loop, tmp_path):
    marker = tmp_path / "ran"
    template = f"touch {marker} {{device}}"
    agent = AgentProcess(policy_file(tmp_path, "allow_force = no\n"))
    agent.call("resolve", path=loop)
    agent.call("lock")
    assert "ok" in agent.call("check_safe", force=False)
    assert "ok" in agent.call("exclusive")
    reply = agent.call("purge", method="cmd:" + template)
    assert refused(reply, "a purge command comes from this test host's policy, never from the controlling side")
    assert not marker.exists()
    agent.finish()
    # the same template, listed by the test host's administrator, runs
    agent = AgentProcess(policy_file(tmp_path, f"purge_command = {template}\n"))
    agent.call("resolve", path=loop)
    agent.call("lock")
    agent.call("check_safe", force=False)
    agent.call("exclusive")
    reply = agent.call("purge", method="cmd:" + template)
    assert reply.get("ok", {}).get("method") == "cmd", reply
    assert marker.exists()
    assert agent.finish() == 0


def test_one_device_per_session_and_writes_only_in_order(loop, tmp_path):
    agent = AgentProcess(policy_file(tmp_path, ""))
    assert refused(agent.call("purge", method="discard"), "") or "error" in agent.call("purge", method="discard")
    agent.call("resolve", path=loop)
    assert refused(agent.call("resolve", path="/dev/null"), "one device per session")
    assert refused(agent.call("purge", method="discard"), "only after it locked the device")
    agent.call("lock")
    agent.call("check_safe", force=False)
    assert refused(agent.call("purge", method="discard"), "holds it open exclusively")
    assert refused(agent.call("purge", method="rm"), "unknown purge method 'rm'")
    assert refused(agent.call("cache_start", wanted="maybe"), "write cache setting 'maybe'")
    assert refused(agent.call("health", when="../../x"), "health snapshot")
    assert agent.finish() == 0


# --- hostile lines from the controlling side ---------------------------------------

HOSTILE_REQUESTS = [
    (b"this is not json\n", "not JSON"),
    (b"[" * 5000 + b"]" * 5000 + b"\n", "nested deeper than 32 levels"),
    (b'{"id": 1, "op": "resolve", "args": {"path": "' + b"a" * (70 << 10) + b'"}}\n', "over 65536 bytes"),
    (b'{"id": 1, "op": "check_safe", "args": {"force": "yes"}}\n', "force must be a bool"),
    (b'{"id": 1, "op": "check_safe", "args": {"force": false, "extra": 1}}\n', "the arguments must be"),
    (b'{"id": 1, "op": "run_this", "args": {}}\n', "not a request"),
    (b'{"id": "1", "op": "lock", "args": {}}\n', "not a request"),
    (b'[1, 2, 3]\n', "a JSON list where an object belongs"),
    (b'"\xff\xfe"\n', "not UTF-8"),
]


@pytest.mark.parametrize("line,why", HOSTILE_REQUESTS)
def test_a_hostile_request_line_ends_the_session_in_one_line(line, why, loop, tmp_path):
    agent = AgentProcess(policy_file(tmp_path, ""))
    agent.call("resolve", path=loop)
    agent.call("lock")
    assert not lock_is_free(loop)
    agent.send_raw(line)
    rc = agent.finish(timeout=20)  # ended by the agent, not by the timeout (which raises)
    assert rc == EXIT_REMOTE
    fatal = [m["fatal"] for m in agent.lines if "fatal" in m]
    assert len(fatal) == 1 and why in fatal[0], agent.lines
    err = agent.proc.stderr.read().decode()
    assert "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.startswith("tkperf: error:")] == [
        f"tkperf: error: {fatal[0]}"]
    assert lock_is_free(loop)


def test_the_end_of_input_ends_an_idle_session_and_releases_the_device(loop, tmp_path):
    agent = AgentProcess(policy_file(tmp_path, ""))
    agent.call("resolve", path=loop)
    agent.call("lock")
    agent.call("check_safe", force=False)
    agent.call("exclusive")
    assert agent.finish(timeout=10) == 0
    assert lock_is_free(loop)


# --- hostile replies from a test host ------------------------------------------------

FAKE_AGENT = '''\
import json, sys
mode = sys.argv[1]
def say(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
say({"hello": {"tkperf": sys.argv[2], "python": "3", "host": "evil", "pid": 1}})
request = json.loads(sys.stdin.readline())
rid = request["id"]
if mode == "garbage":
    sys.stdout.write("\\x1b]0;pwned\\x07 not json at all\\n")
elif mode == "deep":
    sys.stdout.write("[" * 100000 + "]" * 100000 + "\\n")
elif mode == "mistyped":
    say({"id": rid, "ok": {"path": "/dev/x", "resolved": "/dev/x", "kind": "block", "size_bytes": "huge"}})
elif mode == "log":
    say({"log": "not a list"})
elif mode == "neither":
    say({"id": rid})
elif mode == "scalar":
    say({"id": rid, "ok": [1, 2]})
sys.stdout.flush()
sys.stdin.read()
'''

HOSTILE_REPLIES = [
    ("garbage", "not JSON"),
    ("deep", "nested deeper than 32 levels"),
    ("mistyped", "DeviceInfo.size_bytes is a str, not a int"),
    ("log", "a log line is not [logger, level, text]"),
    ("neither", "a reply with neither ok nor error"),
    ("scalar", "expected an object for DeviceInfo"),
]


@pytest.mark.parametrize("mode,why", HOSTILE_REPLIES)
def test_a_hostile_test_host_ends_the_run_with_exit_13_in_one_line(mode, why, ssh_lab, loop, tmp_path, capsys):
    from tkperf import __version__

    fake = tmp_path / "fake_agent.py"
    fake.write_text(FAKE_AGENT)
    remote = f"{sys.executable} {fake} {mode} {__version__}"
    rc = main(["info", f"127.0.0.2:{loop}", "--ssh-config", str(ssh_lab.config), "--remote-tkperf", remote])
    err = capsys.readouterr().err
    assert rc == EXIT_REMOTE, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tkperf: error: tkperf agent on 127.0.0.2 broke the protocol ("), err
    assert why in lines[0]
    assert "\x1b" not in err and "\x07" not in err
