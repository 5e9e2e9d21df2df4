"""The conformance verdict's paths that tests/e2e/test_conformance.py leaves
out: the steady-state window, a vendor purge command, the HDD profile, a
data pattern, a file imported from the original TKperf, a run whose
write-cache option differs from the state recorded (the record wins),
each setting's limit from both sides, and the one-line sentence.

Each deviation is asserted as its whole text, present in the list: new
deviations (of other test types, of other settings) may join the list
without breaking these tests, but a changed wording cannot pass."""
from __future__ import annotations

import dataclasses

import pytest

from conftest import data_path
from tkperf import store
from tkperf.kit import options
from tkperf.model.results import DeviceInfo, Event, HostInfo, IoStats, PurgeRecord, Round, RunResult, TestRun, Workload
from tkperf.model.steadystate import evaluate
from tkperf.verdict import conformance

BLOCK = DeviceInfo(path="/dev/sdx", resolved="/dev/sdx", kind="block", size_bytes=400 * 10 ** 9,
                   transport="sata", write_cache="WCD")
ENTERPRISE = "SNIA PTS 2.0.2, enterprise"


def opts(**given) -> dict:
    """The stored options of an IOPS run with every PTS parameter but ``given``."""
    return options.build({"tests": ("iops",), **given}).to_dict()


def settings(profile: str = "ssd", **given) -> tuple:
    return conformance.of_settings(opts(**given), BLOCK, profile).deviations


def result(device: DeviceInfo = BLOCK, **given) -> RunResult:
    """A complete IOPS run, steady, purged by ATA secure erase (a PTS PURGE)."""
    t = TestRun(type="iops", key="iops", tracking_workload="rnd-4k-0-100", tracking_metric="write.iops",
                tracking_label="RND 4k 0/100 IOPS", status="complete", stop_reason="steady state",
                purge=PurgeRecord("auto", "ata-secure-erase", 30.0, True, "hdparm ...", ""))
    for i, v in enumerate((100.0, 101.0, 99.0, 100.0, 100.5), 1):
        w = Workload(name="rnd-4k-0-100", rw="randrw", bs=4096, rwmixread=0, numjobs=4, iodepth=32,
                     runtime_ms=60000, write=IoStats(iops=v, ios=int(v)))
        t.rounds.append(Round(index=i, started="", wall_s=60.3, fio_s=60.0, workloads=(w,)))
    t.steady = t.evaluate()
    return RunResult(name="r", started="", device=device, host=HostInfo(), options=opts(**given),
                     status="complete", tests=[t])


def test_the_base_of_these_tests_is_conformant():
    assert settings() == ()
    c = conformance.of_run(result())
    assert c.deviations == () and c.conformant
    assert c.sentence() == f"PTS-conformant ({ENTERPRISE})"


# --- the steady-state window ---------------------------------------------------------------

@pytest.mark.parametrize("window, deviates", [(4, True), (5, False), (6, True), (2, True)])
def test_the_steady_state_window_is_five_rounds(window, deviates):
    text = f"steady state judged over {window} rounds instead of 5"
    assert (text in settings(window=window)) is deviates
    assert (text in conformance.of_run(result(window=window)).deviations) is deviates
    if not deviates:
        assert not any("steady state judged" in d for d in settings(window=window))


# --- the other settings at their limits ----------------------------------------------------

@pytest.mark.parametrize("runtime, deviates", [(59, True), (60, False), (61, True)])
def test_the_runtime_is_60_s(runtime, deviates):
    text = f"workloads run {runtime} s each instead of 60 s"
    assert (text in settings(runtime=runtime)) is deviates


@pytest.mark.parametrize("loops, deviates", [(1, True), (2, False), (3, True), (0, True)])
def test_wipc_is_twice_the_active_range(loops, deviates):
    text = f"WIPC writes {loops}x the active range instead of 2x"
    assert (text in settings(wipc_loops=loops)) is deviates


@pytest.mark.parametrize("ar, deviates", [(99, True), (100, False)])
def test_the_active_range(ar, deviates):
    text = f"active range {ar}% instead of the 100% {ENTERPRISE} requires"
    assert (text in settings(active_range=ar)) is deviates


def test_unreadable_numbers_are_not_judged():
    stored = opts()
    stored.update(runtime="", max_rounds="many", window="x", wipc_loops="", active_range="all")
    assert conformance.of_settings(stored, BLOCK).deviations == ()


# --- purge ---------------------------------------------------------------------------------

VENDOR = "PURGE by a vendor command (--purge-cmd), which tkperf cannot count as a PTS PURGE"


def test_a_vendor_purge_command_is_not_a_pts_purge():
    assert VENDOR in settings(purge="cmd:vendor-tool --sanitize {device}")
    run = result(purge="cmd:vendor-tool --sanitize {device}")
    run.tests[0].purge = PurgeRecord("cmd", "vendor command", 12.0, False, "vendor-tool --sanitize /dev/sdx", "")
    found = conformance.of_run(run).deviations
    assert VENDOR in found
    # the tests it purged are named as well: a vendor purge is judged per test, unlike none or discard
    assert "purged by vendor command, which is not a PTS PURGE (iops)" in found


@pytest.mark.parametrize("purge, text", [
    ("none", "no PURGE before the tests (--purge none)"),
    ("discard", "PURGE by whole-device discard, which is not a PTS PURGE"),
])
def test_no_purge_or_discard_is_said_once_with_the_settings(purge, text):
    run = result(purge=purge)
    run.tests[0].purge = PurgeRecord(purge, purge, 0.0, False, "", "")
    found = conformance.of_run(run).deviations
    assert text in found
    assert not any(d.startswith("purged by") for d in found)


def test_tests_purged_alike_are_named_together():
    run = result()
    second = TestRun(type="iops", key="iops-2", tracking_workload="", tracking_metric="", tracking_label="",
                     status="", purge=PurgeRecord("auto", "discard", 0.1, False, "", ""))
    third = TestRun(type="iops", key="iops-3", tracking_workload="", tracking_metric="", tracking_label="",
                    status="", purge=PurgeRecord("auto", "format", 0.1, False, "", ""))
    run.tests[0].purge = PurgeRecord("auto", "discard", 0.1, False, "", "")
    run.tests += [second, third]
    found = conformance.of_run(run).deviations
    assert "purged by discard, which is not a PTS PURGE (iops, iops-2)" in found
    assert "purged by format, which is not a PTS PURGE (iops-3)" in found


# --- profile, data pattern, target ---------------------------------------------------------

HDD = "hdd run: the SNIA PTS is a solid-state test; this profile skips PURGE and WIPC"


def test_the_hdd_profile_is_not_the_pts():
    assert HDD in settings(profile="hdd")
    # what the profile skips is said once, not again as a WIPC of 0x and a missing PURGE
    hdd = settings(profile="hdd", wipc_loops=0, purge="none")
    assert not any(d.startswith(("WIPC writes", "no PURGE", "a WIPC")) for d in hdd), hdd
    assert "a WIPC of 1x the active range before the tests (the HDD profile's default: none)" in \
        settings(profile="hdd", wipc_loops=1)
    assert HDD not in settings()
    run = result()
    run.profile = "hdd"
    assert HDD in conformance.of_run(run).deviations
    run.profile = ""
    assert HDD not in conformance.of_run(run).deviations  # an older file's run: the SSD profile


def test_an_hdd_run_is_headed_not_a_pts_run_and_judges_against_no_revision():
    """An HDD run's verdict (issue 55 item 8): headed 'HDD profile: not a
    SNIA PTS run', its lines disclosures set against tkperf's defaults, none
    naming a PTS revision or what one requires; never conformant."""
    run = store.load(data_path("golden/inputs/hdd-iops.xml"))  # tkperf hdd run LOOP --quick --tests hdd-iops
    assert run.profile == "hdd" and run.device.write_cache == ""
    c = conformance.of_run(run)
    assert not c.pts_run and not c.conformant
    assert c.sentence() == "HDD profile: not a SNIA PTS run: 6 disclosures"
    assert c.heading() == conformance.HDD_HEADING
    assert c.deviations == (HDD, "--quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)",
                            "workloads run 1 s each instead of the default 60 s",
                            "at most 5 rounds per test instead of the default 25",
                            "write cache state unknown (tkperf could not read it on this target)",
                            "hdd-iops: no steady state within 5 rounds (not steady: RND 4k 100/0 QD4 IOPS)")
    assert not any("SNIA PTS 2" in d or "requires" in d or "not a SNIA PTS test" in d for d in c.deviations)
    assert c.as_dict() == {"conformant": False, "deviations": list(c.deviations),
                           "verdict": c.sentence(), "pts_run": False}
    from tkperf import notify
    assert notify.subject("n", "h", run, None) == "tkperf: n complete on h (not a PTS run)"
    # a recorded cache state is disclosed, not judged; a PTS test type under the HDD profile is not judged either
    run.device = dataclasses.replace(run.device, write_cache="WCE")
    run.options = {**run.options, "tests": "hdd-iops,iops"}
    found = conformance.of_run(run).deviations
    assert "write cache WCE during the run (kept as found)" in found
    run.options = {**run.options, "write_cache": "on"}
    assert "write cache WCE during the run (set on by --write-cache)" in conformance.of_run(run).deviations
    assert not any("requires" in d or "IOPS matrix" in d for d in found), found
    # the same run under the SSD profile is judged against its revision
    run.profile = "ssd"
    judged = conformance.of_run(run)
    assert judged.pts_run and judged.sentence().startswith(f"NOT PTS-conformant ({ENTERPRISE}): ")
    assert f"write cache was WCE during the run ({ENTERPRISE} requires WCD)" in judged.deviations


def hdd_opts(**given) -> dict:
    """An hdd-iops run's stored options as ``hdd run`` builds them (no PURGE, no WIPC unless given)."""
    return options.build({"tests": ("hdd-iops",), "purge": "none", "wipc_loops": 0, **given},
                         profile="hdd").to_dict()


def test_the_hdd_profiles_settings_are_disclosed_before_the_run():
    c = conformance.of_settings(hdd_opts(runtime=5, write_cache="on", purge="discard", active_range=50), BLOCK, "hdd")
    assert c.sentence() == "HDD profile: not a SNIA PTS run: 5 disclosures"
    assert c.deviations == (HDD, "workloads run 5 s each instead of the default 60 s",
                            "the disk was purged before each test (--purge discard; the HDD profile's default: none)",
                            "the tests use 50% of the disk's LBA range",
                            "write cache set on (the HDD profile's default: kept as found)")
    bare = conformance.of_settings(hdd_opts(), BLOCK, "hdd")
    assert bare.sentence() == "HDD profile: not a SNIA PTS run: 1 disclosure" and bare.deviations == (HDD,)


@pytest.mark.parametrize("pattern", ["zero", "compressible:50"])
def test_a_data_pattern_other_than_random(pattern):
    text = (f"data pattern {pattern} instead of random (incompressible) data: a drive that "
            "compresses or deduplicates would look faster than it is")
    assert text in settings(data_pattern=pattern)
    assert text in conformance.of_run(result(data_pattern=pattern)).deviations
    assert not any(d.startswith("data pattern") for d in settings(data_pattern="random"))


# --- the write cache: the option before the run, the state recorded after it --------------

@pytest.mark.parametrize("option", ["on", "keep", "off"])
def test_after_the_run_the_recorded_write_cache_wins_over_the_option(option):
    c = conformance.of_run(result(write_cache=option))  # recorded: WCD, as the PTS requires
    assert not any("write cache" in d for d in c.deviations), c.deviations
    assert c.conformant


@pytest.mark.parametrize("option", ["on", "keep", "off"])
def test_a_recorded_wce_deviates_whatever_the_option(option):
    run = result(DeviceInfo(**{**BLOCK.__dict__, "write_cache": "WCE"}), write_cache=option)
    cache = [d for d in conformance.of_run(run).deviations if "write cache" in d]
    assert cache == [f"write cache was WCE during the run ({ENTERPRISE} requires WCD)"]


@pytest.mark.parametrize("recorded", ["", "write back", "write through"])
def test_a_write_cache_state_not_recorded_is_unknown(recorded):
    run = result(DeviceInfo(**{**BLOCK.__dict__, "write_cache": recorded}), write_cache="off")
    cache = [d for d in conformance.of_run(run).deviations if "write cache" in d]
    assert cache == [f"write cache state unknown ({ENTERPRISE} requires WCD)"]


@pytest.mark.parametrize("option, text", [
    ("on", f"write cache set on ({ENTERPRISE} requires WCD)"),
    ("keep", f"write cache kept as found ({ENTERPRISE} requires WCD)"),
])
def test_before_the_run_the_option_is_judged(option, text):
    assert text in settings(write_cache=option)
    assert not any("write cache" in d for d in settings(write_cache="off"))


def test_the_client_revision_wants_the_cache_on():
    stored = options.build({"tests": ("iops",), "write_cache": "on", "active_range": 75}, pts="pts-c-2.0").to_dict()
    assert not any("write cache" in d for d in conformance.of_settings(stored, BLOCK).deviations)
    run = result()
    run.options = stored
    assert "write cache was WCD during the run (SNIA PTS 2.0.2, client requires WCE)" in \
        conformance.of_run(run).deviations


# --- what only the results show --------------------------------------------------------------

def test_a_run_that_did_not_complete():
    run = result()
    run.status = "interrupted"
    assert "the run did not complete (status: interrupted)" in conformance.of_run(run).deviations


def test_a_resumed_run_without_test_names():
    run = result()
    run.events.append(Event("", "resume", "resumed", "", 0))
    assert "the run was interrupted and resumed" in conformance.of_run(run).deviations


def test_a_resumed_run_names_its_tests():
    run = result()
    run.events += [Event("", "resume", "resumed", "tp-1024k", 3), Event("", "resume", "resumed", "iops", 2),
                   Event("", "resume", "resumed", "iops", 4)]
    assert "the run was interrupted and resumed (iops, tp-1024k)" in conformance.of_run(run).deviations


#: A verdict of no steady state names the one tracked variable too (issue 43 item 9).
NAMED = " (not steady: RND 4k 0/100 IOPS)"


def test_no_steady_state_counts_the_rounds_that_measured_the_tracking_workload():
    run = result()
    t = run.tests[0]
    t.steady = evaluate([1, 2, 3, 4, 5], [100, 50, 100, 50, 100])
    # a sixth round (interrupted, resumed) without the tracking workload
    t.rounds.append(Round(index=6, started="", wall_s=1.0, fio_s=1.0, workloads=()))
    assert f"iops: no steady state within 5 rounds{NAMED}" in conformance.of_run(run).deviations
    # none measured it: the rounds run are counted
    t.tracking_workload = "rnd-4k-65-35"
    assert f"iops: no steady state within 6 rounds{NAMED}" in conformance.of_run(run).deviations


def test_tests_that_did_not_finish_or_reach_steady_state():
    run = result()
    t = run.tests[0]
    t.steady = evaluate([1, 2, 3, 4, 5], [100, 50, 100, 50, 100])
    failed = TestRun("tp", "tp-1024k", "seq-1024k-w", "write.bw_bytes", "", status="failed")
    untracked = TestRun("lat", "lat", "", "", "", status="complete")  # no tracking workload: not judged
    pending = TestRun("wsat", "wsat", "rnd-4k-0-100", "write.iops", "", status="")
    run.tests += [failed, untracked, pending]
    found = conformance.of_run(run).deviations
    assert f"iops: no steady state within 5 rounds{NAMED}" in found
    assert "tp-1024k: test failed" in found
    assert not any(d.startswith(("lat:", "wsat:")) for d in found)
    t.steady = None
    assert "iops: no steady state within 5 rounds" in conformance.of_run(run).deviations


def test_each_deviation_is_said_once_in_order():
    run = result(iops_bs=(4096,))
    run.options["tests"] = "iops,iops"  # the same test type's deviations twice
    found = conformance.of_run(run).deviations
    assert len(found) == len(set(found)) and found


# --- a file of the original TKperf -----------------------------------------------------------

def test_the_verdict_on_an_imported_tkperf_1_file():
    run = store.load(data_path("tkperf2/ssd-1.0-samsung840.xml"))
    c = conformance.of_run(run)
    assert c.revision == "revision not recorded (imported from TKperf 1.0)"
    missing = "; ".join(run.facts["imported"]["not_recorded"])
    assert "write cache state" in missing
    # and its IOPS and LAT rounds replayed their offsets (each a new fio process, issue 43)
    assert c.deviations == (f"imported from a result file of the original TKperf 1.0: cannot be known: {missing}",
                            conformance.REPLAYED_ROUNDS.format(key="iops"),
                            conformance.REPLAYED_ROUNDS.format(key="lat"))
    assert c.sentence() == "NOT PTS-conformant (revision not recorded (imported from TKperf 1.0)): 3 deviations"
    assert c.as_dict() == {"conformant": False, "deviations": list(c.deviations), "verdict": c.sentence(),
                           "pts_run": True}


def test_an_imported_file_that_says_little():
    run = result()
    run.facts = {"imported": {}}
    c = conformance.of_run(run)
    assert c.revision == "revision not recorded (imported from TKperf 1.x)"
    assert c.deviations == ("imported from a result file of the original TKperf 1.x: cannot be known: its settings",
                            conformance.REPLAYED_ROUNDS.format(key="iops"))  # no tool named: TKperf's
    run.facts = {"imported": {"tool": "OtherTool", "version": "3.1", "not_recorded": ["a", 2]}}
    c = conformance.of_run(run)
    assert c.revision == "revision not recorded (imported from OtherTool 3.1)"
    assert c.deviations == ("imported from a result file of the original TKperf 3.1: cannot be known: a; 2",)
    run.facts = {"imported": "yes"}  # not what an import writes: judged as a run of tkperf
    assert conformance.of_run(run).conformant
    run.facts = None  # not a dict at all (a hand-made RunResult): no import, judged the same
    assert conformance.of_run(run).conformant


def test_the_sentence_counts_deviations():
    assert conformance.Conformance("R", ("a",)).sentence() == "NOT PTS-conformant (R): 1 deviation"
    assert conformance.Conformance("R", ("a", "b")).sentence() == "NOT PTS-conformant (R): 2 deviations"
    assert conformance.Conformance("R", ()).sentence() == "PTS-conformant (R)"


def test_options_an_older_file_did_not_store_are_not_deviations():
    assert conformance.of_settings({}, BLOCK).deviations == ()
    assert conformance.of_settings({"runtime": None, "tests": ""}, BLOCK).deviations == ()


def test_the_quick_profile_in_words():
    stored = options.build({"tests": ("iops",)}, quick=True).to_dict()
    assert "--quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)" in \
        conformance.of_settings(stored, BLOCK).deviations


def test_a_missing_test_type_does_not_hide_the_next_ones():
    stored = dict(opts(iops_bs=(4096,)), tests="nosuch,iops")
    found = conformance.of_settings(stored, BLOCK).deviations
    assert found[0] == "test type 'nosuch' is not installed, its settings cannot be checked"
    assert len(found) > 1  # the IOPS matrix narrowed, said after it
    assert found[1:] == conformance.of_settings(opts(iops_bs=(4096,)), BLOCK).deviations


# --- after issue 19: the survivors of a mutation run on conformance ----------------------------

def test_an_unknown_test_type_without_steady_state_is_judged_without_its_variables():
    run = result()
    t = run.tests[0]
    t.type = "nosuch"  # a plug-in no longer installed
    t.steady = evaluate([1, 2, 3, 4, 5], [100, 50, 100, 50, 100])
    assert f"iops: no steady state within 5 rounds{NAMED}" in conformance.of_run(run).deviations


def test_the_variables_that_failed_are_listed_with_commas():
    from tkperf.model.results import Workload as W

    run = result(iops_bs=(4096, 65536, 1024 * 1024), iops_mixes=(0, 65, 100))
    t = run.tests[0]
    t.params["also_tracking"] = "rnd-64k-65-35:iops,rnd-1024k-100-0:iops"
    t.rounds.clear()
    for i in range(1, 6):  # RND 4k 0/100 steady; 64k 65/35 and 1024k 100/0 swing
        swing = 100.0 if i % 2 else 40.0
        t.rounds.append(Round(index=i, started="", wall_s=1.0, fio_s=1.0, workloads=(
            W("rnd-4k-0-100", "randrw", 4096, 0, 4, 32, 60000, write=IoStats(iops=100.0, ios=100)),
            W("rnd-64k-65-35", "randrw", 65536, 65, 4, 32, 60000, read=IoStats(iops=swing, ios=100),
              write=IoStats(iops=swing, ios=100)),
            W("rnd-1024k-100-0", "randrw", 1024 * 1024, 100, 4, 32, 60000, read=IoStats(iops=swing, ios=100)))))
    t.steady = evaluate([1, 2, 3, 4, 5], [100, 50, 100, 50, 100])
    found = [d for d in conformance.of_run(run).deviations if d.startswith("iops: no steady state")]
    assert found == ["iops: no steady state within 5 rounds "
                     "(not steady: RND 64k 65/35 IOPS, RND 1024k 100/0 IOPS)"], found


@pytest.mark.parametrize("rev, deviates", [("pts-c-1.1", False), ("pts-e-2.0", True)])
def test_a_test_range_is_judged_by_the_revision(rev, deviates):
    found = conformance.of_settings(opts(pts=rev, active_range=80 if rev == "pts-c-1.1" else 100,
                                         test_range=8 * 2 ** 30), BLOCK).deviations
    text = ("tests use the first 8 GiB of the LBA range instead of the whole preconditioned range "
            f"({ENTERPRISE})")
    assert (text in found) == deviates, found
    assert not any("8 GiB" in d for d in found) or deviates
    # PTS-C 1.1's own 8 GiB: one span, not its 2,048 ActiveRange segments (issue 43)
    segments = [d for d in found if "ActiveRange segments" in d]
    assert len(segments) == (0 if deviates else 1), found


def test_a_window_that_ends_in_round_25_is_a_pts_steady_state():
    run = result()
    t = run.tests[0]
    t.steady = evaluate([21, 22, 23, 24, 25], [100.0, 101.0, 99.0, 100.0, 100.5])
    assert t.steady.steady and conformance.late_window(t) is False
    assert not any("after round 25" in d for d in conformance.of_run(run).deviations)
    t.steady = evaluate([22, 23, 24, 25, 26], [100.0, 101.0, 99.0, 100.0, 100.5])
    assert conformance.late_window(t) is True


def test_planned_and_result_deviations_are_given_the_revision(monkeypatch):
    """A test type may judge by the revision (the interface passes it): a
    plug-in whose deviations name the revision shows it before and after."""
    from tkperf.kit import registry
    from tkperf.kit.base import PtsRules
    from tkperf.testtypes.iops import IopsTest

    class Rules(PtsRules):
        def planned_deviations(self, kind, options, revision):
            return [f"planned under {revision.title}"]

        def result_deviations(self, kind, test, options, revision, capacity):
            return [f"measured under {revision.title}"]

    class ByRevision(IopsTest):
        pts = Rules()

    monkeypatch.setattr(registry, "get", lambda name: ByRevision() if name == "iops" else None)
    assert f"planned under {ENTERPRISE}" in conformance.of_settings(opts(), BLOCK).deviations
    assert f"measured under {ENTERPRISE}" in conformance.of_run(result()).deviations


_RANGE = "tests use 10,000,000,000 bytes in {n} ActiveRange segments instead of the whole preconditioned range " \
         "(SNIA PTS 2.0.2, enterprise)"
_FIRST = "tests use the first 10,000,000,000 bytes of the LBA range instead of the whole preconditioned range " \
         "(SNIA PTS 2.0.2, enterprise)"
_TOUCH = "ActiveRange segments {how} (layout of an earlier tkperf; SNIA: \"ActiveRange segments shall not touch " \
         "to form a single segment\")"
_NARROWED = "WSAT ran over the test range ({where}), not the whole active range: SNIA defines the test range for " \
            "three PTS tests only; an earlier tkperf narrowed every test"


@pytest.mark.parametrize("given, device_size, want", [
    ({}, 400 * 10 ** 9, []),
    # a test range no chosen test runs over (WSAT, the rules of now): nothing to say of it
    ({"tests": "wsat", "range_rules": "2"}, 400 * 10 ** 9, []),
    ({}, 400 * 10 ** 9, [_FIRST]),
    # an earlier tkperf's rules narrowed every test, WSAT too: said, one span or in segments
    ({"tests": "iops,wsat", "range_rules": "1"}, 400 * 10 ** 9, [_FIRST, _NARROWED.format(
        where="one span at the start of the LBA range")]),
    ({"tests": "iops,wsat", "range_rules": "2"}, 400 * 10 ** 9, [_FIRST]),
    ({"tests": "wsat", "ar_segments": "8", "range_rules": "1"}, 400 * 10 ** 9,
     [_RANGE.format(n="8"), _NARROWED.format(where="in 8 ActiveRange segments")]),
    # segments of an earlier tkperf's layout: regenerated, they touch or not; no device size, they may
    ({"ar_segments": "8", "range_rules": "1"}, 400 * 10 ** 9, [_RANGE.format(n="8")]),
    ({"ar_segments": "8", "range_rules": "2"}, 400 * 10 ** 9, [_RANGE.format(n="8")]),
    ({"ar_segments": "1000", "range_rules": "1"}, 400 * 10 ** 9,
     [_RANGE.format(n="1,000"), _TOUCH.format(how="touch: 28 of 999 neighbouring pairs")]),
    ({"ar_segments": "8", "range_rules": "1"}, 0, [_RANGE.format(n="8"), _TOUCH.format(how="may touch")]),
])
def test_the_test_range_deviations_each_path(given, device_size, want):
    o = opts()
    if given or want:
        o.update({"test_range": "10000000000", **given})
    found = conformance.of_settings(o, dataclasses.replace(BLOCK, size_bytes=device_size), "ssd").deviations
    said = [d for d in found if "range" in d.lower() or "segment" in d.lower()]
    assert said == want
