import pytest

from tkperf.errors import TargetError, UsageError
from tkperf.kit import options
from tkperf.pts import writelimit as wsat_settings
from tkperf.testtypes.iops import IopsSettings
from tkperf.testtypes.throughput import ThroughputSettings


def test_sizes():
    assert options.parse_size("4k") == 4096
    assert options.parse_size("1024K") == 1 << 20
    assert options.parse_size("512") == 512
    assert options.parse_size("10g") == 10 << 30
    assert options.parse_block_sizes("4k, 64k,4k", "--bs") == (4096, 65536)


def test_mixes_and_durations():
    assert options.parse_mixes("65/35,0/100,100") == (65, 0, 100)
    assert options.parse_duration("24h") == 86400
    assert options.parse_duration("90s") == 90
    assert options.parse_duration("30m") == 1800
    assert options.parse_duration("3600") == 3600
    assert wsat_settings.parse_tgbw("4x") == "4x"
    assert wsat_settings.tgbw_bytes("4x", 1000) == 4000
    assert wsat_settings.tgbw_bytes("800", 1) == 800 * 10 ** 9


@pytest.mark.parametrize("fn, arg", [
    (options.parse_size, "4q"), (options.parse_size, "0"), (options.parse_size, "-4k"),
    (options.parse_mix, "60/30"), (options.parse_mix, "101"), (options.parse_mix, "a/b"),
    (options.parse_duration, "1y"), (options.parse_duration, "0"),
    (wsat_settings.parse_tgbw, "x4"), (options.parse_tests, "iops,foo"),
])
def test_bad_values(fn, arg):
    with pytest.raises(UsageError):
        fn(arg)


def test_block_size_must_be_sector_multiple():
    with pytest.raises(UsageError, match="multiple of 512"):
        options.parse_block_sizes("4000", "--bs")


def test_profiles_and_overrides():
    ent = options.build({})
    assert (ent.numjobs, ent.iodepth, ent.of(ThroughputSettings).bs) == (4, 32, (1 << 20, 128 << 10))
    cli = options.build({}, device_class="client")
    assert (cli.numjobs, cli.iodepth, cli.of(ThroughputSettings).bs) == (2, 16, (1 << 20,))
    q = options.build({"runtime": 2}, quick=True)
    assert q.quick and q.runtime == 2 and q.max_rounds == 5
    assert len(ent.of(IopsSettings).bs) * len(ent.of(IopsSettings).mixes) == 56


def test_dict_round_trip():
    o = options.build({"tests": ("iops", "lat"), "refill_buffers": True}, quick=True)
    assert options.RunOptions.from_dict(o.to_dict()) == o


@pytest.mark.parametrize("field, value", [("numjobs", 0), ("iodepth", 5000), ("runtime", 0),
                                          ("max_rounds", 0), ("wipc_loops", -1)])
def test_ranges(field, value):
    with pytest.raises(UsageError, match="out of range"):
        options.build({field: value})


def test_fits():
    options.check_fits(options.build({}, quick=True), 256 << 20)
    with pytest.raises(TargetError, match="too small"):
        options.check_fits(options.build({}), 32 << 20)
