"""FOB (fresh out of box) is the state after the purge and before any
preconditioning (pts-notes.md, "FOB"; issue 19).  Round 1 of a test that ran
a WIPC first is called "round 1, after WIPC" in ``show``, ``show --json``
and the report, never FOB; WSAT's first interval stays FOB."""
from __future__ import annotations

import json

from test_conformance import _wsat_result, result
from tkperf import store
from tkperf.cli import main
from tkperf.model.results import WipcRecord
from tkperf.render import blocks as b
from tkperf.report import steady, summary

WIPC = WipcRecord(loops=2, bs=131072, iodepth=32, numjobs=1, bytes_written=800 * 10 ** 9, seconds=4000.0,
                  bw_bytes=2e8)


def _iops_after_wipc():
    run = result()
    run.tests[0].wipc = WIPC
    return run


def _texts(blocks) -> str:
    out = []
    for blk in blocks:
        if isinstance(blk, b.Heading):
            out.append(blk.text)
        elif isinstance(blk, b.Table):
            out += [blk.title, *blk.headers]
    return " | ".join(out)


def test_round_one_after_wipc_is_not_fob(tmp_path, capsys):
    run = _iops_after_wipc()
    (t,) = run.tests
    assert summary.fob_figures(t) == []
    first = {f.key: f.value for f in summary.round1_figures(t)}
    assert first == {"rnd_4k_write_iops": 100.0}
    text = "\n".join(summary.lines(run))
    assert "FOB (" not in text and "round 1, after WIPC (not FOB): RND 4k W 100" in text
    path = tmp_path / "r.xml"
    store.save(run, str(path))
    assert main(["show", str(path), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["tests"]
    assert entry["fob"] == {} and entry["round1_after_wipc"] == {"rnd_4k_write_iops": 100.0}
    shown = _texts(steady.fob_blocks(t, 2))
    assert "Fresh out of box" not in shown and "FOB" not in shown
    assert "Round 1 (after WIPC) and steady state" in shown and "Round 1, after WIPC" in shown


def test_wsat_first_interval_is_fob(capsys):
    run = _wsat_result("time limit")
    (t,) = run.tests
    assert {f.key: f.value for f in summary.fob_figures(t)} == {"first_interval_iops": 10000.0}
    assert summary.round1_figures(t) == []
    assert "FOB (first interval after the purge, before any preconditioning)" in "\n".join(summary.lines(run))
    shown = _texts(steady.fob_blocks(t, 2))
    assert "Fresh out of box and steady state" in shown


def test_a_wipc_before_a_stream_makes_its_first_interval_not_fob():
    run = _wsat_result("time limit")
    run.tests[0].wipc = WIPC
    assert summary.fob_figures(run.tests[0]) == []
