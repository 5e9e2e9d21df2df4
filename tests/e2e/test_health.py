"""Drive health before and after a run (tkperf.target.health, tkperf.report.health).

The parsers read output recorded from real drives of several vendors
(tests/data/health/README.rst says where each file comes from).  The
snapshot tests run the real tools against the loop device the fixture
makes, never against a disk.  Snapshots built in a test (to check the
arithmetic of deltas, the heat watch and the report) say so where they are.
"""
from __future__ import annotations

import logging
import os

import pytest

from conftest import data_path
from tkperf.model.results import (
    DeviceInfo,
    HealthSnapshot,
    HostInfo,
    IoStats,
    Round,
    RunResult,
    TestRun,
    WipcRecord,
    Workload,
)
from tkperf.render import blocks as b
from tkperf.render.rst import to_rst
from tkperf.report.health import critical_warning_text, fio_written_bytes, health_blocks, temperature_range
from tkperf.target import device, health

GiB = 2**30
DU = 512_000  # NVMe data unit


def recorded(name: str) -> str:
    with open(data_path(os.path.join("health", name))) as fh:
        return fh.read()


def values(name: str) -> dict:
    text = recorded(name)
    if name.startswith("nvme-smart-log"):
        return dict(health.from_nvme_smart_log(text))
    if name.startswith("nvme-id-ctrl"):
        return dict(health.from_nvme_id_ctrl(text))
    return dict(health.from_smartctl(text))


def snap(when: str, source: str = "test", **found: float) -> HealthSnapshot:
    """A snapshot built here (not recorded), for the arithmetic."""
    return HealthSnapshot(time=f"2025-01-01T00:00:00+00:00 {when}", when=when, source=source,
                          values=tuple((k, float(v)) for k, v in found.items()))


def recorded_snap(name: str, when: str) -> HealthSnapshot:
    return HealthSnapshot(time="", when=when, source="smartctl", values=tuple(values(name).items()))


# --- parsing recorded output ---------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    # nvme-cli: temperature in Kelvin, data units of 512,000 bytes, thermal management counters
    ("nvme-smart-log-netdata.json", {
        "host_written_bytes": 136157684 * DU, "host_read_bytes": 9898518 * DU, "temperature_c": 37,
        "percentage_used": 2, "available_spare": 100, "error_log_entries": 110, "media_errors": 0,
        "thermal_throttle_events": 0, "thermal_throttle_seconds": 0, "power_on_hours": 4974,
        "unsafe_shutdowns": 39, "host_written_unit_bytes": DU}),
    ("nvme-id-ctrl-solidigm-sbfpf2bu153t.json", {"temp_warning_c": 70, "temp_critical_c": 80}),
    # smartctl on NVMe: °C, its own key names
    ("smartctl-intel-660p-ssdpeknw010t8-nvme.json", {
        "host_written_bytes": 7773431 * DU, "temperature_c": 36, "percentage_used": 0, "unsafe_shutdowns": 43,
        "warning_temp_minutes": 0, "smart_failed": 0}),
    ("smartctl-sabrent-rocket4-1tb-nvme.json", {
        "host_written_bytes": 76471882 * DU, "temperature_c": 48, "percentage_used": 4, "error_log_entries": 4871}),
    ("smartctl-skhynix-pc601-nvme.json", {"host_written_bytes": 41549752 * DU, "temperature_c": 44,
                                          "power_on_hours": 9944}),
    ("smartctl-teamgroup-mp33-256g-nvme.json", {
        "host_written_bytes": 25882809 * DU, "temperature_c": 54, "temp_warning_c": 100, "temp_critical_c": 110,
        "percentage_used": 7}),
    # ATA: units from the attribute names, wear from the normalized value
    ("smartctl-kingston-sa400s37240g-sat.json", {
        "host_written_bytes": 2168 * GiB, "media_written_bytes": 1173 * GiB, "host_read_bytes": 1630 * GiB,
        "host_written_unit_bytes": GiB, "media_written_unit_bytes": GiB, "percentage_used": 3,
        "unsafe_shutdowns": 8, "media_errors": 0, "temperature_c": 23, "power_on_hours": 23892}),
    ("smartctl-sandisk-pssd-usb-sat.json", {
        "host_written_bytes": 10171055 * 512, "host_read_bytes": 94845144 * 512, "unsafe_shutdowns": 114}),
    ("smartctl-crucial-attributes-fragment.json", {
        "host_written_bytes": 619033175 * 512, "host_program_pages": 19344786, "ftl_program_pages": 16994048,
        "percentage_used": 0, "unsafe_shutdowns": 24}),
    ("smartctl-samsung-hd204ui-sat-x-trimmed.json", {"temp_warning_c": 80, "temp_critical_c": 85,
                                                      "temperature_c": 27}),
    # SCSI: GB processed, drive trip temperature, endurance indicator
    ("smartctl-seagate-st4000nm0043-sas.json", {
        "host_written_bytes": 86472.611e9, "host_read_bytes": 176987.332e9, "host_written_unit_bytes": 1e6,
        "temp_critical_c": 68, "media_errors": 0}),
    ("smartctl-samsung-870evo-2tb-scsi.json", {"percentage_used": 11, "temp_critical_c": 70, "temperature_c": 21}),
])
def test_parses_recorded_output(name, expected):
    found = values(name)
    for key, value in expected.items():
        assert found.get(key) == pytest.approx(value), key


def test_values_use_only_tkperfs_names_in_report_order():
    found = health.from_smartctl(recorded("smartctl-teamgroup-mp33-256g-nvme.json"))
    names = [n for n, _ in found]
    assert set(names) <= set(health.UNITS)
    assert names == [n for n in health.UNITS if n in names]


def test_a_field_the_drive_lacks_is_absent_not_zero():
    found = values("smartctl-intel-optane-900p-ssdped1d280ga-nvme.json")  # smartctl 7.0: no temp times
    assert "warning_temp_minutes" not in found and "temp_warning_c" not in found
    assert "media_written_bytes" not in values("smartctl-intel-660p-ssdpeknw010t8-nvme.json")


def test_an_attribute_named_in_lbas_is_taken_at_its_word():
    # not in smartctl's drive database: 241 is named Total_LBAs_Written, its unit
    # is the drive's own (the report compares it with what fio wrote)
    found = values("smartctl-wdc-wds400t1r0a-sat.json")
    assert found["host_written_bytes"] == 173833 * 512
    assert found["percentage_used"] == 0  # Media_Wearout_Indicator normalized 100


def test_a_device_smartctl_could_not_open_is_an_error():
    with pytest.raises(ValueError, match="megaraid"):
        health.from_smartctl(recorded("smartctl-open-failed-megaraid.json"))


def test_exit_status_bits_for_drive_problems_still_parse():
    # bits 5 and 6 (96): the drive logged errors; the JSON is complete
    assert values("smartctl-samsung-hd204ui-sat-x-trimmed.json")["smart_failed"] == 0


@pytest.mark.parametrize("parser", [health.from_nvme_smart_log, health.from_smartctl, health.from_nvme_id_ctrl])
@pytest.mark.parametrize("text", ["", "not json", "[1, 2]"])
def test_output_that_is_no_json_object_is_an_error(parser, text):
    with pytest.raises(ValueError):
        parser(text)


@pytest.mark.parametrize("name, block, unit", [
    ("Host_Writes_32MiB", 512, 32 * 2**20), ("NAND_Writes_1GiB", 512, GiB), ("Flash_Writes_GiB", 512, GiB),
    ("NAND_GB_Written_TLC", 512, 1e9), ("Lifetime_Writes_GiB", 512, GiB), ("Total_LBAs_Written", 4096, 4096),
    ("Host_Program_Page_Count", 512, None), ("Unknown_Attribute", 512, None),
])
def test_attribute_units_come_from_the_name(name, block, unit):
    assert health.attribute_unit(name, block) == unit


@pytest.mark.parametrize("text, value", [
    (136157684, 136157684.0), ("136157684", 136157684.0), ("136,157,684", 136157684.0), ("310.0", 310.0),
    ({"value": 2}, 2.0), (True, 1.0), (None, None), ("n/a", None),
])
def test_numbers_in_the_forms_the_tools_print(text, value):
    assert health.number(text) == value


def test_nvme_cli_temperature_strings_keep_their_unit():
    log = health.from_nvme_smart_log('{"temperature": "37 °C (310 K)"}')
    assert dict(log)["temperature_c"] == 37
    assert dict(health.from_nvme_smart_log('{"temperature": "310"}'))["temperature_c"] == 37


# --- deltas --------------------------------------------------------------------------------

def test_deltas_of_a_drive_that_did_nothing_are_zero_and_give_no_amplification():
    # no public before/after pair of one drive was found (README.rst): one recording twice
    before = recorded_snap("smartctl-kingston-sa400s37240g-sat.json", "before")
    after = recorded_snap("smartctl-kingston-sa400s37240g-sat.json", "after")
    d = health.deltas(before, after)
    assert d["host_written_bytes"] == 0 and d["media_written_bytes"] == 0 and d["media_errors"] == 0
    assert "write_amplification" not in d


def test_write_amplification_from_media_and_host_writes_with_bounds():
    # built here: a recorded Kingston SA400 before, and an after with 100 GiB
    # more from the host and 130 GiB more on the flash (counters in GiB)
    before = recorded_snap("smartctl-kingston-sa400s37240g-sat.json", "before")
    found = dict(before.values)
    found["host_written_bytes"] += 100 * GiB
    found["media_written_bytes"] += 130 * GiB
    found["power_on_hours"] += 2
    d = health.deltas(before, snap("after", **found))
    assert d["host_written_bytes"] == 100 * GiB and d["power_on_hours"] == 2
    assert d["write_amplification"] == pytest.approx(1.3)
    assert d["write_amplification_low"] == pytest.approx(129 / 101)
    assert d["write_amplification_high"] == pytest.approx(131 / 99)


def test_write_amplification_from_micron_page_counters():
    d = health.deltas(snap("before", host_program_pages=1000, ftl_program_pages=500),
                      snap("after", host_program_pages=3000, ftl_program_pages=1500))
    assert d["write_amplification"] == pytest.approx((2000 + 1000) / 2000)


def test_no_write_amplification_without_a_media_counter():
    before = recorded_snap("smartctl-intel-660p-ssdpeknw010t8-nvme.json", "before")
    d = health.deltas(before, snap("after", host_written_bytes=before.value("host_written_bytes") + 10 * DU))
    assert d == {"host_written_bytes": 10 * DU}


# --- reading a device: the real tools, the fixture's loop device ---------------------------

def test_a_loop_device_has_no_snapshot_and_nothing_is_run(loopdev, caplog, monkeypatch):
    dev = device.resolve(loopdev)
    monkeypatch.setattr(health.programs, "run", lambda *a, **k: pytest.fail("ran a program"))
    with caplog.at_level(logging.INFO, logger="tkperf"):
        assert health.snapshot(dev, "before") is None
    assert "no SMART data" in caplog.text and "loop device" in caplog.text


def test_a_missing_tool_is_logged_not_raised(loopdev, caplog, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no smartctl, no nvme
    monkeypatch.setattr("tkperf.programs.SYSTEM_DIRS", ())  # PATH alone: no system folder to fall back on
    dev = DeviceInfo(path=loopdev, resolved=loopdev, kind="block", size_bytes=2**28, transport="sata")
    with caplog.at_level(logging.WARNING, logger="tkperf"):
        assert health.snapshot(dev, "before") is None
    assert "smartmontools" in caplog.text


@pytest.mark.skipif(not health.programs.shutil.which("nvme"), reason="nvme-cli is not installed")
def test_a_failing_query_is_logged_not_raised(loopdev, caplog):
    # a loop device that claims to be NVMe: the real nvme smart-log refuses it
    dev = DeviceInfo(path=loopdev, resolved=loopdev, kind="block", size_bytes=2**28, transport="nvme")
    with caplog.at_level(logging.WARNING, logger="tkperf"):
        assert health.snapshot(dev, "after") is None
    assert "nvme gave no health data" in caplog.text


# --- the heat watch --------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Readings:
    """Hands out the given readings in turn (built here), counting the calls."""

    def __init__(self, *readings) -> None:
        self.readings = list(readings)
        self.calls = 0

    def __call__(self, dev):
        self.calls += 1
        found = self.readings.pop(0)
        return None if found is None else ("nvme smart-log", tuple(found.items()))


LOOP = DeviceInfo(path="/dev/loop9", resolved="/dev/loop9", kind="block", size_bytes=2**28, transport="loop")


def test_samples_are_rate_limited():
    clock, read = Clock(), Readings(*[{"temperature_c": 40.0}] * 3)
    watch = health.HeatWatch([], every_s=60, clock=clock, read=read)
    assert watch.sample(LOOP) is None and read.calls == 0
    clock.now += 59
    watch.sample(LOOP)
    assert read.calls == 0
    clock.now += 1
    watch.sample(LOOP)
    assert read.calls == 1
    clock.now += 30
    watch.sample(LOOP)
    assert read.calls == 1
    watch.sample(LOOP, force=True)
    assert read.calls == 2 and len(watch.health) == 2


def test_samples_keep_only_heat_values_and_go_into_the_runs_list():
    run_health = [snap("before", "nvme smart-log", temperature_c=35, host_written_bytes=DU)]
    watch = health.HeatWatch(run_health, clock=Clock(), read=Readings({"temperature_c": 44.0,
                                                                        "host_written_bytes": 9.0 * DU}))
    watch.sample(LOOP, force=True)
    assert run_health[-1].when == "sample" and run_health[-1].values == (("temperature_c", 44.0),)


def test_each_kind_of_heat_finding_is_told_once():
    before = snap("before", "nvme smart-log", temperature_c=40, temp_warning_c=70, temp_critical_c=80,
                  thermal_throttle_events=3, warning_temp_minutes=10)
    read = Readings({"temperature_c": 60.0, "thermal_throttle_events": 3.0, "warning_temp_minutes": 10.0},
                    {"temperature_c": 71.0, "thermal_throttle_events": 3.0, "warning_temp_minutes": 10.0},
                    {"temperature_c": 72.0, "thermal_throttle_events": 3.0, "warning_temp_minutes": 11.0},
                    {"temperature_c": 72.0, "thermal_throttle_events": 5.0, "warning_temp_minutes": 12.0})
    watch = health.HeatWatch([before], clock=Clock(), read=read)
    said = [watch.sample(LOOP, force=True) for _ in range(4)]
    assert said[0] is None
    assert "71 °C reached its warning threshold 70 °C" in said[1]
    assert "1 min above" in said[2] and "threshold" not in said[2]
    assert "throttled for heat (2 thermal transitions)" in said[3] and "min above" not in said[3]


def test_a_critical_temperature_passes_the_warning_one():
    found = health.heat_findings(None, snap("sample", temperature_c=85),
                                 snap("before", temp_warning_c=70, temp_critical_c=80))
    assert list(found) == ["over_critical"] and "critical threshold 80 °C" in found["over_critical"]


def test_sampling_stops_after_readings_that_give_nothing():
    read = Readings(None, {"host_written_bytes": 1.0}, None, {"temperature_c": 40.0})
    watch = health.HeatWatch([], clock=Clock(), read=read)
    for _ in range(4):
        watch.sample(LOOP, force=True)
    assert not watch.active and read.calls == 3 and watch.health == []


def test_sampling_a_loop_device_with_the_real_reader_gives_nothing(loopdev):
    watch = health.HeatWatch([], clock=Clock())
    dev = device.resolve(loopdev)
    assert [watch.sample(dev, force=True) for _ in range(4)] == [None] * 4
    assert not watch.active and watch.health == []


# --- the report -------------------------------------------------------------------------------------

def a_run(*snapshots: HealthSnapshot, fio_bytes: int = 0) -> RunResult:
    run = RunResult(name="h", started="", device=DeviceInfo(path="/dev/sdz", resolved="/dev/sdz", kind="block",
                                                            size_bytes=240057409536),
                    host=HostInfo(), options={})
    run.health = list(snapshots)
    if fio_bytes:
        t = TestRun(type="iops", key="iops", tracking_workload="w", tracking_metric="write.iops",
                    tracking_label="")
        t.wipc = WipcRecord(loops=2, bs=131072, iodepth=32, numjobs=1, bytes_written=fio_bytes // 2,
                            seconds=1.0, bw_bytes=1.0)
        w = Workload(name="w", rw="randwrite", bs=4096, rwmixread=0, numjobs=1, iodepth=1, runtime_ms=1000,
                     write=IoStats(io_bytes=fio_bytes - fio_bytes // 2))
        t.rounds.append(Round(index=1, started="", wall_s=1.0, fio_s=1.0, workloads=(w,)))
        run.tests.append(t)
    return run


def text_of(blocks) -> str:
    return to_rst(blocks)


def test_no_snapshot_no_health_part():
    assert health_blocks(a_run()) == []


def test_report_shows_before_after_change_and_write_amplification():
    before = recorded_snap("smartctl-kingston-sa400s37240g-sat.json", "before")
    found = dict(before.values)
    found.update(host_written_bytes=found["host_written_bytes"] + 100 * GiB,
                 media_written_bytes=found["media_written_bytes"] + 150 * GiB, temperature_c=48)
    blocks = health_blocks(a_run(before, snap("sample", temperature_c=52), snap("after", **found),
                                 fio_bytes=100 * GiB))
    table = next(x for x in blocks if isinstance(x, b.Table))
    rows = {r[0]: r for r in table.rows}
    assert table.headers == ("Figure", "Before", "After", "Change", "Unit")
    assert rows["Host writes"][1:] == ("2,327.87", "2,435.25", "+107.37", "GB")
    assert rows["Host write counter counts in"][1] == "1 GiB"
    text = text_of(blocks)
    assert "Write amplification of the run: 1.50" in text
    assert "lowest 23 °C, highest 52 °C over 3 readings" in text
    assert "fio wrote 107.37 GB" in text and "counts in other units" not in text


def test_a_host_counter_below_what_fio_wrote_is_called_untrustworthy():
    before = recorded_snap("smartctl-wdc-wds400t1r0a-sat.json", "before")
    found = dict(before.values)
    found["host_written_bytes"] += 20 * 512  # 20 'LBAs' of a counter that really counts GiB
    text = text_of(health_blocks(a_run(before, snap("after", **found), fio_bytes=20 * GiB)))
    assert "counted fewer host writes than fio wrote" in text


def test_report_warns_of_new_errors_critical_warnings_and_counters_going_back():
    before = snap("before", media_errors=0, critical_warning=0, host_written_bytes=5 * DU, error_log_entries=4)
    after = snap("after", media_errors=2, critical_warning=0x06, host_written_bytes=3 * DU, error_log_entries=4)
    warning = next(x for x in health_blocks(a_run(before, after)) if isinstance(x, b.Admonition))
    text = " ".join(warning.lines)
    assert "2 new media and data integrity errors during the run" in text
    assert "temperature beyond a threshold; reliability degraded" in text
    assert "Host writes went down" in text or "host writes went down" in text
    assert "error log" not in text


def test_report_tells_heat_during_the_run():
    before = snap("before", temperature_c=40, temp_warning_c=70, thermal_throttle_events=1)
    blocks = health_blocks(a_run(before, snap("sample", temperature_c=75, thermal_throttle_events=1),
                                 snap("after", temperature_c=50, thermal_throttle_events=4)))
    text = " ".join(next(x for x in blocks if isinstance(x, b.Admonition)).lines)
    assert "75 °C reached its warning threshold 70 °C" in text and "3 thermal transitions" in text


def test_report_of_a_run_without_an_end_snapshot_says_so():
    blocks = health_blocks(a_run(recorded_snap("smartctl-sabrent-rocket4-1tb-nvme.json", "before")))
    text = text_of(blocks)
    assert "no snapshot at its end" in text
    assert next(x for x in blocks if isinstance(x, b.Table)).headers == ("Figure", "Before", "Change", "Unit")


def test_helpers_for_the_report():
    assert critical_warning_text(0) == "none" and critical_warning_text(1) == "available spare below its threshold"
    assert temperature_range([snap("before"), snap("sample", temperature_c=3), snap("after", temperature_c=9)]) \
        == (3, 9)
    assert fio_written_bytes(a_run(fio_bytes=1000)) == (1000, False)


def test_snapshots_survive_the_result_file(tmp_path):
    from tkperf import store

    run = a_run(recorded_snap("nvme-smart-log-netdata.json", "before"), snap("sample", temperature_c=41),
                recorded_snap("smartctl-kingston-sa400s37240g-sat.json", "after"))
    store.save(run, str(tmp_path / "h.xml"))
    assert store.load(str(tmp_path / "h.xml")).health == run.health
