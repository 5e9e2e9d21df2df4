"""A run on the emulated SSD records how much the host limited it (issue 45
item 5): the replies the server sent more than 1 ms after the model's time,
from the counters at the run's start and end; above 5% the run carries a
warning and the report a caveat."""
from __future__ import annotations

from conftest import needs_fio
from simtruth import Counters, Watch, run_tkperf, unique_name

from tkperf.report.header import device_fields
from tkperf.simdrive import hostlimit

START = {"host_write_ios": 100, "host_read_ios": 10, "host_trim_ios": 0, "late_replies": 3, "max_late_s": 0.002,
         "model_time_s": 10.0, "idle_time_s": 4.0}


def test_share_counts_the_late_replies_between_two_readings():
    end = dict(START, host_write_ios=1100, host_read_ios=10, late_replies=53, max_late_s=0.0125, model_time_s=20.0,
               idle_time_s=6.5)
    got = hostlimit.share(START, end)
    assert got == {"replies": 1000, "late_replies": 50, "late_share": 0.05, "idle_share": 0.25,
                   "max_late_s": 0.0125, "late_s": 0.001, "threshold": 0.05}
    assert hostlimit.caveat(got) == ""  # at the threshold: not above it
    assert "below the 5% caveat" in hostlimit.summary(got)
    end["late_replies"] = 54
    said = hostlimit.caveat(hostlimit.share(START, end))
    assert said.startswith("emulated SSD host-limited: 51 of 1,000 replies (5.1%) went out more than 1 ms after "
                           "the model's time (worst 12.5 ms)")
    assert said.endswith("(caveat above 5%)")


def test_counters_of_another_server_or_junk_give_no_share():
    assert hostlimit.share(START, dict(START, host_write_ios=5, late_replies=0))["replies"] == 0
    assert hostlimit.caveat(None) == "" and hostlimit.caveat({"late_share": "x"}) == ""
    assert hostlimit.summary({"replies": 0}) == ""
    facts: dict = {}
    assert hostlimit.record(facts, START) == "" and facts == {}  # no counters at the start: nothing kept


@needs_fio
def test_a_run_records_the_replies_and_how_many_were_late(simdrive, tmp_path, monkeypatch):
    drive = simdrive(name=unique_name(), capacity="32M")
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    run = run_tkperf(drive, tmp_path, "late", "--tests", "wsat", "--wsat-time", "2", "--wsat-interval", "1",
                     "--wsat-capture", "0", "-nj", "1", "-iod", "8", "--purge", "discard", watch=watch)
    after = c()
    got = run.facts[hostlimit.FACT]
    start = run.facts["simdrive"]
    # every reply of the run, counted by the drive: the purge's and fio's, nothing before the run
    model = sum(after[k] - start[k] for k in ("host_write_ios", "host_read_ios", "host_trim_ios"))
    (stream,) = watch.of("stream")
    assert stream.delta("host_write_ios") <= got["replies"] <= model
    assert got["late_replies"] == min(after["late_replies"] - start["late_replies"], got["late_replies"])
    assert 0 <= got["late_share"] <= 1 and got["threshold"] == hostlimit.THRESHOLD
    busy = stream.delta("model_time_s") - stream.delta("idle_time_s")
    assert busy > 0 and 0 < got["idle_share"] < 1  # the purge's verification and fio's start leave it idle
    said = hostlimit.caveat(got)
    warned = [e.message for e in run.events if e.kind == "warning" and "host-limited" in e.message]
    assert warned == ([said] if said else [])
    print(f"host share: {got}")
    line = dict(device_fields(run))["Emulated SSD host limit"]
    assert line == hostlimit.summary(got) and line.startswith(f"{got['late_replies']:,} of {got['replies']:,} replies")


def test_share_keeps_what_the_drive_saw_of_the_host():
    # Issue 56: the drive's wait for the host's path between commands and its own mean service
    start = dict(START, host_wait_s=1.0, read_service_s=0.5, write_service_s=2.0)
    end = dict(START, host_write_ios=1100, host_read_ios=110, model_time_s=20.0, idle_time_s=6.5, host_wait_s=3.0,
               read_service_s=0.5 + 100 * 565e-6, write_service_s=2.0 + 1000 * 125e-6)
    got = hostlimit.share(start, end)
    # active time: 10 s of model time, 2.5 s of it idle, 2 s of that the host's path between commands
    assert got["host_wait_share"] == 2.0 / (10.0 - 2.5 + 2.0)
    assert abs(got["read_service_s"] - 565e-6) < 1e-12 and abs(got["write_service_s"] - 125e-6) < 1e-12
    said = hostlimit.summary(got)
    assert "waiting for the host's path 21% of its active time (its mean service: read 565 us, write 125 us)" in said
    assert "host_wait_share" not in hostlimit.share(START, end)  # an older server's counters: not kept
