"""What a target is (tkperf.target.kinds).

Real devices the tests make and always remove: a loop device, partitions on
a loop device (GPT by sfdisk, nodes by the kernel or partx), a
/dev/disk/by-id-like symlink, a zram device, files; a device-mapper linear
device (dmsetup) and an md RAID1 (mdadm) over loop devices where the kernel
and the tools have them (else skipped, saying which is missing).

Kinds this machine cannot make (SCSI/SATA disks, NVMe namespaces, LVM,
dm-crypt, arrays that resync or are degraded) are classified from small
sysfs trees built in tmp_path.  They copy the kernel's layout, as
Documentation/ABI/testing/sysfs-block*, sysfs-class-nvme and md.rst in the
kernel describe it and as public listings show it: the namespace directory
inside the controller's (``.../nvme/nvme0/nvme0n1``, with ``ng0n1`` beside
it; the listing of /sys/class/block/nvme0n1/device in
hakandundar34coding/system-monitoring-center issue #2), and the native
multipath head under the subsystem (``devices/virtual/nvme-subsystem/
nvme-subsys0/nvme0n1``, rhboot/efivar pull request #158).
"""
import json
import os
import shutil
import subprocess
import time

import pytest

from tkperf.errors import TargetError
from tkperf.target import kinds
from tkperf.target.loopdev import try_loop

MiB = 1024 * 1024


# --- sysfs trees -------------------------------------------------------------------

def node(root, real, files=None, links=None, block=True):
    """A device directory ``root/real`` with ``files`` and relative
    ``links``; for a ``block`` device also /sys/class/block/NAME pointing
    at it as the kernel does."""
    d = root / real
    d.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text + "\n")
    for rel, target in (links or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, d / rel)
    cls = root / "class" / "block"
    cls.mkdir(parents=True, exist_ok=True)
    if block:
        os.symlink(os.path.relpath(d, cls), cls / os.path.basename(real))
    return d


SDA = "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
NVME0 = "devices/pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0"


@pytest.fixture
def sysfs(tmp_path):
    root = tmp_path / "sys"
    node(root, SDA, {"size": "1953525168", "queue/physical_block_size": "4096"})
    node(root, SDA + "/sda1", {"partition": "1", "start": "63", "size": "1024000"})
    node(root, SDA + "/sda2", {"partition": "2", "start": "1026048", "size": "1952497664"})
    # A controller with one namespace (and its generic char node ng0n1, which is no namespace).
    node(root, NVME0, {"transport": "pcie", "model": "EX-3840", "cntlid": "1"}, block=False)
    (root / NVME0 / "ng0n1").mkdir()
    node(root, NVME0 + "/nvme0n1", {"nsid": "1", "size": "7501476528"}, {"device": "../../nvme0"})
    node(root, NVME0 + "/nvme0n1/nvme0n1p1", {"partition": "1", "start": "2048", "size": "1000000"})
    # A controller with two namespaces, IDs 1 and 3 (the name's n2 is not the ID).
    ctrl1 = "devices/pci0000:00/0000:00:01.2/0000:02:00.0/nvme/nvme1"
    node(root, ctrl1, {"transport": "pcie"}, block=False)
    node(root, ctrl1 + "/nvme1n1", {"nsid": "1", "size": "1000000"}, {"device": "../../nvme1"})
    node(root, ctrl1 + "/nvme1n2", {"nsid": "3", "size": "1000000"}, {"device": "../../nvme1"})
    # Native multipath: the head under the subsystem, two paths over TCP.
    sub = "devices/virtual/nvme-subsystem/nvme-subsys2"
    node(root, "devices/virtual/nvme-fabrics/ctl/nvme2", {"transport": "tcp"}, block=False)
    node(root, "devices/virtual/nvme-fabrics/ctl/nvme4", {"transport": "tcp"}, block=False)
    node(root, sub, {"subsysnqn": "nqn.2014-08.org.example:ex"},
         {"nvme2": "../../nvme-fabrics/ctl/nvme2", "nvme4": "../../nvme-fabrics/ctl/nvme4"}, block=False)
    node(root, sub + "/nvme2n1", {"nsid": "1", "size": "2000000"}, {"device": "../../nvme-subsys2"})
    # Device-mapper: an LVM volume over sda2, dm-crypt over it.
    node(root, "devices/virtual/block/dm-0", {"dm/name": "vg0-data", "dm/uuid": "LVM-Ab3xYz" + "0" * 54,
                                              "size": "409600"},
         {"slaves/sda2": "../../../../" + SDA + "/sda2"})
    node(root, "devices/virtual/block/dm-1", {"dm/name": "secret", "dm/uuid": "CRYPT-LUKS2-1234-secret",
                                              "size": "405504"},
         {"slaves/dm-0": "../../dm-0"})
    node(root, "devices/virtual/block/dm-2", {"dm/name": "plain", "dm/uuid": "", "size": "2048"})
    # md: a RAID1 resyncing with one device missing, a clean RAID0.
    node(root, "devices/virtual/block/md127",
         {"md/level": "raid1", "md/raid_disks": "2", "md/array_state": "clean", "md/sync_action": "resync",
          "md/degraded": "1", "md/chunk_size": "0", "size": "1000000"},
         {"slaves/sdb1": "../../../../sdb/sdb1"})
    node(root, "devices/virtual/block/md0",
         {"md/level": "raid0", "md/raid_disks": "2", "md/array_state": "clean", "md/sync_action": "idle",
          "md/degraded": "0", "md/chunk_size": "524288", "size": "4000000"},
         {"slaves/sdc": "x", "slaves/sdd": "y"})
    node(root, "devices/virtual/block/zram3", {"size": "32768"})
    return str(root)


def test_whole_disk(sysfs):
    k = kinds.classify_block("sda", sysfs)
    assert (k.kind, k.warnings, k.whole_drive) == ("disk", (), True)
    assert k.detail == "whole disk /dev/sda (1,000.2 GB)"


def test_partitions_say_they_are_not_the_whole_device(sysfs):
    aligned = kinds.classify_block("sda2", sysfs)
    assert aligned.kind == "partition" and aligned.parent == "sda" and not aligned.whole_drive
    assert aligned.detail.startswith("partition 2 of /dev/sda (999.7 GB of 1,000.2 GB, from sector 1026048)")
    assert len(aligned.warnings) == 1
    assert "results differ from the whole device /dev/sda" in aligned.warnings[0]
    misaligned = kinds.classify_block("sda1", sysfs)
    assert "starts at sector 63, not on a 4 KiB boundary" in misaligned.warnings[1]
    nvme_part = kinds.classify_block("nvme0n1p1", sysfs)
    assert nvme_part.kind == "partition" and nvme_part.parent == "nvme0n1"


def test_an_nvme_namespace_alone_on_its_controller(sysfs):
    k = kinds.classify_block("nvme0n1", sysfs)
    assert k.kind == "nvme-namespace" and k.parent == "nvme0" and k.whole_drive
    assert k.detail == "NVMe namespace 1 (/dev/nvme0n1) of controller nvme0, transport pcie"
    assert k.warnings == ()


def test_an_nvme_namespace_among_others(sysfs):
    k = kinds.classify_block("nvme1n2", sysfs)
    assert k.detail.startswith("NVMe namespace 3 (/dev/nvme1n2) of controller nvme1")
    assert "one of 2 namespaces" in k.detail
    assert not k.whole_drive
    assert "one of 2 namespaces of nvme1 (nvme1n1, nvme1n2)" in k.warnings[0]
    assert "may erase them too" in k.warnings[0]


def test_an_nvme_multipath_head_over_tcp(sysfs):
    k = kinds.classify_block("nvme2n1", sysfs)
    assert k.kind == "nvme-namespace" and k.parent == "nvme-subsys2"
    assert k.detail == "NVMe namespace 1 (/dev/nvme2n1) of subsystem nvme-subsys2, transport tcp"
    assert not k.whole_drive
    assert any("NVMe/tcp" in w for w in k.warnings)


def test_device_mapper_kinds(sysfs):
    lvm = kinds.classify_block("dm-0", sysfs)
    assert lvm.kind == "device-mapper" and lvm.members == ("sda2",)
    assert lvm.detail == "LVM logical volume vg0-data (/dev/dm-0) over /dev/sda2"
    assert "results describe the mapping over /dev/sda2" in lvm.warnings[0]
    crypt = kinds.classify_block("dm-1", sysfs)
    assert crypt.detail.startswith("dm-crypt (encrypted) device secret")
    assert any("encrypts on the host" in w for w in crypt.warnings)
    plain = kinds.classify_block("dm-2", sysfs)
    assert plain.detail == "device-mapper device plain (/dev/dm-2) over no devices"


def test_md_arrays(sysfs):
    busy = kinds.classify_block("md127", sysfs)
    assert busy.kind == "md" and busy.members == ("sdb1",) and not busy.whole_drive
    assert busy.detail == "md RAID raid1 /dev/md127 over /dev/sdb1 (2 devices, state clean)"
    assert "drive-level PURGE cannot reach the members" in busy.warnings[0]
    assert "is busy (resync)" in busy.warnings[1]
    assert "is degraded (1 device missing)" in busy.warnings[2]
    idle = kinds.classify_block("md0", sysfs)
    assert idle.detail == "md RAID raid0 /dev/md0 over /dev/sdc, /dev/sdd (2 devices, chunk 512 KiB, state clean)"
    assert len(idle.warnings) == 1


def test_virtual_and_unknown(sysfs):
    k = kinds.classify_block("zram3", sysfs)
    assert k.kind == "virtual" and "no hardware under it" in k.detail and k.warnings
    with pytest.raises(TargetError, match="sdz: not a block device"):
        kinds.classify_block("sdz", sysfs)


def test_the_record_is_plain_json(sysfs):
    d = kinds.classify_block("md0", sysfs).as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["kind"] == "md" and d["members"] == ["sdc", "sdd"]
    with pytest.raises(ValueError):
        kinds.TargetKind(kind="tape", detail="")


# --- real devices ----------------------------------------------------------------------

def test_a_loop_device(loopdev):
    k = kinds.classify(loopdev)
    assert k.kind == "loop" and k.name == os.path.basename(loopdev) and not k.whole_drive
    assert "over the file" in k.detail and "tkperf-loop-" in k.detail
    assert k.resolved == loopdev and "given as" not in k.detail
    assert "is a loop device" in k.warnings[0]


def test_a_by_id_link_is_resolved_and_kept(loopdev, tmp_path):
    by_id = tmp_path / "disk" / "by-id"
    by_id.mkdir(parents=True)
    # udev's links are relative and may chain (by-id -> by-path -> node).
    (tmp_path / "node").symlink_to(loopdev)
    link = by_id / "ata-TKPERF_TEST_0001"
    link.symlink_to(os.path.join("..", "..", "node"))
    k = kinds.classify(str(link))
    assert k.kind == "loop" and k.resolved == loopdev and k.path == str(link)
    assert k.detail.endswith(f"; given as {link} -> {loopdev}")


def _run(argv, input=None):
    """Run a tool of the test's set-up; stdin is closed so nothing waits for an answer."""
    return subprocess.run(argv, capture_output=True, text=True, input=input if input is not None else "")


@pytest.fixture
def partitioned_loop(tmp_path):
    """A loop device with partition scanning and a GPT of two partitions:
    one at 1 MiB, one at an odd sector; the nodes from the kernel's
    partition scan or, where it has no GPT support, from partx."""
    if os.geteuid() != 0:
        pytest.skip("partitions on a loop device need root")
    if shutil.which("sfdisk") is None:
        pytest.skip("sfdisk is not installed (Debian package fdisk)")
    if shutil.which("partx") is None:
        pytest.skip("partx is not installed (Debian package util-linux)")
    img = tmp_path / "parts.img"
    with open(img, "wb") as fh:
        fh.truncate(64 * MiB)
    out = _run(["losetup", "--find", "--show", "--partscan", str(img)])
    if out.returncode != 0:
        pytest.skip(f"no loop device: {out.stderr.strip()}")
    dev = out.stdout.strip()
    try:
        script = "label: gpt\nstart=2048, size=32768\nstart=34817, size=16384\n"
        made = _run(["sfdisk", "--quiet", dev], input=script)
        assert made.returncode == 0, made.stderr
        name = os.path.basename(dev)
        if not os.path.exists(f"/sys/class/block/{name}p1"):
            added = _run(["partx", "--add", dev])
            assert added.returncode == 0, added.stderr
        for _ in range(100):  # udev, where it runs, may make the nodes a moment later
            if os.path.exists(f"{dev}p2"):
                break
            time.sleep(0.05)
        yield dev
    finally:
        _run(["partx", "--delete", dev])
        _run(["losetup", "--detach", dev])


def test_partitions_of_a_loop_device(partitioned_loop):
    dev = partitioned_loop
    name = os.path.basename(dev)
    first = kinds.classify(f"{dev}p1")
    assert first.kind == "partition" and first.parent == name and first.name == f"{name}p1"
    assert first.detail.startswith(f"partition 1 of {dev} (0.0168 GB of 0.0671 GB, from sector 2048)")
    assert len(first.warnings) == 1 and f"results differ from the whole device {dev}" in first.warnings[0]
    second = kinds.classify(f"{dev}p2")
    assert "starts at sector 34817, not on a 4 KiB boundary" in second.warnings[1]
    assert kinds.classify(dev).kind == "loop"


def test_a_partition_is_never_given_a_drive_level_purge(partitioned_loop):
    """A drive-level PURGE through a partition node would erase the whole
    drive: asked for, it is refused; under auto, the partition is discarded."""
    from dataclasses import replace

    from tkperf.errors import UsageError
    from tkperf.target import device, purge

    part = f"{partitioned_loop}p1"
    dev = device.resolve(part, None)
    # as if the loop device were an NVMe or SATA drive: the transport decides the family
    for transport in ("nvme", "sata"):
        as_drive = replace(dev, transport=transport)
        method, note = purge.choose("auto", as_drive)
        assert method == "discard" and "partition 1 of" in note and "not a PTS PURGE" in note
        with pytest.raises(UsageError, match="would erase the whole drive"):
            purge.choose("nvme" if transport == "nvme" else "ata", as_drive)
    assert purge.choose("auto", replace(device.resolve(partitioned_loop, None), transport="nvme"))[0] == "nvme"


def test_files(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"")
    k = kinds.classify(str(f))
    assert k.kind == "file" and k.detail.startswith(f"regular file {f}") and "demos" in k.warnings[0]
    new = kinds.classify(str(tmp_path / "new.img"))
    assert new.kind == "file" and "(created for the run)" in new.detail
    with pytest.raises(TargetError, match="is a directory"):
        kinds.classify(str(tmp_path))
    with pytest.raises(TargetError, match="is a character device"):
        kinds.classify("/dev/null")
    with pytest.raises(TargetError, match="no such device or file"):
        kinds.classify(str(tmp_path / "no-dir" / "t.img"))


@pytest.fixture
def zram():
    """A zram device of this test's own (hot_add), removed afterwards."""
    ctl = "/sys/class/zram-control"
    if os.geteuid() != 0 or not os.path.isdir(ctl):
        pytest.skip("needs root and a kernel with zram (/sys/class/zram-control)")
    with open(os.path.join(ctl, "hot_add")) as fh:
        n = fh.read().strip()
    try:
        with open(f"/sys/block/zram{n}/disksize", "w") as fh:
            fh.write(str(16 * MiB))
        yield f"/dev/zram{n}"
    finally:
        with open(f"/sys/block/zram{n}/reset", "w") as fh:
            fh.write("1")
        with open(os.path.join(ctl, "hot_remove"), "w") as fh:
            fh.write(n)


def test_a_zram_device_is_virtual(zram):
    if not os.path.exists(zram):
        pytest.skip(f"no device node {zram} (devtmpfs or udev did not make it)")
    k = kinds.classify(zram)
    assert k.kind == "virtual" and k.detail.startswith(f"virtual block device {zram} (0.0168 GB)")


def _kernel_has(misc_name):
    try:
        with open("/proc/misc") as fh:
            return any(line.split()[-1] == misc_name for line in fh if line.strip())
    except OSError:
        return False


@pytest.fixture
def linear_dm(loopdev):
    if not _kernel_has("device-mapper"):
        pytest.skip("the kernel has no device-mapper (no 'device-mapper' in /proc/misc)")
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup is not installed (Debian package dmsetup)")
    name = f"tkperf-kinds-{os.getpid()}"
    with open(f"/sys/class/block/{os.path.basename(loopdev)}/size") as fh:
        sectors = int(fh.read())
    made = _run(["dmsetup", "create", name, "--table", f"0 {sectors} linear {loopdev} 0"])
    assert made.returncode == 0, made.stderr
    try:
        info = _run(["dmsetup", "info", "-c", "--noheadings", "-o", "blkdevname", name])
        node = f"/dev/mapper/{name}"
        yield (node if os.path.exists(node) else f"/dev/{info.stdout.strip()}"), name
    finally:
        _run(["dmsetup", "remove", "--retry", name])


def test_a_device_mapper_device(linear_dm, loopdev):
    path, name = linear_dm
    k = kinds.classify(path)
    assert k.kind == "device-mapper" and k.members == (os.path.basename(loopdev),)
    assert k.detail.startswith(f"device-mapper device {name} (/dev/dm-")
    assert f"over {loopdev}, table: linear" in k.detail
    assert "results describe the mapping" in k.warnings[0]


@pytest.fixture
def raid1(tmp_path):
    if not os.path.exists("/proc/mdstat"):
        pytest.skip("the kernel has no md driver (no /proc/mdstat)")
    if shutil.which("mdadm") is None:
        pytest.skip("mdadm is not installed (Debian package mdadm)")
    loops = []
    try:
        for _ in range(2):
            loop, why = try_loop(64 * MiB, str(tmp_path))
            if loop is None:
                pytest.skip(f"needs loop devices: {why}")
            loops.append(loop)
        number = next(n for n in range(250, 100, -1) if not os.path.exists(f"/sys/class/block/md{n}"))
        md = f"/dev/md{number}"
        made = _run(["mdadm", "--create", md, "--run", "--assume-clean", "--level=1", "--raid-devices=2",
                     "--metadata=1.2", *[lp.path for lp in loops]])
        assert made.returncode == 0, made.stderr
        try:
            yield md, [lp.path for lp in loops]
        finally:
            _run(["mdadm", "--stop", md])
            _run(["mdadm", "--zero-superblock", *[lp.path for lp in loops]])
    finally:
        for loop in loops:
            loop.__exit__(None, None, None)


def test_an_md_raid1(raid1):
    md, members = raid1
    k = kinds.classify(md)
    assert k.kind == "md" and sorted(k.members) == sorted(os.path.basename(m) for m in members)
    assert k.detail.startswith(f"md RAID raid1 {md} over ")
    assert "2 devices" in k.detail and not k.whole_drive
