"""tkperf.model.noise: Welch's t-test, the prediction against several
nights, Student's t tail and the window values a figure's noise is read from.

The tails are checked against what does not share noise.py's code: the
closed forms of Student's t for 1, 2 and 3 degrees of freedom, the binomial
sum of the incomplete beta function for whole a and b, and Simpson's rule
over the t density for any other degrees of freedom.  Welch's t and df are
worked by hand in the comments."""
from __future__ import annotations

import copy
import dataclasses
import math
import os
from types import SimpleNamespace

import pytest

from tkperf import store
from tkperf.model import noise
from tkperf.model.series import Series

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL = 1e-9


def t_sf_closed(t: float, df: int) -> float:
    """P(T > t), t > 0, from the textbook closed forms of Student's t (df 1, 2, 3),
    written without cancellation for df 1 and 2."""
    if df == 1:  # Cauchy: 1/2 - atan(t)/pi
        return math.atan(1.0 / t) / math.pi
    if df == 2:  # 1/2 (1 - t / s), s = sqrt(2 + t^2)
        s = math.sqrt(2.0 + t * t)
        return 1.0 / (s * (s + t))
    assert df == 3
    u = t / math.sqrt(3.0)
    return 0.5 - (u / (1.0 + u * u) + math.atan(u)) / math.pi


def t_sf_simpson(t: float, df: float, steps: int = 4000) -> float:
    """P(T > t) as 1/2 minus Simpson's rule over the t density from 0 to t."""
    k = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    pdf = lambda x: k * (1.0 + x * x / df) ** (-(df + 1) / 2)  # noqa: E731
    h = t / steps
    s = pdf(0.0) + pdf(t) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, steps))
    return 0.5 - s * h / 3.0


def betainc_binomial(a: int, b: int, x: float) -> float:
    """I_x(a, b) for whole a and b: P(Binomial(a + b - 1, x) >= a)."""
    n = a + b - 1
    return sum(math.comb(n, j) * x ** j * (1 - x) ** (n - j) for j in range(a, n + 1))


# --- the incomplete beta function and Student's t tail -----------------------------------------

@pytest.mark.parametrize("a,b", [(1, 1), (2, 3), (3, 2), (5, 1), (1, 4), (7, 9)])
@pytest.mark.parametrize("x", [0.01, 0.2, 0.45, 0.5, 0.7, 0.93, 0.999])
def test_betainc_matches_the_binomial_sum(a, b, x):
    """Both sides of the switch at x = (a + 1) / (a + b + 2) (the direct
    fraction below it, 1 - the mirrored one above) give I_x(a, b)."""
    assert noise.betainc(a, b, x) == pytest.approx(betainc_binomial(a, b, x), rel=REL, abs=1e-15)


def test_betainc_at_and_beyond_its_ends():
    for a, b in ((0.5, 0.5), (2.0, 3.0)):
        assert noise.betainc(a, b, 0.0) == 0.0 and noise.betainc(a, b, -0.5) == 0.0
        assert noise.betainc(a, b, 1.0) == 1.0 and noise.betainc(a, b, 1.5) == 1.0


@pytest.mark.parametrize("df", [1, 2, 3])
@pytest.mark.parametrize("t", [0.001, 0.05, 0.3, 0.8, 1.0, 1.5, 2.0, 3.0, 6.5, 40.0])
def test_t_tail_matches_the_closed_forms(t, df):
    assert noise.t_sf(t, df) == pytest.approx(t_sf_closed(t, df), rel=REL)
    assert noise.t_sf(-t, df) == pytest.approx(1.0 - t_sf_closed(t, df), rel=REL)


@pytest.mark.parametrize("df", [0.7, 2.94, 4.0, 10.0, 25.0, 57.3, 400.0])
@pytest.mark.parametrize("t", [0.02, 0.4, 1.2, 2.0, 2.8, 4.5])
def test_t_tail_matches_the_integrated_density(t, df):
    """Any degrees of freedom, whole or not (Welch's df are not)."""
    assert noise.t_sf(t, df) == pytest.approx(t_sf_simpson(t, df), rel=1e-8)


@pytest.mark.parametrize("df", [1, 2])
@pytest.mark.parametrize("t", [100.0, 1000.0, 1e4])
def test_t_tail_far_out(t, df):
    """Far in the tail the direct fraction must be used: 1 - (a number near 1) would lose the tail."""
    assert noise.t_sf(t, df) == pytest.approx(t_sf_closed(t, df), rel=REL)


def test_t_tail_at_zero_and_at_infinity():
    assert noise.t_sf(0.0, 4) == 0.5
    assert noise.t_sf(math.inf, 4) == 0.0 and noise.t_sf(-math.inf, 4) == 1.0
    # a textbook table: t(0.975, 10) = 2.228, t(0.95, 5) = 2.015
    assert noise.t_sf(2.228, 10) == pytest.approx(0.025, abs=5e-5)
    assert noise.t_sf(2.015, 5) == pytest.approx(0.05, abs=5e-5)


# --- mean, variance -----------------------------------------------------------------------------

def test_sample_variance_and_stdev():
    assert noise.mean([1.0, 2.0, 6.0]) == 3.0
    assert noise.variance([1.0, 2.0, 6.0]) == 7.0  # (4 + 1 + 9) / 2
    assert noise.stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == pytest.approx(math.sqrt(32 / 7))
    assert noise.variance([5.0]) == 0.0 and noise.variance([]) == 0.0


# --- Welch's t-test -----------------------------------------------------------------------------

def test_welch_of_two_small_samples_worked_by_hand():
    """[1, 2, 3] (mean 2, s^2 1) against [3, 5, 7] (mean 5, s^2 4):
    se^2 = 1/3 + 4/3 = 5/3, t = -3 / sqrt(5/3), df = (5/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 50/17."""
    w = noise.welch([1.0, 2.0, 3.0], [3.0, 5.0, 7.0], "higher")
    assert w.t == pytest.approx(-3.0 / math.sqrt(5.0 / 3.0), rel=1e-12)
    assert w.df == pytest.approx(50.0 / 17.0, rel=1e-12)
    tail = t_sf_simpson(3.0 / math.sqrt(5.0 / 3.0), 50.0 / 17.0)  # about 0.0525
    assert w.p_worse == pytest.approx(tail, rel=1e-8)  # higher is better: lower is worse
    assert w.p_better == pytest.approx(1.0 - tail, rel=1e-8)
    # the same samples where lower is better: the drop is the better direction
    lo = noise.welch([1.0, 2.0, 3.0], [3.0, 5.0, 7.0], "lower")
    assert (lo.t, lo.df) == (w.t, w.df)
    assert lo.p_worse == pytest.approx(1.0 - tail, rel=1e-8) and lo.p_better == pytest.approx(tail, rel=1e-8)
    # sides swapped: t changes sign, df stays
    sw = noise.welch([3.0, 5.0, 7.0], [1.0, 2.0, 3.0], "higher")
    assert sw.t == pytest.approx(-w.t, rel=1e-12) and sw.df == pytest.approx(w.df, rel=1e-12)
    assert sw.p_better == pytest.approx(tail, rel=1e-8)


def test_welch_with_unequal_sizes():
    """[1, 2, 3, 4, 5] (s^2 2.5) against [2, 4] (s^2 2): se^2 = 0.5 + 1 = 1.5,
    t = (3 - 3) / ... = 0; against [6, 8]: t = -4 / sqrt(1.5),
    df = 1.5^2 / (0.5^2/4 + 1^2/1) = 2.25 / 1.0625."""
    w = noise.welch([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 8.0], "lower")
    assert w.t == pytest.approx(-4.0 / math.sqrt(1.5), rel=1e-12)
    assert w.df == pytest.approx(2.25 / 1.0625, rel=1e-12)
    assert w.p_worse == pytest.approx(1.0 - t_sf_simpson(4.0 / math.sqrt(1.5), 2.25 / 1.0625), rel=1e-8)
    flat = noise.welch([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0], "lower")
    assert flat.t == 0.0 and flat.p_worse == 0.5 and flat.p_better == 0.5


def test_a_side_of_one_value_borrows_the_other_sides_variance():
    """[10] against [1, 2, 3] (s^2 1): the one value is read with s^2 1 too,
    se^2 = 1/1 + 1/3 = 4/3, t = 8 / sqrt(4/3); only the side of three has
    degrees of freedom: df = (4/3)^2 / ((1/3)^2 / 2) = 32."""
    w = noise.welch([10.0], [1.0, 2.0, 3.0], "higher")
    assert w.t == pytest.approx(8.0 / math.sqrt(4.0 / 3.0), rel=1e-12) and w.df == pytest.approx(32.0, rel=1e-12)
    assert w.p_better == pytest.approx(t_sf_simpson(w.t, 32.0), rel=1e-6)
    other = noise.welch([1.0, 2.0, 3.0], [10.0], "higher")
    assert other.t == pytest.approx(-w.t, rel=1e-12) and other.df == pytest.approx(32.0, rel=1e-12)
    assert other.p_worse == pytest.approx(w.p_better, rel=1e-12)


def test_welch_of_a_pair_against_one_value_and_more():
    """[1, 3] (s^2 2) against [5]: the one value borrows s^2 2; se^2 = 1 + 2 = 3,
    t = -3 / sqrt(3), df = 9 / (1^2 / 1) = 9.  [1, 3] against [1, 2, 3] (s^2 1):
    its own variance, se^2 = 1 + 1/3, t = 0."""
    w = noise.welch([1.0, 3.0], [5.0], "higher")
    assert w.t == pytest.approx(-math.sqrt(3.0), rel=1e-12) and w.df == pytest.approx(9.0, rel=1e-12)
    v = noise.welch([1.0, 3.0], [0.0, 2.0, 4.0, 6.0], "higher")  # s^2 2 and 20/3: se^2 1 + 5/3
    assert v.t == pytest.approx(-1.0 / math.sqrt(8.0 / 3.0), rel=1e-12)
    assert v.df == pytest.approx((8.0 / 3.0) ** 2 / (1.0 + (5.0 / 3.0) ** 2 / 3.0), rel=1e-12)


def test_welch_cannot_be_made_without_a_spread():
    assert noise.welch([1.0], [2.0], "higher") is None
    assert noise.welch([], [1.0, 2.0], "higher") is None
    assert noise.welch([1.0, 2.0], [], "higher") is None


def test_welch_of_zero_variance():
    # identical constant samples: no change at all
    same = noise.welch([5.0, 5.0, 5.0], [5.0, 5.0, 5.0], "higher")
    assert (same.t, same.df, same.p_worse, same.p_better) == (0.0, 4.0, 0.5, 0.5)
    # constant samples at different levels: the change is certain
    up = noise.welch([6.0, 6.0, 6.0], [5.0, 5.0], "higher")
    assert (up.t, up.df, up.p_worse, up.p_better) == (math.inf, 3.0, 1.0, 0.0)
    down = noise.welch([4.0, 4.0], [5.0, 5.0, 5.0], "higher")
    assert (down.t, down.df, down.p_worse, down.p_better) == (-math.inf, 3.0, 0.0, 1.0)
    low = noise.welch([4.0, 4.0], [5.0, 5.0, 5.0], "lower")
    assert (low.p_worse, low.p_better) == (1.0, 0.0)
    # one value against a constant pair: df n1 + n2 - 2 = 1
    one = noise.welch([5.0], [3.0, 3.0], "lower")
    assert (one.t, one.df, one.p_worse, one.p_better) == (math.inf, 1.0, 0.0, 1.0)


def test_welch_when_one_side_alone_varies():
    """[5, 5, 5] against [1, 2, 3]: se^2 = 0 + 1/3, t = 3 / sqrt(1/3),
    df = (1/3)^2 / ((1/3)^2 / 2) = 2 (the constant side adds none)."""
    w = noise.welch([5.0, 5.0, 5.0], [1.0, 2.0, 3.0], "lower")
    assert w.t == pytest.approx(3.0 * math.sqrt(3.0), rel=1e-12) and w.df == pytest.approx(2.0, rel=1e-12)
    assert w.p_worse == pytest.approx(t_sf_closed(3.0 * math.sqrt(3.0), 2), rel=REL)


def test_welch_whose_variance_terms_underflow_falls_back_to_the_pooled_df():
    """A spread of 1e-155: s^2 is about 1e-310, and (s^2/n)^2 is 0 in floating point."""
    w = noise.welch([0.0, 1e-155, 2e-155], [0.0, 1e-155, 2e-155, 3e-155], "higher")
    assert w.t < 0 and w.df == 5.0
    one = noise.welch([0.0], [0.0, 1.5e-155], "higher")  # n1 + n2 - 2 = 1
    assert one.t < 0 and one.df == 1.0


# --- the prediction against several nights ------------------------------------------------------

def test_predict_worked_by_hand():
    """Nights [1, 2, 3] (mean 2, s^2 1), tonight 6: t = 4 / sqrt(1 + 1/3) = 2 sqrt(3), df 2."""
    w = noise.predict(6.0, [1.0, 2.0, 3.0], "lower")
    assert w.t == pytest.approx(2.0 * math.sqrt(3.0), rel=1e-12) and w.df == 2.0
    assert w.p_worse == pytest.approx(t_sf_closed(2.0 * math.sqrt(3.0), 2), rel=REL)  # 0.0371
    assert w.p_better == pytest.approx(1.0 - w.p_worse, rel=REL)
    hi = noise.predict(6.0, [1.0, 2.0, 3.0], "higher")
    assert (hi.p_worse, hi.p_better) == (w.p_better, w.p_worse)


def test_predict_of_two_nights_and_of_one():
    """Two nights [10, 10.5] (s^2 0.125): t = -1 / sqrt(0.125 * 1.5), df 1; one night: no test."""
    w = noise.predict(9.25, [10.0, 10.5], "higher")
    assert w.t == pytest.approx(-1.0 / math.sqrt(0.1875), rel=1e-12) and w.df == 1.0
    assert w.p_worse == pytest.approx(t_sf_closed(1.0 / math.sqrt(0.1875), 1), rel=REL)
    assert noise.predict(9.0, [10.0], "higher") is None and noise.predict(9.0, [], "higher") is None


def test_predict_floor_is_a_least_variance():
    nights = [10.0, 10.5, 11.0]  # s^2 0.25
    assert noise.predict(12.0, nights, "lower").t == pytest.approx(1.5 / math.sqrt(0.25 * 4 / 3), rel=1e-12)
    assert noise.predict(12.0, nights, "lower", 0.1).t == pytest.approx(1.5 / math.sqrt(0.25 * 4 / 3), rel=1e-12)
    assert noise.predict(12.0, nights, "lower", 4.0).t == pytest.approx(1.5 / math.sqrt(4.0 * 4 / 3), rel=1e-12)


def test_predict_against_constant_nights():
    assert noise.predict(5.0, [5.0, 5.0, 5.0], "higher") == noise.Welch(0.0, 2.0, 0.5, 0.5)
    assert noise.predict(6.0, [5.0, 5.0, 5.0], "higher") == noise.Welch(math.inf, 2.0, 1.0, 0.0)
    assert noise.predict(4.0, [5.0, 5.0, 5.0], "higher") == noise.Welch(-math.inf, 2.0, 0.0, 1.0)
    assert noise.predict(6.0, [5.0, 5.0, 5.0], "lower") == noise.Welch(math.inf, 2.0, 0.0, 1.0)
    # a floor gives constant nights a spread: t = 1 / sqrt(0.75 * 4/3) = 1
    assert noise.predict(6.0, [5.0, 5.0, 5.0], "lower", 0.75).t == pytest.approx(1.0, rel=1e-12)


# --- the values of a window ---------------------------------------------------------------------

def _example(name: str = "example-ssd"):
    return store.load(os.path.join(ROOT, "examples", f"{name}.xml"))


@pytest.fixture(scope="module")
def ssd():
    return _example()


def test_one_round_of_a_steady_window_keeps_every_round(ssd):
    test = ssd.test("iops")
    r = test.rounds[2]
    one = noise._one_round(test, r)
    assert one.rounds == test.rounds and one.steady.rounds == (r.index,)
    assert one.window_rounds() == [r]


@pytest.mark.parametrize("steady", ["none", "empty"])
def test_one_round_without_a_steady_window_is_that_round_alone(ssd, steady):
    test = copy.deepcopy(ssd.test("iops"))
    test.steady = None if steady == "none" else dataclasses.replace(test.steady, rounds=())
    r = test.rounds[1]
    one = noise._one_round(test, r)
    assert one.rounds == [r] and one.steady is None and one.type == test.type and one.key == test.key
    assert test.rounds != [r]  # the original is left alone


def _figures_of_rounds(test):
    """Figures of a round-based test: the mean tracking value of its window, and a constant."""
    vals = [v for i, v in test.tracking_values() if i in {r.index for r in test.window_rounds()}]
    return [SimpleNamespace(key="mean", value=sum(vals) / len(vals)),
            SimpleNamespace(key="first", value=test.tracking_values()[0][1])]


@pytest.mark.parametrize("steady", ["window", "none", "empty"])
def test_window_values_of_rounds(ssd, steady):
    test = copy.deepcopy(ssd.test("iops"))
    if steady == "none":
        test.steady = None
    elif steady == "empty":
        test.steady = dataclasses.replace(test.steady, rounds=(), window=3)
    per_round = dict(test.tracking_values())
    got = noise.window_values(test, _figures_of_rounds)
    window = [r.index for r in test.window_rounds()]
    assert got["mean"] == [per_round[i] for i in window]
    # "first" is round 1's value whatever the window: it lies in the range only when round 1 is in it
    assert ("first" in got) == (1 in window)


def _stream(values, steady):
    """The example's WSAT test with its tracking column set to ``values``."""
    test = copy.deepcopy(_example().test("wsat"))
    (name, s), = test.series.items()
    rows = [[float(v) if c == "iops" else 1.0 for c in s.columns] for v in values]
    test.series = {name: Series.from_rows(name, s.columns, rows, digits=None)}
    test.steady = steady
    return test


def _at(values):
    """Figures of a stream: the mean of ``values`` and a few values next to it."""
    m = sum(values) / len(values)
    return lambda test: [SimpleNamespace(key="mean", value=m)]


INTERVALS = [100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0]


@pytest.mark.parametrize("window,rounds,expected", [
    (5, (2, 3, 4), [200.0, 300.0, 400.0]),           # the steady window's intervals
    (3, (), [600.0, 700.0, 800.0]),                  # no steady rounds: the last `window`
    (None, None, [400.0, 500.0, 600.0, 700.0, 800.0]),  # no verdict: the last 5
    (5, (7, 8), [700.0, 800.0]),                     # two values are enough
])
def test_window_values_of_a_stream(ssd, window, rounds, expected):
    steady = None if window is None else dataclasses.replace(ssd.test("iops").steady, rounds=rounds, window=window)
    test = _stream(INTERVALS, steady)
    assert noise.window_values(test, _at(expected)) == {"mean": expected}
    # a figure that is not their mean gets none
    assert noise.window_values(test, _at(INTERVALS)) == {}


def test_a_stream_window_of_one_value_gives_none(ssd):
    test = _stream(INTERVALS, dataclasses.replace(ssd.test("iops").steady, rounds=(8,)))
    assert noise.window_values(test, lambda t: [SimpleNamespace(key="mean", value=800.0)]) == {}


@pytest.mark.parametrize("values,offset,kept", [
    ([-0.5, 0.5], 1e-6, True),       # |m| < 1: the slack is 1e-6 itself, reached exactly
    ([-0.5, 0.5], 1.5e-6, False),
    ([1000.0, 3000.0], 1e-3, True),   # |m| 2000: the slack is 2e-3
    ([1000.0, 3000.0], 3e-3, False),
    ([1000.0, 3000.0], 1000.0, False),
])
def test_a_stream_figure_is_their_mean_within_a_millionth(ssd, values, offset, kept):
    steady = dataclasses.replace(ssd.test("iops").steady, rounds=(1, 2), window=2)
    test = _stream(values, steady)
    m = sum(values) / len(values)
    got = noise.window_values(test, lambda t: [SimpleNamespace(key="f", value=m + offset)])
    assert got == ({"f": values} if kept else {})


def _by_round(per_round: dict, whole: float, key: str = "f"):
    """Figures of a round test: ``per_round[index]`` for a one-round window, ``whole`` for the window."""
    def figures(test):
        w = test.window_rounds()
        if len(w) == 1:
            return [SimpleNamespace(key=key, value=per_round[w[0].index])]
        return [SimpleNamespace(key=key, value=whole)]
    return figures


def test_window_values_of_a_two_round_window(ssd):
    test = copy.deepcopy(ssd.test("iops"))
    test.steady = dataclasses.replace(test.steady, rounds=(2, 3))
    assert noise.window_values(test, _by_round({2: 10.0, 3: 20.0}, 15.0)) == {"f": [10.0, 20.0]}
    test.steady = dataclasses.replace(test.steady, rounds=(3,))
    assert noise.window_values(test, _by_round({3: 20.0}, 20.0)) == {}


def test_a_round_test_that_also_keeps_a_series_is_read_by_its_rounds(ssd):
    test = copy.deepcopy(ssd.test("iops"))
    test.series = _stream(INTERVALS, None).series
    per = {r.index: 100.0 + r.index for r in test.rounds}
    assert noise.window_values(test, _by_round(per, 103.0)) == {"f": [101.0, 102.0, 103.0, 104.0, 105.0]}


def test_a_figure_a_single_round_cannot_give_is_left_out(ssd):
    """'sum' exists only for the whole window; 'f' (after it) still gets its values."""
    def figures(test):
        w = test.window_rounds()
        out = [] if len(w) == 1 else [SimpleNamespace(key="sum", value=float(len(w)))]
        return out + [SimpleNamespace(key="f", value=float(w[0].index) if len(w) == 1 else 3.0)]
    assert noise.window_values(ssd.test("iops"), figures) == {"f": [1.0, 2.0, 3.0, 4.0, 5.0]}


PER = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0}


@pytest.mark.parametrize("scale,whole,kept", [
    # the slack is 1e-9 x the largest of |lo|, |hi| and 1
    (0.125, 0.125 - 1e-9, True),            # at lo - slack exactly (|values| < 1: slack 1e-9)
    (0.125, 0.625 + 1e-9, True),            # at hi + slack exactly
    (0.125, 0.625 + 1.5e-9, False),
    (0.125, 0.625 + 0.8e-9, True),          # beyond 1e-9 x |hi|: the 1 counts
    (1e6, 5e6 + 4e-3, True),                # |hi| 5e6: slack 5e-3
    (1e6, 5e6 + 6e-3, False),
    (-1e6, -1e6 + 4e-3, True),              # |lo| 5e6 sets the slack on the high side too
    (-1e6, -5e6 - 6e-3, False),
])
def test_a_figure_is_described_by_the_values_it_lies_within(ssd, scale, whole, kept):
    per = {i: v * scale for i, v in PER.items()}
    got = noise.window_values(ssd.test("iops"), _by_round(per, whole))
    assert got == ({"f": [per[i] for i in sorted(per)]} if kept else {})


# --- the night's family (issue 35, item 1) -------------------------------------------------------

def test_holm_adjusts_by_rank_and_keeps_the_order():
    from tkperf.model import family

    # sorted 0.01, 0.02, 0.04 of m = 3 (None: no test): x3, x2, x1, never decreasing
    assert family.holm([0.04, None, 0.01, 0.02]) == pytest.approx([0.04, None, 0.03, 0.04])
    assert family.holm([0.5, 0.6]) == [1.0, 1.0]
    assert family.holm([]) == [] and family.holm([None]) == [None]
    assert family.holm([0.001]) == [0.001]  # one figure: no correction


def test_the_night_needs_three_figures_and_two_baselines():
    from tkperf.model import family

    fig = family.Figure("higher", (100.0, 110.0), 90.0)
    assert family.night_adjusted([fig, fig]) is None
    one = family.Figure("higher", (100.0,), 90.0)
    assert family.night_adjusted([one, one, one]) is None
    assert not family.Figure("higher", (100.0, 0.0), 90.0).usable
    assert not family.Figure("", (100.0, 110.0), 90.0).usable


def test_a_shared_shift_is_the_nights_and_a_lone_drop_the_figures():
    """Three figures with identical relative histories: a night 20% down in
    all is the night's shift (the figures' own moves are 0); one figure
    down alone is its own move, the night's shift 0."""
    from tkperf.model import family

    history = (100.0, 104.0, 97.0, 101.0)
    figs = [family.Figure("higher", tuple(h * s for h in history), 80.0 * s) for s in (1.0, 2.0, 30.0)]
    tests, night = family.night_adjusted(figs)
    assert night.shift_pct == pytest.approx((80.0 / math.prod(history) ** 0.25 - 1) * 100)  # in logs
    assert night.test.p_worse < 0.05 and all(t.t == pytest.approx(0.0, abs=1e-9) for t in tests)
    g = math.prod(history) ** 0.25  # the geometric mean: a move of 0 in logs
    lat = family.Figure("lower", tuple(1 / h for h in history), 1 / g)  # lower is better
    figs = [family.Figure("higher", history, g), family.Figure("higher", history, 70.0), lat]
    tests, night = family.night_adjusted(figs)
    assert night.shift_pct == pytest.approx(0.0, abs=1e-9)
    assert tests[1].t < 0 and tests[1].p_worse < tests[0].p_worse


def test_a_figure_without_window_values_is_one_rounds_spread():
    """Window values pool with their kind (2 (N - 1) degrees of freedom);
    one value a night is one round: its spread is at least its own, and
    at least half its own and half one round's of the windowed figures
    (their window values' variance, not divided by the window length)."""
    from tkperf.model import family

    wins = ((99.0, 101.0),) * 4
    windowed = family.Figure("higher", (100.0, 102.0, 98.0, 100.0), 95.0, wins, (94.0, 96.0))
    single = family.Figure("higher", (100.0, 110.0, 90.0, 100.0), 95.0)
    tests, _ = family.night_adjusted([windowed, windowed, single])
    assert (tests[0].df, tests[2].df) == (6.0, 6.0)
    alone, _ = family.night_adjusted([single, single, single])  # no window values at all: its own, N - 1
    assert alone[0].df == 3.0


def test_the_nights_median_and_a_windows_variance():
    from tkperf.model import family

    assert family._median([3.0, 1.0, 2.0]) == 2.0
    assert family._median([4.0, 1.0, 3.0, 2.0]) == 2.5  # an even count: the mean of the middle two
    assert family._median([5.0]) == 5.0 and family._median([2.0, 1.0]) == 1.5
    e2 = math.e ** 2
    fig = family.Figure("higher", (1.0, 1.0), 1.0, ((1.0, e2), (1.0, e2, 0.0, -1.0, math.inf), (7.0,)), ())
    # logs [0, 2] twice (a zero, a negative and an infinite value left out; one value: no spread): variance 2
    assert family._window_variance(fig, per_round=True) == pytest.approx(2.0)
    assert family._window_variance(fig) == pytest.approx(1.0)  # / 2 values
    assert family._window_variance(family.Figure("higher", (1.0,), 1.0, ((5.0,),), (6.0,))) == 0.0


def _reference(figs):
    """The night-adjusted tests recomputed from docs/check.rst's words, with numpy."""
    import numpy as np

    n = len(figs[0].nights)
    sign = [1.0 if f.better == "higher" else -1.0 for f in figs]
    logs = np.array([[s * math.log(v) for v in f.nights] for f, s in zip(figs, sign)])  # figures x nights
    centre = logs.mean(axis=1)
    past = logs - centre[:, None]
    shifts = np.median(past, axis=0)
    now = np.array([s * math.log(f.value) for f, s in zip(figs, sign)]) - centre
    shift = float(np.median(now))
    own = ((past - shifts[None, :]) ** 2).sum(axis=1) / (n - 1)

    def spread(f, per_round):
        found = [np.var(np.log(w), ddof=1) / (1 if per_round else len(w)) for w in f.windows + (f.mine,) if len(w) > 1]
        return float(np.mean(found)) if found else 0.0

    windowed = [i for i, f in enumerate(figs) if spread(f, False) > 0]
    ratio = float(np.median([own[i] / spread(figs[i], False) for i in windowed]))  # night-to-night / window
    one_round = float(np.mean([spread(figs[i], True) for i in windowed]))
    out = []
    for i, f in enumerate(figs):
        if i in windowed:  # shrunk towards its kind's at its own scale
            var = max(spread(f, False), (own[i] + ratio * spread(f, False)) / 2)
        else:
            var = max(own[i], (own[i] + one_round) / 2)
        out.append(((now[i] - shift) / math.sqrt(var * (1 + 1 / n)), 2.0 * (n - 1)))
    night_t = (shift - shifts.mean()) / math.sqrt(np.var(shifts, ddof=1) * (1 + 1 / n))
    return out, (night_t, float(n - 1)), (math.exp(shift) - 1) * 100


def test_the_night_adjusted_tests_match_their_definition():
    """Four figures, three nights: three with window values (one a latency),
    one without; every t, degrees of freedom and the night's shift as documented."""
    from tkperf.model import family

    figs = [family.Figure("higher", (100.0, 90.0, 104.0), 70.0, ((98.0, 101.0, 99.0),) * 3, (69.0, 71.0, 72.0)),
            family.Figure("higher", (50.0, 47.0, 55.0), 45.0, ((49.0, 52.0),) * 3, (44.0, 47.0)),
            family.Figure("lower", (10.0, 11.5, 9.0), 12.0, ((9.0, 11.0, 10.5),) * 3, (12.5, 11.0)),
            family.Figure("higher", (7.0, 6.0, 9.0), 6.5)]
    tests, night = family.night_adjusted(figs)
    expected, (night_t, night_df), shift_pct = _reference(figs)
    for got, (t, df) in zip(tests, expected):
        assert (got.t, got.df) == (pytest.approx(t, rel=1e-9), df)
        assert got.p_worse == pytest.approx(noise.t_sf(-t, df), rel=1e-9)
    assert (night.test.t, night.test.df) == (pytest.approx(night_t, rel=1e-9), night_df)
    assert night.shift_pct == pytest.approx(shift_pct, rel=1e-9)
    # two nights are enough; an unusable figure, or none at all, leaves the night untold
    assert family.night_adjusted([family.Figure(f.better, f.nights[:2], f.value) for f in figs]) is not None
    assert family.night_adjusted(figs[:3] + [family.Figure("higher", (1.0, 2.0, 0.0), 1.0)]) is None
    assert family.night_adjusted([]) is None
