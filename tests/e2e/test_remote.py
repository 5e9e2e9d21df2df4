"""Remote targets (``HOST:/dev/...``) end to end, on this machine only.

Real parts: an OpenSSH server the tests start on 127.0.0.2 and 127.0.0.3
with a key they generate (host-key checking on), real ``fio --server``
processes on those addresses, a real fio 3.25 for the version check, and
loop devices made here.  tkperf reaches the "test hosts" exactly as it
would reach a lab's: ``ssh -o BatchMode=yes`` with the client configuration
the lab wrote, ``tkperf agent`` on the other end, ``fio --client``.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import needs_fio
from remote_lab import LAB_HOSTS, free_port
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, EXIT_LOCKED, EXIT_OK, EXIT_REMOTE
from tkperf.target.loopdev import try_loop

pytestmark = needs_fio

MiB = 1024 * 1024
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = f"{sys.executable} -m tkperf"
# One workload of one block size and mix, two rounds, one WIPC pass.
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "2",
         "-nj", "1", "-iod", "4", "--wipc-loops", "1", "--yes", "--report-format", "rst"]


@pytest.fixture
def loops(tmp_path):
    """make(n): n fresh 256 MiB loop devices, all detached afterwards."""
    made = []

    def make(n):
        for _ in range(n):
            loop, why = try_loop(256 * MiB, str(tmp_path))
            if loop is None:
                pytest.skip(f"needs loop devices: {why}")
            made.append(loop)
        return [lp.path for lp in made[-n:]]

    yield make
    for loop in made:
        loop.__exit__(None, None, None)


@pytest.fixture
def servers(fio_servers):
    """fio servers on both lab addresses, on one port (a command has one --fio-port)."""
    port = free_port()
    return [fio_servers(addr, port=port) for addr in LAB_HOSTS]


def remote_options(lab, port, config=None, agent=AGENT):
    return ["--ssh-config", config or str(lab.config), "--remote-tkperf", agent, "--fio-port", str(port)]


def digest(path, size=4 * MiB):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(size)).hexdigest()


def test_two_remote_targets_and_one_local_in_one_command(ssh_lab, servers, loops, tmp_path, capsys):
    a, b, c = loops(3)
    port = servers[0].port
    out = tmp_path / "out"
    rc = main(["ssd", "run", f"127.0.0.2:{a}", f"127.0.0.3:{b}", c, *QUICK, "--outdir", str(out),
               "--json-summary", str(tmp_path / "all.json"), *remote_options(ssh_lab, port)])
    captured = capsys.readouterr()
    assert rc == EXIT_OK, captured.err
    doc = json.loads((tmp_path / "all.json").read_text())
    assert [(t["host"], t["status"]) for t in doc["targets"]] == [
        ("127.0.0.2", "complete"), ("127.0.0.3", "complete"), ("", "complete")]
    names = {f"127.0.0.2-{os.path.basename(a)}": "127.0.0.2", f"127.0.0.3-{os.path.basename(b)}": "127.0.0.3",
             os.path.basename(c): ""}
    for name, host in names.items():
        run = store.load(str(out / name / f"{name}.xml"))
        assert run.status == "complete" and run.tests[0].status == "complete"
        assert len(run.tests[0].rounds) == 2 and run.tests[0].purge is not None
        log = (out / name / f"{name}.log").read_text()
        if host:
            assert run.device.path.startswith(f"{host}:/dev/loop")
            assert run.facts["remote"] == {"host": host, "fio_host": host, "fio_port": port,
                                           "remote_tkperf": AGENT, "ssh_config": str(ssh_lab.config)}
            assert f"--client={host},{port}" in log  # the workloads through fio's client
            assert f"[{host}] run: " in log and "blkdiscard" in log  # the agent's commands, logged here
            assert f"target on a test host: {host} over SSH: " in log and "BatchMode=yes" in log
            assert "server fio-" in log
            assert run.facts["target"]["path"] == run.device.resolved  # facts read on the test host
        else:
            assert "remote" not in run.facts and "--client=" not in log
        assert (out / name / f"{name}.rst").exists()
        sharing = run.facts["host_sharing"]  # each alone where its fio ran
        assert sharing["runs"] == 1 and sharing.get("host", "") == host
        assert [t["name"] for t in sharing["targets"]] == [name]
    comparison = (out / "comparison" / "comparison.rst").read_text()
    assert all(name in comparison for name in names)
    report = (out / "127.0.0.2-" f"{os.path.basename(a)}" / f"127.0.0.2-{os.path.basename(a)}.rst").read_text()
    assert "Remote test host" in report and f"port {port}" in report


def test_fio_server_killed_mid_round_fails_that_run_which_then_resumes(ssh_lab, servers, loops, tmp_path,
                                                                        fio_servers):
    a, b = loops(2)
    port = servers[0].port
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "tkperf", "ssd", "run", f"127.0.0.2:{a}", f"127.0.0.3:{b}", *QUICK,
            "--runtime", "3", "--outdir", str(out), *remote_options(ssh_lab, port)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = f"127.0.0.3-{os.path.basename(b)}"
    log = out / victim / f"{victim}.log"
    try:
        deadline = time.monotonic() + 120
        # the WIPC, then round 1 (the probe comes before the log): kill the server while round 1 runs (3 s of fio)
        while time.monotonic() < deadline:
            if log.exists() and log.read_text().count("--client=127.0.0.3") >= 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("the victim's run never reached round 1")
        time.sleep(0.5)
        servers[1].kill()
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_FIO, stderr  # the worst of the two
    other = f"127.0.0.2-{os.path.basename(a)}"
    assert store.load(str(out / other / f"{other}.xml")).status == "complete"
    failed = store.load(str(out / victim / f"{victim}.xml"))
    assert failed.status == "failed" and failed.tests[0].status == "failed"
    assert "the fio server on 127.0.0.3 port" in failed.events[-1].message
    assert "went away" in failed.events[-1].message
    # the server back, the run resumes on the same drive
    fio_servers("127.0.0.3", port=port)
    rc = main(["resume", str(out / victim / f"{victim}.xml"), "--yes", "--ssh-config", str(ssh_lab.config),
               "--remote-tkperf", AGENT, "--report-format", "rst"])
    assert rc == EXIT_OK
    done = store.load(str(out / victim / f"{victim}.xml"))
    assert done.status == "complete" and len(done.tests[0].rounds) == 2
    assert any(e.kind == "resumed" or "resum" in e.message for e in done.events)


def test_another_fio_version_on_the_server_is_refused_and_nothing_written(ssh_lab, fio_servers, old_fio,
                                                                           loops, tmp_path, capsys):
    dev, = loops(1)
    server = fio_servers("127.0.0.3", fio=old_fio)
    before = digest(dev)
    out = tmp_path / "out"
    rc = main(["ssd", "run", f"127.0.0.3:{dev}", *QUICK, "--outdir", str(out),
               *remote_options(ssh_lab, server.port)])
    err = capsys.readouterr().err
    assert rc == EXIT_REMOTE
    assert f"the fio server on 127.0.0.3 port {server.port}" in err and "same release" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists() and digest(dev) == before


def test_unreachable_host_and_refused_login_and_missing_server(ssh_lab, ssh_refusing_config, servers, loops,
                                                               tmp_path, capsys):
    dev, = loops(1)
    before = digest(dev)
    out = tmp_path / "out"
    port = servers[0].port
    cases = [
        ("127.0.0.4", remote_options(ssh_lab, port), "cannot reach 127.0.0.4 over SSH"),  # no sshd there
        ("127.0.0.2", remote_options(ssh_lab, port, ssh_refusing_config), "Permission denied"),
        ("127.0.0.2", remote_options(ssh_lab, free_port()), "no fio server answers on 127.0.0.2"),
    ]
    for host, options, words in cases:
        rc = main(["ssd", "run", f"{host}:{dev}", *QUICK, "--outdir", str(out), *options])
        err = capsys.readouterr().err
        assert rc == EXIT_REMOTE, err
        assert words in err and len(err.strip().splitlines()) == 1
        assert not out.exists()
    assert digest(dev) == before


def test_a_second_run_on_the_same_remote_device_is_refused_by_the_lock(ssh_lab, servers, loops, tmp_path):
    dev, = loops(1)
    port = servers[0].port
    first, _ = start_remote_run(ssh_lab, port, dev, tmp_path / "first", "--runtime", "3",
                                until=("--client=127.0.0.2", 1))
    try:
        second = subprocess.run([sys.executable, "-m", "tkperf", "ssd", "run", f"127.0.0.2:{dev}", *QUICK,
                                 "--outdir", str(tmp_path / "second"), *remote_options(ssh_lab, port)],
                                cwd=REPO, capture_output=True, text=True, timeout=120)
    finally:
        first.communicate(timeout=120)
    assert second.returncode == EXIT_LOCKED, second.stderr
    assert "on 127.0.0.2: " in second.stderr and "another tkperf run (PID" in second.stderr
    assert first.returncode == EXIT_OK


def test_server_prints_and_starts_the_fio_server(ssh_lab, tmp_path, capsys):
    assert main(["server"]) == EXIT_OK
    assert capsys.readouterr().out.strip() == "fio --server=,8765 --daemonize=/run/tkperf-fio-8765.pid"
    port = free_port()
    pidfile = f"/run/tkperf-fio-{port}.pid"
    try:
        rc = main(["server", "127.0.0.2", "--start", "--bind", "127.0.0.2", "--fio-port", str(port),
                   "--ssh-config", str(ssh_lab.config)])
        out = capsys.readouterr().out
        assert rc == EXIT_OK
        mine = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
        assert f"fio server {mine} listening on 127.0.0.2 port {port}" in out
        pid = int(open(pidfile).read().strip())
        assert "--server=ip:127.0.0.2," in open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
    finally:
        if os.path.exists(pidfile):
            pid = int(open(pidfile).read().strip())
            subprocess.run(["pkill", "-KILL", "-s", str(os.getsid(pid))], check=False)
            os.unlink(pidfile)


def start_remote_run(lab, port, dev, out, *extra, until=("--client=127.0.0.2", 2), agent=AGENT, **popen):
    """A real ``tkperf ssd run 127.0.0.2:DEV ... EXTRA`` in a child, returned
    once its log holds ``until`` (text, times): by default round 1 runs (the
    log names the WIPC's and round 1's fio clients); (proc, name)."""
    name = f"127.0.0.2-{os.path.basename(dev)}"
    argv = [sys.executable, "-m", "tkperf", "ssd", "run", f"127.0.0.2:{dev}", *QUICK, *extra,
            "--outdir", str(out), *remote_options(lab, port, agent=agent)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    log = out / f"{name}.log"
    text, times = until
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text().count(text) >= times):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"the run never logged {text!r} {times} times: {proc.communicate()}")
        time.sleep(0.05)
    return proc, name


def ended(proc, timeout=120):
    """(stderr, seconds) of ``proc`` running on to its end; killed if it does not."""
    started = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return stderr, time.monotonic() - started


def _agents_of(pid):
    """PIDs of ``tkperf agent`` processes (the test host's side) still running."""
    out = subprocess.run(["pgrep", "-f", "-x", f"{sys.executable} -m tkperf agent"], capture_output=True,
                         text=True).stdout.split()
    return [int(p) for p in out if int(p) != pid]


def test_ctrl_c_on_a_remote_run_saves_and_ends_the_agent_and_the_run_resumes(ssh_lab, servers, loops, tmp_path):
    dev, = loops(1)
    out = tmp_path / "out"
    proc, name = start_remote_run(ssh_lab, servers[0].port, dev, out, "--runtime", "3", start_new_session=True)
    running = _agents_of(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the terminal's process group
    stderr, _ = ended(proc)
    assert running, "the agent ran during the run"
    assert proc.returncode == 130, stderr
    run = store.load(str(out / f"{name}.xml"))
    assert run.status == "interrupted" and run.tests[0].status == "interrupted"
    deadline = time.monotonic() + 30
    while _agents_of(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _agents_of(proc.pid), "the agent ends with its SSH session"
    rc = main(["resume", str(out / f"{name}.xml"), "--yes", "--ssh-config", str(ssh_lab.config),
               "--remote-tkperf", AGENT, "--report-format", "rst"])
    assert rc == EXIT_OK and store.load(str(out / f"{name}.xml")).status == "complete"


def test_streams_on_a_remote_target_get_their_intervals_and_logs_back(ssh_lab, servers, loops, tmp_path):
    dev, = loops(1)
    port = servers[0].port
    out = tmp_path / "out"
    # --wsat-time 300: the TGBW (4x, 1 GiB), not --quick's 8 s limit, must end WSAT even when the
    # shared two cores starve the fio server (CI once ran out of time first)
    rc = main(["ssd", "run", f"127.0.0.2:{dev}", "--tests", "wsat,consistency", "--quick", "--yes",
               "--wsat-time", "300", "--outdir", str(out), "--report-format", "rst", *remote_options(ssh_lab, port)])
    assert rc == EXIT_OK
    name = f"127.0.0.2-{os.path.basename(dev)}"
    run = store.load(str(out / f"{name}.xml"))
    wsat, cons = run.test("wsat"), run.test("consistency")
    assert wsat.status == "complete" and wsat.stop_reason.startswith("TGBW reached")
    rows = wsat.series["intervals"]
    written = sum(rows.column("io_bytes"))
    tgbw = int(wsat.params["tgbw"].rstrip("x")) * run.device.size_bytes if wsat.params["tgbw"].endswith("x") else 0
    assert written >= tgbw > 0
    log = (out / f"{name}.log").read_text()
    assert f"io_size={tgbw}" in log and "time_based" not in log.split("fio job file for wsat")[1].split("run:")[0]
    assert len(rows) < 120  # 1 s intervals: fio itself stopped at the TGBW, long before --wsat-time 300
    assert min(rows.column("wall_s")) > 0.5  # intervals timed by fio's clock, not at hand-over
    assert cons.status == "complete" and len(cons.series["intervals"]) >= 10
    assert len(cons.series["lat_max"]) == len(cons.series["intervals"])  # fio's latency log came back


def test_a_lost_ssh_session_stops_fio_and_fails_the_run_cleanly(ssh_lab, servers, loops, tmp_path):
    dev, = loops(1)
    out = tmp_path / "out"
    # 30 s rounds: a round left to finish would take that long; one stopped
    # ends in seconds, loaded host or not
    proc, name = start_remote_run(ssh_lab, servers[0].port, dev, out, "--runtime", "30")
    ssh = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "ssh"], capture_output=True, text=True).stdout.split()
    for pid in ssh:
        os.kill(int(pid), signal.SIGKILL)  # the network goes
    stderr, took = ended(proc)
    assert ssh, "the run held an SSH session"
    assert proc.returncode == EXIT_REMOTE, stderr
    assert "the SSH session to 127.0.0.2 ended" in stderr and "fio was stopped" in stderr
    assert took < 20  # fio was stopped, not left to finish its 30 s round
    run = store.load(str(out / f"{name}.xml"))
    assert run.status == "failed" and "the SSH session to 127.0.0.2 ended" in run.events[-1].message
    assert not run.tests[0].rounds  # round 1 was cut short: not kept as a round of zeros
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-P", str(servers[0].proc.pid)], capture_output=True).stdout.strip():
        assert time.monotonic() < deadline, "the fio server still runs the job"
        time.sleep(0.1)


def test_info_reads_a_test_hosts_drive_through_its_agent(ssh_lab, loops, capsys):
    dev, = loops(1)
    rc = main(["info", f"127.0.0.2:{dev}", "--json", "--ssh-config", str(ssh_lab.config),
               "--remote-tkperf", AGENT])
    captured = capsys.readouterr()
    assert rc == EXIT_OK, captured.err
    facts = json.loads(captured.out)
    assert facts["target"]["resolved"] == dev and facts["target"]["transport"] == "loop"
    assert facts["lsblk"]["name"] == os.path.basename(dev)
    rc = main(["info", "127.0.0.2:/etc/hostname", "--ssh-config", str(ssh_lab.config), "--remote-tkperf", AGENT])
    assert rc == 4 and "not a block device" in capsys.readouterr().err


def test_several_targets_are_refused_together_when_one_hosts_fio_server_is_missing(ssh_lab, servers, loops,
                                                                                  tmp_path, capsys):
    a, b, c = loops(3)
    before = [digest(d) for d in (a, b, c)]
    servers[1].kill()  # 127.0.0.3 has no fio server
    out = tmp_path / "out"
    rc = main(["ssd", "run", f"127.0.0.2:{a}", f"127.0.0.3:{b}", c, *QUICK, "--outdir", str(out),
               *remote_options(ssh_lab, servers[0].port)])
    err = capsys.readouterr().err
    assert rc == EXIT_REMOTE and f"no fio server answers on 127.0.0.3 port {servers[0].port}" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() and [digest(d) for d in (a, b, c)] == before


def test_ctrl_c_during_a_purge_on_the_test_host_stops_the_purge_there(ssh_lab, servers, loops, tmp_path):
    dev, = loops(1)
    out = tmp_path / "out"
    slow = "sh -c 'sleep 60 # tkperf-slow-purge' {device}"  # a vendor tool that takes its time
    # The test host's administrator lists the tool in the agent's policy (a
    # root-owned file); the controlling side only names it.
    policy = tmp_path / "agent.conf"
    policy.write_text(f"purge_command = {slow}\n")
    policy.chmod(0o644)
    wrapper = tmp_path / "agent-with-policy"
    wrapper.write_text(f'#!/bin/sh\nexec {AGENT} "$@" --policy {policy}\n')
    wrapper.chmod(0o755)
    proc, name = start_remote_run(ssh_lab, servers[0].port, dev, out, "--purge-cmd", slow,
                                  until=("tkperf-slow-purge", 1), start_new_session=True, agent=str(wrapper))
    log = out / f"{name}.log"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    stderr, took = ended(proc, timeout=60)
    assert proc.returncode == 130, stderr
    assert took < 20  # the agent stopped the tool; nobody waited for its 60 s
    text = log.read_text()
    assert "[127.0.0.2] run: sh -c 'sleep 60 # tkperf-slow-purge'" in text  # ran there, logged here
    assert "interrupting the agent's purge" in text
    run = store.load(str(out / f"{name}.xml"))
    assert run.status == "interrupted"
    left = subprocess.run(["pgrep", "-f", "tkperf-slow-purge"], capture_output=True, text=True).stdout.split()
    assert not left, "the purge tool was stopped on the test host"
