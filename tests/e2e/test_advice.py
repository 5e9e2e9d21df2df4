"""Mistakes answered with what to do (issue 22, item 9)."""
import subprocess
import sys

import pytest

from tkperf.cli import advice, common, main, run
from tkperf.errors import EXIT_NOT_CONFIRMED, EXIT_TARGET, EXIT_USAGE, NotConfirmedError
from tkperf.model.results import DeviceInfo


def _run(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr().err


def test_tkperf2_device_first_suggests_ssd_run(capsys):
    rc, err = _run(["ssd", "/dev/sdx", "-nj", "2"], capsys)
    assert rc == EXIT_USAGE
    assert err.strip() == "tkperf: error: tkperf ssd needs an action: tkperf ssd run /dev/sdx -nj 2"


def test_tkperf2_test_name_becomes_name(capsys):
    rc, err = _run(["hdd", "intel320", "/dev/sdb", "-iod", "16"], capsys)
    assert rc == EXIT_USAGE
    assert "tkperf hdd run /dev/sdb --name intel320 -iod 16" in err


def test_device_without_dev_suggests_full_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no file 'null' here
    rc, err = _run(["ssd", "run", "null", "--yes", "--no-report"], capsys)
    assert rc == EXIT_TARGET  # as for a device that does not exist at all: one exit code
    assert "null: no such file here; the device is /dev/null (give the full path)" in err
    assert len(err.strip().splitlines()) == 1


def test_a_missing_device_has_one_exit_code_however_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    short, _ = _run(["ssd", "run", "null", "--dry-run"], capsys)  # /dev/null exists: named without /dev/
    missing, _ = _run(["ssd", "run", "nvme-not-here0n1", "--dry-run"], capsys)
    full, _ = _run(["ssd", "run", "/dev/nvme-not-here0n1", "--dry-run"], capsys)
    assert short == missing == full == EXIT_TARGET


def test_a_file_of_that_name_is_a_file_target_still(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run.full_path("null", 64 * 2**20)  # with --size: a file target to create
    (tmp_path / "null").write_bytes(b"")
    run.full_path("null", None)  # a file is here: its own error later, not this one


def test_not_root_is_told_to_use_sudo(loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(run, "can_write", lambda path: False)
    out = tmp_path / "out"
    rc, err = _run(["ssd", "run", loopdev, "--quick", "--yes", "--no-report", "--outdir", str(out)], capsys)
    assert rc == EXIT_USAGE
    assert "run as root or with sudo" in err and f"sudo tkperf ssd run {loopdev}" in err
    assert not out.exists()


def test_not_root_is_told_before_several_runs_start(loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(run, "can_write", lambda path: False)
    out = tmp_path / "out"
    rc, err = _run(["ssd", "run", loopdev, loopdev, "--quick", "--yes", "--no-report", "--outdir", str(out)],
                   capsys)
    assert rc == EXIT_USAGE and len(err.strip().splitlines()) == 1
    assert f"sudo tkperf ssd run {loopdev} {loopdev} ..." in err
    assert not out.exists()


def test_dry_run_needs_no_root(loopdev, monkeypatch, capsys):
    monkeypatch.setattr(run, "can_write", lambda path: False)
    rc, _ = _run(["ssd", "run", loopdev, "--quick", "--dry-run"], capsys)
    assert rc == 0


def _swap_image(tmp_path):
    img = tmp_path / "disk.img"
    img.write_bytes(b"\0" * (1 << 20))
    subprocess.run(["mkswap", str(img)], check=True, capture_output=True)
    return str(img)


def test_filesystems_found_by_probe(tmp_path):
    assert advice.filesystems(_swap_image(tmp_path)) == ["swap"]
    blank = tmp_path / "blank.img"
    blank.write_bytes(b"\0" * (1 << 20))
    assert advice.filesystems(str(blank)) == []


def test_prompt_names_the_file_system(tmp_path, monkeypatch):
    img = _swap_image(tmp_path)
    dev = DeviceInfo(path=img, resolved=img, kind="block", size_bytes=1 << 20, model="m")
    prompts = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda text: prompts.append(text) or "no")
    with pytest.raises(NotConfirmedError) as err:
        common.confirm(dev, False)
    assert err.value.exit_code == EXIT_NOT_CONFIRMED
    assert "will be destroyed. It holds: swap. Type 'yes'" in prompts[0]


def test_resume_command_is_exact():
    assert advice.resume_command("out dir/k.xml", True) == "tkperf resume 'out dir/k.xml' --yes"
    assert advice.resume_command("k/k.xml", False) == "tkperf resume k/k.xml"
