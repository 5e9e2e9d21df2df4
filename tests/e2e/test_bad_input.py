"""Every bad input: one line on stderr, a documented exit code, no traceback,
and not a byte changed on the device (a marker in its first and last MiB)."""
import os

import pytest

from tkperf.cli import main
from tkperf.errors import EXIT_NOT_CONFIRMED, EXIT_OUTPUT, EXIT_RESULT_FILE, EXIT_TARGET, EXIT_USAGE

MiB = 1024 * 1024
OK = ["--quick", "--yes", "--no-report", "-q"]

# (id, argv with DEV/OUT/FILE/DIR placeholders, exit code, words of the message)
CASES = [
    ("unknown-test", ["--tests", "iops,foo"], EXIT_USAGE, "unknown test 'foo'"),
    ("bs-unit", ["--bs", "4q"], EXIT_USAGE, "is not a size"),
    ("bs-not-sector", ["--bs", "4000"], EXIT_USAGE, "multiple of 512"),
    ("bs-zero", ["--bs", "0"], EXIT_USAGE, "larger than 0"),
    ("bs-huge", ["--tp-bs", "128m"], EXIT_USAGE, "larger than 64m"),
    ("mix-sum", ["--mix", "60/30"], EXIT_USAGE, "does not add up"),
    ("mix-word", ["--mix", "mostly-reads"], EXIT_USAGE, "is not like 65/35"),
    ("lat-mix-range", ["--lat-mix", "101"], EXIT_USAGE, "does not add up"),
    ("iodepth-zero", ["-iod", "0"], EXIT_USAGE, "--iodepth 0 is out of range"),
    ("iodepth-huge", ["--iodepth", "99999"], EXIT_USAGE, "out of range"),
    ("numjobs-zero", ["-nj", "0"], EXIT_USAGE, "--numjobs 0 is out of range"),
    ("numjobs-huge", ["--numjobs", "1000"], EXIT_USAGE, "out of range"),
    ("runtime-zero", ["--runtime", "0"], EXIT_USAGE, "--runtime '0' must be longer than 0"),
    ("runtime-negative", ["-rt", "-5"], EXIT_USAGE, "is not a duration"),
    ("runtime-word", ["--runtime", "long"], EXIT_USAGE, "--runtime 'long' is not a duration like"),
    ("max-rounds-zero", ["--max-rounds", "0"], EXIT_USAGE, "out of range"),
    ("wipc-negative", ["--wipc-loops", "-1"], EXIT_USAGE, "out of range"),
    ("wsat-time", ["--wsat-time", "1y"], EXIT_USAGE, "is not a duration"),
    ("wsat-tgbw", ["--wsat-tgbw", "x4"], EXIT_USAGE, "is not a GB figure"),
    ("wsat-interval", ["--wsat-interval", "0"], EXIT_USAGE, "longer than 0"),
    ("tp-oio-tc", ["--tp-oio", "4x32"], EXIT_USAGE, "TP runs one sequential stream, TC must be 1"),
    ("tp-oio-word", ["--tp-oio", "deep"], EXIT_USAGE, "give TCxQD, e.g. 1x32"),
    ("purge-method", ["--purge", "magic"], EXIT_USAGE, "invalid choice"),
    ("class", ["--class", "server"], EXIT_USAGE, "invalid choice"),
    ("report-format", ["--report-format", "docx"], EXIT_USAGE, "unknown report format"),
    ("name", ["--name", "../evil"], EXIT_USAGE, "--name"),
    ("unknown-option", ["--turbo"], EXIT_USAGE, "unrecognized arguments: --turbo"),
    ("dsc-missing", ["-dsc", "/nonexistent/tkperf.dsc"], EXIT_USAGE, "description file"),
    ("resume-nothing", ["--resume"], EXIT_USAGE, "no saved run"),
    ("nonexistent-device", ["@/dev/tkperf-no-such-disk"], EXIT_TARGET, "no such device"),
    ("char-device", ["@/dev/null"], EXIT_TARGET, "character device"),
    ("directory", ["@DIR"], EXIT_TARGET, "is a directory"),
    ("file-without-size", ["@FILE"], EXIT_TARGET, "give --size"),
    ("file-too-small", ["@FILE", "--size", "1m"], EXIT_TARGET, "minimum"),
    ("size-on-block", ["--size", "64m"], EXIT_TARGET, "only for file targets"),
    ("device-too-small", ["--tests", "iops", "--bs", "64m", "-nj", "4"], EXIT_TARGET, "too small"),
    ("outdir-under-file", ["--outdir", "FILE/out"], EXIT_OUTPUT, "output directory"),
]


@pytest.fixture
def marked(loopdev):
    """The loop device with random markers in its first and last MiB."""
    head, tail = os.urandom(MiB), os.urandom(MiB)
    with open(loopdev, "r+b") as fh:
        fh.write(head)
        fh.seek(-MiB, os.SEEK_END)
        fh.write(tail)
        fh.flush()
        os.fsync(fh.fileno())
    yield loopdev
    with open(loopdev, "rb") as fh:
        assert fh.read(MiB) == head, "the first MiB of the device changed"
        fh.seek(-MiB, os.SEEK_END)
        assert fh.read(MiB) == tail, "the last MiB of the device changed"


def one_line_error(capsys, rc, code, words):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("tkperf: error: ")
    assert words in lines[0]
    assert rc == code


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, marked, tmp_path, capsys):
    _, extra, code, words = case
    afile = tmp_path / "plain.file"
    afile.write_text("x")
    subst = {"DIR": str(tmp_path), "FILE": str(afile)}
    extra = [subst.get(a, a.replace("FILE", str(afile))) for a in extra]
    if extra and extra[0].startswith("@"):
        target = subst.get(extra[0][1:], extra[0][1:])
        extra = extra[1:]
    else:
        target = marked
    argv = ["ssd", "run", target, "--outdir", str(tmp_path / "out"), *OK, *extra]
    rc = main(argv)
    one_line_error(capsys, rc, code, words)


def test_no_terminal_and_no_yes(marked, tmp_path, capsys):
    rc = main(["ssd", "run", marked, "--quick", "--no-report", "--outdir", str(tmp_path / "o")])
    one_line_error(capsys, rc, EXIT_NOT_CONFIRMED, "pass --yes")


@pytest.mark.parametrize("argv, code, words", [
    (["ssd"], EXIT_USAGE, "tkperf ssd run DEVICE"),
    (["ssd", "run"], EXIT_USAGE, "required: device"),
    (["show", "/nonexistent/r.xml"], EXIT_RESULT_FILE, "No such file"),
    (["compare", "/nonexistent/a.xml"], EXIT_USAGE, "2 to 8 result files"),
])
def test_bad_commands(argv, code, words, capsys):
    one_line_error(capsys, main(argv), code, words)


def test_one_line_from_the_installed_command_too(tmp_path):
    """Outside pytest's log capture: a refusal must still be a single line
    (no echo of the log record by Python's last-resort logging handler)."""
    import subprocess
    import sys
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-m", "tkperf", "ssd", "run", "/dev/null", "--yes"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=repo))
    assert res.returncode == EXIT_TARGET
    assert res.stderr.splitlines() == ["tkperf: error: /dev/null: is a character device; tkperf tests "
                                       "block devices (for NVMe use the namespace, e.g. /dev/nvme0n1)"]
