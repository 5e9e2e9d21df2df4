"""NVMe Format and Sanitize: what the controller reports, what tkperf runs.

These tests check tkperf's choice logic and its reading of the sanitize log
with recorded nvme-cli output of real drives (tests/data/purge/README.rst)
and a fake ``programs.run`` that records every argument list
(:class:`FakeTools` in tests/lab/purgefakes.py); they do not format a drive.  The
"device" is a sparse file of the test's own.
"""
from __future__ import annotations

import pytest

from purgefakes import recorded
from tkperf.errors import EXIT_TARGET, TargetError
from tkperf.target import purge, purge_nvme

H10 = ("nvme-optane-h10-id-ctrl.txt", "nvme-optane-h10-id-ns.txt")
PM1733 = ("nvme-samsung-pm1733-id-ctrl.txt", "nvme-samsung-id-ns-4k.txt")
RUNNING = "nvme-intel-660p-sanitize-log-running.txt"
DONE = "nvme-intel-660p-sanitize-log-done.txt"


def test_identify_fields_of_real_controllers():
    h10 = purge_nvme.parse(*(recorded(n) for n in H10), recorded("nvme-optane-h10-list-ns.txt"))
    assert (h10.oacs, h10.fna, h10.sanicap, h10.nn, h10.flbas, h10.dps, h10.dlfeat) == (0x16, 4, 3, 1, 0, 0, 1)
    assert h10.format_ok and h10.single_namespace and h10.zeros_after_deallocate and h10.namespaces == 1
    pm = purge_nvme.parse(*(recorded(n) for n in PM1733), recorded("nvme-list-ns-two-namespaces.txt"))
    assert (pm.oacs, pm.nn, pm.flbas, pm.lbaf(), pm.namespaces) == (0x5f, 32, 2, 2, 2)
    assert not pm.single_namespace
    sn730 = purge_nvme.fields(recorded("nvme-wdc-sn730-id-ctrl.json"))  # nvme-cli -o json
    assert (sn730["oacs"], sn730["fna"], sn730["nn"], sn730["sanicap"] & 0x7) == (23, 4, 1, 3)


def nvme_tools(tools, ids, list_ns=None):
    ctrl, ns = (recorded(n) for n in ids)
    tools.on(["nvme", "id-ctrl"], ctrl).on(["nvme", "id-ns"], ns)
    if list_ns is not None:
        tools.on(["nvme", "list-ns"], recorded(list_ns))
    tools.on(["nvme", "format"], "")
    return tools


def test_auto_formats_with_user_data_erase_keeping_the_lba_format(tools, fake_disk):
    d = fake_disk("nvme")
    nvme_tools(tools, H10)
    rec = purge.purge("auto", d)
    assert rec.method == "nvme-format" and rec.pts_purge
    assert tools.lines() == [f"nvme id-ctrl {d.resolved}", f"nvme id-ns {d.resolved}",
                             f"nvme format {d.resolved} --ses=1 --lbaf=0 --pi=0 --pil=0 --ms=0 --force"]
    assert rec.verification == "not checked: nvme-format does not promise what the blocks read afterwards"


def test_a_4k_namespace_keeps_its_format_and_others_are_left_alone(tools, fake_disk):
    """PM1733 with nn=32: list-ns --all finds two namespaces.  Its format is
    per namespace (FNA bit 0 clear), so Format is fine; a Sanitize would
    reach the other namespace and is refused."""
    d = fake_disk("nvme")
    nvme_tools(tools, PM1733, "nvme-list-ns-two-namespaces.txt")
    rec = purge.purge("nvme", d)
    assert tools.lines()[2:] == [f"nvme list-ns {d.resolved} --all",
                                 f"nvme format {d.resolved} --ses=1 --lbaf=2 --pi=0 --pil=0 --ms=0 --force"]
    assert rec.method == "nvme-format"
    with pytest.raises(TargetError, match="whole NVM subsystem.*nn=32, 2 found.*erase them too") as exc:
        purge.purge("sanitize-block", d)
    assert exc.value.exit_code == EXIT_TARGET
    assert not any(" sanitize " in line for line in tools.lines())


def test_namespaces_unknown_refuses_sanitize(tools, fake_disk):
    """list-ns --all fails on controllers without namespace management
    (recorded error of an Intel SSDPE2MX450G7)."""
    d = fake_disk("nvme")
    tools.on(["nvme", "list-ns"], 1, stderr=recorded("nvme-list-ns-all-invalid-field.txt"))
    nvme_tools(tools, PM1733)
    with pytest.raises(TargetError, match="nn=32, unknown found"):
        purge.purge("sanitize-crypto", d)


def test_crypto_erase_format(tools, fake_disk):
    d = fake_disk("nvme")
    nvme_tools(tools, H10)
    rec = purge.purge("nvme-crypto", d)
    assert tools.lines()[-1] == f"nvme format {d.resolved} --ses=2 --lbaf=0 --pi=0 --pil=0 --ms=0 --force"
    assert rec.method == "nvme-crypto" and rec.pts_purge


def test_overwrite_not_supported_is_refused(tools, fake_disk):
    d = fake_disk("nvme")
    nvme_tools(tools, H10)
    with pytest.raises(TargetError, match="sanitize-overwrite is not possible.*SANICAP 0x3"):
        purge.purge("sanitize-overwrite", d)


def test_sanitize_log_of_real_drives():
    running = purge_nvme.parse_sanitize_log(recorded(RUNNING))
    assert running.running and running.progress == 655 and running.sstat == 2
    done = purge_nvme.parse_sanitize_log(recorded(DONE))
    assert not done.running and done.status == 1 and done.progress == 65535
    assert done.text() == "completed successfully (SSTAT 0x101)"
    assert purge_nvme.parse_sanitize_log("") is None


@pytest.fixture
def no_wait(monkeypatch):
    """The sanitize wait's sleep advances a fake clock instead of waiting."""
    now = [0.0]
    monkeypatch.setattr(purge_nvme, "clock", lambda: now[0])
    monkeypatch.setattr(purge_nvme, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    return now


def test_sanitize_waits_for_completion_with_progress(tools, fake_disk, no_wait, caplog):
    d = fake_disk("nvme")
    tools.on(["sanitize-log"], recorded(DONE), recorded(RUNNING), recorded(RUNNING), recorded(DONE))
    tools.on(["nvme", "sanitize"], "")
    nvme_tools(tools, H10)
    caplog.set_level("INFO", logger="tkperf")
    rec = purge.purge("sanitize-block", d)
    assert tools.lines()[2:] == [f"nvme sanitize-log {d.resolved}", f"nvme sanitize {d.resolved} --sanact=2"] + \
        [f"nvme sanitize-log {d.resolved}"] * 3
    assert rec.method == "sanitize-block" and rec.pts_purge
    assert rec.command == f"{tools.calls[3][0]} sanitize {d.resolved} --sanact=2"
    # the H10 promises zeros for deallocated blocks (DLFEAT 1): read back
    assert rec.verification == ("sanitize log: completed successfully (SSTAT 0x101); "
                                "read 64 MiB at 16 places: all zeros")
    assert "sanitize 1.0% done" in caplog.text


def test_a_running_sanitize_is_waited_for_before_starting(tools, fake_disk, no_wait):
    d = fake_disk("nvme")
    tools.on(["sanitize-log"], recorded(RUNNING), recorded(DONE))
    tools.on(["nvme", "sanitize"], "")
    nvme_tools(tools, H10)
    purge.purge("sanitize-crypto", d)
    assert tools.lines()[2:5] == [f"nvme sanitize-log {d.resolved}"] * 2 + [f"nvme sanitize {d.resolved} --sanact=4"]


def test_a_stuck_sanitize_is_reported(tools, fake_disk, no_wait):
    """The recorded Intel 660p log that stayed at SPROG 655 for a week."""
    d = fake_disk("nvme")
    tools.on(["sanitize-log"], recorded(DONE), recorded(RUNNING))
    tools.on(["nvme", "sanitize"], "")
    nvme_tools(tools, H10)
    with pytest.raises(TargetError, match="has not progressed for 6 h \\(SPROG 655 of 65536\\)"):
        purge.purge("sanitize-block", d)
    assert no_wait[0] > purge_nvme.STALL_S


def test_an_interrupted_sanitize_says_it_goes_on(tools, fake_disk, no_wait, caplog):
    d = fake_disk("nvme")
    tools.on(["sanitize-log"], recorded(DONE), KeyboardInterrupt())
    tools.on(["nvme", "sanitize"], "")
    nvme_tools(tools, H10)
    with pytest.raises(KeyboardInterrupt):
        purge.purge("sanitize-block", d)
    assert "goes on inside the drive" in caplog.text
