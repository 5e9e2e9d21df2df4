"""tkperf info: parsers on recorded outputs of real drives, facts of real
loop devices and file targets, and the command's exit codes.

The recordings are in tests/data/facts/ (README.rst there says where each
came from).  Drive tools run for real against the fixture's loop device,
where they fail as they do on any device of the wrong kind; that must be
recorded, never fatal.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import pytest

from conftest import data_path
from tkperf.cli import main
from tkperf.cli.info import render
from tkperf.errors import EXIT_OK, EXIT_TARGET, TargetError
from tkperf.model.results import DeviceInfo
from tkperf.target import device, facts, parsers


def recorded(name: str) -> str:
    with open(data_path(os.path.join("facts", name))) as fh:
        return fh.read()


# --- hdparm -I -------------------------------------------------------------------

#: file -> (supported, enabled, locked, frozen, expired, enhanced, erase min, enhanced min, level)
SECURITY = {
    "hdparm-I-seagate-st9320423as-frozen.txt": (True, False, False, True, False, True, 70, 70, ""),
    "hdparm-I-apacer-as340-not-frozen.txt": (True, False, False, False, False, True, 20, 60, ""),
    "hdparm-I-toshiba-hdwd110-no-enhanced-erase.txt": (True, False, False, False, False, False, 160, None, ""),
    "hdparm-I-crucial-m4-ct128m4ssd2-locked.txt": (True, True, True, False, True, True, 2, 2, "high"),
}


@pytest.mark.parametrize("name", sorted(SECURITY))
def test_ata_security_of_recorded_drives(name):
    sec = parsers.ata_security(recorded(name))
    got = (sec.supported, sec.enabled, sec.locked, sec.frozen, sec.count_expired,
           sec.enhanced_erase_supported, sec.erase_minutes, sec.enhanced_erase_minutes, sec.level)
    assert sec.present
    assert got == SECURITY[name]
    assert sec.master_password_revision == 65534
    assert sec.erase_possible == (not sec.frozen and not sec.locked)
    assert sec.as_dict()["erase_possible"] == sec.erase_possible
    with pytest.raises(dataclasses.FrozenInstanceError):
        sec.frozen = False  # type: ignore[misc]


def test_ata_security_without_a_security_section():
    # What hdparm -I really prints for a loop device (exit status 0), and
    # another tool's output: no Security section, so nothing is claimed.
    for text in ("\n/dev/loop1:\n", recorded("sg_inq-toshiba-mk1059gs-sata.txt")):
        sec = parsers.ata_security(text)
        assert not sec.present and not sec.supported and not sec.frozen and not sec.erase_possible
        assert sec.erase_minutes is None


def test_ata_security_section_indented_with_spaces():
    # A copy of hdparm -I (tests/data/purge/README.rst) whose ``Security:``
    # title and flags are indented with spaces, not tabs: still found, and
    # the section ends at the next line no deeper than its title.
    with open(data_path(os.path.join("purge", "hdparm-security-enabled.txt"))) as fh:
        text = fh.read()
    assert text.startswith("     Security:")
    sec = parsers.ata_security(text)
    got = (sec.supported, sec.enabled, sec.locked, sec.frozen, sec.count_expired,
           sec.enhanced_erase_supported, sec.erase_minutes, sec.enhanced_erase_minutes, sec.level)
    assert sec.present and got == (True, True, False, False, False, True, 2, 2, "high")
    assert sec.master_password_revision == 65534
    # The same text with one line moved out to the title's depth (an edit
    # made here, not a recording): that line and those after it are not
    # part of the section.
    moved = parsers.ata_security(text.replace("            Security level high", "     Security level high"))
    assert moved.enabled and moved.level == "" and moved.erase_minutes is None


@pytest.mark.parametrize("name,model,serial,firmware,size,physical,trim,sanitize", [
    ("hdparm-I-seagate-st9320423as-frozen.txt", "ST9320423AS", "5VH5M0LY", "0003LVM1", 625142448 * 512, 512,
     False, False),
    ("hdparm-I-apacer-as340-not-frozen.txt", "Apacer AS340 120GB", "270E0788096C03674465", "AP612PE0",
     234441648 * 512, 512, True, False),
    ("hdparm-I-toshiba-hdwd110-no-enhanced-erase.txt", "TOSHIBA HDWD110", "48L9BJMFS", "MS2OA8J0",
     1953525168 * 512, 4096, False, False),
    ("hdparm-I-crucial-m4-ct128m4ssd2-locked.txt", "M4-CT128M4SSD2", "", "", 250069680 * 512, 512, True, False),
])
def test_hdparm_identify(name, model, serial, firmware, size, physical, trim, sanitize):
    d = parsers.hdparm_identify(recorded(name))
    assert (d["model"], d["serial"], d["firmware"]) == (model, serial, firmware)
    assert d["size_bytes"] == size and d["physical_sector"] == physical
    assert d["trim"] is trim and d["sanitize"] is sanitize
    assert d["write_cache"] == {"supported": True, "enabled": True}
    assert d["security"]["frozen"] == SECURITY[name][3]
    json.dumps(d)


def test_hdparm_feature_flags_tell_enabled_from_supported():
    d = parsers.hdparm_identify(recorded("hdparm-I-crucial-m4-ct128m4ssd2-locked.txt"))
    assert d["features"]["SMART feature set"] is False      # listed without '*'
    assert d["features"]["Security Mode feature set"] is True


def test_hdparm_identify_refuses_what_is_not_hdparm_output():
    with pytest.raises(ValueError, match="no ATA identification"):
        parsers.hdparm_identify("\n/dev/loop1:\n")


# --- nvme id-ctrl ------------------------------------------------------------------

@pytest.mark.parametrize("name,model,serial,vendor,version,capacity,vwc,sanitize", [
    ("nvme-id-ctrl-samsung-pm983.json", "Unknown MZ1LB960HAJQ-000FB", "S43ANA0M405593", "0x144d", "1.2.0",
     900185481216, False, {"crypto_erase": False, "block_erase": False, "overwrite": False}),
    ("nvme-id-ctrl-wdc-sn730.json", "WDC PC SN730 SDBQNTY-256G-1001", "1951B3444502", "0x15b7", "1.3.0",
     256060514304, True, {"crypto_erase": True, "block_erase": True, "overwrite": False}),
])
def test_nvme_id_ctrl(name, model, serial, vendor, version, capacity, vwc, sanitize):
    d = parsers.nvme_id_ctrl(recorded(name))
    assert (d["model"], d["serial"], d["vendor_id"], d["version"]) == (model, serial, vendor, version)
    assert d["total_capacity_bytes"] == capacity and d["namespaces"] == 1
    assert d["volatile_write_cache"] is vwc
    assert d["sanitize"] == sanitize
    assert d["admin_commands"]["format_nvm"] is True
    assert d["format"]["crypto_erase"] is True          # fna bit 2 on both drives
    assert d["fields"]["oncs"] == 95 and "psds" not in d["fields"]
    json.dumps(d)


@pytest.mark.parametrize("text,message", [
    ("identify controller: Invalid argument", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"vid": 5197}', "no model number"),
])
def test_nvme_id_ctrl_refuses_bad_output(text, message):
    with pytest.raises(ValueError, match=message):
        parsers.nvme_id_ctrl(text)


def test_nvme_id_ns_refuses_id_ctrl_output():
    with pytest.raises(ValueError, match="nsze"):
        parsers.nvme_id_ns(recorded("nvme-id-ctrl-wdc-sn730.json"))


# --- sg3-utils -------------------------------------------------------------------

@pytest.mark.parametrize("name,vendor,product,revision,serial,standard,behind_satl", [
    ("sg_inq-wd-game-drive-usb.txt", "WD", "Game Drive", "5002", "WXF2E20DKCFL", "SPC-4", False),
    ("sg_inq-toshiba-mk1059gs-sata.txt", "ATA", "TOSHIBA MK1059GS", "1U", "91GCPH6RT", "SPC-3", True),
    ("sg_inq-seagate-backup-hub-usb.txt", "Seagate", "Backup+ Hub BK", "D781", "NA9Q19AM", "SPC-4", False),
    ("sg_inq-v-seagate-st973401lc-scsi.txt", "SEAGATE", "ST973401LC", "F402", "3LB00XQ900008443EEU1", "SPC", False),
    ("sg_inq-v-quantum-atlas-v-scsi.txt", "QUANTUM", "ATLAS_V_36_WLS", "0230", "143110652885", "SPC", False),
    ("sg_inq-v-fujitsu-mht2080b-sata.txt", "ATA", "FUJITSU MHT2080B", "0000", "NR00T45254L5", "SPC-3", True),
])
def test_sg_inq(name, vendor, product, revision, serial, standard, behind_satl):
    d = parsers.sg_inq(recorded(name))
    assert (d["vendor"], d["product"], d["revision"], d["serial"]) == (vendor, product, revision, serial)
    assert d["standard"] == standard and d["device_type"] == "disk" and d["peripheral_type"] == 0
    assert d["ata_behind_satl"] is behind_satl
    assert d["protect"] is False


@pytest.mark.parametrize("name,blocks,logical,physical,size,thin", [
    ("sg_readcap-l-wd-game-drive-usb.txt", 9767475200, 512, 4096, 5000947302400, True),
    ("sg_readcap-16-toshiba-mk1059gs-sata.txt", 1953525168, 512, 4096, 1000204886016, False),
    ("sg_readcap-10-ocp-autoval.txt", 487325696, 512, None, 249510756352, None),
])
def test_sg_readcap(name, blocks, logical, physical, size, thin):
    d = parsers.sg_readcap(recorded(name))
    assert d["blocks"] == blocks and d["last_lba"] == blocks - 1
    assert d["logical_block_bytes"] == logical and d.get("physical_block_bytes") == physical
    assert d["size_bytes"] == size == blocks * logical
    assert d.get("thin_provisioned") is thin


@pytest.mark.parametrize("parse,name", [(parsers.sg_inq, "sg_readcap-10-ocp-autoval.txt"),
                                        (parsers.sg_readcap, "sg_inq-wd-game-drive-usb.txt")])
def test_sg_parsers_refuse_each_others_output(parse, name):
    with pytest.raises(ValueError):
        parse(recorded(name))


# --- smartctl -j -------------------------------------------------------------------

def test_smartctl_ata_ssd():
    d = parsers.smartctl(recorded("smartctl-wdc-wds400t1r0a-sat.json"))
    assert (d["protocol"], d["model"], d["capacity_bytes"]) == ("ATA", "WDC  WDS400T1R0A-68A4W0", 4000787030016)
    assert d["smart_passed"] is True and d["temperature_c"] == 27 and d["power_on_hours"] == 8244
    assert d["rotation_rate"] == 0 and d["power_cycles"] == 13
    assert d["ata"] == {"reallocated_sectors": 0, "reported_uncorrectable": 0, "crc_errors": 0,
                        "total_lbas_written_raw": 173833}
    assert len(d["attributes"]) == 25 and d["attributes"][16]["raw"] == "27 (Min/Max 21/43)"


def test_smartctl_sas_hdd():
    d = parsers.smartctl(recorded("smartctl-hgst-sas.json"))
    assert d["protocol"] == "SCSI" and d["model"].startswith("HGST")
    assert d["rotation_rate"] == 7200 and d["temperature_c"] == 34 and d["power_on_hours"] == 1641
    assert d["scsi"] == {"grown_defects": 0, "uncorrected_read_errors": 0, "uncorrected_write_errors": 0,
                         "gigabytes_written": "2811.293"}
    assert "ata" not in d and "nvme" not in d


def test_smartctl_nvme():
    d = parsers.smartctl(recorded("smartctl-corsair-mp510-nvme.json"))
    assert (d["protocol"], d["model"], d["firmware"]) == ("NVMe", "Force MP510", "ECFM12.3")
    assert d["nvme"]["percentage_used"] == 1 and d["nvme"]["media_errors"] == 0
    assert d["host_written_bytes"] == 16093122 * 512000
    assert d["capacity_bytes"] == 480103981056


def test_smartctl_refuses_other_json():
    with pytest.raises(ValueError, match="smartctl"):
        parsers.smartctl(recorded("nvme-id-ctrl-samsung-pm983.json"))


# --- facts of real targets ---------------------------------------------------------

def test_facts_of_a_loop_device(loopdev):
    f = facts.collect(loopdev)
    json.dumps(f)
    assert f["target"]["kind"] == "block" and f["target"]["transport"] == "loop"
    assert f["lsblk"]["size"] == 256 * 2 ** 20 and f["lsblk"]["type"] == "loop"
    queue = f["sysfs"]["queue"]
    assert queue["scheduler"] in queue["schedulers"]
    assert isinstance(queue["rotational"], bool) and queue["max_sectors_kb"] > 0
    assert queue["write_cache"] in ("write back", "write through")
    assert f["sysfs"]["loop"]["backing_file"].endswith(".img")
    # choose sources by transport: no drive tool runs on a loop device
    for source in ("hdparm", "nvme_id_ctrl", "nvme_id_ns", "sg_inq", "sg_readcap", "smartctl"):
        assert source not in f
    assert f["missing"] == [] and f["errors"] == []
    assert "loop device" in f["notes"][0]


def _path_with(tmp_path, *tools):
    """A PATH directory holding only ``tools`` (links to the real ones)."""
    import shutil
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        real = shutil.which(tool)
        if real is None:
            pytest.skip(f"{tool} is not installed")
        os.symlink(real, bin_dir / tool)
    return str(bin_dir)


def _sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


@pytest.mark.parametrize("transport,ran,failed,missing", [
    ("sata", ("hdparm",), {"hdparm"}, {"smartctl": "smartmontools"}),
    ("nvme", ("nvme",), {"nvme_id_ctrl", "nvme_id_ns"}, {"smartctl": "smartmontools"}),
    ("sas", ("sg_inq", "sg_readcap"), {"sg_inq", "sg_readcap"}, {"smartctl": "smartmontools"}),
    ("sas", (), set(), {"sg_inq": "sg3-utils", "sg_readcap": "sg3-utils", "smartctl": "smartmontools"}),
    ("nvme", (), set(), {"nvme": "nvme-cli", "smartctl": "smartmontools"}),
])
def test_drive_tools_by_transport_are_optional_and_never_write(loopdev, tmp_path, monkeypatch,
                                                                transport, ran, failed, missing):
    with open(loopdev, "r+b") as fh:
        fh.write(os.urandom(1 << 20))
    before = _sha(loopdev)
    info = dataclasses.replace(device.resolve(loopdev), transport=transport)
    monkeypatch.setenv("PATH", _path_with(tmp_path, "lsblk", *ran))
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    f = facts.collect(info)
    assert {e["source"] for e in f["errors"]} == failed          # the real tools fail on a loop device
    assert all(e["command"] and e["message"] for e in f["errors"])
    assert {m["tool"]: m["package"] for m in f["missing"]} == missing  # with its Debian package
    assert len(f["missing"]) == len(missing)                      # each tool once
    assert "lsblk" in f and "sysfs" in f
    other = {"sata": "nvme_id_ctrl", "nvme": "hdparm", "sas": "hdparm"}[transport]
    assert other not in f and other not in {e["source"] for e in f["errors"]}
    assert _sha(loopdev) == before


@pytest.mark.parametrize("status,usable", [(0, True), (4, True), (64, True), (1, False), (2, False), (6, False)])
def test_smartctl_exit_status_is_a_bit_mask(status, usable):
    # smartctl(8): bit 0 the command line did not parse, bit 1 the device did
    # not open; higher bits report the drive's state and come with valid JSON
    assert facts._smartctl_ok(status) is usable


def test_facts_without_lsblk(loopdev, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _path_with(tmp_path))
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    f = facts.collect(loopdev)
    assert f["missing"] == [{"tool": "lsblk", "package": "util-linux"}]
    assert f["target"]["size_bytes"] == 256 * 2 ** 20 and f["sysfs"]["queue"]["scheduler"]


def test_facts_of_file_targets(tmp_path):
    path = tmp_path / "target.img"
    with open(path, "wb") as fh:
        fh.truncate(32 * 2 ** 20)
        fh.write(b"x" * 4096)
    f = facts.collect(str(path))
    assert f["target"]["kind"] == "file" and f["target"]["size_bytes"] == 32 * 2 ** 20
    assert f["file"]["exists"] and 4096 <= f["file"]["allocated_bytes"] < 32 * 2 ** 20
    assert f["file"]["mount_point"] and f["file"]["fstype"]
    assert "lsblk" not in f and "sysfs" not in f
    # a run's file target that does not exist yet
    ahead = DeviceInfo(path=str(tmp_path / "new.img"), resolved=str(tmp_path / "new.img"), kind="file",
                       size_bytes=2 ** 30, transport="file")
    assert facts.collect(ahead)["file"] == {"exists": False}


@pytest.mark.parametrize("path", ["/dev/null", "/nonexistent/disk", "tmpdir"])
def test_facts_refuse_what_is_neither_block_device_nor_file(path, tmp_path):
    with pytest.raises(TargetError):
        facts.collect(str(tmp_path) if path == "tmpdir" else path)


# --- the command -------------------------------------------------------------------

def test_info_command_on_a_loop_device(loopdev, capsys):
    assert main(["info", loopdev]) == EXIT_OK
    out = capsys.readouterr().out
    for heading in ("Device:", "Queue:", "Notes:"):
        assert heading in out
    assert "scheduler" in out and "write cache" in out and loopdev in out
    assert main(["info", loopdev, "--json"]) == EXIT_OK
    f = json.loads(capsys.readouterr().out)
    assert f["target"]["resolved"] == os.path.realpath(loopdev) and "queue" in f["sysfs"]
    # the backing file's identity, as a run records it and checks it on resume
    st = os.stat(f["sysfs"]["loop"]["backing_file"])
    assert f["target"]["inode"].startswith(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}:{st.st_ino}")
    assert f"inode         {f['target']['inode']}" in out


def test_info_command_on_a_file_target(tmp_path, capsys):
    path = tmp_path / "file.img"
    path.write_bytes(b"\0" * 8192)
    assert main(["info", str(path)]) == EXIT_OK
    assert "file (file)" in capsys.readouterr().out
    assert main(["info", str(path), "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["file"]["size_bytes"] == 8192


@pytest.mark.parametrize("argv,code,message", [
    (["info", "/dev/null"], EXIT_TARGET, "neither a block device nor a regular file"),
    (["info", "/nonexistent/disk"], EXIT_TARGET, "no such device or file"),
    (["info", "TMP"], EXIT_TARGET, "neither a block device nor a regular file"),
    (["info"], 2, "device"),
])
def test_info_command_bad_input(argv, code, message, tmp_path, capsys):
    argv = [str(tmp_path) if a == "TMP" else a for a in argv]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tkperf: error:") and message in err
    assert "Traceback" not in err


def test_render_groups_recorded_facts():
    target = {"path": "/dev/sdx", "resolved": "/dev/sdx", "kind": "block", "transport": "sata",
              "size_bytes": 320072933376, "rotational": True}
    lines = "\n".join(render({
        "target": target,
        "hdparm": parsers.hdparm_identify(recorded("hdparm-I-seagate-st9320423as-frozen.txt")),
        "nvme_id_ctrl": parsers.nvme_id_ctrl(recorded("nvme-id-ctrl-wdc-sn730.json")),
        "sg_inq": parsers.sg_inq(recorded("sg_inq-wd-game-drive-usb.txt")),
        "sg_readcap": parsers.sg_readcap(recorded("sg_readcap-l-wd-game-drive-usb.txt")),
        "smartctl": parsers.smartctl(recorded("smartctl-wdc-wds400t1r0a-sat.json")),
        "missing": [{"tool": "smartctl", "package": "smartmontools"}],
        "errors": [{"source": "nvme_id_ns", "command": "nvme id-ns /dev/sdx -o json", "message": "exit code 1"}],
        "notes": [],
    }))
    for heading in ("Device:", "Identity:", "Security:", "SMART:", "Not installed:", "Failed here:"):
        assert heading in lines
    assert "supported, not enabled, not locked, frozen, not expired, enhanced erase supported" in lines
    assert "erase takes 70 min (enhanced 70 min)" in lines and "not possible now (frozen)" in lines
    assert "crypto erase, block erase" in lines
    assert "ST9320423AS, serial 5VH5M0LY" in lines and "WD Game Drive, revision 5002" in lines
    assert "health" in lines and "PASSED" in lines and "27 C" in lines
    assert "Debian package smartmontools" in lines
    assert "Queue:" not in lines   # no sysfs in these facts: the group is left out


def test_info_says_the_write_cache_once_as_the_run_records_it(loopdev, capsys):
    # a loop device: no tool reads a drive setting, so 'unknown', as the run's verdict says
    assert main(["info", loopdev]) == EXIT_OK
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "write cach" in ln.lower()]
    assert len(rows) == 1, rows
    assert rows[0].split()[:3] == ["write", "cache", "unknown,"], rows
    assert "only that a volatile cache exists" in rows[0]


def test_info_names_the_tool_that_read_the_write_cache():
    shown = render({"target": {"path": "/dev/sda"}, "sysfs": {"queue": {"write_cache": "write back", "fua": 1}},
                    "write_cache": {"state": "WCD", "read_by": "hdparm -W /dev/sda", "notes": []}})
    rows = [ln for ln in shown if "write cache" in ln]
    assert rows == ["  write cache  off (WCD, read by hdparm -W /dev/sda), FUA"], shown
