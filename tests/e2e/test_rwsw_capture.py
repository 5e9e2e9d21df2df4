"""`tkperf capture` of a real workload: fio on a loop device the test makes,
recorded through the kernel's block tracepoints (docs/rwsw.rst)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import needs_fio
from tkperf.cli import main
from tkperf.errors import EXIT_OUTPUT
from tkperf.fio.output import first_json_object
from tkperf.rwsw import iolog, model, packedlog

pytestmark = [needs_fio, pytest.mark.skipif(os.geteuid() != 0, reason="tkperf capture needs root")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _mounts():
    with open("/proc/self/mounts") as fh:
        return sorted(line.split()[1] for line in fh if line.split()[2] in ("tracefs", "debugfs"))


def _mine(pid):
    """The tracing instances of the capture of ``pid`` (named ``tkperf-capture-PID-STARTTIME``)."""
    return [n for n in _instances() if n.startswith(f"tkperf-capture-{pid}-")]


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
    # fio runs before the capture starts (its I/O seen on the device) and
    # after it ends (stopped then), however late a loaded host starts either
    fio = _fio_mix(loopdev, 300, tmp_path / "fio.json")
    try:
        deadline = time.monotonic() + 60
        while sum(_loop_stat(loopdev)) < 100 and time.monotonic() < deadline and fio.poll() is None:
            time.sleep(0.05)
        rc = main(["capture", loopdev, "--duration", "4", "--name", "mix", "--outdir", str(tmp_path),
                   "--step", "2s", "-q"])
    finally:
        fio.send_signal(signal.SIGINT)  # fio ends its job and writes its report
        fio.wait(timeout=60)
    assert rc == 0, capsys.readouterr().err
    job = first_json_object((tmp_path / "fio.json").read_text())["jobs"][0]  # after "fio: terminating on signal 2"
    reads, writes = job["read"]["total_ios"], job["write"]["total_ios"]
    truth = {"RND 4KiB read": reads / (reads + writes), "SEQ 64KiB write": writes / (reads + writes)}
    c = model.load(str(tmp_path / "mix.xml"))
    shares = {s.key: s.share for s in c.streams}
    for key, share in truth.items():
        assert abs(shares.get(key, 0.0) - share) <= 0.02, (key, shares, truth)
        assert abs(shares.get(key, 0.0) - {"RND 4KiB read": 0.7, "SEQ 64KiB write": 0.3}[key]) <= 0.02
    assert all(share <= 0.02 for key, share in shares.items() if key not in truth), shares
    assert c.source == "tracefs" and c.size == 256 * 1024 * 1024
    # --duration 4 is 4 s from the start mark, however late a loaded host wakes the recorder to end it
    assert c.duration == pytest.approx(4.0, abs=1e-6) and c.step == 2.0 and len(c.steps) == 2
    assert all(st.iops > 0 and 0 < st.qd <= 4.5 for st in c.steps)
    assert c.qd > 0.5
    # the iolog holds every I/O, packed (a few bytes each), read as fio's version 3 format, offsets inside the device
    with open(tmp_path / "mix.iolog", "rb") as fh:
        assert fh.read(len(packedlog.MAGIC)) == packedlog.MAGIC
    assert os.path.getsize(tmp_path / "mix.iolog") < 12 * sum(s.ios for s in c.streams)
    lines = list(iolog.text_lines(str(tmp_path / "mix.iolog")))
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


def _start_capture(loopdev, out, name, seconds=60):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", loopdev, "--duration", str(seconds),
                             "--name", name, "--outdir", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _mine(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _mine(proc.pid), "the capture never set up its tracefs instance"
    time.sleep(0.5)  # the start mark follows the instance
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_first_signal_stops_the_capture_and_keeps_it(loopdev, tmp_path, sig):
    before = _mounts()
    proc = _start_capture(loopdev, tmp_path, "cut")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    name = signal.Signals(sig).name
    assert f"{name}: stopping the capture and keeping what was recorded" in err and "Traceback" not in err
    assert f"stopped early by {name}" in out
    c = model.load(str(tmp_path / "cut.xml"))
    assert c.stopped_by == name and c.stopped_at == c.duration and c.duration < 60
    assert b'stopped-early-at="' in (tmp_path / "cut.xml").read_bytes()
    assert (tmp_path / "cut.iolog").exists()
    assert _mounts() == before and not _mine(proc.pid)


def test_a_second_signal_aborts_and_restores_tracing(loopdev, tmp_path):
    before = _mounts()
    out = tmp_path / "out"
    out.mkdir()
    proc = _start_capture(loopdev, out, "cut")
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGTERM)  # another signal: not merged with the first by the kernel
    _, err = proc.communicate(timeout=120)
    # Two signals sent back to back to a process with threads reach it in either order (the
    # kernel gives the second to another thread when the main one has one pending): the one
    # handled first stops the capture, the other aborts it, and the exit status is that one's.
    first = re.search(r"tkperf: (SIG[A-Z]+): stopping the capture and keeping what was recorded", err)
    second = re.search(r"tkperf: stopped: interrupted by (SIG[A-Z]+)", err)
    assert first and second, err
    assert {first[1], second[1]} == {"SIGINT", "SIGTERM"}, err
    assert proc.returncode == 128 + signal.Signals[second[1]], err
    assert "Traceback" not in err
    assert _mounts() == before and not _mine(proc.pid)
    assert os.listdir(out) == []  # no result, no temporary file


def test_the_instance_of_a_killed_capture_is_removed_by_the_next(loopdev, tmp_path):
    before = _mounts()
    env = dict(os.environ, PYTHONPATH=ROOT)
    (tmp_path / "a").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", loopdev, "--duration", "60",
                             "--name", "killed", "--outdir", str(tmp_path / "a")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _mine(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=30)
    (left,) = _instances()  # SIGKILL: nothing could clean up
    assert left.startswith(f"tkperf-capture-{proc.pid}-")  # its owner: pid and start time
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


@pytest.fixture
def partitioned(tmp_path):
    """A 256 MiB loop device with a DOS partition table: p1 of 100 MiB at
    1 MiB, p2 behind it to the end (sfdisk on the image, losetup -P; partx
    -a where the kernel did not scan it).  Detached afterwards."""
    for tool in ("sfdisk", "losetup", "partx"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool} (util-linux)")
    img = tmp_path / "disk.img"
    with open(img, "wb") as fh:
        fh.truncate(256 << 20)
    subprocess.run(["sfdisk", "-q", str(img)], input=b"label: dos\nstart=2048, size=204800, type=83\n"
                   b"start=206848, type=83\n", check=True)
    done = subprocess.run(["losetup", "-f", "--show", "-P", str(img)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"needs a loop device: {done.stderr.strip()}")
    disk = done.stdout.strip()
    try:
        parts = [f"{disk}p1", f"{disk}p2"]
        deadline = time.monotonic() + 30
        while not all(os.path.exists(p) for p in parts) and time.monotonic() < deadline:
            subprocess.run(["partx", "-a", disk], capture_output=True)
            time.sleep(0.2)
        if not all(os.path.exists(p) for p in parts):
            pytest.skip("the kernel made no partition devices of the loop device")
        yield disk, parts
    finally:
        subprocess.run(["losetup", "-d", disk], check=False)


def test_a_partition_is_captured_alone(partitioned, tmp_path, capsys):
    """Random 4 KiB writes to the first 16 MiB of p1, sequential 128 KiB reads
    of p2, and 64 KiB reads through the disk's own node of its last 64 MiB
    (p2's sectors) at the same time: the capture of p1 holds p1's I/O only,
    at offsets relative to p1 (the kernel issues all of them to the disk, in
    the disk's sectors).  Reads through the disk's node of p1's own sectors
    would be p1's I/O too (docs/rwsw.rst, "Partitions")."""
    disk, (p1, p2) = partitioned
    common = ["--direct=1", "--ioengine=libaio", "--runtime=6", "--time_based", "--output-format=json"]
    # --norandommap: fio's random map picks the next free block when the one it drew is taken, which late in
    # each pass over the 16 MiB makes many writes start where a recent one ended (sequential, by the rule)
    jobs = [subprocess.Popen(["fio", "--name=p1", f"--filename={p1}", "--rw=randwrite", "--bs=4k", "--iodepth=2",
                              "--size=16m", "--norandommap", f"--output={tmp_path / 'p1.json'}"] + common,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
            subprocess.Popen(["fio", "--name=p2", f"--filename={p2}", "--rw=read", "--bs=128k", "--iodepth=2",
                              f"--output={tmp_path / 'p2.json'}"] + common,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
            subprocess.Popen(["fio", "--name=disk", f"--filename={disk}", "--rw=randread", "--bs=64k",
                              "--iodepth=1", "--offset=192m", "--size=64m",
                              f"--output={tmp_path / 'disk.json'}"] + common,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)]
    try:
        time.sleep(1.0)
        rc = main(["capture", p1, "--duration", "3", "--name", "p1", "--outdir", str(tmp_path), "-q"])
    finally:
        for j in jobs:
            j.wait(timeout=60)
    assert rc == 0, capsys.readouterr().err
    others = [json.loads((tmp_path / f"{n}.json").read_text())["jobs"][0]["read"]["total_ios"]
              for n in ("p2", "disk")]
    assert all(n > 100 for n in others), others  # the other I/O was there to leave out
    c = model.load(str(tmp_path / "p1.xml"))
    assert c.size == 204800 * 512
    ios = sum(s.ios for s in c.streams)
    assert ios > 100
    # fio's random 4 KiB writes (a few land right after the one before: sequential); no read of p2 or the disk
    assert all(s.rw == "write" and s.bs == 4096 for s in c.streams), c.streams
    assert c.streams[0].key == "RND 4KiB write" and c.streams[0].share >= 0.85, c.streams
    lines = list(iolog.text_lines(str(tmp_path / "p1.iolog")))[1:]
    offsets = [int(ln.split()[3]) for ln in lines if ln.split()[2] == "write"]
    assert len(offsets) == ios and not [ln for ln in lines if " read " in ln]
    assert max(offsets) + 4096 <= 16 << 20  # relative to p1's start: the disk's offsets start at 1 MiB
    assert min(offsets) < 1 << 20


@pytest.fixture
def two_loops(tmp_path):
    """Two fresh 64 MiB loop devices; skips (saying why) where they cannot be made."""
    from conftest import loop_device
    made = []
    try:
        for sub in ("a", "b"):
            (tmp_path / sub).mkdir()
            gen = loop_device(64 << 20, tmp_path / sub)
            made.append(gen)
            path = next(gen)
            made[-1] = (gen, path)
        yield tuple(p for _, p in made)
    finally:
        for item in reversed(made):
            (item[0] if isinstance(item, tuple) else item).close()  # detaches the loop device


def test_a_capture_of_two_devices_counts_each_one_as_fio_did(two_loops, tmp_path, capsys):
    """fio writes to both devices while one capture records them: each
    device's writes are exactly fio's job on it, each device's streams its
    own, and the flushes of the job that syncs are that device's only."""
    a, b = two_loops
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "capture", a, b, "--duration", "600", "--name", "two",
                             "--outdir", str(tmp_path), "--step", "1s"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline().startswith("capturing the block I/O of")  # recording has begun
        fio = subprocess.run(
            ["fio", "--output-format=json", "--direct=1", "--ioengine=psync", "--size=32m",
             "--name=data", f"--filename={a}", "--rw=randwrite", "--bs=4k", "--number_ios=1500", "--norandommap",
             "--name=log", f"--filename={b}", "--rw=write", "--bs=64k", "--number_ios=300", "--fdatasync=3"],
            capture_output=True, text=True, timeout=300)
        assert fio.returncode == 0, fio.stderr
    finally:
        proc.send_signal(signal.SIGINT)  # stop early and keep it
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    jobs = {j["jobname"]: j for j in first_json_object(fio.stdout)["jobs"]}
    c = model.load(str(tmp_path / "two.xml"))
    assert c.device == f"{a} + {b}" and [d.name for d in c.devices] == [a, b]
    da, db = c.devices
    assert da.ios == jobs["data"]["write"]["total_ios"] == 1500
    assert db.ios == jobs["log"]["write"]["total_ios"] == 300
    assert sum(s.ios for s in c.streams) == 1800 and da.offset == 0 and db.offset == 64 << 20
    assert {s.rw for s in da.streams} == {"write"} and all(s.bs == 4096 for s in da.streams)
    assert {s.key: s.ios for s in db.streams}.get("SEQ 64KiB write", 0) >= 299  # the first has no predecessor
    syncs = jobs["log"]["sync"]["lat_ns"]["N"]  # fio's fdatasync after every 3rd write, each a flush of that device
    assert da.seen.flushes == 0 and db.seen.flushes == c.seen.flushes == syncs >= 90
    for k, st in enumerate(c.steps):
        assert sum(s.ios for s in st.streams) == sum(s.ios for s in da.steps[k].streams) + sum(
            s.ios for s in db.steps[k].streams)
    lines = [line.split() for line in iolog.text_lines(str(tmp_path / "two.iolog")) if len(line.split()) == 5]
    writes = [int(x[3]) for x in lines if x[2] == "write"]
    assert len(writes) == 1800 and sum(o >= 64 << 20 for o in writes) == 300
    assert "stopped early by SIGINT" in out


def test_devices_that_cannot_be_captured_together_are_one_line(two_loops, tmp_path, capsys):
    a, b = two_loops
    for argv, code, words in (([a, a], 2, "given twice"), ([a, os.path.basename(a)], 2, "given twice"),
                              ([a, str(tmp_path)], 4, "not a block device"), ([b, "/dev/no-such-disk"], 4, "")):
        assert main(["capture", *argv, "--duration", "1", "--name", "x", "--outdir", str(tmp_path)]) == code, argv
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err
    assert not os.path.exists(tmp_path / "x.xml")


def test_a_capture_that_would_not_fit_is_refused_before_it_records(loopdev, tmp_path, capsys):
    # 24 h at 10^7 I/Os a second: some 160 TB, more than any test machine has free
    rc = main(["capture", loopdev, "--duration", "24h", "--expect-iops", "10000000", "--name", "day", "--outdir",
               str(tmp_path)])
    assert rc == EXIT_OUTPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "free, but a 24.0 h capture at about 10,000,000 I/Os a second needs about" in err[0]
    assert [f for f in os.listdir(tmp_path) if "day" in f] == [] and _mine(os.getpid()) == []  # nothing made or left


def test_a_capture_says_the_disk_it_needs_first(loopdev, tmp_path, capsys):
    rc = main(["capture", loopdev, "--duration", "1", "--name", "d", "--outdir", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"capturing the block I/O of {loopdev} for 1.0 s")
    assert re.match(r"disk: a 1\.0 s capture at about [\d,]+ I/Os a second \(the device's counters over 0\.5 s\) "
                    r"needs about .* in .*; .* free$", out[1]), out[1]


def test_a_capture_is_analysed_a_part_at_a_time_while_it_records(loopdev, tmp_path, monkeypatch):
    """Every drain its own part (a part is full at 1 byte): the analysis
    reads and frees them while the recording goes on, and I/Os whose issue
    and completion fall in different parts are paired all the same: the
    capture counts fio's writes and flushes exactly.  Only the events after
    a part's last drain mark wait for the next part: with no marks (held
    until the trace is 10 s on) every event of the 3 s would have waited."""
    from tkperf.rwsw import capture, liveparts, rawtrace

    monkeypatch.setattr(liveparts, "PART_BYTES", 1)
    monkeypatch.setattr(rawtrace, "HOLD_NS", 10 * 10**9)
    # the analysis at the normal priority: on idle CPU only (SCHED_IDLE) it may not run at all while a busy
    # test machine records, and what is read while recording is what this test looks at
    monkeypatch.setattr(liveparts, "idle", lambda on: None)
    seen = {}
    close = liveparts.Parts.close

    def spied(self):  # how far the analysis had got when the recording ended
        seen.update(handed=self.handed, read=self.read)
        stream = close(self)
        seen["held"] = stream.peak_held
        return stream

    monkeypatch.setattr(liveparts.Parts, "close", spied)
    runs = []

    def start():  # fio's I/O begins once the capture's start mark is in the trace
        runs.append(subprocess.Popen(
            ["fio", "--output-format=json", "--direct=1", "--ioengine=psync", "--size=32m",
             "--name=data", f"--filename={loopdev}", "--rw=randwrite", "--bs=4k", "--number_ios=6000",
             "--rate_iops=2000", "--norandommap", "--name=log", f"--filename={loopdev}", "--offset=32m",
             "--rw=write", "--bs=64k", "--number_ios=300", "--rate_iops=100", "--fdatasync=3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    try:
        (tmp_path / "out").mkdir()
        done = capture.record(loopdev, 8.0, "parts", str(tmp_path / "out"), 1.0, on_start=start,
                              say=lambda text: None, live=True)  # --analysis during
    finally:
        out, err = runs[0].communicate(timeout=300) if runs else ("", "")
    assert runs[0].returncode == 0, err
    jobs = {j["jobname"]: j for j in first_json_object(out)["jobs"]}
    c = done.capture
    assert sum(s.ios for s in c.streams) == jobs["data"]["write"]["total_ios"] + jobs["log"]["write"]["total_ios"]
    assert c.seen.flushes == jobs["log"]["sync"]["lat_ns"]["N"] >= 90
    assert seen["handed"] >= 8 and seen["read"] >= 6, seen  # fio ran 3 s: read while the recording went on
    assert seen["held"] < 3000, seen  # of some 13,000 events (2 an I/O)
    assert sorted(os.listdir(tmp_path / "out")) == ["parts.iolog", "parts.xml"]


def test_analysis_during_the_recording_is_said_and_a_bad_choice_is_exit_2(loopdev, tmp_path, capsys):
    rc = main(["capture", loopdev, "--duration", "1", "--name", "d", "--outdir", str(tmp_path), "--analysis",
               "during"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert "raw events analysed while recording on idle CPU" in out[1] and (tmp_path / "d.xml").exists()
    assert main(["capture", loopdev, "--duration", "1", "--name", "e", "--outdir", str(tmp_path), "--analysis",
                 "now"]) == 2
    assert not (tmp_path / "e.xml").exists()
