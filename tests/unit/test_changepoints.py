"""tkperf.history.changepoints: the CUSUM statistic, the permutation test,
binary segmentation, and the segments between change points."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tkperf.history import changepoints as cp


def _rng(seed: int = 1) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_the_statistic_worked_by_hand():
    """x = [1, 2, 3, 10], n 4: k 1: sqrt(3/4) |1 - 5|, k 2: 1 x |1.5 - 6.5|, k 3: sqrt(3/4) |2 - 10|."""
    x = np.array([1.0, 2.0, 3.0, 10.0])
    cs = np.cumsum(x)
    got = cp._statistic(cs, 4, 1, 4)
    assert got == pytest.approx([math.sqrt(0.75) * 4, 5.0, math.sqrt(0.75) * 8], rel=1e-12)
    assert cp._statistic(cs, 4, 2, 3) == pytest.approx([5.0], rel=1e-12)
    # rows are orders: each row gets its own statistic
    rows = np.cumsum(np.array([[1.0, 2.0, 3.0, 10.0], [10.0, 3.0, 2.0, 1.0]]), axis=1)
    both = cp._statistic(rows, 4, 1, 4)
    assert both.shape == (2, 3)
    assert both[1] == pytest.approx([math.sqrt(0.75) * 8, 5.0, math.sqrt(0.75) * 4], rel=1e-12)


def test_best_split_needs_min_segment_runs_each_side_and_a_spread():
    step = [0.0] * 5 + [1.0] * 5
    assert cp.best_split(np.array(step[:9]), 5, 19, _rng()) is None  # 9 < 2 x 5
    assert cp.best_split(np.array(step), 5, 19, _rng())[0] == 5  # 10 = 2 x 5: one split
    assert cp.best_split(np.array([3.0] * 12), 5, 19, _rng()) is None  # flat


@pytest.mark.parametrize("min_segment,split", [(2, 3), (3, 3), (4, 4), (5, 5)])
def test_a_split_is_never_nearer_an_end_than_min_segment(min_segment, split):
    x = np.array([0.0] * 3 + [10.0] * 9 + [10.0, 10.5, 9.5])  # the step begins at run 3
    k, _ = cp.best_split(x, min_segment, 19, _rng())
    assert k == split
    x = x[::-1].copy()  # the step 3 runs before the end
    k, _ = cp.best_split(x, min_segment, 19, _rng())
    assert k == x.size - split


def test_the_p_value_counts_the_orders_that_reach_the_observed_maximum():
    """A perfect step of 10 runs in 20: no order of the runs scores higher,
    and only the sorted ones score as high: p = (1 + 0) / (1 + permutations)."""
    x = np.array([1.0] * 10 + [2.0] * 10)
    for permutations in (19, 99, 199):
        assert cp.best_split(x, 5, permutations, _rng()) == (10, 1.0 / (1 + permutations))
    # 5 and 5 runs: the one split is k = 5; an order ties the observed maximum
    # exactly when its first five runs are all alike, 2 orders in C(10, 5) = 252:
    # ties count, so p is about (1 + 2000 x 2/252) / 2001, not 1/2001
    k, p = cp.best_split(np.array([0.0] * 5 + [1.0] * 5), 5, 2000, _rng())
    assert k == 5 and 0.004 < p < 0.014


def test_a_step_is_found_where_it_begins():
    x = [100.0 + (1.0 if i % 2 else -1.0) for i in range(30)]
    x[17:] = [v - 20.0 for v in x[17:]]
    (c,) = cp.detect(x)
    assert c.index == 17
    assert c.before == pytest.approx(np.mean(x[:17])) and c.after == pytest.approx(np.mean(x[17:]))
    assert c.p_value == 1.0 / (1 + cp.PERMUTATIONS)
    assert c.change_pct == pytest.approx((c.after - c.before) / c.before * 100.0)


def _levels(*levels: float, runs: int = 10) -> list:
    """``runs`` runs at each level, alternating level and level + 0.5."""
    return [v for level in levels for v in [level, level + 0.5] * (runs // 2)]


def test_two_steps_are_found_by_binary_segmentation():
    """The larger step (at 20) splits first; the segment after it is flat,
    the one before it still holds the step at 10."""
    x = _levels(0.0, 3.0, 20.0)
    found = cp.detect(x)
    assert [c.index for c in found] == [10, 20]
    assert [(c.before, c.after) for c in found] == [(0.25, 3.25), (3.25, 20.25)]
    assert all(c.p_value < cp.ALPHA for c in found)
    assert cp.levels(len(x), found, x) == [(0, 10, 0.25), (10, 20, 3.25), (20, 30, 20.25)]


def test_every_segment_left_to_search_is_searched():
    """Four levels: the middle step splits first, then both halves hold one more."""
    x = _levels(0.0, 10.0, 30.0, 40.0, runs=8)
    found = cp.detect(x)
    assert [c.index for c in found] == [8, 16, 24]
    assert [(c.before, c.after) for c in found] == [(0.25, 10.25), (10.25, 30.25), (30.25, 40.25)]


def test_a_step_min_segment_runs_from_the_start_is_found():
    x = ([0.0, 0.5] * 5)[:cp.MIN_SEGMENT] + [10.0, 10.5] * 8
    assert [c.index for c in cp.detect(x)] == [cp.MIN_SEGMENT]


def test_a_step_too_near_the_end_is_not_a_change_point():
    x = [0.0, 0.5] * 10 + [10.0] * 4  # 4 runs at the new level: fewer than MIN_SEGMENT
    assert all(c.index <= len(x) - cp.MIN_SEGMENT for c in cp.detect(x))
    assert [c.index for c in cp.detect(x, min_segment=4)] == [20]


def test_significance_is_p_below_alpha():
    """A perfect step's p is 1 / (1 + permutations): 1/100 with 99 orders."""
    x = [1.0] * 10 + [2.0] * 10
    assert [c.p_value for c in cp.detect(x, alpha=0.0101, permutations=99)] == [0.01]
    assert cp.detect(x, alpha=0.01, permutations=99) == []  # p = alpha is not below it
    assert [c.index for c in cp.detect(x)] == [10]  # the defaults: p 1/200 < 0.01


def test_the_same_history_gives_the_same_answer_and_the_seed_decides_it():
    """A weak step (p well above 1/200): the p value is the permutations' count, which the seed fixes."""
    gen = np.random.default_rng(7)
    x = list(gen.normal(0.0, 1.0, 30) + np.r_[np.zeros(15), np.full(15, 0.6)])
    first = cp.detect(x, alpha=1.0)
    assert first and first == cp.detect(x, alpha=1.0) == cp.detect(x, alpha=1.0, seed=cp.SEED)
    p = {s: tuple(c.p_value for c in cp.detect(x, alpha=1.0, seed=s)) for s in (1, 2, 3, 4)}
    assert len(set(p.values())) > 1


def test_change_pct_of_a_change_point():
    assert cp.ChangePoint(5, 200.0, 150.0, 0.005).change_pct == -25.0
    assert cp.ChangePoint(5, -200.0, -150.0, 0.005).change_pct == 25.0
    assert cp.ChangePoint(5, 0.0, 1.0, 0.005).change_pct is None


def test_levels_between_change_points():
    values = [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    assert cp.levels(6, [], values) == [(0, 6, 6.0)]
    changes = [cp.ChangePoint(2, 2.0, 8.0, 0.005), cp.ChangePoint(4, 6.0, 10.0, 0.005)]
    assert cp.levels(6, changes, values) == [(0, 2, 2.0), (2, 4, 6.0), (4, 6, 10.0)]
    # an empty segment (a change at the first run) has no level
    assert cp.levels(6, [cp.ChangePoint(0, 0.0, 6.0, 0.005)], values) == [(0, 6, 6.0)]


# --- a step found early (issue 35, item 6) ----------------------------------------------------------

#: RND 4k W IOPS (window means) of eleven --quick nights on one loop device;
#: from the seventh on, a blkio cgroup capped the device's write IOPS.
NIGHTS = [85_774, 77_145, 80_351, 60_432, 73_019, 67_534, 38_644, 47_802, 39_356, 42_970, 41_913]


@pytest.mark.parametrize("throttled", [4, 5])
def test_a_slowdown_is_named_with_fewer_than_five_nights_of_it(throttled):
    """Five runs a side were needed before: 6 + 4 nights showed nothing."""
    x = NIGHTS[:6] + NIGHTS[6:6 + throttled]
    (c,) = cp.detect(x)
    assert c.index == 6 and c.p_value < cp.ALPHA and c.change_pct < -35


def test_a_slowdown_after_a_month_is_named_on_its_third_night():
    """30 ordinary nights (7 % spread), then the throttled level: named at
    night 30 once 3 nights of it are in.  (With only 5 + 3 runs in all no
    permutation test can: the three lowest of 8 values come last in 1 of
    C(8, 3) = 56 orders, p >= 0.018.)"""
    rng = np.random.default_rng(12)
    x = list(74_000.0 * (1 + 0.07 * rng.standard_normal(30))) + NIGHTS[6:9]
    (c,) = cp.detect(x)
    assert c.index == 30 and c.change_pct < -35


def test_two_nights_of_a_new_level_are_not_yet_a_change_point():
    assert cp.MIN_SEGMENT == 3
    assert cp.detect(NIGHTS[:6] + NIGHTS[6:8]) == []


def test_the_ordinary_nights_have_no_change_point():
    assert cp.detect(NIGHTS[:6]) == []


def test_noise_alone_rarely_makes_a_change_point():
    """200 series of 60 runs of pure noise: a change point in at most a few
    (the level is 0.02; benchmarks/nightly.py measures it on 365 nights)."""
    rng = np.random.default_rng(7)
    false = sum(bool(cp.detect(100.0 + 7.0 * rng.standard_normal(60), permutations=99)) for _ in range(200))
    assert false <= 10


def _loaded_nights(step_at=None):
    """20 nights of a figure the host path sets: it follows the host's idle
    share (which steps from 32% to 23% at night 10, as a load that fell), 2%
    noise; ``step_at``: the drive 19% slower from that night on (its idle
    share unchanged: a slower drive keeps the host's commands longer)."""
    rng = np.random.default_rng(3)
    idle = np.where(np.arange(20) < 10, 32.0, 23.0) + rng.normal(0, 1.0, 20)
    x = 1800.0 * (1 - 0.014 * (idle - 23.0)) * (1 + 0.02 * rng.standard_normal(20))
    if step_at is not None:
        x[step_at:] *= 0.81
    return list(x), list(idle)


def test_a_step_of_the_host_is_no_change_point_once_the_host_is_taken_out():
    """The values alone step where the host's load did; with the idle share
    taken out (host=) they do not, and the levels stay the values' own."""
    x, idle = _loaded_nights()
    assert [c.index for c in cp.detect(x)] == [10]
    assert cp.detect(x, host=idle) == []


def test_a_step_of_the_drive_is_named_with_the_host_taken_out():
    x, idle = _loaded_nights(step_at=17)
    (c,) = cp.detect(x, host=idle)
    assert c.index == 17 and c.change_pct == pytest.approx(-19.0, abs=2.0)  # the drive's step, the host's out
    assert c.before == pytest.approx(np.mean(cp.adjusted(x, idle)[:17]))


def test_a_host_that_cannot_explain_leaves_the_values_as_they_are():
    x, _ = _loaded_nights()
    assert list(cp.adjusted(x, [5.0] * 20)) == x  # constant
    assert list(cp.adjusted(x, [5.0] * 19)) == x  # another length
    assert list(cp.adjusted(x, [float("nan")] + [5.0 + i for i in range(19)])) == x


def test_two_nights_of_a_new_level_blame_no_normal_night():
    """Recorded TP reads (63.2 MB/s within 0.4%), the last normal night a little
    low, then two nights of a link 30% slower: the only split with three runs
    on each side takes that normal night into the new level; its run is far
    nearer the old level, so no change point is named (and no normal night's
    file blamed) until the third night, which puts it at the right run."""
    normal = [63.2162, 63.2682, 63.3356, 63.2794, 63.2233, 63.2682, 63.2906, 63.2682, 63.3356, 63.2682,
              63.2794, 63.2233, 63.2162, 63.2682, 63.2682, 62.8816]
    assert cp.detect(normal + [48.7458, 48.7458]) == []
    (c,) = cp.detect(normal + [48.7458, 48.7458, 48.7])
    assert c.index == 16 and c.change_pct == pytest.approx(-22.9, abs=0.2)
