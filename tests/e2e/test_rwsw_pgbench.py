"""A real application captured: PostgreSQL under pgbench on an ext4 file
system on a loop device (tests/lab/pgbench_lab.py), recorded by `tkperf capture`."""
import pytest

from pgbench_lab import PgbenchLab, why_not
from tkperf.cli import main
from tkperf.rwsw import model

pytestmark = pytest.mark.skipif(bool(why_not()), reason=why_not() or "runs")

KiB = 1024


def test_a_pgbench_capture_has_the_write_streams_of_a_database(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    with PgbenchLab(str(tmp_path)) as lab:
        load = lab.start_load(9)
        try:
            rc = main(["capture", lab.device, "--duration", "6", "--name", "pgbench", "--outdir", str(out),
                       "--step", "2s", "-q"])
        finally:
            stdout, _ = load.communicate(timeout=120)
    assert rc == 0, capsys.readouterr().err
    assert lab.tps(stdout) > 0
    c = model.load(str(out / "pgbench.xml"))
    assert len(c.steps) == 3 and all(st.iops > 0 for st in c.steps)
    writes = [s for s in c.streams if s.rw == "write"]
    ios = sum(s.ios for s in c.streams)
    assert ios > 100 and sum(s.ios for s in writes) / ios > 0.8  # the data is cached: a database writes
    # PostgreSQL writes its WAL in 8 KiB pages: most writes are whole pages, and 8 KiB itself is a stream
    pages = sum(s.ios for s in writes if s.bs % (8 * KiB) == 0)
    assert pages / sum(s.ios for s in writes) > 0.8, [s.key for s in writes]
    eight = [s for s in writes if s.bs == 8 * KiB]
    assert eight and sum(s.share for s in eight) >= 0.05, [(s.key, s.share) for s in c.streams]
    assert c.qd > 0 and (out / "pgbench.iolog").stat().st_size > 0
