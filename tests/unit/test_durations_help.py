"""Every duration option takes the same forms; ``ssd run --help`` and
``hdd run --help`` show their own tests' options, defaults and examples
(issue 22, item 8)."""
import pytest

from tkperf.cli import main
from tkperf.durations import parse
from tkperf.errors import EXIT_USAGE, UsageError


@pytest.mark.parametrize("text, seconds", [
    ("60", 60), ("90s", 90), ("1m", 60), ("30min", 1800), ("1m30s", 90), ("2m 30s", 150),
    ("1.5h", 5400), ("1h30m", 5400), ("2d", 172800), ("8 hours", 28800), ("1.4", 1)])
def test_forms(text, seconds):
    assert parse(text, "--runtime") == seconds


@pytest.mark.parametrize("text, said", [
    ("0", "must be longer than 0"), ("0.2s", "must be at least 1 second"),
    ("-5", "is not a duration"), ("long", "is not a duration"), ("5y", "is not a duration"),
    ("30s1m", "is not a duration"), ("1m30", "is not a duration"), ("", "is not a duration")])
def test_bad_forms(text, said):
    with pytest.raises(UsageError, match=said):
        parse(text, "--runtime")


def _dry(tmp_path, capsys, *extra):
    rc = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "256m", "--dry-run", "--jobs", *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_runtime_in_minutes_reaches_fio(tmp_path, capsys):
    rc, out, _ = _dry(tmp_path, capsys, "--tests", "iops", "--runtime", "1m30s")
    assert rc == 0 and "runtime=90" in out and "runtime=60" not in out


def test_test_type_duration_takes_the_same_forms(tmp_path, capsys):
    rc, out, _ = _dry(tmp_path, capsys, "--tests", "hdd-iops", "--hdd-iops-time", "1m30s")
    assert rc == 0 and "runtime=90" in out


def test_bad_runtime_is_one_line(tmp_path, capsys):
    rc, _, err = _dry(tmp_path, capsys, "--runtime", "a while")
    assert rc == EXIT_USAGE
    assert err.strip() == ("tkperf: error: --runtime 'a while' is not a duration like "
                           "60, 90s, 1m, 1m30s, 1.5h or 2d")


def _help(capsys, profile):
    """The whole help (the short --help has the common options only)."""
    assert main([profile, "run", "--help-all"]) == 0
    return capsys.readouterr().out


def test_ssd_help_shows_ssd_tests_only(capsys):
    text = _help(capsys, "ssd")
    assert "--bs SIZES" in text and "--xsr-seq1" in text
    assert "--hdd-iops-qd" not in text and "--zones N" not in text
    assert "TC (default: the revision's, 4 enterprise, 2 client)" in " ".join(text.split())
    assert "QD per thread (default: the revision's, 32 enterprise, 16 client)" in " ".join(text.split())
    tail = text[text.index("examples:"):]
    assert "tkperf ssd run /dev/sdb --tests iops,lat --runtime 1m" in tail
    assert "'tkperf hdd run --help'" in tail
    assert "--bs SIZES" not in tail  # the examples come last


def test_hdd_help_shows_hdd_tests_only(capsys):
    text = _help(capsys, "hdd")
    assert "--hdd-iops-qd" in text and "--zones N" in text
    assert "--bs SIZES" not in text and "--xsr-seq1" not in text
    assert "tkperf hdd run /dev/sdb --tests hdd-iops,hdd-lat --runtime 1m" in text
