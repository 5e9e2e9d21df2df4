"""tkperf against real (emulated) drive controllers: QEMU's NVMe, AHCI SATA
and virtio-scsi disks in one guest (tests/lab/vm_lab.py, tests/lab/vm_guest.py).

nvme-cli, hdparm and sdparm talk to these controllers as they would to a
drive: what tkperf sends is answered by a controller, not by a test double.
The guest is booted once for the whole session (once for all its
pytest-xdist workers: :func:`vm_lab.boot_once`); each test judges one part
of what it recorded.  Not emulated, so not tested here (docs/testing.rst):
NVMe sanitize and ATA security erase succeeding on a drive.
"""
from __future__ import annotations

import re

import pytest

import vm_lab

pytestmark = pytest.mark.vm


@pytest.fixture(scope="session")
def guest(tmp_path_factory, request):
    why = vm_lab.missing()
    if why:
        pytest.skip(f"no emulated controllers: {why}")
    if hasattr(request.config, "workerinput"):  # one guest for all xdist workers (README's -n 2)
        results = vm_lab.boot_once(vm_lab.shared_dir(tmp_path_factory.getbasetemp()))
    else:
        results = vm_lab.boot(tmp_path_factory.mktemp("vm"))
    assert results.get("disks"), f"the guest did not start its script: {results['boot']['console'][-2500:]}"
    return results


def test_the_guest_sees_every_controller(guest):
    disks = guest["disks"]
    assert re.fullmatch(r"/dev/nvme\dn1", disks["nvme"]) and re.fullmatch(r"/dev/nvme\dn1", disks["nvme4k"])
    assert re.fullmatch(r"/dev/sd[a-z]", disks["sata"]) and re.fullmatch(r"/dev/sd[a-z]", disks["scsi"])


@pytest.mark.parametrize("kind,transport,serial", [
    ("nvme", "nvme", "TKNVME01"), ("sata", "sata", "TKSATA01"), ("scsi", "scsi", "TKSCSI01")])
def test_info_reports_each_drive_right(guest, kind, transport, serial):
    info = vm_lab.step(guest, "info")[kind]
    target = info["target"]
    assert target["serial"] == serial
    assert target["transport"] == transport  # virtio-scsi: lsblk says nothing; the sd driver owns it
    assert target["size_bytes"] == vm_lab.DISK_MB * 1024 * 1024
    assert target["model"] and target["firmware"]
    # the drive's own answer, read the way a run reads it (read only)
    assert info["write_cache"]["state"] in ("WCE", "WCD"), info["write_cache"]
    assert not [n for n in info["write_cache"]["notes"] if "could not" in n], info["write_cache"]


def test_info_on_nvme_has_the_volatile_cache_bit(guest):
    info = vm_lab.step(guest, "info")["nvme"]
    assert info["nvme_id_ctrl"]["volatile_write_cache"] is True
    assert info["write_cache"]["read_by"].endswith("get-feature /dev/nvme0 --feature-id=6")


@pytest.mark.parametrize("kind", ["nvme", "sata", "scsi"])
def test_write_cache_is_set_read_back_and_restored(guest, kind):
    per = vm_lab.step(guest, "write_cache")[kind]
    for wanted, during in (("off", "WCD"), ("on", "WCE")):
        got = per[wanted]
        assert got["during"] == during and got["probe"] == during, got
        assert got["after"] == got["before"], got  # the drive's previous state is back
    keep = per["keep"]
    assert keep["during"] == keep["before"] == keep["after"] and keep["before"] in ("WCE", "WCD")
    assert not [e for e in per["off"]["events"] if e[0] == "warning"], per["off"]["events"]


def test_a_short_lat_run_on_nvme_records_wcd_and_restores_wce(guest):
    from tkperf import store
    from tkperf.report.health import fio_written_bytes
    from tkperf.target import health

    got = vm_lab.step(guest, "run_nvme_lat")
    assert got["run"]["rc"] == 0, got["run"]["err"]
    assert got["cache_after"] == "WCE"
    run = store.load(got["xml"])
    assert run.status == "complete"
    assert run.device.write_cache == "WCD"
    test = run.tests[0]
    assert test.purge.method == "nvme-format" and test.purge.pts_purge
    assert "--ses=0" in test.purge.command or "format" in test.purge.command
    before = [h for h in run.health if h.when == "before"]
    after = [h for h in run.health if h.when == "after"]
    assert before and after, [h.when for h in run.health]
    assert before[0].value("temperature_c") is not None
    # the host-write check: the controller counted what fio wrote (WIPC and
    # rounds), to within its 512,000-byte data unit
    counted = health.deltas(before[0], after[0])["host_written_bytes"]
    wrote, partial = fio_written_bytes(run)
    assert not partial and wrote > 100 * 2**20
    assert abs(counted - wrote) <= 2 * 512000, (counted, wrote)


def test_sigterm_restores_the_write_cache(guest):
    got = vm_lab.step(guest, "sigterm_sata")
    assert got["rc"] == 143, got
    assert got["during"] == "WCD", got["log_tail"]
    assert got["after"] == "WCE", got["log_tail"]


def test_purges_that_the_controllers_do(guest):
    purges = vm_lab.step(guest, "purge")
    fmt = purges["nvme-format"]
    assert fmt["done"] and fmt["pts"] and fmt["method"] == "nvme-format", fmt
    assert "--ses=1" in fmt["command"], fmt
    scsi = purges["scsi"]
    assert scsi["done"] and scsi["pts"] and "sg_format" in scsi["command"], scsi
    discard = purges["discard-sata"]
    assert discard["done"] and not discard["pts"] and discard["verification"], discard


def test_purges_the_controllers_refuse_are_one_line_and_never_recorded_as_done(guest):
    purges = vm_lab.step(guest, "purge")
    for method in ("sanitize-block", "ata-enhanced", "ata"):
        got = purges[method]
        assert not got["done"], (method, got)
        assert "\n" not in got["error"].strip(), got
    # hdparm exits 0 when the drive rejects a security command; tkperf read
    # the drive's state back, and no password is left set
    security = purges["sata_security_after"]
    assert not re.search(r"^\s+enabled", security, re.M), security


def test_health_reads_temperature_and_data_written_from_the_controller(guest):
    got = vm_lab.step(guest, "health")
    assert got["source"].startswith("nvme")
    names = set(got["values"])
    assert any("temp" in n for n in names), names
    assert any("data_units_written" in n or "written" in n for n in names), names


def test_a_4kn_namespace_is_refused_for_512_byte_tests(guest):
    got = vm_lab.step(guest, "refuse_4kn")
    assert got["logical_sector"] == 4096
    assert got["run"]["rc"] == 4, got["run"]
    err = got["run"]["err"].strip().splitlines()
    assert len(err) == 1 and "4096" in err[0], err


def test_active_range_segments_hold_every_write_and_the_map_is_removed(guest):
    """Issue 43 item 3 with the real device-mapper: a PTS-C 1.1 LAT run in 64
    segments of an 8 MiB test range on the 128 MB NVMe drive, read back."""
    got = vm_lab.step(guest, "ar_segments")
    # a run killed with SIGKILL leaves its map, which holds the drive; the next run removes it
    killed = got["killed"]
    assert killed["rc"] == -9 and "tkperf-ar-" in killed["dmsetup_ls"], killed
    # SIGTERM while the map exists: the run removes it on its way out (exit 143)
    term = got["terminated"]
    assert term["rc"] == 143, term
    assert any("dmsetup remove tkperf-ar-" in line for line in term["log"]), term
    assert "tkperf-ar-" not in term["dmsetup_ls"], term  # read before the SIGKILL run started
    assert got["rc"] == 0, (got["err"], got["log"])
    assert got["status"] == "complete"
    # every fio job ran on the map (no WIPC: --wipc-loops 0)
    assert got["filenames"] and all(f.startswith("/dev/mapper/tkperf-ar-") for f in got["filenames"]), got
    assert got["segments"] == 64 and got["segment_size"] == 128 * 1024  # 8 MiB / 64
    assert got["changed_blocks"] > 0 and got["outside_count"] == 0, got  # nothing outside a segment changed
    assert got["segments_written"] > 32, got  # the writes spread over most segments
    assert "tkperf-ar-" not in got["dmsetup_ls"], got["dmsetup_ls"]  # the map is gone
    assert any("dmsetup create tkperf-ar-" in line for line in got["log"]), got["log"]
    assert any("dmsetup remove tkperf-ar-" in line for line in got["log"]), got["log"]
    # the run's note names the map once it exists, not before dmsetup made it
    created = next(i for i, line in enumerate(got["log"]) if "dmsetup create tkperf-ar-" in line)
    noted = [i for i, line in enumerate(got["log"]) if "mapped as /dev/mapper/tkperf-ar-" in line]
    assert len(noted) == 1 and noted[0] > created, got["log"]


def test_the_map_sweep_removes_only_what_tkperf_made(guest):
    """Issue 54 item 3 with the real device-mapper (tests/lab/vm_guest.py,
    step stale_maps): of four maps, only the one of tkperf's exact name
    whose owner is gone is removed; the busy one is tried once, in bounded
    time, and said once; a name tkperf never makes and a live run's map are
    not touched (never even given to dmsetup)."""
    got = vm_lab.step(guest, "stale_maps")
    names = got["names"]
    assert got["swept"] == [names["gone"]] and got["again"] == [], got
    assert sorted(got["removed"]) == sorted([names["gone"], names["busy"]]), got
    assert got["left"] == sorted([names["foreign"], names["live"], names["busy"]]), got
    assert len(got["said"]) == 1 and names["busy"] in got["said"][0], got
    assert names["foreign"] not in got["said"][0] and "busy" in got["said"][0].lower(), got
    assert got["seconds"] < 30, got
    assert not any(name in got["after"] for name in names.values()), got["after"]  # every map made is gone
