"""ATA SECURITY ERASE UNIT (normal or enhanced) with hdparm.

The drive's security state comes from ``hdparm -I``, read by
:func:`tkperf.target.parsers.ata_security` (tkperf's one parser of it).  An
erase needs a user password, so tkperf sets its own (``tkperf``), erases,
and clears it again: after a successful erase the drive clears it itself
(tkperf checks and clears it if not); after a failed erase, an error or an
interruption (Ctrl-C, SIGTERM: the signal handlers of
:mod:`tkperf.target.guard` turn them into exceptions and ignore further
signals while this clean-up runs) tkperf issues ``--security-disable``
itself.  A password left behind by an earlier run that was killed outright
(SIGKILL, power loss) is found the next time (security "enabled", perhaps
"locked" after a power cycle) and cleared with tkperf's password before
anything else.
"""
from __future__ import annotations

import logging
from typing import List, Tuple

from tkperf import programs
from tkperf.errors import TargetError, TkperfError
from tkperf.model.results import DeviceInfo
from tkperf.target import parsers

log = logging.getLogger("tkperf")

PASSWORD = "tkperf"
VARIANTS = ("ata", "ata-normal", "ata-enhanced")
FROZEN_REMEDY = ("suspend and resume the host (e.g. 'systemctl suspend', then wake it) or hot-plug "
                 "the drive's data cable, then run again; or choose --purge discard, which is not "
                 "a PTS PURGE")
#: The ``hdparm -I`` feature line of RZAT: trimmed blocks read as zeros.
RZAT_FEATURE = "Deterministic read ZEROs after TRIM"


def _identify(dev: DeviceInfo) -> str:
    """``hdparm -I`` of the drive ('' when hdparm fails)."""
    return programs.output([programs.require("hdparm"), "-I", dev.resolved])


def read_security(dev: DeviceInfo) -> parsers.AtaSecurity:
    """The drive's ATA security state (not ``supported`` when hdparm
    reports no Security section or fails)."""
    return parsers.ata_security(_identify(dev))


def reads_zeros_after_trim(dev: DeviceInfo) -> bool:
    """Whether the drive promises zeros for trimmed blocks (RZAT in the
    Commands/features list of ``hdparm -I``); False when hdparm printed no
    ATA identification."""
    try:
        features = parsers.hdparm_identify(_identify(dev)).get("features")
    except ValueError:
        return False
    return isinstance(features, dict) and bool(features.get(RZAT_FEATURE))


def choose_variant(requested: str, dev: DeviceInfo, sec: parsers.AtaSecurity) -> str:
    """``ata-enhanced`` or ``ata-normal`` for this drive, or a TargetError
    saying why the drive cannot be erased now.  ``ata`` (and ``auto``) take
    the enhanced erase where the drive supports it."""
    if not sec.supported:
        raise TargetError(f"{dev.path}: the drive does not support the ATA security feature set "
                          "(no SECURITY ERASE UNIT); choose --purge discard")
    if sec.frozen:
        raise TargetError(f"{dev.path}: ATA security is frozen (the BIOS or the kernel froze it at "
                          f"boot), SECURITY ERASE is refused until it is not: {FROZEN_REMEDY}")
    if sec.count_expired:
        raise TargetError(f"{dev.path}: the drive counted too many wrong security passwords "
                          "(security count expired); power-cycle the drive and run again")
    if requested == "ata-enhanced" and not sec.enhanced_erase_supported:
        raise TargetError(f"{dev.path}: the drive does not support ENHANCED SECURITY ERASE; "
                          "choose --purge ata-normal")
    if requested == "ata-normal":
        return "ata-normal"
    return "ata-enhanced" if sec.enhanced_erase_supported else "ata-normal"


def commands(variant: str, target: str) -> List[List[str]]:
    """Set tkperf's password, then erase (the argument lists, in order)."""
    hdparm = programs.require("hdparm")
    erase = "--security-erase-enhanced" if variant == "ata-enhanced" else "--security-erase"
    return [[hdparm, "--user-master", "u", "--security-set-pass", PASSWORD, target],
            [hdparm, "--user-master", "u", erase, PASSWORD, target]]


def disable_command(target: str) -> List[str]:
    return [programs.require("hdparm"), "--user-master", "u", "--security-disable", PASSWORD, target]


def unlock_command(target: str) -> List[str]:
    return [programs.require("hdparm"), "--user-master", "u", "--security-unlock", PASSWORD, target]


def _clear_leftover(dev: DeviceInfo, sec: parsers.AtaSecurity, done: List[List[str]]) -> None:
    """Security enabled before tkperf started: a password an earlier run set
    and could not clear (killed outright, power loss).  Clear it with
    tkperf's password; any other password is the user's to remove."""
    log.warning("purge: %s has ATA security enabled%s, likely left by an earlier tkperf run; "
                "clearing it with tkperf's password", dev.path, " and is locked" if sec.locked else "")
    argvs = ([unlock_command(dev.resolved)] if sec.locked else []) + [disable_command(dev.resolved)]
    try:
        for argv in argvs:
            programs.run(argv, timeout=120, what="purge (ata): clearing a security password")
            done.append(argv)
    except TkperfError:
        raise TargetError(f"{dev.path}: ATA security is enabled{' and locked' if sec.locked else ''} "
                          f"with a password that is not tkperf's; remove it with "
                          f"'hdparm --user-master u --security-disable PASSWORD {dev.path}' "
                          "(or unlock it first) and run again") from None


def _disable_after_failure(target: str, done: List[List[str]]) -> None:
    """Clear tkperf's password after a failed or interrupted erase; never
    raises (the original error is what the user needs to see)."""
    argv = disable_command(target)
    try:
        programs.run(argv, timeout=120, check=False, what="purge (ata): clearing tkperf's password")
        done.append(argv)
    except BaseException as exc:  # the clean-up must not hide the first error
        log.error("purge: could not clear tkperf's ATA password on %s (%s); clear it with: %s",
                  target, exc, programs.command_line(argv))


def erase(dev: DeviceInfo, variant: str, sec: parsers.AtaSecurity,
          timeout: float) -> Tuple[List[List[str]], str]:
    """Carry out the erase; (the argument lists run, a verification text)."""
    done: List[List[str]] = []
    if sec.enabled:
        _clear_leftover(dev, sec, done)
    minutes = sec.enhanced_erase_minutes if variant == "ata-enhanced" else sec.erase_minutes
    if minutes is not None:  # None: the drive gives no estimate
        log.info("purge: the drive estimates %s%d min for the %s erase",
                 "more than " if sec.erase_time_at_least else "", minutes,
                 "enhanced" if variant == "ata-enhanced" else "normal")
    try:
        for argv in commands(variant, dev.resolved):
            done.append(argv)
            programs.run(argv, timeout=timeout, what=f"purge ({variant})")
    except BaseException:
        log.warning("purge: the ATA erase did not complete; clearing tkperf's password on %s", dev.path)
        _disable_after_failure(dev.resolved, done)
        raise
    after = read_security(dev)
    if after.enabled:
        # Some drives keep the password after the erase: clear it.
        argv = disable_command(dev.resolved)
        programs.run(argv, timeout=120, what="purge (ata): clearing tkperf's password")
        done.append(argv)
        after = read_security(dev)
    state = "security not enabled after the erase" if not after.enabled else \
        "WARNING: security still enabled after the erase"
    return done, state

