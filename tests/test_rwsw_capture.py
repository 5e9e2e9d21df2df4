"""`tkperf capture` of a real workload: fio on a loop device the test makes,
recorded through the kernel's block tracepoints (docs/rwsw.rst)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import needs_fio
from tkperf.cli import main
from tkperf.rwsw import model

pytestmark = [needs_fio, pytest.mark.skipif(os.geteuid() != 0, reason="tkperf capture needs root")]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mounts():
    with open("/proc/self/mounts") as fh:
        return sorted(line.split()[1] for line in fh if line.split()[2] in ("tracefs", "debugfs"))


def _instances():
    out = []
    for point in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        d = os.path.join(point, "instances")
        if os.path.isdir(d):
            out += [n for n in os.listdir(d) if n.startswith("tkperf-capture")]
    return out


def _loop_stat(dev):
    with open(f"/sys/block/{os.path.basename(dev)}/stat") as fh:
        fields = fh.read().split()
    return int(fields[0]), int(fields[4])  # reads, writes completed


def _fio_mix(dev, seconds, out):
    """70% random 4 KiB reads, 30% sequential 64 KiB writes, by fio's choice of each I/O."""
    return subprocess.Popen(
        ["fio", "--name=mix", f"--filename={dev}", "--direct=1", "--ioengine=libaio", "--iodepth=4",
         "--rw=randrw", "--rwmixread=70", "--bs=4k,64k", "--percentage_random=100,0", "--norandommap",
         f"--runtime={seconds}", "--time_based", "--output-format=json", f"--output={out}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_capture_finds_the_streams_of_a_known_mix(loopdev, tmp_path, capsys):
    before = _mounts()
    fio = _fio_mix(loopdev, 7, tmp_path / "fio.json")
    try:
        time.sleep(1.0)
        rc = main(["capture", loopdev, "--duration", "4", "--name", "mix", "--outdir", str(tmp_path),
                   "--step", "2s", "-q"])
    finally:
        fio.wait(timeout=60)
    assert rc == 0, capsys.readouterr().err
    job = json.loads((tmp_path / "fio.json").read_text())["jobs"][0]
    reads, writes = job["read"]["total_ios"], job["write"]["total_ios"]
    truth = {"RND 4KiB read": reads / (reads + writes), "SEQ 64KiB write": writes / (reads + writes)}
    c = model.load(str(tmp_path / "mix.xml"))
    shares = {s.key: s.share for s in c.streams}
    for key, share in truth.items():
        assert abs(shares.get(key, 0.0) - share) <= 0.02, (key, shares, truth)
        assert abs(shares.get(key, 0.0) - {"RND 4KiB read": 0.7, "SEQ 64KiB write": 0.3}[key]) <= 0.02
    assert all(share <= 0.02 for key, share in shares.items() if key not in truth), shares
    assert c.source == "tracefs" and c.size == 256 * 1024 * 1024
    assert 3.9 <= c.duration <= 4.5 and c.step == 2.0 and len(c.steps) == 2
    assert all(st.iops > 0 and 0 < st.qd <= 4.5 for st in c.steps)
    assert c.qd > 0.5
    # the iolog holds every I/O, in fio's version 3 format, offsets inside the device
    lines = (tmp_path / "mix.iolog").read_text().splitlines()
    assert lines[0] == "fio version 3 iolog" and c.iolog == "mix.iolog"
    ios = [ln.split() for ln in lines if ln.split()[2] in ("read", "write")]
    assert len(ios) == sum(s.ios for s in c.streams)
    assert all(0 <= int(off) and int(off) + int(n) <= c.size for _, _, _, off, n in ios)
    # the tracing state is as it was: nothing left mounted, no instance left
    assert _mounts() == before and _instances() == []
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_capture_of_an_idle_device_writes_nothing_to_it(loopdev, tmp_path, capsys):
    seen = _loop_stat(loopdev)
    rc = main(["capture", loopdev, "--duration", "1", "--name", "idle", "--outdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert _loop_stat(loopdev) == seen  # not one read or write reached the device
    c = model.load(str(tmp_path / "idle.xml"))
    assert c.streams == () and c.iops == 0 and len(c.steps) == 1
    assert "no I/O was seen" in out


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_capture_and_restores_tracing(loopdev, tmp_path, sig, code):
    before = _mounts()
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", loopdev, "--duration", "60",
                             "--name", "cut", "--outdir", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _instances() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _instances(), "the capture never set up its tracefs instance"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "stopped" in err and "Traceback" not in err
    assert _mounts() == before and _instances() == []
    assert os.listdir(out) == []  # no result, no temporary file


def test_the_instance_of_a_killed_capture_is_removed_by_the_next(loopdev, tmp_path):
    before = _mounts()
    env = dict(os.environ, PYTHONPATH=ROOT)
    (tmp_path / "a").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", loopdev, "--duration", "60",
                             "--name", "killed", "--outdir", str(tmp_path / "a")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _instances() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=30)
    assert _instances() == [f"tkperf-capture-{proc.pid}"]  # SIGKILL: nothing could clean up
    try:
        assert main(["capture", loopdev, "--duration", "1", "--name", "next", "--outdir", str(tmp_path), "-q"]) == 0
        assert _instances() == []
    finally:
        for point in _mounts():
            if point not in before:
                for name in _instances():
                    os.rmdir(os.path.join(point, "instances", name))
                subprocess.run(["umount", point], check=False)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_not_root_is_one_line_and_exit_2(loopdev, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                           "tkperf", "capture", loopdev, "--duration", "1", "--name", "x", "--outdir", "/tmp"],
                          env=env, capture_output=True, text=True, timeout=120, cwd="/")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "tkperf: error: tkperf capture needs root (it reads the kernel's block tracepoints): "
        "run it as root or with sudo"]


@pytest.mark.parametrize("argv, code, words", [
    (["/dev/tkperf-no-such-device", "--duration", "1"], 4, "No such file"),
    (["/etc/hostname", "--duration", "1"], 4, "not a block device"),
    (["LOOP"], 2, "--duration is required"),
    ([], 2, "give the DEVICE"),
    (["LOOP", "--duration", "1", "--step", "5x"], 2, "not a duration"),
    (["LOOP", "--duration", "1", "--outdir", "/nonexistent-tkperf"], 8, "no such directory"),
    (["LOOP", "--duration", "1", "--name", "a/b"], 2, "--name"),
])
def test_bad_input(loopdev, tmp_path, capsys, argv, code, words):
    argv = [loopdev if a == "LOOP" else a for a in argv]
    if "--outdir" not in argv:
        argv += ["--outdir", str(tmp_path)]
    if "--name" not in argv:
        argv += ["--name", "x"]
    assert main(["capture", *argv]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tkperf: error:") and words in err[0], err
    assert not os.path.exists(tmp_path / "x.xml")


def test_an_existing_capture_is_not_replaced(loopdev, tmp_path, capsys):
    (tmp_path / "x.xml").write_text("mine")
    assert main(["capture", loopdev, "--duration", "1", "--name", "x", "--outdir", str(tmp_path)]) == 8
    assert "exists" in capsys.readouterr().err
    assert (tmp_path / "x.xml").read_text() == "mine" and not (tmp_path / "x.iolog").exists()
