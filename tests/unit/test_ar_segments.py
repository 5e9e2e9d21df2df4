"""Issue 43 item 3: the test range as ActiveRange segments spread randomly
across the active range (SNIA PTS test terminology, "ActiveRange Segments";
PTS-C 1.1: 2,048 for IOPS, TP and LAT).  The layout, its device-mapper
table, the options and the job files; the map itself is made in the QEMU
guest (tests/vm/test_vm.py), the refusals on this host in
tests/e2e/test_ar_segments_device.py."""
from __future__ import annotations

import os

import pytest

from tkperf import programs
from tkperf.engine import plan
from tkperf.engine.session import fio_settings
from tkperf.errors import UsageError
from tkperf.kit.options import RunOptions, build
from tkperf.model import segments
from tkperf.model.results import DeviceInfo
from tkperf.target import armap

GiB = 1 << 30
MiB = 1 << 20
BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD", devnum="8:16")


@pytest.mark.parametrize("active,tested,count", [
    (320 * 10 ** 9, 8 * GiB, 2048),      # PTS-C 1.1 on a 400 GB drive at 80%
    (128 * MiB, 8 * MiB, 64),            # the QEMU guest's disk
    (10 * GiB + 12345, 8 * GiB + 7, 3),  # sizes that are no multiple of anything
    (8 * GiB, 4 * GiB, 2048),            # half the active range in segments
])
def test_layout_is_count_equal_aligned_segments_inside_the_active_range_apart(active, tested, count):
    lay = segments.layout(active, tested, count, seed=1234)
    assert lay.count == count == len(lay.starts) == len(set(lay.starts))
    assert lay.size % 4096 == 0 and lay.size == tested // count // 4096 * 4096
    assert lay.total == count * lay.size <= tested
    assert list(lay.starts) == sorted(lay.starts)
    assert all(s % 4096 == 0 and 0 <= s and s + lay.size <= active for s in lay.starts)
    # SNIA: "ActiveRange segments shall not touch to form a single segment": 4 KiB at least between
    assert all(b - a >= lay.size + 4096 for a, b in zip(lay.starts, lay.starts[1:]))
    # each segment's bytes map to it, the bytes between segments to none
    for i, s in enumerate(lay.starts[:50]):
        assert lay.segment_of(s) == lay.segment_of(s + lay.size - 1) == i
        assert lay.segment_of(s + lay.size) == -1 and (s == 0 or lay.segment_of(s - 1) == -1)


@pytest.mark.parametrize("capacity", [20 * 10 ** 9, 64 * 10 ** 9, 256 * 10 ** 9, 10 ** 12, 4 * 10 ** 12])
def test_pts_c_1_1_segments_never_touch_on_drives_of_20_gb_to_4_tb(capacity):
    # the sixth audit: AR 80%, 8 GiB in 2,048 segments, seed 12345: 1,092 of 2,047 neighbouring pairs
    # touched on a 20 GB drive with the drawn slots of an earlier tkperf (91 on 256 GB)
    opts = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80, "ar_segment_seed": 12345},
                 pts="pts-c-1.1")
    active = opts.active_bytes(capacity)
    for seed in (12345, 1, 2 ** 31 - 1):
        lay = RunOptions.from_dict({**opts.to_dict(), "ar_segment_seed": str(seed)}).segment_layout(capacity)
        assert lay.count == 2048 and lay.size == 4 * MiB
        assert lay.touching == 0
        assert lay.starts[0] >= 0 and lay.starts[-1] + lay.size <= active
        assert lay == segments.layout(active, 8 * GiB, 2048, seed)  # a pure function of its seed
    # spread across the whole active range, not bunched at its start
    assert lay.starts[0] < active // 100 and lay.starts[-1] > active * 99 // 100


def test_an_earlier_tkperfs_result_regenerates_its_own_layout_which_may_touch():
    import random
    capacity = 20 * 10 ** 9
    new = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80, "ar_segment_seed": 12345},
                pts="pts-c-1.1").to_dict()
    assert new["range_rules"] == "2"
    old = {k: v for k, v in new.items() if k != "range_rules"}  # a file of an earlier tkperf
    opts = RunOptions.from_dict(old)
    assert opts.range_rules == 1 and opts.to_dict()["range_rules"] == "1"
    lay = opts.segment_layout(capacity)
    # the earlier algorithm, exactly: N distinct slots of the segment size, drawn with the seed, sorted
    active = opts.active_bytes(capacity)
    slots = sorted(random.Random(12345).sample(range(active // (4 * MiB)), 2048))
    assert lay.starts == tuple(s * 4 * MiB for s in slots)
    assert lay.touching == 1092  # the audit's figure
    assert lay != RunOptions.from_dict(new).segment_layout(capacity)


def test_layout_is_deterministic_from_its_seed_and_seeds_differ():
    a = segments.layout(320 * 10 ** 9, 8 * GiB, 2048, seed=7)
    assert a == segments.layout(320 * 10 ** 9, 8 * GiB, 2048, seed=7)
    b = segments.layout(320 * 10 ** 9, 8 * GiB, 2048, seed=8)
    assert a.size == b.size and a.starts != b.starts
    # spread across the active range, not bunched at its start
    assert a.starts[0] < 320 * 10 ** 9 // 100 and a.starts[-1] > 320 * 10 ** 9 * 99 // 100


@pytest.mark.parametrize("active,tested,count,placement,words", [
    (8 * GiB, 4096 * 100, 101, segments.APART, "smaller than 4 KiB"),
    (4 * MiB, 8 * MiB, 64, segments.TOUCHING, "holds only 32 segments of 131,072 bytes"),
    (8 * GiB, 8 * GiB, 70000, segments.APART, "out of range"),
    # a test range as large as the active range: its segments would fill it, each touching the next
    (8 * GiB, 8 * GiB, 2048, segments.APART,
     r"^--ar-segments 2,048: the active range \(8,589,934,592 bytes\) cannot hold 2,048 segments of 4 MiB "
     r"that do not touch \(at least 4 KiB between neighbours: 8,598,319,104 bytes\); give fewer segments, "
     r"a smaller --test-range, or --ar-segments 1$"),
    (4 * MiB, 8 * MiB, 64, segments.APART, "cannot hold 64 segments of 128 KiB that do not touch"),
])
def test_segments_that_cannot_be_laid_out_are_refused(active, tested, count, placement, words):
    with pytest.raises(UsageError, match=words):
        segments.layout(active, tested, count, seed=1, placement=placement)


def test_dm_table_maps_the_segments_in_order_into_one_contiguous_device():
    lay = segments.Layout(count=3, size=4 * MiB, seed=1, starts=(0, 12 * MiB, 400 * MiB))
    assert segments.dm_table(lay, 8, 16) == ("0 8192 linear 8:16 0\n"
                                             "8192 8192 linear 8:16 24576\n"
                                             "16384 8192 linear 8:16 819200\n")
    assert segments.size_text(4 * MiB) == "4 MiB" and segments.size_text(12 * 1024) == "12 KiB"
    assert segments.size_text(4096 * 3 + 512) == "12,800 bytes"


# --- the options -------------------------------------------------------------------------------

def test_the_revisions_segments_are_the_default_with_a_test_range_else_one_span():
    c11 = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1")
    assert c11.ar_segments == 2048 and c11.segmented and 1 <= c11.ar_segment_seed < 2 ** 31
    again = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1")
    assert again.ar_segment_seed != c11.ar_segment_seed  # chosen per run (2^-31 to collide)
    assert RunOptions.from_dict(c11.to_dict()) == c11  # stored: a resume rebuilds the same layout
    # no test range, or a revision without segments: one span (as before), nothing stored
    for o in (build({"tests": ("iops",)}, pts="pts-c-1.1"),
              build({"tests": ("iops",), "test_range": 8 * GiB}, pts="pts-e-2.0")):
        assert o.ar_segments == 1 and not o.segmented and "ar_segments" not in o.to_dict()
    # a file from before the option: one span
    old = c11.to_dict()
    del old["ar_segments"], old["ar_segment_seed"]
    assert RunOptions.from_dict(old).ar_segments == 1
    asked = build({"tests": ("iops",), "test_range": 8 * GiB, "ar_segments": 64}, pts="pts-e-2.0")
    assert asked.ar_segments == 64 and asked.ar_segment_seed > 0


@pytest.mark.parametrize("given,words", [
    ({"ar_segments": 4}, "--ar-segments 4 needs --test-range"),
    ({"ar_segments": 1}, "--ar-segments 1 needs --test-range"),
    ({"ar_segments": 0, "test_range": GiB}, r"--ar-segments 0 is out of range \(1..65536\)"),
    ({"ar_segments": 70000, "test_range": GiB}, "out of range"),
])
def test_bad_segment_options_are_usage_errors(given, words):
    with pytest.raises(UsageError, match=words):
        build({"tests": ("iops",), **given}, pts="pts-c-1.1")


def test_stored_segments_that_do_not_parse_are_refused():
    d = build({"tests": ("iops",), "test_range": 8 * GiB}, pts="pts-c-1.1").to_dict()
    with pytest.raises(ValueError):
        RunOptions.from_dict({**d, "ar_segment_seed": "<b>1</b>"})
    with pytest.raises(UsageError):
        RunOptions.from_dict({**d, "ar_segment_seed": "-5"})


# --- what fio is given -------------------------------------------------------------------------

def test_tests_run_on_the_map_the_wipc_on_the_device_over_the_active_range():
    opts = build({"tests": ("iops", "tp"), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1",
                 quick=True)
    settings = fio_settings(BLOCK, opts)
    name = f"tkperf-ar-{os.getpid()}-{armap.owner_tag(os.getpid()).split('-')[1]}"
    assert settings.filename == f"/dev/mapper/{name}" and settings.size == 0
    assert opts.test_bytes(BLOCK.size_bytes) == 8 * GiB
    active = opts.active_bytes(BLOCK.size_bytes)
    files = plan.job_files(BLOCK, opts, settings)
    text = "\n".join(files)
    wipc = [f for f in files if "[wipc-seq-" in f]
    assert wipc and all("filename=/dev/sdx" in f and f"size={active}" in f for f in wipc)
    # every other job: the [global] target (the map), no size of the device's
    tests = [f for f in files if "[global]" in f and "[wipc-seq-" not in f]
    assert tests and all(f"filename=/dev/mapper/{name}" in f and "filename=/dev/sdx" not in f for f in tests)
    assert f"size={active}" not in "\n".join(tests)
    # TP's sequential sweep stays within the map (its offsets are the map's)
    offsets = [int(line.split("=")[1]) for line in text.splitlines() if line.startswith(("offset=", "size="))]
    assert all(o <= 8 * GiB for o in offsets if o != active)
    lines, _ = plan.summary(BLOCK, opts)
    said = "\n".join(lines)
    assert f"test range 8 GiB in 2,048 ActiveRange segments (seed {opts.ar_segment_seed})" in said
    assert f"/dev/mapper/{name}, a device-mapper map of 2,048 segments of 4 MiB" in said


def test_one_span_keeps_the_device_and_the_global_size():
    opts = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80, "ar_segments": 1},
                 pts="pts-c-1.1", quick=True)
    settings = fio_settings(BLOCK, opts)
    assert settings.filename == "/dev/sdx" and settings.size == 8 * GiB
    assert not any("filename=" in line for f in plan.job_files(BLOCK, opts, settings)
                   for line in f.split("[global]")[-1].splitlines()[4:])


def test_where_no_map_can_be_made_the_refusal_is_one_line_naming_one_span():
    file_dev = DeviceInfo(path="/x/img", resolved="/x/img", kind="file", size_bytes=GiB)
    with pytest.raises(UsageError) as got:
        armap.refuse_target(file_dev, False, 2048)
    assert str(got.value) == ("--ar-segments 2,048 needs a block device on this host (a device-mapper map), "
                              "not a file target; --ar-segments 1 tests the test range as one span at the "
                              "start of the LBA range (a deviation)")
    with pytest.raises(UsageError, match="not a target on a test host"):
        armap.refuse_target(BLOCK, True, 64)
    armap.refuse_target(BLOCK, False, 64)  # a local block device: no refusal here


def test_stale_maps_are_told_by_their_owner_tag():
    mine = armap.owner_tag(os.getpid())
    assert programs.owner_alive(mine)
    pid, ticks = mine.split("-")
    assert not programs.owner_alive(f"{pid}-{int(ticks) + 1}")  # a reused pid has another start time
    assert not programs.owner_alive("x-1") and not programs.owner_alive("999999999-1")


# --- issue 55: which tests use the test range; an earlier tkperf's results --------------------------

def test_only_iops_tp_lat_and_the_hdd_tests_use_the_test_range():
    from tkperf.kit import registry
    opts = build({"tests": ("iops",), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1")
    using = {n for n in registry.names() if opts.uses_test_range(registry.get(n))}
    assert using == {"iops", "tp", "lat", "hdd-zones", "hdd-iops", "hdd-lat"}
    wsat = opts.for_test(registry.get("wsat"))
    assert (wsat.test_range, wsat.ar_segments, wsat.segmented) == (0, 1, False)
    assert wsat.test_bytes(BLOCK.size_bytes) == opts.active_bytes(BLOCK.size_bytes)
    assert opts.for_test(registry.get("iops")) is opts
    # an earlier tkperf's run (no range_rules stored) narrowed every test
    old = RunOptions.from_dict({k: v for k, v in opts.to_dict().items() if k != "range_rules"})
    assert old.for_test(registry.get("wsat")) is old and old.uses_test_range(None)
    # without a test range nothing is narrowed and nothing about the rules is stored
    plain = build({"tests": ("iops",)}, pts="pts-c-1.1")
    assert not plain.uses_test_range(registry.get("iops")) and "range_rules" not in plain.to_dict()


def test_wsat_gets_the_device_and_the_active_range_iops_the_map():
    opts = build({"tests": ("iops", "wsat"), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1",
                 quick=True)
    active = opts.active_bytes(BLOCK.size_bytes)
    files = plan.job_files(BLOCK, opts, fio_settings(BLOCK, opts))
    text = "\n".join(files)
    wsat = text[text.index("# --- wsat"):]
    iops = text[text.index("# --- iops"):text.index("# --- wsat")]
    assert "filename=/dev/sdx" in wsat and f"size={active}" in wsat and "/dev/mapper/" not in wsat
    assert "over the whole active range" in wsat.splitlines()[0]
    assert "filename=/dev/mapper/tkperf-ar-" in iops.split("[wipc-seq-")[1]  # the measurement, after the WIPC
    lines, _ = plan.summary(BLOCK, opts)
    said = "\n".join(lines)
    assert "# iops: fio runs on /dev/mapper/tkperf-ar-" in said
    assert "# wsat: over the whole active range, on the device itself" in said
    # WSAT alone maps nothing: the segments are not made when no chosen test uses them
    alone = build({"tests": ("wsat",), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1")
    assert alone.segmented and not alone.maps_segments
    assert fio_settings(BLOCK, alone).filename == "/dev/sdx"


def test_an_earlier_tkperfs_touching_segments_and_narrowed_wsat_are_named():
    from tkperf.model.results import HostInfo, RunResult, TestRun
    from tkperf.report import header
    from tkperf.verdict import conformance
    drive = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=20 * 10 ** 9,
                       transport="sata", write_cache="WCD", devnum="8:16")
    new = build({"tests": ("iops", "wsat"), "test_range": 8 * GiB, "active_range": 80, "ar_segment_seed": 12345},
                pts="pts-c-1.1").to_dict()
    assert conformance.of_settings(new, drive).conformant
    old = {k: v for k, v in new.items() if k != "range_rules"}
    assert conformance.of_settings(old, drive).deviations == (
        "WSAT ran over the test range (in 2,048 ActiveRange segments), not the whole active range: SNIA defines "
        "the test range for three PTS tests only; an earlier tkperf narrowed every test",
        "ActiveRange segments touch: 1,092 of 2,047 neighbouring pairs (layout of an earlier tkperf; SNIA: "
        "\"ActiveRange segments shall not touch to form a single segment\")")
    unknown = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=0)
    assert conformance.of_settings(old, unknown).deviations[-1].startswith(
        "ActiveRange segments may touch (layout of an earlier tkperf;")
    run = RunResult(name="r", started="", device=drive, host=HostInfo(), options=old, tests=[])
    fields = dict(header.setup_fields(run, TestRun("iops", "iops", "", "", "")))
    assert fields["AR Segments"] == ("2,048 of 4 MiB spread randomly across the active range (seed 12345; "
                                     "segments may touch (layout of an earlier tkperf); one device-mapper "
                                     "linear map)")
    wsat = dict(header.setup_fields(run, TestRun("wsat", "wsat", "", "", ""),
                                    "none: WSAT starts fresh after the purge", "none"))
    assert wsat["Active range"] == ("80%, no preconditioning; this test over 8 GiB in ActiveRange segments "
                                    "(--test-range)")
    run.options = new
    wsat = dict(header.setup_fields(run, TestRun("wsat", "wsat", "", "", ""),
                                    "none: WSAT starts fresh after the purge", "none"))
    assert wsat["Active range"].startswith("80% (no preconditioning; the whole active range")
    assert wsat["AR Segments"] == "N/A (this test uses the whole active range)"
    # a stored rule this tkperf does not know is refused as the other numbers are
    from tkperf.model import stored
    with pytest.raises(stored.StoredValueError):
        stored.check_options({**new, "range_rules": "3"})


def test_a_run_of_an_earlier_tkperf_with_a_test_range_can_be_resumed_by_its_own_rules():
    from dataclasses import replace

    from tkperf.engine import resume
    from tkperf.model.results import HostInfo, RunResult
    drive = replace(BLOCK, serial="S1")
    new = build({"tests": ("iops", "wsat"), "test_range": 8 * GiB, "active_range": 80}, pts="pts-c-1.1").to_dict()
    old = {k: v for k, v in new.items() if k != "range_rules"}
    saved = RunResult(name="r", started="", device=drive, host=HostInfo(), options=old, tests=[])
    opts = RunOptions.from_dict(saved.options)
    assert opts.range_rules == 1
    assert resume.check(saved, drive, opts) == ""  # not refused for the option its file does not hold
    assert "range_rules" not in saved.options  # and the file keeps saying it is an earlier tkperf's run
    with pytest.raises(Exception, match="option range_rules was '2'"):
        resume.check(RunResult(name="r", started="", device=drive, host=HostInfo(), options=new, tests=[]),
                     drive, opts)
