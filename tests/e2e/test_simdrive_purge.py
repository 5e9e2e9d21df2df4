"""Every purge tkperf can apply to an emulated SSD returns its model to fresh,
and the run records that it did (issue 33); ``--purge none`` leaves the
drive as it was and says so.  How the model's counters are read around the
purge: :mod:`simtruth`.

A purge on this drive is a whole-range trim (``blkdiscard``: FALLOCATE
punch-hole at the FUSE server) or a zeroing (``blkdiscard -z``: zero-range);
the model unmaps every page, erases every block and counts a purge when the
drive was not fresh before.  The ATA, NVMe and SCSI methods are refused for
a loop device (they need a drive that speaks them).
"""
from __future__ import annotations

from conftest import needs_fio
from simtruth import Counters, Watch, run_tkperf, unique_name
from tkperf.cli import main

pytestmark = needs_fio

#: (--purge or --purge-cmd argv, the method the record must name, whether it purges)
METHODS = (
    (["--purge", "none"], "none", False),
    (["--purge", "auto"], "discard", True),
    (["--purge", "discard"], "discard", True),
    (["--purge-cmd", "blkdiscard --force {device}"], "cmd", True),
    (["--purge-cmd", "blkdiscard --force --zeroout {device}"], "cmd", True),
)


def test_every_purge_returns_the_model_to_fresh(simdrive, tmp_path, monkeypatch):
    drive = simdrive(name=unique_name(), capacity="64M", op=7)
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    again = 0  # runs the host limited, run once more after their purge (simtruth.run_tkperf)
    for i, (argv, method, purges) in enumerate(METHODS):
        # A second of RND 4KiB writes after each purge: the next one finds the drive written.
        run = run_tkperf(drive, tmp_path, f"p{i}", "--tests", "wsat", "--wsat-time", "1", "--wsat-interval", "1",
                         "--wsat-capture", "0", "-nj", "1", "-iod", "8", *argv)
        (t,) = run.tests
        again += purges and run.name.endswith("-again")
        (mark,) = watch.marks[-2:-1]
        assert mark.kind == "purge" and watch.marks[-1].kind == "stream"
        record = t.purge
        assert record is not None and record.method == method and not record.pts_purge
        before, after = mark.before, mark.after
        if i:
            assert not before["fresh"] and before["mapped_bytes"] > 0, "the writes after the last purge"
        if not purges:
            assert after["mapped_bytes"] == before["mapped_bytes"] and mark.delta("purges") == 0
            assert after["host_trim_bytes"] == before["host_trim_bytes"]
            assert record.verification == "" and "no purge" in record.note
            continue
        # The model is fresh: nothing mapped, every block free, a purge counted.
        assert after["fresh"] and after["mapped_bytes"] == 0
        assert after["free_blocks"] == after["physical_blocks"]
        assert mark.delta("purges") == 1, argv
        assert mark.delta("host_write_bytes") == 0  # a trim, not a write of zeros
        # ... and the run says what it did: a discard it checked by reading
        # zeros back, a vendor command it cannot judge (and says so).
        # tkperf asked the model too, and recorded its answer.
        assert "blkdiscard" in record.command
        assert f"emulated SSD's model is fresh (0 bytes mapped, {after['physical_blocks']} of " \
               f"{after['physical_blocks']} blocks erased, purges {after['purges']})" in record.verification
        if method == "cmd":
            assert "not checked: cmd does not promise" in record.verification and "cannot tell" in record.note
        else:
            assert "all zeros" in record.verification, record.verification
        # The test after it started from FOB: its first interval is the fresh pace.
        assert watch.marks[-1].before["fresh"]
    assert c()["purges"] == len([m for m in METHODS if m[2]]) + again


def test_a_drive_purge_the_emulated_ssd_cannot_take_is_refused(simdrive, tmp_path, capsys):
    drive = simdrive(name=unique_name(), capacity="64M")
    c = Counters(drive)
    for method in ("nvme", "ata", "scsi"):
        before = c()
        rc = main(["ssd", "run", drive.path, "--name", method, "--outdir", str(tmp_path), "--tests", "wsat",
                   "--wsat-time", "1", "--wsat-capture", "0", "--purge", method, "--yes", "--quiet", "--no-report"])
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("tkperf: error:")]
        assert rc in (4, 5) and "Traceback" not in err, err
        assert len(errors) == 1 and "purge" in errors[0].lower(), err
        after = c()
        assert after["host_write_bytes"] == before["host_write_bytes"] and after["purges"] == before["purges"]
