"""Target resolution and the safety refusals, on real loop devices."""
import os
import struct
import subprocess

import pytest

from tkperf.cli import main
from tkperf.errors import EXIT_REFUSED, RefusedError, TargetError
from tkperf.target import device

MiB = 1024 * 1024


def test_loop_device_facts(loopdev):
    info = device.resolve(loopdev)
    assert info.kind == "block"
    assert info.size_bytes == 256 * MiB
    assert info.logical_sector == 512
    assert info.transport == "loop"
    assert "loop device" in info.model
    assert device.safety_problems(info) == []


def test_symlink_is_resolved_and_kept(loopdev, tmp_path):
    link = tmp_path / "by-id-link"
    os.symlink(loopdev, link)
    info = device.resolve(str(link))
    assert info.path == str(link) and info.resolved == loopdev


@pytest.mark.parametrize("path, size, message", [
    ("/nonexistent/dev/sdz", None, "no such device"),
    ("/dev/null", None, "character device"),
    ("/", None, "is a directory"),
])
def test_bad_targets(path, size, message):
    with pytest.raises(TargetError, match=message):
        device.resolve(path, size)


def test_file_target_needs_size(tmp_path):
    f = tmp_path / "f.img"
    f.write_bytes(b"")
    with pytest.raises(TargetError, match="give --size"):
        device.resolve(str(f))
    info = device.resolve(str(f), 64 * MiB)
    assert info.kind == "file" and info.size_bytes == 64 * MiB
    with pytest.raises(TargetError, match="minimum"):
        device.resolve(str(f), MiB)


def test_size_refused_for_block_device(loopdev):
    with pytest.raises(TargetError, match="only for file targets"):
        device.resolve(loopdev, 64 * MiB)


def test_mounted_device_refused(loopdev, tmp_path):
    subprocess.run(["mkfs.ext4", "-q", "-F", loopdev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loopdev, str(mnt)], check=True)
    try:
        info = device.resolve(loopdev)
        problems = device.safety_problems(info)
        assert any("mounted on" in p for p in problems)
        with pytest.raises(RefusedError, match="mounted"):
            device.check_safe(info, force=False)
        assert device.check_safe(info, force=True)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _write_mbr_partition(dev: str) -> None:
    """One Linux partition from 1 MiB to the end: a 16-byte MBR entry and the 0x55AA mark."""
    sectors = int(subprocess.check_output(["blockdev", "--getsz", dev]).decode())
    entry = struct.pack("<B3sB3sII", 0, b"\x00\x02\x00", 0x83, b"\xff\xff\xff", 2048, sectors - 2048)
    with open(dev, "r+b") as fh:
        fh.seek(446)
        fh.write(entry + b"\x00" * 48 + b"\x55\xaa")


def test_mounted_partition_refused(loopdev, tmp_path):
    _write_mbr_partition(loopdev)
    subprocess.run(["blockdev", "--rereadpt", loopdev], check=False)
    subprocess.run(["partx", "-a", loopdev], check=False, capture_output=True)
    part = loopdev + "p1"
    if not os.path.exists(part):
        pytest.skip("the kernel made no partition device for the loop device")
    subprocess.run(["mkfs.ext4", "-q", "-F", part], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", part, str(mnt)], check=True)
    try:
        problems = device.safety_problems(device.resolve(loopdev))
        assert any("partition loop" in p and "mounted" in p for p in problems), problems
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
        subprocess.run(["partx", "-d", loopdev], check=False, capture_output=True)


def test_swap_refused(loopdev):
    subprocess.run(["mkswap", loopdev], check=True, capture_output=True)
    info = device.resolve(loopdev)
    assert any("swap signature" in p for p in device.safety_problems(info))
    if subprocess.run(["swapon", loopdev], capture_output=True).returncode != 0:
        pytest.skip("swapon is not allowed here")
    try:
        assert any("in use as swap" in p for p in device.safety_problems(info))
    finally:
        subprocess.run(["swapoff", loopdev], check=True)


def test_holders_read_from_sysfs(tmp_path, monkeypatch, loopdev):
    """Device mapper is not available here, so the holders directory is
    staged in a copy of the sysfs layout; what is tested is the reading of it."""
    name = os.path.basename(loopdev)
    fake = tmp_path / "sys" / name
    (fake / "holders" / "dm-3").mkdir(parents=True)
    with open(f"/sys/class/block/{name}/dev") as fh:
        (fake / "dev").write_text(fh.read())
    monkeypatch.setattr(device, "SYS_BLOCK", str(tmp_path / "sys"))
    info = device.DeviceInfo(path=loopdev, resolved=loopdev, kind="block", size_bytes=256 * MiB)
    assert any("held by dm-3" in p for p in device.safety_problems(info))


def test_root_disk_is_refused():
    disks = [d for d in device.root_disks() if os.path.exists(f"/dev/{d}")]
    if not disks:
        pytest.skip("/ is not on a block device here")
    info = device.resolve(f"/dev/{disks[0]}")
    assert any("root filesystem" in p for p in device.safety_problems(info))
    with pytest.raises(RefusedError):
        device.check_safe(info, force=False)


def test_cli_refuses_mounted_device_and_leaves_it_alone(loopdev, tmp_path, capsys):
    subprocess.run(["mkfs.ext4", "-q", "-F", loopdev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loopdev, str(mnt)], check=True)
    (mnt / "precious").write_text("keep me")
    try:
        rc = main(["ssd", "run", loopdev, "--quick", "--yes", "--outdir", str(tmp_path / "out")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == EXIT_REFUSED
        assert len(err) == 1 and "mounted" in err[0] and "--force" in err[0]
        assert (mnt / "precious").read_text() == "keep me"
        assert not (tmp_path / "out" / "loop.xml").exists()
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_a_dry_run_says_first_that_the_real_run_would_refuse_and_exits_as_it_would(loopdev, tmp_path, capsys):
    # Issue 60 item 1: "dry run, then run" in a script must not get a green light for a mounted disk
    subprocess.run(["mkfs.ext4", "-q", "-F", loopdev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loopdev, str(mnt)], check=True)
    try:
        rc = main(["ssd", "run", loopdev, "--quick", "--yes", "--dry-run"])
        out = capsys.readouterr().out.splitlines()
        assert rc == EXIT_REFUSED
        assert out[0].startswith(f"# a real run would refuse: {loopdev}: it is mounted on {mnt}")
        assert out[0].endswith(f"(exit {EXIT_REFUSED}; --force runs it anyway)")
        assert out[1].startswith("# dry run: nothing is written")
        assert not any("would refuse" in line for line in out[1:] if not line.startswith("# a real run"))
        rc = main(["ssd", "run", loopdev, "--quick", "--yes", "--dry-run", "--force"])
        out = capsys.readouterr().out.splitlines()
        assert rc == 0 and out[0].startswith(f"# forced past: {loopdev}: it is mounted on {mnt}")
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert main(["ssd", "run", loopdev, "--quick", "--yes", "--dry-run"]) == 0  # nothing in the way now
    assert capsys.readouterr().out.startswith("# dry run: nothing is written")
