"""Where the output goes: a pipe that closes early (``| head``) ends the
command quietly with 141, a full device (``>/dev/full``) is one line and
exit 8, Ctrl-D at the confirmation prompt is "not confirmed" (exit 11) and
a "no" leaves no output directory behind."""
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from tkperf.errors import EXIT_NOT_CONFIRMED, EXIT_OUTPUT

#: 128 + SIGPIPE, what a shell reports for a program its pipe stopped
EXIT_SIGPIPE = 141

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "example-ssd.xml")
TKPERF = [sys.executable, "-m", "tkperf"]


@pytest.mark.parametrize("argv", [["show", EXAMPLE], ["show", EXAMPLE, "--json"], ["tests"], ["--help"]],
                         ids=["show", "show-json", "tests", "help"])
def test_a_pipe_closed_early_ends_quietly(argv):
    r, w = os.pipe()
    os.close(r)  # the reader (head) is gone before tkperf writes
    try:
        proc = subprocess.run(TKPERF + argv, stdout=w, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(w)
    assert proc.stderr == b"", proc.stderr.decode()
    # argparse drops its own help text quietly when it cannot be written
    assert proc.returncode in ((0, EXIT_SIGPIPE) if argv == ["--help"] else (EXIT_SIGPIPE,))


def test_head_of_a_real_pipeline():
    proc = subprocess.run(["sh", "-c", '"$0" -m tkperf show "$1" | head -n 1', sys.executable, EXAMPLE],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 1
    assert proc.stderr == b"", proc.stderr.decode()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["show", EXAMPLE], ["tests", "--json"]], ids=["show", "tests"])
def test_a_full_device_is_one_line_and_exit_8(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(TKPERF + argv, stdout=full, stderr=subprocess.PIPE, timeout=60, text=True)
    assert proc.returncode == EXIT_OUTPUT, proc.stderr
    assert proc.stderr == "tkperf: error: cannot write to standard output: No space left on device\n"


def _prompted(argv, answer: bytes, cwd):
    """Run tkperf with a terminal as standard input, send ``answer`` once it asks."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(TKPERF + argv, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        out = proc.stdout
        while b"Type 'yes' to continue:" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], 1)
            if ready:
                chunk = os.read(out.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
        os.write(master, answer)
        rest, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, seen + rest, err.decode()


@pytest.mark.parametrize("answer", [b"\x04", b"no\n"], ids=["ctrl-d", "no"])
def test_no_confirmation_is_exit_11_and_leaves_nothing(answer, tmp_path):
    target = tmp_path / "t.img"
    outdir = tmp_path / "out"
    rc, out, err = _prompted(["ssd", "run", str(target), "--size", "64m", "--outdir", str(outdir),
                              "--tests", "lat", "--quick", "-q"], answer, tmp_path)
    assert b"will be destroyed" in out
    assert rc == EXIT_NOT_CONFIRMED, err
    assert err.strip().splitlines()[-1] == "tkperf: error: not confirmed; nothing was written"
    assert "internal error" not in err and "Traceback" not in err
    assert not outdir.exists()
    assert not target.exists() or target.stat().st_size == 0
