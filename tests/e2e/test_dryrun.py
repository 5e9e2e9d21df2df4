"""The dry run's summary: time per test first, a total whose lower bound is
the rows' sum, WSAT timed from the device's size, the job files only with
``--jobs``, and the verdict the real run on the same target reaches."""
from __future__ import annotations

import re

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine import plan
from tkperf.kit import options
from tkperf.kit.shapes import ESTIMATE_WRITE_RATE, duration_rough
from tkperf.model.results import DeviceInfo
from tkperf.verdict import conformance

ROW = re.compile(r"^# (\S+)\s+(\S+)\s+(?:-|(\d+\.\d) GB, .+?)\s{2,}(.+?)\s{2,}(.*)$", re.M)
ROUNDS = re.compile(r"(\d+) to (\d+) rounds x (\S+ \S+) \(\d+ workloads\)(?: \+ (\S+ \S+) after)?")


def _dry(tmp_path, capsys, size: str, *argv: str) -> str:
    assert main(["ssd", "run", str(tmp_path / "img"), "--size", size, "--dry-run", *argv]) == 0
    return capsys.readouterr().out


def _hours(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"s": 1 / 3600, "min": 1 / 60, "h": 1}[unit]


def test_summary_comes_first_and_its_lower_bound_is_the_rounds_listed(tmp_path, capsys):
    out = _dry(tmp_path, capsys, "20g")
    assert out.startswith("# dry run: nothing is written")
    assert "[global]" not in out and "stonewall" not in out  # no job files without --jobs
    assert "# the fio job files: add --jobs" in out
    rows = {m.group(1): m for m in ROW.finditer(out) if m.group(1) != "test"}
    assert list(rows) == ["iops", "tp-1024k", "tp-128k", "lat", "wsat"]
    low = 0.0
    for key in ("iops", "tp-1024k", "tp-128k", "lat"):
        first, most, each, after = ROUNDS.search(rows[key].group(5)).groups()  # type: ignore[union-attr]
        assert (int(first), int(most)) == (5, 25)
        # LAT's response-time capture follows its rounds (20 minutes by default)
        assert (after is not None) == (key == "lat") and (after is None or _hours(after) == 20 / 60)
        rounds_h = int(first) * _hours(each) + (_hours(after) if after else 0.0)
        shown_low = _hours(rows[key].group(4).split(" to ")[0])
        assert abs(shown_low - rounds_h) <= 0.05 * shown_low + 1 / 60
        low += rounds_h + float(rows[key].group(3)) * 1e9 / ESTIMATE_WRITE_RATE / 3600
    low += _hours(rows["wsat"].group(4).split(" to ")[0])
    total = re.search(r"^# total: (\S+ \S+) to (\S+ \S+)", out, re.M)
    assert total is not None
    assert abs(_hours(total.group(1)) - low) <= 0.05 * low  # rebuilt from the rows, within their rounding
    # and exactly, from the rows' own figures
    dev = DeviceInfo(path="/x", resolved="/x", kind="file", size_bytes=20 * 1024 ** 3)
    rows_data = plan.times(dev, options.build({}))
    assert f"# total: {duration_rough(sum(r.wipc_s + r.low_s for r in rows_data))} to" in out


def test_jobs_prints_the_job_files_after_the_summary(tmp_path, capsys):
    out = _dry(tmp_path, capsys, "1g", "--tests", "tp", "--jobs")
    assert out.index("# total:") < out.index("# verdict on this target") < out.index("[global]")
    assert "[wipc-seq-128k-w]" in out and "add --jobs" not in out


def test_wsat_time_follows_the_device_size(tmp_path, capsys):
    with_capture = _dry(tmp_path, capsys, "64m", "--tests", "wsat")  # 60 s, then the 20-minute capture
    assert re.search(r"^# wsat .* 21 min\s+one continuous job", with_capture, re.M), with_capture
    small = _dry(tmp_path, capsys, "64m", "--tests", "wsat", "--wsat-capture", "0")
    big = _dry(tmp_path, capsys, "2000g", "--tests", "wsat", "--wsat-capture", "0")
    assert re.search(r"^# wsat .* 60 s\s+one continuous job", small, re.M), small  # 4x 64 MB: one interval
    assert "stopping at 24.0 h or 0.3 GB written (about 60 s at 500 MB/s), whichever comes first" in small
    assert re.search(r"^# wsat .* 4.8 h\s+one continuous job", big, re.M), big  # 4x 2.1 TB at 500 MB/s
    assert "# total: 60 s to 60 s" in small


def test_a_drive_with_a_pts_purge_and_a_readable_cache_names_them_unknown():
    nvme = DeviceInfo(path="/dev/nvme0n1", resolved="/dev/nvme0n1", kind="block", transport="nvme",
                      size_bytes=10 ** 12)
    verdict, unknown = conformance.of_target(options.build({}).to_dict(), nvme, "ssd", ["iops"])
    assert verdict.conformant
    assert any("NVME PURGE" in u for u in unknown) and any("write cache state" in u for u in unknown)
    loop = DeviceInfo(path="/dev/loop9", resolved="/dev/loop9", kind="block", transport="loop", size_bytes=1 << 30)
    verdict, unknown = conformance.of_target(options.build({}).to_dict(), loop, "ssd", ["iops", "lat"])
    assert verdict.deviations == ("purged by discard, which is not a PTS PURGE (iops, lat)",
                                  "write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)")
    assert unknown == ("whether each test reaches steady state within its rounds",)


def test_the_dry_runs_verdict_words_each_case_whole():
    """Every branch of the verdict before a run, its words whole: a PTS PURGE
    and a reachable cache (known only at the start), no purge asked, no test
    purged, and the HDD profile (no purge, its cache kept as found)."""
    nvme = DeviceInfo(path="/dev/nvme0n1", resolved="/dev/nvme0n1", kind="block", transport="nvme",
                      size_bytes=10 ** 12)
    loop = DeviceInfo(path="/dev/loop9", resolved="/dev/loop9", kind="block", transport="loop", size_bytes=1 << 30)
    steady = "whether each test reaches steady state within its rounds"
    unknown_cache = "write cache state unknown (SNIA PTS 2.0.2, enterprise requires WCD)"
    verdict, unknown = conformance.of_target(options.build({}).to_dict(), nvme, "ssd", ["iops"])
    assert (verdict.revision, verdict.deviations) == ("SNIA PTS 2.0.2, enterprise", ())
    assert unknown == ("whether the drive supports a NVME PURGE (read at the start of each test)",
                       "the write cache state (SNIA PTS 2.0.2, enterprise requires WCD; read and set at the "
                       "start of the run)", steady)
    verdict, unknown = conformance.of_target(options.build({"purge": "none"}).to_dict(), loop, "ssd", ["iops"])
    assert verdict.deviations == ("no PURGE before the tests (--purge none)", unknown_cache)
    assert unknown == (steady,)
    verdict, unknown = conformance.of_target(options.build({}).to_dict(), loop, "ssd", [])
    assert verdict.deviations == (unknown_cache,) and unknown == (steady,)
    # as hdd run builds them: no PURGE, no WIPC; disclosures, judged against no PTS revision (issue 55 item 8)
    hdd = options.build({"tests": ("hdd-iops",), "purge": "none", "wipc_loops": 0}, profile="hdd").to_dict()
    verdict, unknown = conformance.of_target(hdd, loop, "hdd", ["hdd-iops"])
    assert verdict.sentence() == "HDD profile: not a SNIA PTS run: 2 disclosures"
    assert verdict.deviations == ("hdd run: the SNIA PTS is a solid-state test; this profile skips PURGE and WIPC",
                                  "write cache state unknown (tkperf could not read it on this target)")
    assert unknown == (steady,)
    verdict, unknown = conformance.of_target(hdd, nvme, "hdd", ["hdd-iops"])
    assert verdict.deviations == ("hdd run: the SNIA PTS is a solid-state test; this profile skips PURGE and WIPC",)
    assert unknown == ("the write cache state (read at the start of the run)", steady)


@needs_fio
def test_the_dry_runs_verdict_is_the_one_the_run_reaches(loopdev, tmp_path, capsys):
    argv = ["ssd", "run", loopdev, "--quick", "--tests", "tp", "--wipc-loops", "2"]
    assert main(argv + ["--dry-run"]) == 0
    said = [ln[len("#   - "):] for ln in capsys.readouterr().out.splitlines() if ln.startswith("#   - ")]
    assert any("not a PTS PURGE" in d for d in said) and any("write cache state unknown" in d for d in said)
    out = tmp_path / "out"
    assert main(argv + ["--yes", "--quiet", "--no-report", "--outdir", str(out), "--name", "r"]) == 0
    found = conformance.of_run(store.load(str(out / "r.xml"))).deviations
    assert set(said) <= set(found), (said, found)
    # what the run adds is what the dry run named as known only after it
    assert all("steady state" in d for d in set(found) - set(said)), found


def test_quick_rounds_read_in_their_own_unit(tmp_path, capsys):
    # issue 60 item 2: "5 to 5 rounds x 0.0 min" for the quick profile's 2-3 s rounds
    out = _dry(tmp_path, capsys, "256m", "--quick", "--tests", "tp,lat")
    assert re.search(r"^# tp-1024k .*  5 rounds x \d+ s \(2 workloads\)$", out, re.M), out
    assert "0.0 min" not in out and "5 to 5 rounds" not in out
