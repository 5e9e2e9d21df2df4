"""Issue 34 items 1 and 4 on the emulated SSD (``tkperf simdrive``), whose
write cliff comes after one capacity (plus its spare blocks) written:

* a WSAT stopped by steady state judged on points 1 s apart, not the
  PTS's 30 min, is named as a deviation by the result, not just by the
  dry run;
* HIR with ``--hir-wipc``: the WIPC's sequential fill does not count
  toward the fill floor (two capacities since issue 43), so no steady
  state is declared before the test's own random writes reach it (before,
  the WIPC alone met the floor before round 1)."""
from __future__ import annotations

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.kit.longrounds import written_by_the_test
from tkperf.kit.shapes import UNHELD
from tkperf.model.steadystate import evaluate, spaced_steady
from tkperf.verdict import conformance

MiB = 1024 * 1024
CAPACITY = 32 * MiB
HIR_CAPACITY = 48 * MiB


@needs_fio
def test_wsat_steady_stop_on_1_s_points_is_named_by_the_result(simdrive, tmp_path):
    drive = simdrive(capacity="32M")
    out = tmp_path / "out"
    rc = main(["ssd", "run", drive.path, "--tests", "wsat", "--name", "w", "--outdir", str(out), "--yes", "--quiet",
               "--no-report", "--write-cache", "keep", "--wsat-interval", "1", "--wsat-time", "300", "--wsat-tgbw",
               "40x",
               "--wsat-steady", "--wsat-steady-spacing", "1s", "--wsat-capture", "0", "--numjobs", "2",
               "--iodepth", "16"])
    assert rc in (0, 1), rc
    run = store.load(str(out / "w.xml"))
    (t,) = run.tests
    s = t.series[next(iter(t.series))]
    written = float(s.column("io_bytes").sum())
    assert written >= 2 * CAPACITY  # the stop rule is checked only after two fills (issue 43)
    said = conformance.of_run(run).deviations
    # The stop is called steady only if the stored figures (fio's last report merged into the deciding
    # interval) still pass 20/10 (issue 43 item 1); with 1 s intervals that report often undoes it.  Either
    # way the result names the early stop.
    stored = spaced_steady(s.column("iops"), 1, 5)
    assert t.steady == stored
    if stored.steady:
        assert t.stop_reason.startswith("steady state"), t.stop_reason
        assert ("wsat: stopped at steady state judged on points 1 s apart, not the PTS's 5 points 30 min apart "
                "(an early stop can hide a later write cliff)") in said
    else:
        assert t.stop_reason.startswith(UNHELD), t.stop_reason
        assert ("wsat: stopped before 24 h or 4x the capacity written for a steady state that its stored figures "
                "do not hold (fio's final report, merged into the last interval, changed it)") in said
    # the drive did pass its cliff: steady means after it, which the 1 s points cannot tell from a plateau
    assert drive.stats()["first_fg_gc_host_write_bytes"] is not None


@needs_fio
def test_hir_with_wipc_is_not_steady_before_its_own_writes_fill_the_drive(simdrive, tmp_path):
    # 48 MiB: 1 s rounds of about 1,000 IOPS need a dozen rounds to write a fill, so 20/10 has windows to pass
    drive = simdrive(capacity="48M")
    out = tmp_path / "out"
    rc = main(["ssd", "run", drive.path, "--tests", "hir", "--name", "h", "--outdir", str(out), "--yes", "--quiet",
               "--no-report", "--quick", "--write-cache", "keep", "--hir-wipc", "--wipc-loops", "1",
               "--hir-round", "1", "--max-rounds", "25", "--hir-qd", "16", "--hir-idle", "1", "--hir-cycles", "1",
               "--hir-return", "1"])
    assert rc in (0, 1), rc
    run = store.load(str(out / "h.xml"))
    (t,) = run.tests
    assert t.wipc is not None and t.wipc.bytes_written >= HIR_CAPACITY  # the WIPC alone is a fill
    steady = t.steady
    assert steady is not None and steady.steady, [r.index for r in t.rounds]
    rounds = [r for r in t.rounds if r.index <= steady.last_round]
    own = [sum(w.write.io_bytes for w in r.workloads) for r in rounds]
    # steady only once the test's own random writes reached two capacities (the WIPC's fill not counted) ...
    assert sum(own) >= 2 * HIR_CAPACITY, own
    assert written_by_the_test(t) == sum(sum(w.write.io_bytes for w in r.workloads) for r in t.rounds)
    # ... while 20/10 alone held on an earlier window, ending before the floor, when the WIPC had long
    # filled the drive: the floor counted as before (WIPC included) would have ended the rounds there
    values = [(r.index, r.workloads[0].write.iops) for r in rounds]
    earlier = [k for k in range(5, len(values)) if evaluate([i for i, _ in values[k - 5:k]],
                                                            [v for _, v in values[k - 5:k]], 5).steady
               and sum(own[:k]) < 2 * HIR_CAPACITY]
    assert earlier, [round(v) for _, v in values]
