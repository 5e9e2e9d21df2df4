"""Per-interval response times of a json+ --status-interval stream (WSAT's
optional ART, 5 9s and MRT plots): the difference of two cumulative
histograms is the interval's, the five nines only where its I/O count
supports it, the maximum exact where fio's running maximum rose."""
from tkperf.fio.intervals import IntervalCutter, subtract
from tkperf.model import histogram


def report(runtime_ms, ios, mean_ns, bins, max_ns):
    """A cumulative json+ status report of one 4k write job."""
    return {"jobs": [{"jobname": "w", "job_runtime": runtime_ms, "error": 0,
                      "write": {"io_bytes": ios * 4096, "total_ios": ios,
                                "lat_ns": {"N": ios, "mean": mean_ns, "max": max_ns,
                                           "bins": {str(k): v for k, v in bins.items()}}}}]}


def test_five_nines_where_supported_and_the_maximum_of_each_interval():
    cutter = IntervalCutter("w", 1, start=0.0, block_size=4096, response_times=True)
    # interval 1: 150,000 I/Os, 2 of them slow (900 us): the 5 9s lies in the slow bin's reach
    first = {100_000: 149_990, 200_000: 8, 900_000: 2}
    c1 = cutter.feed(report(1000, 150_000, 101_000, first, 905_000), at=1.0)
    assert c1.lat_max_us == 905.0  # fio's running maximum rose: exact
    assert histogram.supported(c1.ios, "99.999")
    assert c1.lat_p99_999_us == histogram.percentile_us(histogram.from_fio(
        {str(k): v for k, v in first.items()}), 99.999) == 900.0
    assert c1.lat_mean_us <= c1.lat_p99_999_us <= c1.lat_max_us
    # interval 2: 50,000 I/Os, none above fio's bin labelled 300 us: no 5 9s; the maximum is
    # the top of that bin (2^18 <= 300,000 ns < 2^19: 64 bins of 4,096 ns), not 905
    second = {k: v for k, v in first.items()}
    second[100_000] += 49_990
    second[300_000] = 10
    c2 = cutter.feed(report(2000, 200_000, 101_000, second, 905_000), at=2.0)
    assert c2.ios == 50_000 and not histogram.supported(c2.ios, "99.999")
    assert c2.lat_p99_999_us == 0.0
    assert c2.lat_max_us == 302.048


def test_without_response_times_nothing_is_read():
    cutter = IntervalCutter("w", 1, start=0.0, block_size=4096)
    c = cutter.feed(report(1000, 150_000, 101_000, {100_000: 150_000}, 100_500), at=1.0)
    assert (c.lat_p99_999_us, c.lat_max_us) == (0.0, 0.0)


def test_subtract_keeps_only_bins_that_grew():
    assert subtract(((1, 5), (2, 3), (4, 1)), ((1, 5), (2, 1))) == ((2, 2), (4, 1))
    assert subtract(((1, 5),), ()) == ((1, 5),)


def test_fio_bin_tops():
    """fio's bins (its stat.c, plat_idx_to_val): one per value below 128 ns,
    then 64 per power of two labelled by their middle."""
    assert [histogram.bin_top_ns(v) for v in (0, 5, 127)] == [0, 5, 127]
    assert histogram.bin_top_ns(129) == 130  # [128, 130) labelled 129
    assert histogram.bin_top_ns(300_000) == 302_048  # [297,952, 302,048)
    assert histogram.bin_top_ns(2 ** 30 + 2 ** 23) == 2 ** 30 + 2 ** 24


def test_a_maximum_from_the_top_bin_is_never_below_the_interval_mean():
    """Three I/Os of 1,014 us, all in fio's bin labelled 1,011,712 ns (its
    range [1,007,616, 1,015,808)), the running maximum 2,000 us from an
    earlier interval: the maximum is the bin's top, not its label, which
    lies below the interval's mean."""
    cutter = IntervalCutter("w", 1, start=0.0, block_size=4096, response_times=True)
    cutter.feed(report(1000, 10, 1_500_000, {1_998_848: 10}, 2_000_000), at=1.0)
    c = cutter.feed(report(2000, 13, (15_000_000 + 3 * 1_014_000) / 13, {1_998_848: 10, 1_011_712: 3},
                           2_000_000), at=2.0)
    assert c.ios == 3 and abs(c.lat_mean_us - 1014.0) < 1e-6
    assert c.lat_mean_us <= c.lat_max_us == 1015.808
