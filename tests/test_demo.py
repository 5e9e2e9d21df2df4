"""The README's first command: `tkperf demo` makes, tests and removes its own target."""
import glob
import subprocess

from conftest import needs_fio
from tkperf.model import store
from tkperf.cli import main


def attached_loops():
    out = subprocess.run(["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"],
                         capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if "tkperf-demo-" in line}


@needs_fio
def test_demo_runs_all_four_tests_and_cleans_up(tmp_path, capsys):
    before = attached_loops()
    out = tmp_path / "demo"
    assert main(["demo", "--outdir", str(out), "--quiet"]) == 0
    run = store.load(str(out / "demo.xml"))
    assert run.quick and run.status == "complete"
    assert [t.name for t in run.tests] == ["iops", "tp", "lat", "wsat"]
    assert all(t.done for t in run.tests)  # rounds, or a series' rows (WSAT)
    assert (out / "demo.log").stat().st_size > 0
    text = capsys.readouterr().out
    assert "NOT a PTS-conformant" in text and "WSAT" in text
    assert attached_loops() == before
    assert not glob.glob("/tmp/tkperf-demo-*/*.img")
