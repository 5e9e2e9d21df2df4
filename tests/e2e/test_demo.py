"""The README's first command: `tkperf demo` makes, tests and removes its own target."""
import glob
import subprocess
from pathlib import Path

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main

ROOT = Path(__file__).resolve().parents[2]


def attached_loops():
    out = subprocess.run(["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
                         capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if "tkperf-demo-" in line}


@needs_fio
def test_demo_runs_all_four_tests_and_cleans_up(tmp_path, capsys):
    before = attached_loops()
    out = tmp_path / "demo"
    # the README's line run again (after an upgrade): an earlier demo's result is there
    out.mkdir()
    earlier = (ROOT / "examples" / "example-ssd.xml").read_bytes()
    (out / "demo.xml").write_bytes(earlier)
    assert main(["demo", "--outdir", str(out), "--quiet"]) == 0
    assert (out / "demo.xml").read_bytes() == earlier  # kept, not replaced
    assert "holds an earlier demo, kept; this one is demo-2" in capsys.readouterr().err
    run = store.load(str(out / "demo-2.xml"))
    assert run.quick and run.status == "complete"
    assert [t.name for t in run.tests] == ["iops", "tp", "lat", "wsat"]
    assert all(t.done for t in run.tests)  # rounds, or a series' rows (WSAT)
    assert (out / "demo-2.log").stat().st_size > 0
    assert attached_loops() == before
    assert not glob.glob("/tmp/tkperf-demo-*/*.img")
