"""Device paths resolve the way the kernel resolves them (issue 32, class 7).

``/dev/loopA/../loopB`` names nothing: the kernel refuses a path through a
device node (ENOTDIR).  Resolved as text it becomes ``/dev/loopB``, another
device.  Here two real loop devices are made, the second filled with a
pattern, and the path through the first is given to ``tkperf ssd run``,
``tkperf info`` and a real ``tkperf agent``: each refuses it with one line,
and the second device still holds its pattern, byte for byte.
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys
from dataclasses import replace

import pytest

from agentpipe import converse
from tkperf.cli import main
from tkperf.errors import EXIT_TARGET, TargetError
from tkperf.target import device, identity
from tkperf.target.loopdev import try_loop

MiB = 1024 * 1024
SIZE = 64 * MiB
PATTERN = bytes(range(256)) * 4096  # 1 MiB, no run of zeros a discard would leave
AGENT = [sys.executable, "-m", "tkperf", "agent"]


def _loop(tmp_path, name):
    where = tmp_path / name
    where.mkdir()
    made, why = try_loop(SIZE, str(where))
    if made is None:
        pytest.skip(f"needs two loop devices: {why}")
    return made


@pytest.fixture
def two_loops(tmp_path):
    """(A, B): two loop devices; B filled with PATTERN."""
    a = _loop(tmp_path, "a")
    try:
        b = _loop(tmp_path, "b")
    except BaseException:
        a.__exit__(None, None, None)
        raise
    try:
        with open(b.path, "r+b", buffering=0) as fh:
            for _ in range(SIZE // MiB):
                fh.write(PATTERN)
            os.fsync(fh.fileno())
        yield a.path, b.path
    finally:
        b.__exit__(None, None, None)
        a.__exit__(None, None, None)


def digest(path: str) -> str:
    """The device's content, read past the page cache."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as fh:
            import mmap
            buf = mmap.mmap(-1, MiB)  # page-aligned, as O_DIRECT needs
            while True:
                n = fh.readinto(buf)
                if not n:
                    break
                h.update(buf[:n])
    finally:
        os.close(fd)
    return h.hexdigest()


def through(a: str, b: str) -> str:
    return f"{a}/../{os.path.basename(b)}"


def one_error_line(err: str, text: str) -> None:
    lines = [x for x in err.strip().splitlines() if x.startswith("tkperf:")]
    assert len(lines) == 1 and text in lines[0], err
    assert "Traceback" not in err


def test_ssd_run_refuses_a_path_through_a_device_and_writes_nothing(two_loops, tmp_path, capsys):
    a, b = two_loops
    before_a, before_b = digest(a), digest(b)
    rc = main(["ssd", "run", through(a, b), "--quick", "--yes", "--no-report", "--tests", "iops",
               "--purge", "discard", "--outdir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == EXIT_TARGET, err
    one_error_line(err, "a component of the path is not a directory")
    assert digest(b) == before_b and digest(a) == before_a
    assert not (tmp_path / "out").exists()


def test_ssd_run_with_several_targets_refuses_it_too(two_loops, tmp_path, capsys):
    a, b = two_loops
    before = digest(b)
    rc = main(["ssd", "run", a, through(a, b), "--quick", "--yes", "--no-report", "--tests", "iops",
               "--runtime", "1", "--max-rounds", "1", "--outdir", str(tmp_path / "out")])
    assert rc == EXIT_TARGET, capsys.readouterr().err
    assert digest(b) == before


def test_info_refuses_it(two_loops, capsys):
    a, b = two_loops
    rc = main(["info", through(a, b)])
    err = capsys.readouterr().err
    assert rc == EXIT_TARGET
    one_error_line(err, "not a directory")


def test_a_file_target_through_a_file_is_refused(tmp_path, capsys):
    img = tmp_path / "img"
    img.write_bytes(b"x")
    rc = main(["ssd", "run", f"{img}/../new.img", "--size", "64m", "--quick", "--yes", "--no-report",
               "--outdir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == EXIT_TARGET, err
    one_error_line(err, "not a directory")
    assert not (tmp_path / "new.img").exists()


def test_the_agent_refuses_it_on_its_own_side(two_loops, tmp_path):
    a, b = two_loops
    before = digest(b)
    policy = tmp_path / "agent.conf"
    policy.write_text("allow_force = yes\n")
    requests = [("resolve", {"path": through(a, b)}), ("lock", {}), ("check_safe", {"force": True}),
                ("exclusive", {}), ("purge", {"method": "discard"})]
    rc, out, _ = converse([*AGENT, "--policy", str(policy)],
                          ({"id": i, "op": op, "args": args} for i, (op, args) in enumerate(requests, 1)))
    replies = {m["id"]: m for m in out if "id" in m}
    assert rc == 0
    err = replies[1]["error"]
    assert err["type"] == "TargetError" and "not a directory" in err["message"], err
    assert all("error" in replies[i] for i in range(2, 6)), replies  # no device: nothing served
    logs = [m["log"][2] for m in out if "log" in m]
    assert any(t.startswith("agent refused:") and "not a directory" in t for t in logs), logs
    assert digest(b) == before


def test_a_link_resolves_to_its_device_through_the_kernel(two_loops, tmp_path):
    a, b = two_loops
    link = tmp_path / "by-id-link"
    link.symlink_to(b)
    dev = device.resolve(str(link))
    assert dev.resolved == b and dev.path == str(link)
    assert dev.devnum == f"{os.major(os.stat(b).st_rdev)}:{os.minor(os.stat(b).st_rdev)}"
    # a link through a link to a device node, then '..': refused as the kernel does
    with pytest.raises(TargetError, match="not a directory"):
        identity.resolve(f"{link}/../{os.path.basename(a)}")
    loop_link = tmp_path / "loop-link"
    loop_link.symlink_to(loop_link)
    with pytest.raises(TargetError, match="symbolic links"):
        identity.resolve(str(loop_link))


def test_what_is_opened_for_io_must_be_the_node_resolved(two_loops, tmp_path):
    """A device node swapped under its path between the resolve and the
    exclusive open: the open is refused, not made on the other device."""
    a, b = two_loops
    node = tmp_path / "node"
    os.mknod(node, stat.S_IFBLK | 0o600, os.stat(a).st_rdev)
    dev = device.resolve(str(node))
    assert dev.resolved == str(node) and dev.devnum
    swapped = tmp_path / "swapped"
    os.mknod(swapped, stat.S_IFBLK | 0o600, os.stat(b).st_rdev)
    os.replace(swapped, node)
    with pytest.raises(TargetError, match="no longer the device"):
        device.open_exclusive(dev)
    fd = device.open_exclusive(replace(dev, devnum=device.resolve(str(node)).devnum))
    assert fd is not None
    os.close(fd)


def test_a_file_target_swapped_for_a_link_is_not_written_through(tmp_path):
    """Between two fio runs the file target's path is replaced by a link to
    another file: the next fio never starts, the other file keeps its bytes."""
    from tkperf.engine.session import Session
    from tkperf.fio.jobs import FioJob
    from tkperf.kit import options

    target = str(tmp_path / "target.img")
    dev = device.resolve(target, SIZE)
    device.prepare_file_target(dev)
    dev = replace(dev, inode=device.resolve(target, SIZE).inode)
    session = Session(profile="ssd", opts=options.build({"tests": ("iops",)}), device=dev, name="t",
                      outdir=str(tmp_path))
    fio = session.backend()
    job = FioJob(name="w", rw="randwrite", bs=4096, runtime=1, size=MiB)
    fio.run([job], "a first workload")  # the file as resolved: fio runs
    victim = tmp_path / "victim"
    victim.write_bytes(PATTERN)
    os.unlink(target)
    os.symlink(victim, target)
    with pytest.raises(TargetError, match="no longer the file"):
        fio.run([job], "a second workload")
    assert victim.read_bytes() == PATTERN
