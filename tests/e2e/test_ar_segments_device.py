"""Issue 43 item 3 on a real loop device: ActiveRange segments where this
host can map them (device-mapper and dmsetup), and where it cannot, the
one-line refusal before anything is written.  The device's own bytes say
where a run wrote (tests/lab/archeck.py).  The map itself is also made in
the QEMU guest, whose kernel has device-mapper (tests/vm/test_vm.py)."""
from __future__ import annotations

import json
import os
import stat

import pytest

import archeck
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_TOOL, EXIT_USAGE, ToolError
from tkperf.kit.options import RunOptions
from tkperf.target import armap

pytestmark = needs_fio

SHORT = ["--pts", "pts-c-1.1", "--tests", "lat", "--quick", "--purge", "none", "--wipc-loops", "0",
         "--max-rounds", "1", "--runtime", "1", "--yes", "--quiet", "--no-report"]


def device_mapper() -> str:
    """'' where this host can map segments, else why not."""
    try:
        armap.require(2, load=True)
    except ToolError as exc:
        return str(exc)
    return ""


def test_without_device_mapper_a_segmented_run_is_one_line_and_writes_nothing(loopdev, tmp_path, capsys):
    why = device_mapper()
    if not why:
        pytest.skip("this kernel has device-mapper: test_segments_hold_every_write_of_the_tests runs instead")
    archeck.fill(loopdev, 0xA5)
    before = archeck.digest(loopdev)
    out = tmp_path / "out"
    # the revision's default: 2,048 segments of the 8 MiB test range
    rc = main(["ssd", "run", loopdev, "--test-range", "8m", "--name", "t", "--outdir", str(out), *SHORT])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_TOOL == 5
    assert len(err) == 1, err
    assert "--ar-segments 2,048: this kernel has no device-mapper" in err[0]
    assert "--ar-segments 1 tests the test range as one span" in err[0]
    assert archeck.digest(loopdev) == before  # not a byte written
    assert not out.exists()  # nor a result


def test_a_control_node_without_a_driver_behind_it_is_no_device_mapper(tmp_path, monkeypatch):
    # /dev/mapper/control outlives a kernel without device-mapper (libdevmapper
    # makes the node on first use): a run checked only that the node existed,
    # and its dry run went ahead, and the run stopped at "dmsetup create
    # failed: Command failed.".  A node of a character device no driver holds
    # answers as that one does (ENXIO or ENODEV).
    node = tmp_path / "control"
    os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(242, 77))
    monkeypatch.setattr(armap, "CONTROL", str(node))
    monkeypatch.setattr(armap, "_which", lambda tool: "")  # no modprobe to try
    for load in (True, False):
        with pytest.raises(ToolError) as got:
            armap.require(64, load=load)
        assert str(got.value).startswith(f"--ar-segments 64: this kernel has no device-mapper ({node}: No such ")
    monkeypatch.setattr(armap, "CONTROL", str(tmp_path / "none"))
    with pytest.raises(ToolError, match=r"\(.*/none is missing\)"):
        armap.require(64, load=True)


def test_a_file_target_with_segments_is_a_usage_error_and_nothing_is_made(tmp_path, capsys):
    img = tmp_path / "img"
    rc = main(["ssd", "run", str(img), "--size", "64m", "--test-range", "8m", "--ar-segments", "64",
               "--outdir", str(tmp_path / "out"), *SHORT])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == EXIT_USAGE == 2 and len(err) == 1, err
    assert err[0] == ("tkperf: error: --ar-segments 64 needs a block device on this host (a device-mapper "
                      "map), not a file target; --ar-segments 1 tests the test range as one span at the "
                      "start of the LBA range (a deviation)")
    assert not img.exists() and not (tmp_path / "out").exists()


def _run_on_filled(loopdev, tmp_path, capsys, segments: int, *extra: str):
    """``ssd run`` over 8 MiB in ``segments`` on the device, first filled
    with 0xFF; (its outdir, its stored run)."""
    archeck.fill(loopdev, 0xFF)
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--test-range", "8m", "--ar-segments", str(segments), "--name", "t",
               "--outdir", str(out), *SHORT, *extra])
    assert rc == 0, capsys.readouterr().err
    return out, store.load(str(out / "t.xml"))


def test_one_span_writes_only_the_first_test_range_and_says_so(loopdev, tmp_path, capsys):
    # LAT, and TP, whose sequential sweep sets each job's own size=
    out, run = _run_on_filled(loopdev, tmp_path, capsys, 1, "--tests", "lat,tp", "--tp-bs", "128k")
    assert run.status == "complete" and "ar_segments" not in run.options
    assert sorted(t.type for t in run.tests) == ["lat", "tp"]
    changed = archeck.changed_blocks(loopdev, 0xFF)
    assert changed and max(changed) < 8 << 20, (len(changed), max(changed))  # the first 8 MiB alone
    log = (out / "t.log").read_text()
    assert f"filename={loopdev}" in log and "size=8388608" in log and "/dev/mapper/" not in log
    from tkperf.report import header
    fields = dict(header.setup_fields(run, run.tests[0]))
    assert fields["AR Segments"].startswith("1: one contiguous span")


def test_segments_hold_every_write_of_the_tests(loopdev, tmp_path, capsys):
    why = device_mapper()
    if why:
        pytest.skip(f"no device-mapper here ({why}); the QEMU guest runs this (tests/vm/test_vm.py)")
    out, run = _run_on_filled(loopdev, tmp_path, capsys, 64)
    lay = RunOptions.from_dict(run.options).segment_layout(run.device.size_bytes)
    got = archeck.judge(archeck.changed_blocks(loopdev, 0xFF), list(lay.starts), lay.size)
    assert got["outside_count"] == 0 and got["changed_blocks"] > 0, json.dumps(got)
    assert got["segments_written"] > lay.count // 2, got
    assert not [n for n in armap._maps() if n.startswith(armap.PREFIX)]  # the map is gone
