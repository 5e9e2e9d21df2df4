"""A day-long capture (issue 57 item 7): the disk it needs estimated and
checked before recording, and imports of any size (no 4 GiB limit: the
import streams, reading at most a line of 4 KiB at a time)."""
from __future__ import annotations

import io
import os

import pytest

from tkperf.cli import main
from tkperf.errors import OutputError, UsageError
from tkperf.rwsw import daylong, model

DAY = 24 * 3600.0


def test_the_estimate_is_the_iolog_and_the_raw_events_the_analysis_leaves_on_disk():
    # 20,000 I/Os a second, which the analysis on a host with 2 cores idle keeps up with (0.11 of a core):
    # the iolog, and a few parts of raw events
    need = daylong.estimate(20_000, DAY, 10 ** 11, "expected", idle_cores=2.0, live=True)
    raw = daylong.RAW_PARTS * daylong.PART_BYTES
    assert need.keeps_up and need.need == int((20_000 * DAY * daylong.IOLOG_BYTES_PER_IO + raw) * daylong.SLACK)
    assert need.fits and need.need < 16 * 10 ** 9  # a day at 20,000 I/Os a second: some 16 GB (320 GB after)
    line = need.line("/srv")
    assert line.startswith("disk: a 24.0 h capture at about 20,000 I/Os a second (--expect-iops) needs about ")
    assert "in /srv" in line and "100.0 GB free" in line
    assert (f"raw events analysed while recording on idle CPU (2.0 cores idle), {daylong.size(raw)} of them at most"
            in line)
    # a rate the analysis cannot keep up with on the idle CPU there is, or idle CPU not known: every raw
    # event may wait until the end
    per_io = daylong.RAW_BYTES_PER_IO + daylong.IOLOG_BYTES_PER_IO
    for iops, idle in ((200_000, 2.0), (20_000, 0.2), (20_000, None)):
        slow = daylong.estimate(iops, 3600, 10 ** 11, "counters", idle, live=True)
        assert not slow.keeps_up and slow.need == int(iops * 3600 * per_io * daylong.SLACK)
        assert "which the analysis while recording on idle CPU" in slow.line("/srv")
    short = daylong.estimate(1_000, 10, 10 ** 11, "counters", 2.0, live=True)  # fewer raw events than parts hold
    assert short.keeps_up and short.need == int(1_000 * 10 * per_io * daylong.SLACK)
    # analysed after the recording (the default where it fits): every raw event waits for it
    after = daylong.estimate(20_000, DAY, 10 ** 11, "expected", idle_cores=2.0)
    assert after.need == int(20_000 * DAY * per_io * daylong.SLACK) and not after.fits
    assert "160 of raw events until their analysis after the recording" in after.line("/srv")


@pytest.mark.parametrize("analysis, free, live, fits", [
    ("auto", 10 ** 12, False, True),   # a day's raw events fit: analysed after (the application loses no CPU)
    ("auto", 10 ** 11, True, True),    # they would not: analysed while recording, which fits
    ("auto", 10 ** 9, False, False),   # neither fits: refused, as analysed after
    ("after", 10 ** 11, False, False),
    ("during", 10 ** 12, True, True),
])
def test_auto_analyses_while_recording_only_when_the_raw_events_would_not_fit(monkeypatch, tmp_path, analysis,
                                                                              free, live, fits):
    monkeypatch.setattr(daylong, "free_bytes", lambda outdir: free)
    monkeypatch.setattr(daylong, "_cpu_jiffies", iter([(0, 100), (100, 200)]).__next__)  # every CPU idle
    need = daylong.check_disk(["/dev/null"], DAY, str(tmp_path), expect_iops=20_000, force=True, look=0.01,
                              analysis=analysis)
    assert (need.live, need.fits, need.chosen) == (live, fits, live and analysis == "auto")
    assert ("--analysis auto: during the recording" in need.line("/srv")) == need.chosen


def test_the_idle_cores_are_read_from_proc_stat():
    before = daylong._cpu_jiffies()
    assert before is not None and before[1] >= before[0] >= 0
    # 300 of 1,000 jiffies idle or waiting, over every CPU
    assert daylong.idle_cores((100, 1000), (400, 2000)) == pytest.approx(0.3 * (os.cpu_count() or 1))
    assert daylong.idle_cores(None, before) is None and daylong.idle_cores(before, before) is None


def test_a_capture_that_would_not_fit_is_refused_in_one_line_unless_forced(tmp_path, monkeypatch):
    monkeypatch.setattr(daylong, "free_bytes", lambda outdir: 10 * 10 ** 9)
    with pytest.raises(OutputError) as err:
        daylong.check_disk(["/dev/null"], DAY, str(tmp_path), expect_iops=20_000)
    text = str(err.value)
    assert "\n" not in text and "10.0 GB free" in text and "24.0 h capture at about 20,000 I/Os a second" in text
    assert "--force" in text and "--expect-iops" in text
    assert not daylong.check_disk(["/dev/null"], DAY, str(tmp_path), expect_iops=20_000, force=True).fits
    assert daylong.check_disk(["/dev/null"], 60, str(tmp_path), expect_iops=20_000).fits  # a minute fits


def test_the_rate_is_read_from_the_devices_counters(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    # reads, writes, discards and flushes completed: fields 1, 5, 12 and 16 of the stat file
    fields = ["0"] * 17
    stat.write_text(" ".join(fields))
    monkeypatch.setattr(daylong, "stat_file", lambda device: str(stat))

    def later(seconds):
        f = ["0"] * 17
        f[0], f[4], f[11], f[15], f[2] = "600", "300", "50", "50", "999999"  # field 3 is sectors, not I/Os
        stat.write_text(" ".join(f))

    iops = daylong.device_iops(["/dev/x"], 0.5, sleep=later)
    assert iops is not None and 0 < iops <= 1000 / 1e-3
    # the counters of two devices add up; a device without counters gives no rate
    monkeypatch.setattr(daylong, "stat_file", lambda device: str(tmp_path / "none"))
    assert daylong.device_iops(["/dev/x"], 0.0) is None
    assert daylong.check_disk(["/dev/x"], DAY, str(tmp_path), look=0.0) is None


@pytest.mark.parametrize("text", ["0", "-5", "lots", "1e9"])
def test_expect_iops_out_of_range_is_a_usage_error(text):
    with pytest.raises(UsageError, match="--expect-iops"):
        daylong.parse_iops(text)


def test_expect_iops_reads_thousands_separators():
    assert daylong.parse_iops("20,000") == 20_000.0 and daylong.parse_iops(None) is None


def test_a_line_longer_than_the_limit_is_skipped_without_being_held():
    data = b"first\n" + b"\0" * (5 * daylong.MAX_LINE + 7) + b"\nsecond\n" + b"x" * 10
    got = list(daylong.lines(io.BytesIO(data)))
    assert got == [b"first\n", b"second\n", b"x" * 10]
    exact = b"y" * (daylong.MAX_LINE - 1) + b"\n"
    assert list(daylong.lines(io.BytesIO(exact))) == [exact]


BLK = ("  7,0    0        1     0.000100000  4711  D   R 2048 + 8 [fio]\n"
       "  7,0    0        2     0.000300000     0  C   R 2048 + 8 [0]\n")


def test_an_import_streams_past_a_giant_line_and_keeps_every_io(tmp_path):
    # what was refused before as larger than the import limit: the file's size no longer matters, a line of
    # 1 MiB (no blkparse line) is skipped a piece at a time
    src = tmp_path / "t.txt"
    tail = BLK.replace("0.000100000", "0.500000000").replace("0.000300000", "0.500200000").replace("2048", "4096")
    src.write_bytes(BLK.encode() + b"\0" * (1 << 20) + b"\n" + tail.encode())
    assert main(["capture", "--import", str(src), "--name", "t", "--outdir", str(tmp_path), "--step", "1s",
                 "-q"]) == 0
    c = model.load(str(tmp_path / "t.xml"))
    assert sum(s.ios for s in c.streams) == 2 and c.seen.read.ios == 2
    assert not hasattr(__import__("tkperf.rwsw.capture", fromlist=["x"]), "MAX_IMPORT_BYTES")
    assert os.path.getsize(tmp_path / "t.iolog") < 200
