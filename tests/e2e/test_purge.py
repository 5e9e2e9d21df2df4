"""Purge choice by transport, the command lines, ``--purge-cmd``.

:class:`FakeTools` (tests/lab/purgefakes.py) replaces ``programs.run`` at the boundary: it records
every argument list and answers with recorded output of the real tools on
real drives (tests/data/purge/README.rst says whose).  Tests that use it
check tkperf's choice logic and state handling, not a drive: this machine
has no ATA, NVMe or SCSI drive to erase.  Their "device" path is a sparse
file of the test's own, so that even a stray read never touches a disk.
"""
from __future__ import annotations

import os
import shutil
from typing import Optional

import pytest

from purgefakes import recorded
from tkperf.cli import main
from tkperf.errors import EXIT_USAGE, ToolError, UsageError
from tkperf.model.results import DeviceInfo
from tkperf.target import purge


def dev(transport, path="/dev/sdx", kind="block", vendor=""):
    return DeviceInfo(path=path, resolved=path, kind=kind, size_bytes=1 << 30, transport=transport,
                      vendor=vendor)


@pytest.mark.parametrize("transport, path, vendor, family, pts", [
    ("nvme", "/dev/nvme1n1", "", "nvme", True),
    ("sata", "/dev/sda", "ATA     ", "ata", True),
    ("sas", "/dev/sdd", "ATA     ", "ata", True),  # a SATA drive behind a SAS HBA
    ("sas", "/dev/sdb", "HITACHI ", "scsi", True),
    ("usb", "/dev/sdc", "", "discard", False),
    ("loop", "/dev/loop3", "", "discard", False),
])
def test_auto_picks_the_family_by_transport(transport, path, vendor, family, pts):
    chosen, note = purge.choose("auto", dev(transport, path, vendor=vendor))
    assert chosen == family
    assert (chosen in purge.PTS_METHODS) == pts
    assert bool(note) == (not pts)  # a fallback always says it is not a PTS PURGE


def test_file_target_punches_holes():
    d = dev("file", "/tmp/x.img", kind="file")
    assert purge.choose("auto", d)[0] == "discard"
    (argv,) = purge.commands("discard", d)
    assert argv[1:] == ["--punch-hole", "--offset", "0", "--length", str(1 << 30), "/tmp/x.img"]
    for method in ("nvme", "sanitize-block", "ata-enhanced", "scsi"):
        with pytest.raises(UsageError, match="needs a block device"):
            purge.choose(method, d)


def test_unknown_method():
    with pytest.raises(UsageError, match="unknown purge method"):
        purge.choose("magic", dev("sata"))


def test_command_lines_are_argument_lists():
    # hdparm, nvme-cli and sg3-utils are installed by the README's test command.
    nv = purge.commands("nvme", dev("nvme", "/dev/nvme0n1"))
    assert nv == [[shutil.which("nvme"), "format", "/dev/nvme0n1", "--ses=1", "--force"]]
    assert purge.commands("sanitize-crypto", dev("nvme", "/dev/nvme0n1")) == [
        [shutil.which("nvme"), "sanitize", "/dev/nvme0n1", "--sanact=4"]]
    hdparm = shutil.which("hdparm")
    assert purge.commands("ata-enhanced", dev("sata", "/dev/sda")) == [
        [hdparm, "--user-master", "u", "--security-set-pass", "tkperf", "/dev/sda"],
        [hdparm, "--user-master", "u", "--security-erase-enhanced", "tkperf", "/dev/sda"]]
    assert purge.commands("ata-normal", dev("sata", "/dev/sda"))[1][3] == "--security-erase"
    scsi = purge.commands("scsi", dev("sas", "/dev/sdb"))
    assert scsi == [[shutil.which("sg_format"), "--format", "--quick", "/dev/sdb"]]


@pytest.mark.parametrize("method, tool, package", [
    ("nvme", "nvme", "nvme-cli"), ("ata", "hdparm", "hdparm"), ("scsi", "sg_format", "sg3-utils")])
def test_a_missing_purge_tool_names_its_debian_package(method, tool, package, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no tool at all
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    with pytest.raises(ToolError, match=f"'{tool}' not found on PATH; install it \\(Debian package {package}\\)"):
        purge.commands(method, dev("nvme", "/dev/nvme0n1"))


def test_scsi_format_keeps_the_protection_type(tools, fake_disk):
    """Recorded sg_readcap of a type-2 protected SAS SSD: sg_format gets
    --fmtpinfo=3 (its default would format without protection)."""
    d = fake_disk("sas", "HITACHI")
    tools.on(["sg_readcap"], recorded("sg_readcap-hitachi-husmh842-type2.txt")).on(["sg_format"], "")
    rec = purge.purge("auto", d)
    assert rec.method == "scsi" and rec.pts_purge
    assert tools.lines()[1] == f"sg_format --format --quick --fmtpinfo=3 {d.resolved}"
    assert rec.verification.startswith("not checked: scsi does not promise")


def test_scsi_format_without_protection(tools, fake_disk):
    d = fake_disk("sas", "SEAGATE")
    tools.on(["sg_readcap"], recorded("sg_readcap-no-protection.txt")).on(["sg_format"], "")
    purge.purge("scsi", d)
    assert tools.lines()[1] == f"sg_format --format --quick {d.resolved}"


@pytest.mark.parametrize("template, argv", [
    ("vendor-tool erase --drive {device}", ["vendor-tool", "erase", "--drive", "/dev/sdq"]),
    ("tool --path={device} 'two words' \"x y\"", ["tool", "--path=/dev/sdq", "two words", "x y"]),
    # no shell: a ; or $() is an ordinary character of an argument
    ("tool {device}; rm -rf $(pwd)", ["tool", "/dev/sdq;", "rm", "-rf", "$(pwd)"]),
])
def test_purge_cmd_is_split_without_a_shell(template, argv):
    assert purge.cmd_argv(template, "/dev/sdq") == argv


@pytest.mark.parametrize("template, message", [
    ("vendor-tool erase", "needs \\{device\\}"),
    ("tool 'unbalanced {device}", "cannot split"),
    ("{device} --erase", "must start with a program name"),
])
def test_bad_purge_cmd_is_a_usage_error(template, message):
    with pytest.raises(UsageError, match=message):
        purge.choose(purge.CMD_PREFIX + template, dev("sata"))


@pytest.mark.parametrize("args, message", [
    (["--purge-cmd", "vendor-tool erase"], "needs {device}"),
    (["--purge-cmd", "tool {device}", "--purge", "ata"], "not both"),
])
def test_bad_purge_cmd_on_the_command_line(args, message, tmp_path, capsys):
    code = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--dry-run", *args])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_purge_cmd_on_the_command_line_is_kept_in_the_options(tmp_path, capsys):
    code = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--dry-run",
                 "--purge-cmd", "vendor-tool --erase {device}"])
    assert code == 0
    assert "cmd:vendor-tool --erase {device}" in capsys.readouterr().out


def test_purge_cmd_runs_the_vendor_tool_on_a_loop_device(loopdev):
    """A real command (blkdiscard standing in for a vendor tool) on a real
    loop device: recorded as method cmd, never a PTS PURGE."""
    from tkperf.target import device

    blkdiscard = shutil.which("blkdiscard")
    rec = purge.purge(purge.CMD_PREFIX + f"{blkdiscard} --force {{device}}", device.resolve(loopdev))
    assert rec.method == "cmd" and not rec.pts_purge
    assert rec.command == f"{blkdiscard} --force {loopdev}"
    assert "cannot tell whether it is a PTS PURGE" in rec.note
    assert rec.verification.startswith("not checked")


def test_none_does_nothing(tools):
    rec = purge.purge("none", dev("sata"))
    assert rec.method == "none" and not rec.pts_purge and rec.command == "" and rec.verification == ""
    assert tools.calls == []
    assert "no purge" in rec.note


def test_file_target_verification(tmp_path):
    path = tmp_path / "target.img"
    with open(path, "wb") as fh:
        fh.write(b"\xab" * (8 << 20))
    d = DeviceInfo(path=str(path), resolved=str(path), kind="file", size_bytes=8 << 20)
    rec = purge.purge("auto", d)
    assert rec.method == "discard" and not rec.pts_purge
    assert rec.verification == "read 8 MiB at 16 places: all zeros"


def fill(path: str, size: Optional[int] = None, byte: bytes = b"\xab") -> None:
    block = byte * (1 << 20)
    with open(path, "r+b") as fh:
        size = size if size is not None else fh.seek(0, os.SEEK_END)
        fh.seek(0)
        for _ in range(size // len(block)):
            fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
