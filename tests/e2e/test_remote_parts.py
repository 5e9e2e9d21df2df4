"""The parts of remote runs that need no server: fio's client JSON
(recorded, tests/data/client/README.rst), the probe line, target names,
the agent's wire format and the agent itself on a pipe."""
import os
import platform
import subprocess
import sys

import pytest

from agentpipe import converse
from conftest import data_path, needs_fio
from tkperf import __version__
from tkperf.cli import common
from tkperf.errors import FioError, LockedError, RemoteError
from tkperf.fio.intervals import REPORT_AT, IntervalCutter, report_time
from tkperf.fio.jobs import FioJob
from tkperf.fio.output import first_json_object, parse_jobs
from tkperf.model.results import DeviceInfo, HealthSnapshot, PurgeRecord
from tkperf.remote import fio_host, wire
from tkperf.remote.fio import client_jobs, server_version
from tkperf.target.identity import split_target


def _client(name):
    with open(data_path(os.path.join("client", name))) as fh:
        return first_json_object(fh.read())  # fio printed job lines before the JSON


def test_client_stats_of_one_host_parse_like_local_jobs():
    report = _client("fio-3.33-two-hosts-jsonplus.json")
    raw = [e for e in report["client_stats"] if e["jobname"] != "All clients" and e["hostname"] == "127.0.0.2"]
    jobs = client_jobs(report, "127.0.0.2")["jobs"]
    assert [(j["jobname"], j["hostname"]) for j in jobs] == [("rnd4k-w", "127.0.0.2"), ("rnd4k-r", "127.0.0.2")]
    specs = {"rnd4k-w": FioJob("rnd4k-w", "randwrite", 4096, numjobs=2, iodepth=8).spec(),
             "rnd4k-r": FioJob("rnd4k-r", "randread", 4096, iodepth=8).spec()}
    w, r = parse_jobs(client_jobs(report, "127.0.0.2"), specs)
    assert w.write.iops == pytest.approx(raw[0]["write"]["iops"]) and w.read.ios == 0
    assert r.read.iops == pytest.approx(raw[1]["read"]["iops"])
    assert sum(n for _, n in w.write.bins) == raw[0]["write"]["lat_ns"]["N"]  # json+ bins came through
    assert w.cpu_pct == pytest.approx(raw[0]["usr_cpu"] + raw[0]["sys_cpu"])
    other = parse_jobs(client_jobs(report, "127.0.0.3"), specs)
    assert other[0].write.iops != w.write.iops  # the other host's own figures


def test_the_all_clients_sum_is_never_taken_for_a_job():
    report = _client("fio-3.33-two-hosts-jsonplus.json")
    everyone = client_jobs(report)["jobs"]
    assert len(everyone) == 4 and all(e["jobname"] != "All clients" for e in everyone)
    assert any(e["jobname"] == "All clients" for e in report["client_stats"])
    with pytest.raises(FioError, match="client_stats"):
        client_jobs({"jobs": []})


def test_a_streams_late_reports_cut_into_intervals_at_fios_own_times():
    report = client_jobs(_client("fio-3.33-status-interval.json"), "127.0.0.2")
    cutter = IntervalCutter("rnd4k-w", 1)
    cuts = []
    for e in report["jobs"]:
        cut = cutter.feed({"jobs": [e], REPORT_AT: 100.0 + e["job_runtime"] / 1000.0},
                          report_time({"jobs": [e], REPORT_AT: 100.0 + e["job_runtime"] / 1000.0}))
        if cut is not None:
            cuts.append(cut)
    assert [c.index for c in cuts] == [1, 2, 3, 3]  # the short tail is merged into interval 3
    assert cuts[1].wall_s == pytest.approx(1.0)  # fio's clock, not the moment of the hand-over
    assert cuts[-1].written_total == report["jobs"][-1]["write"]["io_bytes"]
    assert report_time({}) > 0


def test_the_probe_line_names_the_servers_fio():
    with open(data_path("client/probe-fio-3.33.txt")) as fh:
        assert server_version(fh.read()) == "fio-3.33"
    assert server_version("fio: connect: Connection refused\n") == ""


@pytest.mark.parametrize("text, want", [
    ("lab1:/dev/nvme1n1", ("lab1", "/dev/nvme1n1")),
    ("root@10.0.0.5:/dev/sdb", ("root@10.0.0.5", "/dev/sdb")),
    ("/dev/nvme0n1", None), ("./x:/y", None), ("x.img", None), ("host:dev/sdb", None),
])
def test_remote_targets_are_told_from_local_paths(text, want):
    assert split_target(text) == want


def test_remote_names_carry_the_host():
    dev = DeviceInfo(path="root@10.0.0.5:/dev/loop3", resolved="/dev/loop3", kind="block", size_bytes=1 << 28)
    assert fio_host("root@10.0.0.5") == "10.0.0.5"
    assert common.default_name(dev) == "10.0.0.5-loop3"
    nvme = DeviceInfo(path="lab:/dev/nvme1n1", resolved="/dev/nvme1n1", kind="block", size_bytes=1 << 30,
                      model="Acme 9000")
    assert common.default_name(nvme) == "Acme-9000"


def test_what_crosses_the_wire_comes_back_the_same():
    dev = DeviceInfo(path="/dev/sdb", resolved="/dev/sdb", kind="block", size_bytes=1 << 30, model="M")
    rec = PurgeRecord(requested="auto", method="discard", seconds=0.5, pts_purge=False, verification="zeros")
    snap = HealthSnapshot(time="t", when="before", source="smartctl", values=(("temperature_c", 41.0),))
    for value, back in ((dev, wire.device), (rec, wire.purge_record), (snap, wire.health)):
        line = wire.encode({"ok": wire.to_dict(value)})
        assert back(wire.decode(line)["ok"]) == value
    assert wire.health(None) is None
    assert wire.error_class("LockedError") is LockedError
    assert wire.error_class("SystemExit") is RemoteError  # only tkperf's own errors by name
    with pytest.raises(ValueError):
        wire.decode(b"[1, 2]\n")


def _agent(requests, rc=0):
    """Run ``tkperf agent`` as the test host would, on pipes; its output lines."""
    code, out, err = converse([sys.executable, "-m", "tkperf", "agent"], requests)
    assert code == rc, err
    return out


def test_the_agent_greets_answers_and_refuses_what_is_not_a_block_device(tmp_path):
    f = tmp_path / "plain.img"
    f.write_bytes(b"\0" * 4096)
    out = _agent([{"id": 1, "op": "resolve", "args": {"path": str(f)}},
                  {"id": 2, "op": "facts"},
                  {"id": 3, "op": "host_info", "args": {"fio_version": "fio-3.33"}},
                  {"id": 4, "op": "no-such-op"}], rc=13)
    assert out[0]["hello"]["tkperf"] == __version__
    replies = {m["id"]: m for m in out if "id" in m}
    assert replies[1]["error"]["type"] == "TargetError" and "not a block device" in replies[1]["error"]["message"]
    assert replies[2]["error"]["message"] == "no device resolved yet"
    assert replies[3]["ok"]["fio_version"] == "fio-3.33" and replies[3]["ok"]["hostname"]
    # a request that is not the protocol ends the session (tests/e2e/test_agent_boundary.py)
    assert 4 not in replies
    assert [m["fatal"] for m in out if "fatal" in m] == [
        f"tkperf agent on {platform.node()} ended the session: the controlling side sent not a request: "
        "id 4, op 'no-such-op'"]


def test_the_agent_on_a_loop_device_locks_and_forwards_its_command_lines(loopdev):
    out = _agent([{"id": 1, "op": "resolve", "args": {"path": loopdev}}, {"id": 2, "op": "lock"},
                  {"id": 3, "op": "check_safe", "args": {"force": False}}, {"id": 4, "op": "exclusive"},
                  {"id": 5, "op": "purge", "args": {"method": "discard"}}])
    replies = {m["id"]: m for m in out if "id" in m}
    assert replies[1]["ok"]["resolved"] == loopdev and replies[1]["ok"]["kind"] == "block"
    assert all("ok" in replies[i] for i in (2, 3, 4)), replies
    assert replies[5]["ok"]["method"] == "discard" and replies[5]["ok"]["verification"]
    logged = [m["log"][2] for m in out if "log" in m]
    assert any(t.startswith("run: ") and "blkdiscard" in t for t in logged)


@pytest.mark.parametrize("host, words", [
    ("nosuchhost.invalid", "fio cannot find host nosuchhost.invalid"),
    ("127.0.0.2", "no fio server answers on 127.0.0.2 port 9"),  # the discard port: nothing listens
])
def test_the_server_check_says_what_is_wrong_before_anything_runs(tmp_path, host, words):
    from tkperf.fio.jobs import FioSettings
    from tkperf.remote.fio import RemoteFio

    with pytest.raises(RemoteError, match=words):
        RemoteFio(FioSettings(filename="/dev/null"), str(tmp_path / "not-made"), host, 9)
    assert not (tmp_path / "not-made").exists()


@needs_fio
@pytest.mark.parametrize("numjobs", [1, 2])
def test_a_job_stopping_after_its_bytes_is_ended_by_fio_itself(loopdev, tmp_path, numjobs):
    # The remote WSAT's TGBW: fio's client shows nothing until a job ends, so fio must stop the job
    # itself.  A time-based job ignores number_ios and io_size (fio 3.33): it would run to its runtime.
    job = FioJob("tgbw", "randwrite", 4096, numjobs=numjobs, iodepth=8, runtime=60).stopping_after(24 * 1024 * 1024)
    lines = job.section()
    assert "time_based=1" not in lines and "runtime=60" in lines
    path = tmp_path / "j.fio"
    path.write_text("\n".join(["[global]", "ioengine=libaio", "direct=1", f"filename={loopdev}", "norandommap=1",
                               "thread=1", "group_reporting=1", ""] + lines) + "\n")
    out = subprocess.run(["fio", "--output-format=json", str(path)], capture_output=True, text=True, check=True)
    write = first_json_object(out.stdout)["jobs"][0]["write"]
    assert write["io_bytes"] == 24 * 1024 * 1024  # every byte asked for, no more
    assert write["runtime"] < 30_000  # ms: ended by its bytes, not by the 60 s runtime


@needs_fio
def test_a_failed_job_whose_server_went_away_says_so_whatever_fios_client_printed(tmp_path, fio_servers):
    """fio's client may exit 1 without a word when its server is killed: the
    failure says the server went away because none answers a probe any
    more, not because of fio's wording; a server still there is not blamed."""
    from tkperf.fio.jobs import FioSettings
    from tkperf.remote.fio import RemoteFio

    server = fio_servers("127.0.0.3")
    fio = RemoteFio(FioSettings(filename="/dev/null"), str(tmp_path), "127.0.0.3", server.port)
    assert fio.answers()
    assert "went away" not in fio.failure_line("", "")  # the server answers: fio's own line, nothing blamed
    server.kill()
    assert not fio.answers()
    said = fio.failure_line("", "")  # no message at all, as the client printed in the flaky run
    assert said.endswith(f"the fio server on 127.0.0.3 port {server.port} or the connection to it went away "
                         "(no server answers)")
