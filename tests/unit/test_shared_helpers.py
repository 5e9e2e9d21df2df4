"""The helpers that replaced copies (issue 47, "less said twice"): each one
does what every copy it replaced did."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tkperf import programs
from tkperf.errors import ToolError, UsageError
from tkperf.fio.jobs import FioJob
from tkperf.model import pts as revisions
from tkperf.pts import continuing, enterprise_only, format_auto_duration, parse_auto_duration
from tkperf.rwsw.model import Capture, Step, Stream, coverage

MiB = 1024 * 1024


def test_a_running_process_has_a_start_time_and_a_reaped_one_none() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        started = programs.start_ticks(child.pid)
        assert isinstance(started, int) and started > 0
        assert programs.start_ticks(child.pid) == started  # the same process, the same start
    finally:
        child.communicate(b"")
    assert programs.start_ticks(child.pid) is None


def test_a_failed_tool_is_told_by_its_reason_not_by_a_closing_command_failed() -> None:
    # dmsetup ends every failure with "Command failed." and says why on the line before
    script = ("import sys; sys.stderr.write('device-mapper: reload ioctl failed: Device or resource busy"
              "\\nCommand failed.\\n'); sys.exit(1)")
    with pytest.raises(ToolError) as got:
        programs.run([sys.executable, "-c", script], what="dmsetup create")
    assert str(got.value) == "dmsetup create failed: device-mapper: reload ioctl failed: Device or resource busy"
    alone = "import sys; sys.stderr.write('Command failed.\\n'); sys.exit(1)"
    with pytest.raises(ToolError, match=r"^dmsetup create failed: Command failed\.$"):
        programs.run([sys.executable, "-c", alone], what="dmsetup create")


@pytest.mark.parametrize("text, seconds", [("auto", 0), (" AUTO ", 0), ("5s", 5), ("2m", 120), ("90", 90)])
def test_auto_or_a_duration_reads_back_what_it_writes(text: str, seconds: int) -> None:
    assert parse_auto_duration(text, "--x") == seconds
    assert parse_auto_duration(format_auto_duration(seconds), "--x") == seconds
    assert format_auto_duration(0) == "auto"


def test_auto_or_a_duration_refuses_other_words_in_one_line() -> None:
    with pytest.raises(UsageError) as exc:
        parse_auto_duration("sometimes", "--hir-return")
    assert "--hir-return" in str(exc.value) and "\n" not in str(exc.value)


def test_only_pts_c_1_1_makes_a_pts_e_test_a_deviation() -> None:
    assert enterprise_only("XSR", revisions.get("pts-c-1.1")) == ["XSR is a PTS-E test, not part of PTS-C 1.1"]
    for other in ("pts-e-1.1", "pts-e-2.0", "pts-c-2.0"):
        assert enterprise_only("XSR", revisions.get(other)) == []


def test_a_sequential_job_continues_where_the_ones_before_stopped() -> None:
    job = FioJob(name="seq", rw="write", bs=MiB, runtime=60, iodepth=32)
    first = continuing(job, 10 * MiB, [])
    assert (first.offset, first.size) == (0, 10 * MiB)
    after = continuing(job, 10 * MiB, [3 * MiB, 2 * MiB])
    assert (after.offset, after.size) == (5 * MiB, 5 * MiB)
    with pytest.raises(ValueError, match=r"smaller than 1024k"):
        continuing(job, MiB - 1, [])


def test_a_capture_and_its_steps_give_the_same_coverage_of_the_same_streams() -> None:
    streams = (Stream("random", "write", 4096, 60, 0.6, 0.2), Stream("random", "read", 8192, 30, 0.3, 0.3),
               Stream("sequential", "read", 1 << 20, 10, 0.1, 0.5))
    step = Step(0, 0.0, 1.0, streams, 1.0, 100.0, 1.0)
    cap = Capture("c", "/dev/x", 1 << 30, "import", "2026-01-01T00:00:00Z", 1.0, 1.0, (step,), streams,
                  1.0, 100.0, 1.0, None)
    want = coverage(streams)
    assert want == pytest.approx((90.0, 50.0))  # the first two streams make up 80% of the I/Os
    for whole in (step, cap):
        assert (whole.coverage_ios_pct, whole.coverage_bytes_pct) == want
