"""A replay's traced figures as stored and judged (issue 57 item 1): what a
round keeps (``trace.N.*``), what a file that does not keep them reads as,
and the verdict's words for a figure beyond a factor of the capture's."""
from __future__ import annotations

from tkperf.testtypes.realworld import blockstats
from tkperf.testtypes.realworld.delivered import figures_off

GOT = blockstats.Traced(ios=900, busy_us=1_139_683, lat_mean_us=1266.3, lat_p99_us=7946.4, lat_max_us=10085.0,
                        flushes=450, discards=2, lost=0)


def test_a_rounds_traced_figures_read_back_as_stored():
    data: dict = {}
    blockstats.store_traced(data, 3, GOT)
    assert data["trace.3.ios"] == "900" and data["trace.3.lat_p99_us"] == "7946.4"
    assert blockstats.stored_traced(data, 3) == GOT
    assert blockstats.stored_traced(data, 4) is None


def test_a_result_from_before_replays_were_traced_has_none():
    old = {"block.1.ios": "399", "block.1.busy_ms": "63", "block.1.flushes": "199", "block.1.flush_ms": "56",
           "block.1.discards": "0", "block.1.discard_ms": "0"}
    assert blockstats.stored_traced(old, 1) is None
    assert blockstats.stored(old, 1) == blockstats.Counters(399, 63, 199, 56, 0, 0)


def test_a_forged_traced_figure_is_not_measured():
    for key, bad in (("ios", "-1"), ("lat_mean_us", "nan"), ("lat_p99_us", "inf"), ("busy_us", "1.5"),
                     ("lost", "x")):
        data: dict = {}
        blockstats.store_traced(data, 1, GOT)
        data[f"trace.1.{key}"] = bad
        assert blockstats.stored_traced(data, 1) is None, (key, bad)


def test_figures_beyond_the_factor_are_named_with_both_sides():
    # the review's step 8: QD 0.407 and 2,164 µs by the counters against a capture of 0.074 and 787 µs
    assert figures_off(0.074, 0.407, 787.0, 2164.0, 7131.0, None) == (
        "queue depth 0.407 against the captured 0.074 (5.50x), mean response time 2,164 µs against the captured "
        "787 µs (2.75x)")
    # the same step traced: 0.079 and 839 µs, p99 5,280 against 7,131 µs: within 2x, nothing named
    assert figures_off(0.074, 0.079, 787.0, 839.0, 7131.0, 5280.0) == ""
    # a figure the capture did not record (0) is not judged; one the replay did not measure (None) neither
    assert figures_off(0.0, 5.0, 0.0, 9e9, 0.0, 1.0) == ""
    assert figures_off(1.0, 1.0, 100.0, 100.0, 1000.0, 3000.0, ratio=1.2) == (
        "99th percentile response time 3,000 µs against the captured 1,000 µs (3.00x)")
