"""The remote-host lab itself (tests/lab/remote_lab.py): real sshd logins on both
loopback hosts, a refused key, fio jobs through real fio servers, a server
killed, and a real fio of another version."""
from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

import remote_lab
from conftest import needs_fio
from remote_lab import LAB_HOSTS, OLD_FIO_VERSION, descendants, start_ssh_lab
from tkperf import __version__

JOB = """[lab-null]
ioengine=null
size=1m
rw=randread
bs=4k
"""


def test_ssh_login_runs_a_command_on_both_hosts(ssh_lab):
    assert ssh_lab.hosts == LAB_HOSTS == ("127.0.0.2", "127.0.0.3")
    for host in ssh_lab.hosts:
        r = subprocess.run(["ssh", "-F", ssh_lab.config, "-o", "BatchMode=yes", host, "--", "echo", "hi"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert (r.returncode, r.stdout) == (0, "hi\n"), r.stderr
    # both logins reached this lab's sshd, as root, by the lab's key
    assert ssh_lab.sshd_log().count("Accepted publickey for root") >= 2


def test_sessions_find_this_tkperf(ssh_lab):
    r = ssh_lab.run(LAB_HOSTS[1], "tkperf", "--version")
    assert (r.returncode, r.stdout.strip()) == (0, f"tkperf {__version__}"), r.stderr


def test_refused_key_gets_permission_denied(ssh_lab, ssh_refusing_config):
    for host in ssh_lab.hosts:
        r = ssh_lab.run(host, "echo", "hi", config=ssh_refusing_config)
        assert r.returncode == 255
        assert "Permission denied" in r.stderr
        assert r.stdout == ""


def test_host_key_checking_is_on(ssh_lab, tmp_path):
    """A known_hosts with another key for the host: ssh refuses to connect."""
    other = tmp_path / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True, timeout=30)
    pub = " ".join((tmp_path / "other_host_key.pub").read_text().split()[:2])
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[127.0.0.2]:{ssh_lab.port} {pub}\n")
    r = subprocess.run(
        ["ssh", "-F", ssh_lab.config, "-o", f"UserKnownHostsFile={wrong}", "127.0.0.2", "--", "echo", "hi"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 255
    assert "Host key verification failed" in r.stderr or "HOST IDENTIFICATION HAS CHANGED" in r.stderr


def test_stop_closes_the_port(tmp_path):
    lab = start_ssh_lab(tmp_path)
    try:
        assert lab.run(LAB_HOSTS[0], "true").returncode == 0
    finally:
        lab.stop()
    assert lab.proc.returncode is not None
    with pytest.raises(OSError):
        socket.create_connection((LAB_HOSTS[0], lab.port), timeout=2).close()


def test_sshd_that_dies_is_reported_with_its_output(tmp_path, monkeypatch):
    fake = tmp_path / "sshd"
    fake.write_text("#!/bin/sh\necho 'sshd: cannot start, said the fake' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(remote_lab, "SSHD", str(fake))
    lab_dir = tmp_path / "lab"
    lab_dir.mkdir()
    with pytest.raises(RuntimeError) as failed:
        start_ssh_lab(lab_dir)
    assert "no SSH login to 127.0.0.2" in str(failed.value)
    assert "(exit 1) said:\nsshd: cannot start, said the fake" in str(failed.value)


def client(fio, server, jobfile, timeout=120):
    # Without COLUMNS and LINES (pytest-xdist's workers have them): given a terminal size, a fio
    # client that lost its server still prints a report, with an empty client_stats.
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([fio, f"--client={server.client_arg}", "--output-format=json", str(jobfile)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout, env=env)


@needs_fio
def test_fio_job_through_servers_then_one_killed(fio_servers, tmp_path):
    jobfile = tmp_path / "lab.fio"
    jobfile.write_text(JOB)
    servers = [fio_servers(host) for host in LAB_HOSTS]
    assert [s.addr for s in servers] == list(LAB_HOSTS)
    for server in servers:
        r = client("fio", server, jobfile)
        assert r.returncode == 0, r.stderr
        stats = json.loads(r.stdout)["client_stats"]
        job = next(s for s in stats if s["jobname"] == "lab-null")
        assert job["error"] == 0 and job["read"]["io_bytes"] == 1024 * 1024
    dead, alive = servers
    dead.kill()
    assert dead.proc.returncode == -9 and descendants(dead.proc.pid) == []
    r = client("fio", dead, jobfile)
    assert r.returncode != 0
    assert "client_stats" not in r.stdout
    assert client("fio", alive, jobfile).returncode == 0   # the other host still answers


def test_old_fio_is_another_version(old_fio):
    r = subprocess.run([old_fio, "--version"], capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == OLD_FIO_VERSION == "fio-3.25"
    assert Path(old_fio).is_file()


@needs_fio
def test_old_fio_server_serves_its_own_version_only(fio_servers, old_fio, tmp_path):
    mine = subprocess.run(["fio", "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if mine == OLD_FIO_VERSION:
        pytest.skip(f"this machine's fio is {mine} too")
    jobfile = tmp_path / "lab.fio"
    jobfile.write_text(JOB)
    server = fio_servers(LAB_HOSTS[1], fio=old_fio)
    assert server.fio == old_fio
    same = client(old_fio, server, jobfile)
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["fio version"] == OLD_FIO_VERSION
    other = client("fio", server, jobfile)
    assert other.returncode != 0
    assert "client/server version mismatch" in other.stderr, other.stderr
    # fio may still print its JSON frame (when the server dropped it before or
    # after its probe): then with no job's results in it
    frame = other.stdout[other.stdout.find("{"):] if "{" in other.stdout else ""
    assert not frame or json.loads(frame).get("client_stats", []) == [], other.stdout
