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
    # interval 2: 50,000 I/Os, none above 300 us: no 5 9s; the maximum is its highest bin, not 905
    second = {k: v for k, v in first.items()}
    second[100_000] += 49_990
    second[300_000] = 10
    c2 = cutter.feed(report(2000, 200_000, 101_000, second, 905_000), at=2.0)
    assert c2.ios == 50_000 and not histogram.supported(c2.ios, "99.999")
    assert c2.lat_p99_999_us == 0.0
    assert c2.lat_max_us == 300.0


def test_without_response_times_nothing_is_read():
    cutter = IntervalCutter("w", 1, start=0.0, block_size=4096)
    c = cutter.feed(report(1000, 150_000, 101_000, {100_000: 150_000}, 100_500), at=1.0)
    assert (c.lat_p99_999_us, c.lat_max_us) == (0.0, 0.0)


def test_subtract_keeps_only_bins_that_grew():
    assert subtract(((1, 5), (2, 3), (4, 1)), ((1, 5), (2, 1))) == ((2, 2), (4, 1))
    assert subtract(((1, 5),), ()) == ((1, 5),)
