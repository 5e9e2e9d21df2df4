"""DIRTH's default stimulus (issue 55 item 7): RND 8KiB 65:35, the PTS 2.0
implementation's default ("DIRTH - OLTP"; Alan-ADATA/SSS-PTS-TEST,
web/t_test.php ``dirth_rw`` 65, ``dirth_bs`` 8192), under every revision;
the header names where a run's stimulus comes from, and an older result
(tkperf's earlier default, RND 4KiB 100% W) still reads and says so.
The dry run's job files are checked in tests/e2e/test_dirth_rounds.py."""
from __future__ import annotations

import copy
import os

import pytest

from tkperf import store
from tkperf.kit import options
from tkperf.kit.registry import get
from tkperf.report.context import ReportContext
from tkperf.testtypes.dirth import SOURCE, stimulus_source
from tkperf.testtypes.dirth.view import dirth_header

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "golden", "inputs", "dirth.xml")


@pytest.mark.parametrize("pts", ["pts-e-2.0", "pts-c-2.0", "pts-e-1.1", "pts-c-1.1"])
def test_the_default_is_rnd_8k_65_35_under_every_revision(pts):
    opts = options.build({"tests": ("dirth",)}, pts=pts)
    (plan,) = get("dirth").plan(opts, 1 << 34)
    assert plan.key == "dirth-8k-65-35"
    assert {(j.rw, j.bs, j.rwmixread) for j in plan.shape.sweep} == {("randrw", 8192, 65)}


def test_the_help_names_the_source():
    flags = {o.flags[0]: o.help for o in get("dirth").options}
    assert "default 8k" in flags["--dirth-bs"] and "'DIRTH - OLTP'" in flags["--dirth-bs"]
    assert "default 65/35, the PTS 2.0 implementation's" in flags["--dirth-mixes"]


def _header(params) -> dict:
    run = store.load(GOLDEN)
    (t,) = run.tests
    t = copy.copy(t)
    t.params = {**t.params, **params}
    h = dirth_header(ReportContext(run), t)
    return dict(h.test)


def test_the_header_names_where_the_stimulus_comes_from():
    new = _header({"block_size": "8k", "mix": "65/35", "stimulus_default": "yes"})["Stimulus"]
    assert new.startswith("RND 8k R/W 65/35 (the PTS 2.0 implementation's default, 'DIRTH - OLTP' "
                          "(Alan-ADATA/SSS-PTS-TEST, web/t_test.php: dirth_rw 65, dirth_bs 8192)): ")
    chosen = _header({"block_size": "4k", "mix": "0/100", "stimulus_default": "no"})["Stimulus"]
    assert chosen.startswith("RND 4k R/W 0/100 (the operator's choice; the PTS 2.0 implementation's default is "
                             "RND 8KiB 65:35, 'DIRTH - OLTP'): ")
    # the recorded result, from before the default changed: RND 4KiB 100% W, tkperf's default then
    old = _header({})["Stimulus"]
    assert old.startswith("RND 4k R/W 0/100 (tkperf's earlier default or the operator's choice; the PTS 2.0 "
                          "implementation's default is RND 8KiB 65:35, 'DIRTH - OLTP'): ")
    assert stimulus_source({"block_size": "8k", "mix": "65/35"}) == SOURCE
