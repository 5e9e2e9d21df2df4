import pytest

from tkperf.model.steadystate import evaluate


def test_worked_example_from_tkperf_talk():
    s = evaluate([7, 8, 9, 10, 11], [13705, 14639, 14747, 14678, 13927])
    assert s.steady
    assert s.slope == pytest.approx(48.3, abs=1e-9)
    assert s.intercept == pytest.approx(13904.5, abs=1e-9)
    assert s.average == pytest.approx(14339.2, abs=1e-9)
    assert s.range == pytest.approx(1042.0)
    assert s.slope_excursion == pytest.approx(48.3 * 4)
    assert s.rounds == (7, 8, 9, 10, 11)


def test_uses_only_the_last_window():
    s = evaluate(list(range(1, 12)), [100000, 50000, 30000, 20000, 15000, 13000,
                                      13705, 14639, 14747, 14678, 13927])
    assert s.rounds == (7, 8, 9, 10, 11)
    assert s.steady


def test_flat_is_steady():
    s = evaluate([1, 2, 3, 4, 5], [1000.0] * 5)
    assert s.steady and s.slope == 0 and s.range == 0


def test_rising_fails_slope_but_not_range():
    # range 180 of avg 1090 is 16.5% (< 20%), but slope 45 x 4 = 180 > 109
    s = evaluate([1, 2, 3, 4, 5], [1000, 1045, 1090, 1135, 1180])
    assert s.range <= 0.2 * s.average
    assert s.slope_excursion > 0.1 * s.average
    assert not s.steady


def test_noisy_fails_range():
    s = evaluate([1, 2, 3, 4, 5], [1000, 1400, 1000, 1400, 1000])
    assert s.range > 0.2 * s.average
    assert not s.steady


def test_fewer_than_window_rounds_never_steady():
    s = evaluate([1, 2, 3, 4], [1000.0] * 4)
    assert not s.steady
    assert s.rounds == (1, 2, 3, 4)
    assert s.average == 1000.0


def test_empty_and_zero():
    assert not evaluate([], []).steady
    assert not evaluate([1, 2, 3, 4, 5], [0, 0, 0, 0, 0]).steady


def test_boundaries_are_inclusive():
    # range exactly 20% of the average: still steady (slope kept at 0)
    s = evaluate([1, 2, 3, 4, 5], [900, 1100, 1000, 1100, 900])
    assert s.range == pytest.approx(0.2 * s.average)
    assert s.steady


def test_mismatched_lengths_rejected():
    with pytest.raises(ValueError):
        evaluate([1, 2], [1.0])
