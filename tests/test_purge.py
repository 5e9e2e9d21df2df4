import shutil

import pytest

from tkperf.target import purge
from tkperf.errors import ToolError, UsageError
from tkperf.model.results import DeviceInfo


def dev(transport, path="/dev/sdx", kind="block"):
    return DeviceInfo(path=path, resolved=path, kind=kind, size_bytes=1 << 30, transport=transport)


@pytest.mark.parametrize("transport, path, method, pts", [
    ("nvme", "/dev/nvme1n1", "nvme", True),
    ("sata", "/dev/sda", "ata", True),
    ("sas", "/dev/sdb", "scsi", True),
    ("usb", "/dev/sdc", "discard", False),
    ("loop", "/dev/loop3", "discard", False),
])
def test_auto_picks_by_transport(transport, path, method, pts):
    chosen, note = purge.choose("auto", dev(transport, path))
    assert chosen == method
    assert (chosen in purge.PTS_METHODS) == pts
    assert bool(note) == (not pts)  # a fallback always says it is not a PTS PURGE


def test_file_target_punches_holes():
    d = dev("file", "/tmp/x.img", kind="file")
    assert purge.choose("auto", d)[0] == "discard"
    (argv,) = purge.commands("discard", d)
    assert argv[1:] == ["--punch-hole", "--offset", "0", "--length", str(1 << 30), "/tmp/x.img"]
    with pytest.raises(UsageError, match="needs a block device"):
        purge.choose("nvme", d)


def test_unknown_method():
    with pytest.raises(UsageError, match="unknown purge method"):
        purge.choose("magic", dev("sata"))


def test_command_lines_are_argument_lists():
    # hdparm, nvme-cli and sg3-utils are installed by the README's test command.
    nv = purge.commands("nvme", dev("nvme", "/dev/nvme0n1"))
    assert nv == [[shutil.which("nvme"), "format", "/dev/nvme0n1", "--ses=1", "--force"]]
    ata = purge.commands("ata", dev("sata", "/dev/sda"))
    hdparm = shutil.which("hdparm")
    assert ata == [[hdparm, "--user-master", "u", "--security-set-pass", "tkperf", "/dev/sda"],
                   [hdparm, "--user-master", "u", "--security-erase", "tkperf", "/dev/sda"]]
    scsi = purge.commands("scsi", dev("sas", "/dev/sdb"))
    assert scsi == [[shutil.which("sg_format"), "--format", "--quick", "--wait", "/dev/sdb"]]


@pytest.mark.parametrize("method, tool, package", [
    ("nvme", "nvme", "nvme-cli"), ("ata", "hdparm", "hdparm"), ("scsi", "sg_format", "sg3-utils")])
def test_a_missing_purge_tool_names_its_debian_package(method, tool, package, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no tool at all
    with pytest.raises(ToolError, match=f"'{tool}' not found on PATH; install it \\(Debian package {package}\\)"):
        purge.commands(method, dev("nvme", "/dev/nvme0n1"))


def test_discard_on_loop_device_zeroes_it(loopdev):
    with open(loopdev, "r+b") as fh:
        fh.write(b"x" * 4096)
    from tkperf.target import device
    rec = purge.purge("auto", device.resolve(loopdev))
    assert rec.method == "discard" and not rec.pts_purge and "blkdiscard" in rec.command
    with open(loopdev, "rb") as fh:
        assert fh.read(4096) == b"\0" * 4096
