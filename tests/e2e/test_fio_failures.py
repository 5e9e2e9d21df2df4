"""fio failing in every way it can: a fake fio on PATH for the ways a real one
will not fail on demand, and one real I/O error from a device that runs out
of space under the run."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, EXIT_TOOL

REAL_FIO = shutil.which("fio")

SCRIPTS = {
    # prints a version, then fails the way fio does on a bad job
    "exit1": 'echo "fio: pid=0, err=22/file:filesetup.c:805, func=open, error=Invalid argument" >&2; exit 1',
    "badjson": 'echo "{\\"fio version\\" : \\"fio-3.33\\", \\"jobs\\" : [ {"; exit 0',
    "nojson": 'echo "fio: this is not json"; exit 0',
    "hang": "exec sleep 3600",
    "ioerror": 'echo "{\\"jobs\\": [{\\"jobname\\": \\"rnd-4k-0-100\\", \\"error\\": 5, '
               '\\"read\\": {}, \\"write\\": {}}]}"; exit 0',
}


def fake_fio(tmp_path, body, version="fio-3.33"):
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    script = bindir / "fio"
    script.write_text(f"""#!/bin/sh
if [ "$1" = "--version" ]; then echo "{version}"; exit 0; fi
# WIPC (no time_based) goes to the real fio, so the failure hits a round
for a in "$@"; do case "$a" in *.fio) grep -q time_based "$a" || exec {REAL_FIO} "$@";; esac; done
{body}
""")
    script.chmod(0o755)
    return str(bindir)


def run(loopdev, tmp_path, *extra):
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", "f", "--outdir", str(out), "--tests", "lat",
               "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1", "--wipc-loops", "1",
               "--yes", "--no-report", "-q", *extra])
    return rc, out / "f.xml"


@needs_fio
@pytest.mark.parametrize("mode, words", [
    ("exit1", "fio failed in lat round 1 (exit 1): fio: pid=0, err=22"),
    ("badjson", "fio printed invalid JSON"),
    ("nojson", "fio printed no JSON"),
    ("ioerror", "I/O error 5 (Input/output error) in workload rnd-4k-0-100 of lat round 1"),
    ("hang", "fio hung in lat round 1"),
])
def test_fio_failure_stops_cleanly(mode, words, loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", fake_fio(tmp_path, SCRIPTS[mode]) + os.pathsep + os.environ["PATH"])
    t0 = time.monotonic()
    rc, xml = run(loopdev, tmp_path)
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc == EXIT_FIO
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    assert len(lines) == 1 and words in lines[0], err
    saved = store.load(str(xml))
    assert saved.status == "failed"
    (t,) = saved.tests
    assert t.status == "failed" and t.rounds == []  # the failed round is not recorded
    assert t.wipc is not None  # what completed before it is
    assert any(e.kind == "failed" and "lat" in e.test for e in saved.events)
    if mode == "hang":
        assert elapsed < 60  # killed at 2 x 1 s + the margin, not after an hour
        assert subprocess.run(["pgrep", "-f", "sleep 3600"], capture_output=True).returncode != 0


@pytest.mark.parametrize("version, words", [("fio-2.2.10", "too old"), ("garbage", "cannot tell fio's version")])
def test_old_or_odd_fio_refused(version, words, loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", fake_fio(tmp_path, "exit 0", version) + os.pathsep + os.environ["PATH"])
    rc, xml = run(loopdev, tmp_path)
    assert rc == EXIT_TOOL
    assert words in capsys.readouterr().err
    assert not xml.exists()


def test_fio_missing(loopdev, tmp_path, monkeypatch, capsys):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("lsblk", "blkid", "blkdiscard", "losetup"):
        os.symlink(shutil.which(tool), bindir / tool)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    rc, _ = run(loopdev, tmp_path)
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_TOOL
    assert err == "tkperf: error: 'fio' not found on PATH; install it (Debian package fio)"


@needs_fio
def test_real_io_error_from_a_full_backing_store(tmp_path, capsys):
    """A loop device over a sparse 256 MiB file on a 16 MiB tmpfs: writes past
    16 MiB fail in the kernel with ENOSPC, which fio reports as an I/O error."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    loop = None
    try:
        img = mnt / "dev.img"
        with open(img, "wb") as fh:
            fh.truncate(256 << 20)
        loop = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True,
                              text=True, check=True).stdout.strip()
        rc, xml = run(loop, tmp_path)
        err = capsys.readouterr().err
        assert rc == EXIT_FIO
        assert "fio failed in lat WIPC" in err and "No space left on device" in err
        saved = store.load(str(xml))
        assert saved.status == "failed" and saved.tests[0].wipc is None
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
        subprocess.run(["umount", str(mnt)])
