"""ATA SECURITY ERASE: the security state, the choice, the password.

These tests check tkperf's choice logic and state handling with recorded
``hdparm -I`` output of real drives (tests/data/purge/README.rst) and a
fake ``programs.run`` that records every argument list (:class:`FakeTools`
in tests/lab/purgefakes.py); they do not erase a drive.  The "device" is a sparse file
of the test's own.
"""
from __future__ import annotations

import logging
import os
import signal

import pytest

from conftest import data_path
from purgefakes import recorded
from tkperf.errors import EXIT_TARGET, EXIT_TOOL, Interrupted, TargetError, ToolError
from tkperf.target import guard, parsers, purge, purge_ata

NOT_FROZEN = "hdparm-sandisk-extreme-portable-not-frozen.txt"
FROZEN = "hdparm-samsung-840-frozen.txt"
ENABLED = "hdparm-security-enabled.txt"
SG_IO_ERROR = "hdparm-sg-io-error.txt"


def recorded_facts(name: str) -> str:
    """A recording of tests/data/facts/ (README.rst there says whose)."""
    with open(data_path(os.path.join("facts", name)), encoding="utf-8") as fh:
        return fh.read()


def test_security_section_of_real_drives():
    """purge_ata reads the state with parsers.ata_security, the one parser."""
    sec = parsers.ata_security(recorded(NOT_FROZEN))
    assert (sec.supported, sec.enabled, sec.locked, sec.frozen, sec.count_expired) == (True, False, False, False, False)
    assert sec.enhanced_erase_supported and sec.erase_minutes == 2 and sec.enhanced_erase_minutes == 2
    frozen = parsers.ata_security(recorded(FROZEN))
    assert frozen.frozen and frozen.supported and not frozen.enabled
    enabled = parsers.ata_security(recorded(ENABLED))  # a security section indented with spaces
    assert enabled.enabled and not enabled.locked and not enabled.frozen and enabled.supported
    assert parsers.ata_security("") == parsers.AtaSecurity()  # no Security section: not supported


@pytest.mark.parametrize("answer, rzat", [
    (recorded(NOT_FROZEN), True),
    (recorded(FROZEN), True),
    # "Deterministic read data after TRIM" only: trimmed blocks need not read as zeros
    (recorded_facts("hdparm-I-crucial-m4-ct128m4ssd2-locked.txt"), False),
    (1, False),  # hdparm fails (no ATA identification)
], ids=["sandisk-rzat", "samsung-840-rzat", "crucial-m4-drat-only", "hdparm-fails"])
def test_zeros_after_trim_from_the_feature_list(answer, rzat, tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], answer, stderr="SG_IO: bad/missing sense data")
    assert purge_ata.reads_zeros_after_trim(d) is rzat
    assert tools.lines() == [f"hdparm -I {d.resolved}"]


def ata_lines(d, *erase):
    return [f"hdparm -I {d.resolved}",
            f"hdparm --user-master u --security-set-pass tkperf {d.resolved}",
            f"hdparm --user-master u {erase[0] if erase else '--security-erase-enhanced'} tkperf {d.resolved}",
            f"hdparm -I {d.resolved}"]


def test_auto_takes_the_enhanced_erase_and_checks_the_password_is_gone(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["hdparm"], "")
    rec = purge.purge("auto", d)
    assert rec.method == "ata-enhanced" and rec.pts_purge and rec.requested == "auto"
    assert tools.lines() == ata_lines(d)
    assert rec.command.count("--security-") == 2
    assert rec.verification == ("security not enabled after the erase; not checked: ata-enhanced does "
                                "not promise what the blocks read afterwards")


def test_normal_erase_promises_zeros_and_is_read_back(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["hdparm"], "")
    rec = purge.purge("ata-normal", d)
    assert tools.lines() == ata_lines(d, "--security-erase")
    assert rec.verification == "security not enabled after the erase; read 64 MiB at 16 places: all zeros"


def test_frozen_drive_is_refused_with_the_remedy(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(FROZEN))
    with pytest.raises(TargetError, match="frozen.*suspend and resume.*hot-plug") as exc:
        purge.purge("auto", d)
    assert exc.value.exit_code == EXIT_TARGET
    assert tools.lines() == [f"hdparm -I {d.resolved}"]  # no password was set


def test_without_security_auto_falls_back_to_discard(tools, fake_disk):
    """hdparm -I that reports nothing (as through a bridge that does not
    pass IDENTIFY): no SECURITY ERASE; auto discards and says so, an
    explicit --purge ata is refused."""
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], 1, stderr="SG_IO: bad/missing sense data").on(["blkdiscard"], "")
    rec = purge.purge("auto", d)
    assert rec.method == "discard" and not rec.pts_purge and "not a PTS PURGE" in rec.note
    assert rec.verification.startswith("not checked: the device does not promise zeros")
    with pytest.raises(TargetError, match="does not support the ATA security feature set"):
        purge.purge("ata", d)


def test_failed_erase_clears_the_password(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN))
    tools.on(["--security-erase-enhanced"], 5, stderr=recorded(SG_IO_ERROR))
    tools.on(["hdparm"], "")
    with pytest.raises(ToolError, match="purge \\(ata-enhanced\\) failed: SG_IO: bad/missing sense data") as exc:
        purge.purge("auto", d)
    assert exc.value.exit_code == EXIT_TOOL
    assert tools.lines()[-2:] == [f"hdparm --user-master u --security-erase-enhanced tkperf {d.resolved}",
                                  f"hdparm --user-master u --security-disable tkperf {d.resolved}"]


@pytest.mark.parametrize("interruption", [KeyboardInterrupt(), Interrupted(signal.SIGTERM, "SIGTERM")])
def test_interrupted_erase_clears_the_password(interruption, tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["--security-erase-enhanced"], interruption)
    tools.on(["hdparm"], "")
    with pytest.raises(type(interruption)):
        purge.purge("auto", d)
    assert tools.lines()[-1] == f"hdparm --user-master u --security-disable tkperf {d.resolved}"


def test_a_real_signal_during_the_erase_clears_the_password(tools, fake_disk):
    """SIGINT arrives while hdparm erases; tkperf's handler (guard) turns it
    into Interrupted and ignores further signals while the clean-up runs."""
    d = fake_disk("sata", "ATA")

    def erase_then_signal(argv):
        os.kill(os.getpid(), signal.SIGINT)
        return ""

    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["--security-erase-enhanced"], erase_then_signal)
    tools.on(["hdparm"], "")
    with guard.signals_raise():
        with pytest.raises(Interrupted, match="SIGINT"):
            purge.purge("auto", d)
    assert tools.lines()[-1] == f"hdparm --user-master u --security-disable tkperf {d.resolved}"


def test_a_failing_disable_does_not_hide_the_erase_error(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN))
    tools.on(["--security-erase-enhanced"], 5, stderr=recorded(SG_IO_ERROR))
    tools.on(["--security-disable"], OSError("no such device"))
    tools.on(["hdparm"], "")
    with pytest.raises(ToolError, match="ata-enhanced"):
        purge.purge("auto", d)


def test_password_left_by_an_earlier_run_is_cleared_first(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(ENABLED), recorded(NOT_FROZEN)).on(["hdparm"], "")
    rec = purge.purge("auto", d)
    assert tools.lines()[:3] == [f"hdparm -I {d.resolved}",
                                 f"hdparm --user-master u --security-disable tkperf {d.resolved}",
                                 f"hdparm --user-master u --security-set-pass tkperf {d.resolved}"]
    assert rec.method == "ata-enhanced"


def test_someone_elses_password_is_refused(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(ENABLED))
    tools.on(["--security-disable"], 5, stderr=recorded(SG_IO_ERROR))
    with pytest.raises(TargetError, match="password that is not tkperf's.*--security-disable PASSWORD"):
        purge.purge("auto", d)
    assert not any("--security-set-pass" in line for line in tools.lines())


def test_locked_drive_is_unlocked_then_disabled(tools, fake_disk):
    """No recording of a locked drive was found: the state is built here."""
    d = fake_disk("sata", "ATA")
    locked = parsers.AtaSecurity(present=True, supported=True, enabled=True, locked=True,
                                   enhanced_erase_supported=True)
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["hdparm"], "")
    purge_ata.erase(d, "ata-enhanced", locked, timeout=60)
    assert tools.lines()[:3] == [f"hdparm --user-master u --security-unlock tkperf {d.resolved}",
                                 f"hdparm --user-master u --security-disable tkperf {d.resolved}",
                                 f"hdparm --user-master u --security-set-pass tkperf {d.resolved}"]


@pytest.mark.parametrize("state, variant, logged", [
    (parsers.ata_security(recorded(NOT_FROZEN)), "ata-enhanced", "2 min for the enhanced erase"),
    (parsers.ata_security(recorded_facts("hdparm-I-toshiba-hdwd110-no-enhanced-erase.txt")), "ata-normal",
     "160 min for the normal erase"),
    # Built: no recording of a saturated estimate ("more than 508min") was found.
    (parsers.AtaSecurity(present=True, supported=True, enhanced_erase_supported=True,
                         enhanced_erase_minutes=508, erase_time_at_least=True),
     "ata-enhanced", "more than 508 min for the enhanced erase"),
    # Built: no recording of a drive without an estimate line was found (minutes None).
    (parsers.AtaSecurity(present=True, supported=True), "ata-normal", None),
], ids=["sandisk", "toshiba-normal", "more-than", "no-estimate"])
def test_the_drives_estimate_is_logged_only_when_it_gives_one(state, variant, logged, tools, fake_disk, caplog):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN)).on(["hdparm"], "")
    with caplog.at_level(logging.INFO, logger="tkperf"):
        done, status = purge_ata.erase(d, variant, state, timeout=60)
    assert status == "security not enabled after the erase" and len(done) == 2
    estimates = [r.getMessage() for r in caplog.records if "estimates" in r.getMessage()]
    assert estimates == ([f"purge: the drive estimates {logged}"] if logged else [])


def test_password_still_set_after_the_erase_is_cleared(tools, fake_disk):
    d = fake_disk("sata", "ATA")
    tools.on(["hdparm", "-I"], recorded(NOT_FROZEN), recorded(ENABLED), recorded(NOT_FROZEN))
    tools.on(["hdparm"], "")
    rec = purge.purge("auto", d)
    assert tools.lines()[4] == f"hdparm --user-master u --security-disable tkperf {d.resolved}"
    assert rec.verification.startswith("security not enabled after the erase")


@pytest.mark.parametrize("state, requested, message", [
    (parsers.AtaSecurity(present=True, supported=True, count_expired=True), "ata", "security count expired"),
    (parsers.AtaSecurity(present=True, supported=True), "ata-enhanced", "does not support ENHANCED"),
])
def test_states_that_refuse_an_erase(state, requested, message, fake_disk):
    with pytest.raises(TargetError, match=message):
        purge_ata.choose_variant(requested, fake_disk("sata"), state)
