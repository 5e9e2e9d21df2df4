"""Resume finds the same device, not the same path (issue 32, class 8).

A loop device's number is reused within seconds: a run interrupted on
/dev/loopN, whose loop device is then detached and another one of the same
size attached, possibly as the same /dev/loopN, must not be resumed on the
new one.  Real runs on real loop devices are interrupted with SIGINT; the
new device is filled with a pattern first and must still hold it, byte for
byte, after the refused resume.
"""
from __future__ import annotations

import hashlib
import mmap
import os
import signal
import subprocess
import sys

import pytest

from conftest import needs_fio
from remote_lab import LAB_HOSTS, free_port
from sealing import reseal
from tkperf import store
from tkperf.cli import demo, main
from tkperf.engine import resume
from tkperf.errors import EXIT_RESUME, ResumeError
from tkperf.model.results import DeviceInfo
from tkperf.target import identity

pytestmark = needs_fio
MiB = 1024 * 1024
SIZE = 256 * MiB
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = ["--tests", "iops,lat", "--bs", "4k", "--mix", "0/100", "--lat-bs", "4k", "--lat-mix", "0/100",
       "--lat-capture", "0", "--runtime", "1", "--max-rounds", "2", "-nj", "1", "-iod", "4", "--yes", "--no-report"]
PATTERN = bytes(range(256)) * 4096  # 1 MiB


def losetup(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["losetup", *args], capture_output=True, text=True)


def attach(backing, want: str = "") -> str:
    """A loop device over ``backing``: ``want`` (/dev/loopN) if it is free, else any."""
    if want and losetup("--direct-io=on", want, str(backing)).returncode == 0:
        return want
    got = losetup("--find", "--show", "--direct-io=on", str(backing))
    if got.returncode != 0:
        pytest.skip(f"no loop device: {got.stderr.strip()}")
    return got.stdout.strip()


def detach(dev: str) -> None:
    losetup("--detach", dev)


def sparse(path, fill: bool = False):
    with open(path, "wb") as fh:
        fh.truncate(SIZE)
        if fill:
            for _ in range(SIZE // MiB):
                fh.write(PATTERN)
    return path


def digest(path: str) -> str:
    """The device's content, read past the page cache."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    h = hashlib.sha256()
    buf = mmap.mmap(-1, MiB)  # page-aligned, as O_DIRECT needs
    try:
        while True:
            n = os.readv(fd, [buf])
            if not n:
                break
            h.update(buf[:n])
    finally:
        os.close(fd)
    return h.hexdigest()


def interrupt_in_round_1(*args: str) -> str:
    """``tkperf ARGS`` in a process of its own, SIGINT once IOPS round 1 is
    reported; its standard error (the exit must be 130)."""
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "[iops] round 1:" in line:
            proc.send_signal(signal.SIGINT)
            break
    err = "".join(seen) + proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, err
    return err


def interrupted_run(dev: str, out) -> str:
    """Run two tests on ``dev``, SIGINT in the first round; the result file."""
    err = interrupt_in_round_1("ssd", "run", dev, "--name", "k", "--outdir", str(out), *RUN)
    assert "tkperf resume" in err
    return str(out / "k.xml")


def resume_argv(xml: str, dev: str, *more: str):
    """``tkperf resume XML`` when ``dev`` has the saved run's path; else the
    same resume through ``ssd run DEV --resume`` (the number was taken)."""
    saved = store.load(xml)
    if saved.device.path == dev:
        return ["resume", xml, "--yes", "--no-report", "-q", *more]
    return ["ssd", "run", dev, "--resume", "--name", "k", "--outdir", os.path.dirname(xml), "-q", *RUN, *more]


@pytest.fixture
def attached():
    """Loop devices attached by the test, all detached afterwards."""
    devs = []
    yield devs
    for dev in devs:
        detach(dev)


def test_another_loop_device_under_the_same_number_is_refused(tmp_path, attached, capsys):
    first = sparse(tmp_path / "first.img")
    dev = attach(first)
    attached.append(dev)
    xml = interrupted_run(dev, tmp_path / "out")
    saved = store.load(xml)
    assert saved.device.inode.split("~")[0] == f"{os.major(os.stat(first).st_dev)}:" \
                                               f"{os.minor(os.stat(first).st_dev)}:{os.stat(first).st_ino}"
    detach(dev)
    attached.remove(dev)
    other = sparse(tmp_path / "other.img", fill=True)  # same size, another file
    new = attach(other, want=dev)
    attached.append(new)
    before = digest(new)
    capsys.readouterr()
    rc = main(resume_argv(xml, new))
    err = capsys.readouterr().err
    assert rc == EXIT_RESUME, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "backing file" in lines[0] and "not the same device" in lines[0], err
    assert "--force" in lines[0]
    assert digest(new) == before, "the refused resume wrote to the other device"
    assert store.load(xml).status == "interrupted"

    # --force resumes on it all the same, and says so in one line and in the run's events
    rc = main(resume_argv(xml, new, "--force"))
    err = capsys.readouterr().err
    assert rc == 0, err
    warned = [x for x in err.splitlines() if x.startswith("tkperf: warning: resuming by --force")]
    assert len(warned) == 1 and "backing file" in warned[0], err
    done = store.load(xml)
    assert done.status == "complete"
    assert any(e.kind == "warning" and e.message.startswith("resuming by --force") for e in done.events)


def test_the_same_backing_file_attached_again_resumes(tmp_path, attached, capsys):
    backing = sparse(tmp_path / "disk.img")
    dev = attach(backing)
    attached.append(dev)
    xml = interrupted_run(dev, tmp_path / "out")
    detach(dev)
    attached.remove(dev)
    again = attach(backing, want=dev)  # the same file; another number if that one was taken meanwhile
    attached.append(again)
    rc = main(resume_argv(xml, again))
    assert rc == 0, capsys.readouterr().err
    done = store.load(xml)
    assert done.status == "complete" and done.resumed
    assert not [e for e in done.events if e.message.startswith("resuming by --force")]


def test_a_file_without_identity_needs_force(tmp_path, attached, capsys):
    """A result file of an earlier tkperf (no identity recorded) and a
    serial-less device: only the size is known, which proves nothing."""
    backing = sparse(tmp_path / "disk.img")
    dev = attach(backing)
    attached.append(dev)
    xml = interrupted_run(dev, tmp_path / "out")
    with open(xml, encoding="utf-8") as fh:
        text = fh.read()
    saved = store.load(xml)
    assert f' inode="{saved.device.inode}"' in text
    with open(xml, "wb") as fh:  # as tkperf wrote it before it kept an identity (sealed again)
        fh.write(reseal(text.replace(f' inode="{saved.device.inode}"', "").encode("utf-8")))
    assert store.load(xml).device.inode == ""
    before = digest(dev)
    capsys.readouterr()
    rc = main(resume_argv(xml, dev))
    err = capsys.readouterr().err
    assert rc == EXIT_RESUME
    assert len(err.strip().splitlines()) == 1
    assert "records nothing that identifies its device beyond its size" in err
    assert digest(dev) == before
    rc = main(resume_argv(xml, dev, "--force"))
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "tkperf: warning: resuming by --force although the saved run records nothing" in err


def test_a_file_target_replaced_by_another_file_is_refused(tmp_path, capsys):
    target = tmp_path / "target.img"
    out = tmp_path / "out"
    interrupt_in_round_1("ssd", "run", str(target), "--size", "256m", "--name", "k", "--outdir", str(out), *RUN)
    xml = str(out / "k.xml")
    saved = store.load(xml)
    assert saved.device.inode.split("~")[0].endswith(f":{os.stat(target).st_ino}")  # made by the run, recorded after
    os.unlink(target)
    sparse(target, fill=True)
    before = digest(str(target))
    capsys.readouterr()
    rc = main(["resume", xml, "--yes", "--no-report", "-q"])
    err = capsys.readouterr().err
    assert rc == EXIT_RESUME and "has file (device:inode)" in err and "not the same device" in err, err
    assert digest(str(target)) == before


def test_a_remote_re_attach_to_another_device_is_refused(ssh_lab, fio_servers, tmp_path, attached, capsys):
    """The same over SSH: the agent on the test host reads the device's
    identity there, and the resume of a remote run is refused on the
    controlling side before anything is written."""
    port = free_port()
    fio_servers(LAB_HOSTS[0], port=port)
    remote = ["--ssh-config", str(ssh_lab.config), "--remote-tkperf",
              f"env PYTHONPATH={REPO} {sys.executable} -m tkperf", "--fio-port", str(port)]
    first = sparse(tmp_path / "first.img")
    dev = attach(first)
    attached.append(dev)
    out = tmp_path / "out"
    name = f"{LAB_HOSTS[0]}-{os.path.basename(dev)}"
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "ssd", "run", f"{LAB_HOSTS[0]}:{dev}", "--tests", "lat",
                             "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
                             "--max-rounds", "2", "-nj", "1",
                             "-iod", "4", "--wipc-loops", "1", "--yes", "--no-report", "--outdir", str(out), *remote],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=REPO))
    for line in proc.stderr:
        if "[lat] round 1:" in line:
            proc.send_signal(signal.SIGINT)
            break
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, err
    xml = str(out / f"{name}.xml")
    assert store.load(xml).device.inode
    detach(dev)
    attached.remove(dev)
    new = attach(sparse(tmp_path / "other.img", fill=True), want=dev)
    attached.append(new)
    before = digest(new)
    capsys.readouterr()
    if new == dev:
        argv = ["resume", xml, "--yes", "--no-report", "-q", *remote]
    else:
        argv = ["ssd", "run", f"{LAB_HOSTS[0]}:{new}", "--resume", "--name", name, "--outdir", str(out), "--tests",
                "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1", "--max-rounds",
                "2", "-nj", "1",
                "-iod", "4", "--wipc-loops", "1", "--yes", "--no-report", "-q", *remote]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == EXIT_RESUME, err
    assert "backing file" in err and "not the same device" in err
    assert digest(new) == before


def test_a_file_made_again_under_a_reused_inode_number_is_another_file(tmp_path):
    """Deleted and made again, a file often gets its old inode number at
    once (ext4, tmpfs); its birth time tells it apart where the file system
    keeps one."""
    path = tmp_path / "t.img"
    path.write_bytes(b"x")
    first = identity.inode_of(os.stat(path), str(path))
    for _ in range(20):
        path.unlink()
        path.write_bytes(b"x")
        again = identity.inode_of(os.stat(path), str(path))
        if again.split("~")[0] == first.split("~")[0]:
            break
    else:
        pytest.skip("this file system gave no inode number twice")
    if "~" not in first:
        pytest.skip("this file system keeps no birth time")
    assert again != first


def test_identity_rules():
    old = DeviceInfo(path="/dev/sdb", resolved="/dev/sdb", kind="block", size_bytes=10 ** 12,
                     model="M", serial="S1", firmware="F1", wwn="naa.5000c500a1b2c3d4")
    assert resume.identity_problem(old, old) == ""
    for change, word in (({"serial": "S2"}, "serial number"), ({"wwn": "naa.5000c500ffffffff"}, "WWN"),
                         ({"wwn": ""}, "WWN"), ({"firmware": "F2"}, "firmware"), ({"model": "N"}, "model")):
        now = DeviceInfo(**{**old.__dict__, **change})
        assert word in resume.identity_problem(old, now) and "not the same device" in \
            resume.identity_problem(old, now)
    # an NVMe namespace: the NSID alone identifies nothing, the EUI-64 does
    ns = DeviceInfo(path="/dev/nvme0n1", resolved="/dev/nvme0n1", kind="block", size_bytes=10 ** 12, nsid="1")
    assert "beyond its size" in resume.identity_problem(ns, ns)
    ns_eui = DeviceInfo(**{**ns.__dict__, "eui64": "0025388b91b6a1c2"})
    assert resume.identity_problem(ns_eui, ns_eui) == ""
    assert "EUI-64" in resume.identity_problem(ns_eui, DeviceInfo(**{**ns_eui.__dict__, "eui64": "00"}))


def test_identity_is_kept_in_the_result_file(tmp_path):
    from tkperf.model.results import HostInfo, RunResult

    dev = DeviceInfo(path="/dev/nvme0n1", resolved="/dev/nvme0n1", kind="block", size_bytes=1 << 30,
                     wwn="eui.0025388b91b6a1c2", eui64="0025388b91b6a1c2",
                     nguid="0025388b91b6a1c2e4d25c1a00000001", nsid="1", devnum="259:0")
    run = RunResult(name="r", started="2026-01-01T00:00:00+00:00", device=dev, host=HostInfo(hostname="h"), options={})
    path = str(tmp_path / "r.xml")
    store.save(run, path)
    back = store.load(path).device
    assert (back.wwn, back.eui64, back.nguid, back.nsid, back.inode) == \
        (dev.wwn, dev.eui64, dev.nguid, dev.nsid, "")
    assert back.devnum == ""  # this host's node number is not the device's identity
    with open(path, encoding="utf-8") as fh:
        assert "inode=" not in fh.read()  # only what the target has


def test_an_interrupted_demo_is_never_told_to_resume(tmp_path):
    out = tmp_path / "demo"
    err = interrupt_in_round_1("demo", "--outdir", str(out))
    assert "tkperf resume" not in err and "continue the run" not in err
    assert f"run the demo again (tkperf demo --overwrite --outdir {out})" in err
    assert store.load(str(out / "demo.xml")).status == "interrupted"
    # a second demo there keeps the interrupted one and runs as demo-2 (tests/e2e/test_demo.py runs it)
    assert demo.demo_name(str(out), overwrite=False) == "demo-2"
    assert demo.demo_name(str(out), overwrite=True) == "demo"


def test_resume_error_is_the_resume_exit_code():
    assert ResumeError("x").exit_code == EXIT_RESUME
