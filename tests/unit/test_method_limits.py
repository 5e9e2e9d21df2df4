"""Every limit of the method pinned: the 20/10 steady-state rule (just
inside, exactly at and just outside each limit, the smallest window,
averages below 1, the empty window) and the latency histograms (merging,
percentiles, the nines a sample supports), so that a limit moved by a
percent or a ``<=`` turned into ``<`` fails a test (benchmarks/mutation.py)."""
import pytest

from tkperf.model import histogram as h
from tkperf.model.steadystate import SteadyState, evaluate, least_squares

ROUNDS = [1, 2, 3, 4, 5]


def sloped(s: float, base: float = 1000.0) -> list:
    """``base + s * (x - 3)`` for x = 1..5: average ``base``, slope ``s``,
    slope excursion ``4 s``, data excursion ``4 s`` too."""
    return [base + s * (x - 3) for x in ROUNDS]


@pytest.mark.parametrize("s, steady", [
    (24.9, True),    # excursion 99.6 of average 1000: 9.96%
    (25.0, True),    # 100 of 1000: exactly 10%, which the rule allows
    (25.1, False),   # 10.04%
    (-25.0, True),   # falling as much: the same
    (-25.1, False),
])
def test_the_slope_limit_is_10_percent_inclusive(s, steady):
    r = evaluate(ROUNDS, sloped(s))
    assert r.average == pytest.approx(1000.0)
    assert r.slope == pytest.approx(s)
    assert r.slope_excursion == pytest.approx(abs(s) * 4)
    assert r.range <= r.max_range  # the data excursion is never what decides here
    assert r.steady is steady


@pytest.mark.parametrize("values, steady", [
    ([900, 1095, 1000, 1095, 900], True),    # 195 of 998: 19.5%
    ([900, 1100, 1000, 1100, 900], True),    # 200 of 1000: exactly 20%
    ([900, 1105, 1000, 1105, 900], False),   # 205 of 1002: 20.5%
    ([1100, 900, 1000, 900, 1100], True),    # the other way up, exactly 20%
    ([1105, 900, 1000, 900, 1105], False),   # 205 of 1002
])
def test_the_range_limit_is_20_percent_inclusive(values, steady):
    r = evaluate(ROUNDS, values)
    assert r.slope == 0.0  # symmetric: no slope at all
    assert r.slope_excursion == 0.0
    assert r.range == max(values) - min(values)
    assert r.steady is steady


def test_the_limits_scale_with_the_average():
    r = evaluate(ROUNDS, [900, 1100, 1000, 1100, 900])
    assert r.max_range == 200.0
    assert r.max_slope_excursion == 100.0
    neg = SteadyState(False, (), (), 0.0, 0.0, -50.0, 0.0, 0.0, 5)
    assert neg.max_range == 10.0 and neg.max_slope_excursion == 5.0


def test_both_limits_at_once():
    # slope 25 (10%) and a range of exactly 20%: still steady
    values = [1025.0, 937.5, 925.0, 987.5, 1125.0]  # the line plus 37.5 x (2, -1, -2, -1, 2)
    r = evaluate(ROUNDS, values)
    assert r.slope == pytest.approx(25.0)
    assert r.range == 200.0 and r.average == 1000.0
    assert r.steady


def test_a_window_of_two():
    r = evaluate([4, 5], [1000.0, 1050.0], window=2)
    assert r.rounds == (4, 5) and r.values == (1000.0, 1050.0)
    assert r.slope == 50.0 and r.intercept == 800.0
    assert r.average == 1025.0 and r.range == 50.0
    assert r.slope_excursion == 50.0  # |slope| x (2 - 1)
    assert r.steady  # 50 <= 102.5 and 50 <= 205
    assert not evaluate([4, 5], [1000.0, 1120.0], window=2).steady  # 120 > 106
    assert evaluate([3, 4, 5], [1.0, 1000.0, 1050.0], window=2).steady  # the last two


def test_a_window_below_two_is_refused_in_words():
    with pytest.raises(ValueError) as exc:
        evaluate([1], [1.0], window=1)
    assert str(exc.value) == "the window needs at least 2 rounds"
    with pytest.raises(ValueError):
        evaluate([1, 2], [1.0, 2.0], window=0)


def test_rounds_and_values_must_pair_up():
    with pytest.raises(ValueError) as exc:
        evaluate([1, 2, 3], [1.0, 2.0])
    assert str(exc.value) == "rounds and values differ in length"


@pytest.mark.parametrize("s, steady", [(0.015, True), (1 / 64, True), (0.016, False)])
def test_averages_below_one_are_judged_like_any_other(s, steady):
    # average 0.625; 1/64 x 4 = 0.0625 is exactly 10% of it (all binary-exact)
    r = evaluate(ROUNDS, sloped(s, base=0.625))
    assert r.average == 0.625
    assert r.steady is steady
    assert evaluate(ROUNDS, [0.5] * 5).steady
    assert evaluate(ROUNDS, [0.5, 0.6, 0.5, 0.6, 0.5]).steady  # 18% of 0.54, no slope


@pytest.mark.parametrize("values", [[0.0] * 5, [-10.0] * 5, [-1.0, 1.0, -1.0, 1.0, 0.0]])
def test_no_positive_average_is_never_steady(values):
    assert not evaluate(ROUNDS, values).steady


def test_an_empty_window_is_all_zero_and_not_steady():
    assert evaluate([], []) == SteadyState(False, (), (), 0.0, 0.0, 0.0, 0.0, 0.0, 5)
    assert evaluate([], [], window=3) == SteadyState(False, (), (), 0.0, 0.0, 0.0, 0.0, 0.0, 3)
    r = evaluate([], [])
    assert r.steady is False and r.first_round == 0 and r.last_round == 0


def test_fewer_rounds_than_the_window_show_their_statistics_but_are_not_steady():
    r = evaluate([1, 2, 3, 4], [1000.0] * 4)
    assert not r.steady
    assert r.rounds == (1, 2, 3, 4) and r.average == 1000.0 and r.range == 0.0
    assert r.first_round == 1 and r.last_round == 4
    assert r.window == 5


def test_least_squares_degenerate_cases():
    assert least_squares([], []) == (0.0, 0.0)
    assert least_squares([3], [7.0]) == (0.0, 7.0)       # one point: flat through it
    assert least_squares([2, 2], [1.0, 3.0]) == (0.0, 2.0)  # no spread in x: flat at the mean
    assert least_squares([1, 2, 3], [2.0, 4.0, 6.0]) == (2.0, 0.0)


# --- latency histograms: merging, percentiles and the nines a sample supports

def test_fio_bins_drop_empty_bins_and_add_equal_ones():
    assert h.from_fio(None) == () and h.from_fio({}) == ()
    # fio's keys are strings; '2000' and '2000.0' are the same bin
    assert h.from_fio({"3000": 1, "2000": "4", "2000.0": 2, "1000": 0}) == ((2000, 6), (3000, 1))


def test_a_negative_fio_count_is_refused_in_words():
    with pytest.raises(ValueError) as exc:
        h.from_fio({"1000": 3, "2000": -1})
    assert str(exc.value) == "negative count in latency bin 2000"


def test_merge_sums_equal_bins_skips_empty_ones_and_sorts():
    assert h.merge() == ()
    assert h.merge(((3000, 1), (1000, 2)), ((1000, 0), (2000, 5)), ((1000, 3),)) == \
        ((1000, 5), (2000, 5), (3000, 1))
    assert h.total(((1000, 5), (2000, 5), (3000, 1))) == 11
    assert h.total(()) == 0


@pytest.mark.parametrize("p, us", [
    (0.0001, 1.0), (25, 1.0),   # the first bin
    (25.0001, 2.0), (75, 2.0),  # the cumulative count reaches p% exactly at the bin's end
    (75.0001, 4.0), (99.9999, 4.0), (100, 4.0),
])
def test_a_percentile_is_the_first_bin_reaching_it(p, us):
    bins = ((1000, 1), (2000, 2), (4000, 1))  # 25% / 75% / 100%
    assert h.percentile_us(bins, p) == us


def test_a_percentile_reached_exactly_at_a_bins_end_despite_rounding():
    # 41000 x 64.4 / 100 is 26404.000000000004 in floating point: the 26,404th
    # I/O, the last of the first bin, is the 64.4th percentile
    bins = ((1000, 26404), (2000, 41000 - 26404))
    assert 41000 * 64.4 / 100.0 > 26404
    assert h.percentile_us(bins, 64.4) == 1.0
    assert h.percentile_us(bins, 64.41) == 2.0


def test_a_percentile_outside_0_to_100_is_refused_in_words():
    bins = ((1000, 1),)
    for p in (0, -1, 100.0001):
        with pytest.raises(ValueError) as exc:
            h.percentile_us(bins, p)
        assert str(exc.value) == f"percentile {p} is not in (0, 100]"
    assert h.percentile_us((), 0) is None  # nothing to read comes first


def test_a_single_bin_is_every_percentile():
    assert h.percentile_us(((7500, 3),), 0.5) == 7.5
    assert h.percentile_us(((7500, 3),), 100) == 7.5


@pytest.mark.parametrize("ios, p, ok", [
    (99, "99", False), (100, "99", True),
    (999, "99.9", False), (1000, "99.9", True),
    (9_999, "99.99", False), (10_000, "99.99", True),
    (99_999, "99.999", False), (100_000, "99.999", True),
    (999_999, "99.9999", False), (1_000_000, "99.9999", True),
    (0, "50", False), (2, "50", True), (1, "50", False),
])
def test_a_percentile_is_supported_from_one_io_beyond_it(ios, p, ok):
    assert h.supported(ios, p) is ok


@pytest.mark.parametrize("ios, best", [
    (0, ""), (99, ""), (100, "99"), (999, "99"), (1000, "99.9"), (10_000, "99.99"),
    (99_999, "99.99"), (100_000, "99.999"), (1_000_000, "99.9999"), (10**9, "99.9999"),
])
def test_the_most_supported_nines(ios, best):
    assert h.most_supported(ios) == best


def test_confidence_is_the_cumulative_share_per_bin():
    x, y = h.confidence(((1000, 1), (2000, 2), (4000, 1)))
    assert x.tolist() == [1.0, 2.0, 4.0] and y.tolist() == [0.25, 0.75, 1.0]
    x, y = h.confidence(())
    assert x.shape == (0,) and y.shape == (0,)


def test_the_text_form():
    assert h.to_text(()) == "" and h.from_text("") == ()
    assert h.to_text(((1000, 2), (2500, 1))) == "1000:2 2500:1"
    assert h.from_text("2500:1 1000:2 1000:1") == ((1000, 3), (2500, 1))  # merged, sorted
    with pytest.raises(ValueError) as exc:
        h.from_text("1000:2 3696-1")
    assert str(exc.value) == "latency bin '3696-1' is not ns:count"


def test_nines_rows_read_every_nine():
    bins = ((1000, 99_000), (2000, 900), (3000, 90), (4000, 10))  # 100,000 I/Os
    assert h.nines_rows(bins) == [("99", 1.0, True), ("99.9", 2.0, True), ("99.99", 3.0, True),
                                  ("99.999", 4.0, True), ("99.9999", 4.0, False)]
    assert h.nines_rows(()) == [(p, None, False) for p in h.NINES]
