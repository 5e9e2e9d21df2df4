"""Run options end to end: file targets, description files, refill_buffers,
the confirmation prompt on a terminal, O_EXCL, and a full disk for results."""
import os
import pty
import subprocess
import sys

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_NOT_CONFIRMED, EXIT_OUTPUT

pytestmark = needs_fio
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "1", "--wipc-loops", "1", "--no-report", "-q"]


def test_file_target_is_marked_and_sized(tmp_path, capsys):
    img = tmp_path / "t.img"
    rc = main(["ssd", "run", str(img), "--size", "64m", "--name", "f", "--outdir", str(tmp_path / "o"),
               "--yes", *SMALL])
    assert rc == 0
    run = store.load(str(tmp_path / "o" / "f.xml"))
    assert run.device.kind == "file" and run.device.size_bytes == 64 << 20
    assert run.tests[0].purge.method == "discard" and "punch" in run.tests[0].purge.command
    assert any("file target" in e.message for e in run.events)
    assert img.stat().st_size == 64 << 20


def test_description_file_and_refill_buffers(loopdev, tmp_path):
    dsc = tmp_path / "drive.dsc"
    dsc.write_text("Vendor: ACME\nModel Number: Fast 9000\nFirmware: 1.2.3\nNotes: free text line\n")
    out = tmp_path / "o"
    rc = main(["ssd", "run", loopdev, "--name", "d", "--outdir", str(out), "--yes", "-dsc", str(dsc),
               "-rfb", *SMALL])
    assert rc == 0
    run = store.load(str(out / "d.xml"))
    assert run.description_fields["vendor"] == "ACME"
    assert run.description_fields["model"] == "Fast 9000"
    assert run.description_fields["notes"] == "free text line"
    assert run.options["refill_buffers"] == "true"
    assert "refill_buffers=1" in (out / "d.log").read_text()


def _run_on_pty(argv, answer):
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", *argv], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    seen = b""
    while b"Type 'yes'" not in seen:
        chunk = os.read(master, 1024)
        if not chunk:
            break
        seen += chunk
    os.write(master, answer + b"\n")
    rest = b""
    try:
        while True:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            rest += chunk
    except OSError:
        pass
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, seen.decode(errors="replace"), rest.decode(errors="replace")


def test_terminal_prompt_no_writes_nothing(loopdev, tmp_path):
    with open(loopdev, "r+b") as fh:
        fh.write(b"M" * 4096)
    rc, prompt, rest = _run_on_pty(["ssd", "run", loopdev, "--outdir", str(tmp_path / "o"), *SMALL], b"no")
    assert "All data on " + loopdev in prompt and "will be destroyed" in prompt
    assert rc == EXIT_NOT_CONFIRMED and "not confirmed; nothing was written" in rest
    with open(loopdev, "rb") as fh:
        assert fh.read(4096) == b"M" * 4096


def test_terminal_prompt_yes_runs(loopdev, tmp_path):
    rc, _, _ = _run_on_pty(["ssd", "run", loopdev, "--name", "y", "--outdir", str(tmp_path / "o"), *SMALL],
                           b"yes")
    assert rc == 0
    assert store.load(str(tmp_path / "o" / "y.xml")).status == "complete"


def test_device_held_exclusively_during_the_run(loopdev, tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "ssd", "run", loopdev, "--yes", "--outdir",
                             str(tmp_path / "o"), "--tests", "lat", "--lat-bs", "4k", "--lat-capture", "0",
                             "--runtime", "1",
                             "--max-rounds", "3", "--no-report"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        for line in proc.stderr:
            if "round 1:" in line:
                break
        with pytest.raises(OSError) as exc:
            os.close(os.open(loopdev, os.O_RDONLY | os.O_EXCL))
        assert exc.value.errno == 16  # EBUSY: the kernel refuses a second exclusive opener
    finally:
        proc.communicate(timeout=120)
    assert proc.returncode == 0


def test_full_disk_for_results_stops_cleanly(loopdev, tmp_path, capsys):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        rc = main(["ssd", "run", loopdev, "--name", "full", "--outdir", str(mnt), "--yes",
                   "--tests", "lat", "--lat-capture", "0", "--runtime", "1", "--max-rounds", "3", "--wipc-loops", "1",
                   "--no-report", "-q"])
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert rc == EXIT_OUTPUT
        assert len(err) == 1 and "No space left on device" in err[0] and "Traceback" not in err[0]
        assert not [n for n in os.listdir(mnt) if n.endswith(".tmp")]
    finally:
        subprocess.run(["umount", str(mnt)])
