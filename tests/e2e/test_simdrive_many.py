"""Several emulated SSDs at once (issue 45 item 7): ``tkperf ssd run DEV1
DEV2 DEV3 DEV4`` on four of them, each run's figures its own drive's, and
what each drive costs in memory (docs/simdrive.rst, "Memory")."""
from __future__ import annotations

import json
import os

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.simdrive import control, hostlimit
from tkperf.simdrive.params import table_bytes

MiB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


@needs_fio
def test_four_emulated_ssds_run_at_once_each_its_own(simdrive, tmp_path):
    drives = [simdrive(name=f"many-{os.getpid()}-{i}", capacity="16M") for i in range(4)]
    before = [d.stats() for d in drives]
    out = tmp_path / "out"
    rc = main(["ssd", "run", *[d.path for d in drives], "--tests", "wsat", "--wsat-time", "2", "--wsat-interval", "1",
               "--wsat-capture", "0", "-nj", "1", "-iod", "8", "--purge", "discard", "--outdir", str(out), "--yes",
               "--quiet", "--no-report",
               "--json-summary", str(tmp_path / "summary.json")])
    assert rc in (0, 1), rc  # 1: not PTS-conformant, as every run on an emulated SSD
    targets = json.loads((tmp_path / "summary.json").read_text())["targets"]
    assert [t["device"] for t in targets] == [d.path for d in drives]
    for d, b, target in zip(drives, before, targets):
        name = target["name"]
        run = store.load(target["result"])
        assert run.status == "complete" and run.facts["host_sharing"]["runs"] == 4
        (t,) = run.tests
        written = int(t.series["intervals"].column("io_bytes").sum())
        after = d.stats()
        # the run's bytes went to its own drive, all of them, and it recorded that drive's model
        assert after["host_write_bytes"] - b["host_write_bytes"] == written > 0
        assert run.facts["simdrive"]["physical_blocks"] == after["physical_blocks"]
        assert run.facts[hostlimit.FACT]["replies"] >= t.series["intervals"].column("ios").sum()
        # memory: the server's resident set is Python, the tables and the data written (a sparse memory file)
        with open(os.path.join(control.find(d.path), "pid"), encoding="ascii") as fh:
            rss = rss_bytes(int(fh.read()))
        tables = table_bytes(16 * MiB)
        print(f"many: {name} server RSS {rss / MiB:.1f} MiB, tables {tables / 1024:.0f} KiB, "
              f"mapped {after['mapped_bytes'] / MiB:.1f} MiB, late {run.facts[hostlimit.FACT]['late_share']:.2%}")
        assert rss <= 64 * MiB + tables + after["mapped_bytes"]
