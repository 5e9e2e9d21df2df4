"""The drive's write cache: parsing the tools' output, the command lines,
restoring the state however the block ends, and a real run on a loop
device (where the cache cannot be reached)."""
import os
import shutil
import signal

import pytest

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine import runner as runner_module
from tkperf.errors import EXIT_SIGTERM, Interrupted, TkperfError, ToolError
from tkperf.model.results import DeviceInfo
from tkperf.target import writecache
from tkperf.target.writecache import WriteCache

MiB = 1024 * 1024


def sample(name: str) -> str:
    with open(data_path(os.path.join("writecache", name))) as fh:
        return fh.read()


def dev(transport: str, path: str = "/dev/sdx", kind: str = "block") -> DeviceInfo:
    return DeviceInfo(path=path, resolved=path, kind=kind, size_bytes=1 << 30, transport=transport)


# --- parsers ------------------------------------------------------------------

@pytest.mark.parametrize("parser, name, state", [
    (writecache.parse_hdparm, "hdparm-W-on.txt", "WCE"),
    (writecache.parse_hdparm, "hdparm-W-off.txt", "WCD"),
    (writecache.parse_hdparm, "hdparm-W0-set.txt", "WCD"),
    (writecache.parse_hdparm, "hdparm-W-not-supported.txt", ""),
    (writecache.parse_nvme, "nvme-get-feature-6-on.txt", "WCE"),
    (writecache.parse_nvme, "nvme-get-feature-6-off.txt", "WCD"),
    (writecache.parse_nvme, "nvme-get-feature-6-H-on.txt", "WCE"),
    (writecache.parse_nvme, "nvme-get-feature-6-H-off.txt", "WCD"),
    (writecache.parse_sdparm, "sdparm-get-WCE-on.txt", "WCE"),
    (writecache.parse_sdparm, "sdparm-get-WCE-off.txt", "WCD"),
])
def test_parsers_read_the_tools_output(parser, name, state):
    assert parser(sample(name)) == state


@pytest.mark.parametrize("parser", [writecache.parse_hdparm, writecache.parse_nvme, writecache.parse_sdparm])
def test_parsers_say_unknown_for_what_they_do_not_understand(parser):
    assert parser("") == ""
    assert parser("\n/dev/loop1:\n") == ""  # hdparm -W on a loop device, exit code 0
    assert parser("SCSI INQUIRY command failed on /dev/loop1\n") == ""


def test_nvme_parser_reads_only_feature_6_current_value():
    assert writecache.parse_nvme("get-feature:0x02 (Power Management), Current value:0x00000001\n") == ""
    assert writecache.parse_nvme("get-feature:0x06 (Volatile Write Cache), Saved value:0x00000001\n") == ""
    # nvme-cli 1.x printed the id with width 2 and fewer value digits
    assert writecache.parse_nvme("get-feature:0x6 (Volatile Write Cache), Current value:0x000001\n") == "WCE"
    # only bit 0 is WCE
    assert writecache.parse_nvme("get-feature:0x06 (Volatile Write Cache), Current value:0x00000006\n") == "WCD"


# --- which tool, which command line -------------------------------------------

@pytest.mark.parametrize("transport, path, kind", [
    ("sata", "/dev/sda", "ata"), ("ata", "/dev/sda", "ata"), ("nvme", "/dev/nvme0n1", "nvme"),
    ("", "/dev/nvme0n1", "nvme"), ("sas", "/dev/sdb", "scsi"), ("usb", "/dev/sdc", "scsi"),
    ("scsi", "/dev/sdd", "scsi"), ("loop", "/dev/loop3", ""), ("", "/dev/vdb", ""),
])
def test_transport_picks_the_tool(transport, path, kind):
    assert writecache.transport_kind(dev(transport, path)) == kind


def test_file_targets_have_no_reachable_cache():
    d = dev("file", "/tmp/x.img", kind="file")
    assert writecache.transport_kind(d) == ""
    assert writecache.unreachable(d) == "a file target"
    assert writecache.unreachable(dev("loop", "/dev/loop3")) == "a loop device"
    assert writecache.unreachable(dev("virtio")) == "a device on transport 'virtio'"


def test_command_lines_are_argument_lists():
    # hdparm, nvme-cli and sdparm are installed by the README's test command.
    hdparm, nvme, sdparm = (shutil.which(t) for t in ("hdparm", "nvme", "sdparm"))
    sda, nv, sdb = dev("sata", "/dev/sda"), dev("nvme", "/dev/nvme0n1"), dev("sas", "/dev/sdb")
    assert writecache.read_command("ata", sda) == [hdparm, "-W", "/dev/sda"]
    assert writecache.set_command("ata", sda, "WCE") == [hdparm, "-W1", "/dev/sda"]
    assert writecache.set_command("ata", sda, "WCD") == [hdparm, "-W0", "/dev/sda"]
    assert writecache.read_command("nvme", nv) == [nvme, "get-feature", "/dev/nvme0n1", "--feature-id=6"]
    assert writecache.set_command("nvme", nv, "WCE") == [nvme, "set-feature", "/dev/nvme0n1",
                                                         "--feature-id=6", "--value=1"]
    assert writecache.set_command("nvme", nv, "WCD") == [nvme, "set-feature", "/dev/nvme0n1",
                                                         "--feature-id=6", "--value=0"]
    assert writecache.read_command("scsi", sdb) == [sdparm, "--get=WCE", "/dev/sdb"]
    assert writecache.set_command("scsi", sdb, "WCE") == [sdparm, "--set=WCE=1", "/dev/sdb"]
    assert writecache.set_command("scsi", sdb, "WCD") == [sdparm, "--set=WCE=0", "/dev/sdb"]
    # nothing that outlives the run: no --save, no NVMe save bit
    for kind, d in (("ata", sda), ("nvme", nv), ("scsi", sdb)):
        for state in ("WCE", "WCD"):
            assert not {"--save", "-s", "-S"} & set(writecache.set_command(kind, d, state))


@pytest.mark.parametrize("transport, tool, package", [
    ("sata", "hdparm", "hdparm"), ("nvme", "nvme", "nvme-cli"), ("sas", "sdparm", "sdparm")])
def test_a_missing_tool_names_its_debian_package(transport, tool, package, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no tool at all
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    events = []
    cache = WriteCache(dev(transport), "off", lambda kind, message: events.append((kind, message)))
    with pytest.raises(ToolError) as err:
        cache.start()
    message = str(err.value)
    assert message == f"'{tool}' not found on PATH; install it (Debian package {package})"
    assert "\n" not in message
    # keep: the run only wanted to disclose the state, so it goes on
    kept = WriteCache(dev(transport), "keep", lambda kind, message: events.append((kind, message)))
    kept.start()
    assert kept.state == ""
    assert events[-1] == ("warning", f"write cache state unknown: {message}")


@needs_fio
def test_a_missing_tool_stops_the_run_before_it_starts(monkeypatch, tmp_path, capsys):
    """Through the command line: exit code 5 and one line on stderr naming the
    package, before anything is measured (a file target posing as SATA, on a
    PATH that has fio but no hdparm)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").symlink_to(shutil.which("fio"))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    monkeypatch.setattr(writecache, "transport_kind", lambda d: "ata")
    out = tmp_path / "out"
    rc = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--name", "t", "--outdir", str(out),
               "--tests", "lat", "--lat-capture", "0", "--yes", "--quiet", "--no-report"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 5
    assert err == ["tkperf: error: 'hdparm' not found on PATH; install it (Debian package hdparm)"]
    assert not (out / "t.xml").exists()


# --- restore, however the block ends -------------------------------------------

class Drive:
    """A drive as its tools show it: answers read commands with the recorded
    output of its state and takes set commands; every argv is kept."""

    OUTPUT = {"ata": "hdparm-W-{}.txt", "nvme": "nvme-get-feature-6-{}.txt", "scsi": "sdparm-get-WCE-{}.txt"}

    def __init__(self, kind, state="WCE", obeys=True):
        self.kind = kind
        self.state = state
        self.obeys = obeys
        self.calls = []
        self.fail_next_set = None  # an exception to raise on the next set command

    def __call__(self, argv):
        self.calls.append(list(argv))
        wanted = self._set_to(argv)
        if wanted is None:
            return sample(self.OUTPUT[self.kind].format("on" if self.state == "WCE" else "off"))
        if self.fail_next_set is not None:
            exc, self.fail_next_set = self.fail_next_set, None
            raise exc
        if self.obeys:
            self.state = wanted
        return ""

    @staticmethod
    def _set_to(argv):
        last = {"-W1": "WCE", "-W0": "WCD", "--value=1": "WCE", "--value=0": "WCD",
                "--set=WCE=1": "WCE", "--set=WCE=0": "WCD"}
        for a in argv:
            if a in last:
                return last[a]
        return None

    def sets(self):
        return [c for c in self.calls if self._set_to(c) is not None]


DEVICES = {"ata": dev("sata", "/dev/sda"), "nvme": dev("nvme", "/dev/nvme0n1"), "scsi": dev("sas", "/dev/sdb")}


def cache_for(kind, wanted="off", **drive_args):
    drive = Drive(kind, **drive_args)
    events = []
    cache = WriteCache(DEVICES[kind], wanted, lambda k, m: events.append((k, m)), run_program=drive)
    return cache, drive, events


@pytest.mark.parametrize("kind", ["ata", "nvme", "scsi"])
def test_interrupted_block_restores_the_state_found(kind):
    cache, drive, events = cache_for(kind, "off")
    with pytest.raises(Interrupted):
        with cache:
            assert cache.state == "WCD" and drive.state == "WCD"
            raise Interrupted(signal.SIGTERM, "SIGTERM")
    set_off, restore = drive.sets()
    assert restore == writecache.set_command(kind, DEVICES[kind], "WCE")
    assert set_off == writecache.set_command(kind, DEVICES[kind], "WCD")
    assert drive.state == "WCE"
    assert ("note", "write cache set to WCD (was WCE) for the run") in events
    assert events[-1] == ("note", "write cache restored to WCE")


def test_failing_block_restores_too():
    cache, drive, events = cache_for("ata", "on", state="WCD")
    with pytest.raises(RuntimeError):
        with cache:
            assert drive.state == "WCE"
            raise RuntimeError("fio failed")
    assert drive.sets()[-1] == writecache.set_command("ata", DEVICES["ata"], "WCD")
    assert drive.state == "WCD"
    assert events[-1] == ("note", "write cache restored to WCD")


def test_restore_happens_once():
    cache, drive, _ = cache_for("nvme", "off")
    with cache:
        cache.restore()
    assert len(drive.sets()) == 2  # set, restore; the exit found nothing left to do


def test_a_signal_during_the_restore_still_restores():
    cache, drive, events = cache_for("ata", "off")
    cache.start()
    drive.fail_next_set = Interrupted(signal.SIGINT, "SIGINT")
    with pytest.raises(Interrupted):
        cache.restore()
    assert drive.state == "WCE"
    assert events[-1] == ("note", "write cache restored to WCE")


def test_a_signal_during_the_set_restores():
    cache, drive, events = cache_for("scsi", "off")
    drive.fail_next_set = Interrupted(signal.SIGINT, "SIGINT")
    with pytest.raises(Interrupted):
        cache.start()
    # the set command was cut short; tkperf cannot know what the drive did, so it puts WCE back
    assert drive.sets()[-1] == writecache.set_command("scsi", DEVICES["scsi"], "WCE")
    assert events[-1] == ("note", "write cache restored to WCE")


def test_already_as_asked_is_left_alone():
    cache, drive, events = cache_for("ata", "off", state="WCD")
    with cache:
        assert cache.state == "WCD"
    assert drive.sets() == []
    assert events[0][0] == "note" and "already WCD" in events[0][1]


def test_keep_only_reads():
    cache, drive, events = cache_for("nvme", "keep", state="WCD")
    with cache:
        assert cache.state == "WCD"
    assert drive.sets() == []
    assert events == [("note", f"write cache WCD, kept as found ({cache.found.how})")]
    assert "get-feature" in cache.found.how


def test_a_drive_that_ignores_the_set_is_a_warning_not_a_failure():
    cache, drive, events = cache_for("scsi", "off", obeys=False)
    with cache:
        assert cache.state == "WCE"
    assert len(drive.sets()) == 1  # nothing changed, nothing to restore
    assert events[-1] == ("warning", "write cache could not be set to WCD: the drive did not take it; "
                                     "the drive reports WCE")


def test_a_failing_set_command_is_a_warning_with_the_tools_message():
    cache, drive, events = cache_for("ata", "off")
    drive.fail_next_set = TkperfError("hdparm failed: SG_IO: bad/missing sense data")
    with cache:
        assert cache.state == "WCE"
    assert "could not be set to WCD: hdparm failed: SG_IO: bad/missing sense data" in events[-1][1]


def test_a_failing_restore_says_how_to_restore_by_hand():
    cache, drive, events = cache_for("ata", "off")
    with cache:
        drive.obeys = False
    kind, message = events[-1]
    assert kind == "warning" and message.startswith("write cache could not be restored to WCE")
    assert message.endswith(f"(restore it by hand: {shutil.which('hdparm')} -W1 /dev/sda)")


def test_unreadable_state_is_not_changed():
    def broken(argv):
        raise TkperfError("nvme failed: NVMe status: Invalid Field in Command")

    events = []
    cache = WriteCache(DEVICES["nvme"], "off", lambda k, m: events.append((k, m)), run_program=broken)
    with cache:
        assert cache.state == ""
    assert events[0][0] == "warning" and "Invalid Field in Command" in events[0][1]
    assert events[1] == ("warning", "write cache not set to WCD: its state could not be read, "
                                    "so it could not be restored after the run")


@pytest.mark.parametrize("d, wanted, message", [
    (dev("loop", "/dev/loop3"), "off", "write cache cannot be set on a loop device; state unknown"),
    (dev("file", "/tmp/x.img", kind="file"), "on", "write cache cannot be set on a file target; state unknown"),
    (dev("", "/dev/vdb"), "keep", "write cache cannot be read on a device of unknown transport; state unknown"),
])
def test_unreachable_caches_are_a_warning(d, wanted, message):
    def no_program(argv):
        raise AssertionError(f"no program may run: {argv}")

    events = []
    with WriteCache(d, wanted, lambda k, m: events.append((k, m)), run_program=no_program) as cache:
        assert cache.state == ""
    assert events == [("warning", message)]


# --- a real run -----------------------------------------------------------------

RUN = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--max-rounds", "1", "--runtime", "1",
       "--quick", "--wipc-loops", "0", "--purge", "none", "--yes", "--quiet", "--no-report"]


def run_cli(target, tmp_path, *extra):
    rc = main(["ssd", "run", target, "--name", "t", "--outdir", str(tmp_path / "out"), *RUN, *extra])
    return rc, str(tmp_path / "out" / "t.xml")


@needs_fio
def test_run_on_a_loop_device_records_the_cache_as_unknown(loopdev, tmp_path):
    rc, xml = run_cli(loopdev, tmp_path)
    assert rc == 0
    run = store.load(xml)
    assert run.status == "complete"
    assert run.options["write_cache"] == "off"  # the enterprise default
    assert run.device.write_cache == ""
    warnings = [e.message for e in run.events if e.kind == "warning"]
    assert "write cache cannot be set on a loop device; state unknown" in warnings


@needs_fio
def test_session_restores_when_the_run_is_interrupted(loopdev, tmp_path, monkeypatch):
    """The session's wiring: a real run on a loop device, whose write cache is
    played by :class:`Drive` (the loop device has none), stopped by a signal."""
    drive = Drive("ata", state="WCE")

    class PlayedCache(WriteCache):
        def __init__(self, d, wanted, record, run_program=None):
            super().__init__(d, wanted, record, run_program=drive)
            self.kind = "ata"

    def interrupted(self, plan):
        raise Interrupted(signal.SIGTERM, "SIGTERM")

    monkeypatch.setattr(writecache, "WriteCache", PlayedCache)
    monkeypatch.setattr(runner_module.Runner, "run_test", interrupted)
    rc, xml = run_cli(loopdev, tmp_path)
    assert rc == EXIT_SIGTERM
    assert drive.state == "WCE"
    run = store.load(xml)
    assert run.status == "interrupted"
    assert run.device.write_cache == "WCD"  # the state during the run
    messages = [e.message for e in run.events]
    assert "write cache set to WCD (was WCE) for the run" in messages
    assert messages[-1] == "write cache restored to WCE"  # saved after the runner's last save


def test_an_emulated_ssd_has_no_volatile_cache_said_once_and_right():
    # Issue 60 item 5: a device without a volatile cache is a known state (WCD by construction), not a
    # warning of an unknown one at the start and a deviation in the verdict
    from tkperf.simdrive import TRANSPORT as EMULATED
    from tkperf.verdict import conformance

    events: list = []
    for wanted in ("off", "keep"):
        cache = WriteCache(dev(EMULATED, "/dev/loop7"), wanted, lambda kind, message: events.append((kind, message)))
        cache.start()
        assert cache.state == "WCD" and not cache.changed
    assert events == [("note", f"write cache WCD by construction: {writecache.EMULATED_WCD}")] * 2
    cache = WriteCache(dev(EMULATED, "/dev/loop7"), "on", lambda kind, message: events.append((kind, message)))
    cache.start()
    assert cache.state == "WCD" and events[-1][0] == "warning" and "cannot be set to WCE" in events[-1][1]
    # the dry run's verdict: nothing unknown of the cache; a revision that asks for WCE gets the run's words
    for pts, said in (("pts-e-2.0", []),
                      ("pts-c-2.0", ["write cache was WCD during the run (SNIA PTS 2.0.2, client requires WCE)"])):
        verdict, unknown = conformance.of_target({"pts": pts}, dev(EMULATED, "/dev/loop7"), "ssd", [])
        assert [d for d in verdict.deviations if "write cache" in d] == said
        assert not any("write cache" in u for u in unknown)
    verdict, _ = conformance.of_target({"pts": "pts-e-2.0"}, dev("loop", "/dev/loop7"), "ssd", [])
    assert "write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)" in verdict.deviations
