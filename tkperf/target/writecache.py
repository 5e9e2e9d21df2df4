"""The drive's volatile write cache: read its real state, set it for a run,
put it back afterwards.

The PTS asks for the write cache disabled (WCD) in enterprise runs and
enabled (WCE) in client runs, and the report must disclose the state.  The
kernel's ``queue/write_cache`` only says whether a volatile cache exists, so
the drive itself is asked, by transport: ATA with ``hdparm -W``, NVMe with
``nvme get-feature`` (feature 6, Volatile Write Cache), SCSI (SAS, USB ...)
with ``sdparm --get=WCE``.  Changes are never saved in the drive (no
``sdparm --save``, no NVMe save bit): they last until the run restores the
state it found, or at most until the drive's next power cycle.

Loop devices, file targets and transports tkperf does not know have no
write cache it can reach: the run goes on, the state is recorded as ''
(unknown) and a warning says so.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from tkperf import programs
from tkperf.errors import Interrupted, TkperfError, ToolError
from tkperf.model.results import DeviceInfo
from tkperf.simdrive import TRANSPORT as EMULATED

WCE = "WCE"
WCD = "WCD"
#: ``--write-cache`` value -> the state the run wants ('keep': none).
WANTED = {"on": WCE, "off": WCD, "keep": ""}
ATA_TRANSPORTS = ("sata", "ata", "pata")
SCSI_TRANSPORTS = ("sas", "scsi", "usb", "fc", "iscsi", "spi", "srp")
NVME_VWC_FEATURE = 6
TOOL_TIMEOUT_S = 60.0

#: Runs one argument list and returns its stdout; raises TkperfError (or
#: OSError) when the program fails.  :func:`run_tool` by default; tests pass
#: their own.
ProgramRunner = Callable[[List[str]], str]
#: Records one event of the run: (kind 'note' | 'warning', message).
Recorder = Callable[[str, str], None]


@dataclass(frozen=True)
class Reading:
    """What the drive reported: ``state`` 'WCE', 'WCD' or '' (unknown), and
    ``how`` it was read (the command line; '' when none could run)."""

    state: str
    how: str


# --- parsers: pure functions of a tool's text output ------------------------

def _on_off(flag: int) -> str:
    return WCE if flag else WCD


def parse_hdparm(text: str) -> str:
    """The state from ``hdparm -W DEV`` (`` write-caching =  1 (on)``); '' when
    hdparm printed no such line or ``write-caching = not supported``."""
    found = re.findall(r"write-caching\s*=\s*(\d+)", text)
    return _on_off(int(found[-1])) if found else ""


_NVME_VALUE = re.compile(r"get-feature:\s*(0x[0-9a-f]+|\d+)\s*\([^)]*\),\s*(\w+)\s+"
                         r"value:\s*(0x[0-9a-f]+|[0-9a-f]+)", re.I)
_NVME_HUMAN = re.compile(r"Volatile Write Cache Enable \(WCE\):\s*(Enabled|Disabled)", re.I)


def parse_nvme(text: str) -> str:
    """The state from ``nvme get-feature DEV --feature-id=6``:
    ``get-feature:0x06 (Volatile Write Cache), Current value:0x00000001``
    (nvme-cli prints a zero value as ``00000000``, without 0x); bit 0 is WCE.
    The ``-H`` line ``Volatile Write Cache Enable (WCE): Enabled`` is read
    when there is no value line."""
    for fid, select, value in _NVME_VALUE.findall(text):
        if int(fid, 16) == NVME_VWC_FEATURE and select.lower() == "current":
            return _on_off(int(value, 16) & 1)
    human = _NVME_HUMAN.search(text)
    return _on_off(human.group(1).lower() == "enabled") if human else ""


def parse_sdparm(text: str) -> str:
    """The state from ``sdparm --get=WCE DEV``: the current value after the
    acronym (``WCE           1  [cha: y, def:  1, sav:  1]``)."""
    found = re.search(r"^\s*WCE\s+(\d+)\b", text, re.M)
    return _on_off(int(found.group(1))) if found else ""


PARSERS: Dict[str, Callable[[str], str]] = {"ata": parse_hdparm, "nvme": parse_nvme, "scsi": parse_sdparm}


# --- which tool, which command line ------------------------------------------

def transport_kind(dev: DeviceInfo) -> str:
    """'ata', 'nvme' or 'scsi': the command family that reaches this device's
    write cache; '' when there is none (file target, loop device, unknown)."""
    if dev.kind != "block":
        return ""
    tran = dev.transport.lower()
    if tran == "nvme" or dev.resolved.startswith("/dev/nvme"):
        return "nvme"
    if tran in ATA_TRANSPORTS:
        return "ata"
    if tran in SCSI_TRANSPORTS:
        return "scsi"
    return ""


#: How tkperf knows an emulated SSD's write cache state: it has none to lose.
EMULATED_WCD = "an emulated SSD (tkperf simdrive) has no volatile write cache: its write buffer is power-loss protected"


def without_volatile_cache(dev: DeviceInfo) -> str:
    """How the target is known to have no volatile write cache before
    anything is read (WCD by construction), or ''."""
    return EMULATED_WCD if dev.transport == EMULATED else ""


def unreachable(dev: DeviceInfo) -> str:
    """The target as a warning names it when its write cache is out of reach."""
    if dev.kind == "file":
        return "a file target"
    if dev.transport.lower() == "loop":
        return "a loop device"
    if dev.transport == EMULATED:
        return "an emulated SSD (tkperf simdrive; it has no volatile write cache)"
    if dev.transport:
        return f"a device on transport '{dev.transport}'"
    return "a device of unknown transport"


def nvme_controller(dev: DeviceInfo) -> str:
    """The controller's character device of an NVMe namespace
    (``/dev/nvme0n1`` -> ``/dev/nvme0``): Volatile Write Cache is a
    controller feature, and a Set Features sent to a namespace fails with
    "Feature Not Namespace Specific" (seen on QEMU's NVMe controller).  The
    namespace's own path where sysfs names no controller."""
    name = os.path.basename(os.path.realpath(dev.resolved))
    ctrl = os.path.basename(os.path.realpath(f"/sys/block/{name}/device"))
    if not re.fullmatch(r"nvme\d+", ctrl):
        m = re.match(r"(nvme\d+)n\d+$", name)
        ctrl = m.group(1) if m else ""
    return f"/dev/{ctrl}" if ctrl and os.path.exists(f"/dev/{ctrl}") else dev.resolved


def parse_vwc(text: str) -> Optional[bool]:
    """Whether ``nvme id-ctrl -o json`` says the controller has a volatile
    write cache (VWC bit 0); None when the output holds no VWC field."""
    try:
        vwc = json.loads(text).get("vwc")
    except (ValueError, AttributeError):
        return None
    return bool(int(vwc) & 1) if isinstance(vwc, (int, str)) and str(vwc).isdigit() else None


def read_command(kind: str, dev: DeviceInfo) -> List[str]:
    """The argument list that reads the write cache state of ``dev``; a
    missing tool raises ToolError naming its Debian package."""
    target = dev.resolved
    if kind == "ata":
        return [programs.require("hdparm"), "-W", target]
    if kind == "nvme":
        return [programs.require("nvme"), "get-feature", nvme_controller(dev), f"--feature-id={NVME_VWC_FEATURE}"]
    if kind == "scsi":
        return [programs.require("sdparm"), "--get=WCE", target]
    raise ValueError(f"no write cache command for {kind!r}")


def set_command(kind: str, dev: DeviceInfo, state: str) -> List[str]:
    """The argument list that sets the write cache of ``dev`` to ``state``
    ('WCE' or 'WCD') until the drive's next power cycle at most (never saved).

    NVMe uses the long ``--value=``: since nvme-cli 2.6 ``-v`` means
    --verbose, and ``set-feature -v 1`` silently sets 0."""
    bit = {WCE: "1", WCD: "0"}[state]
    target = dev.resolved
    if kind == "ata":
        return [programs.require("hdparm"), f"-W{bit}", target]
    if kind == "nvme":
        return [programs.require("nvme"), "set-feature", nvme_controller(dev), f"--feature-id={NVME_VWC_FEATURE}",
                f"--value={bit}"]
    if kind == "scsi":
        return [programs.require("sdparm"), f"--set=WCE={bit}", target]
    raise ValueError(f"no write cache command for {kind!r}")


def run_tool(argv: List[str]) -> str:
    """Run a write cache command the project's one way (logged, tracked,
    TkperfError with the program's stderr); its stdout.

    ``sdparm --get`` exits 5 after printing the current value when the drive
    has no saved-values page (QEMU's SCSI disk, seen): that is an answer,
    not a failure, when the value line is there."""
    what = os.path.basename(argv[0])
    if what == "sdparm" and any(a.startswith("--get=") for a in argv):
        done = programs.run(argv, timeout=TOOL_TIMEOUT_S, what=what, check=False)
        if done.returncode in (0, 5) and parse_sdparm(done.stdout):
            return done.stdout
    return programs.run(argv, timeout=TOOL_TIMEOUT_S, what=what).stdout


# --- the run's write cache ---------------------------------------------------

class WriteCache:
    """The write cache of one run's device, as a context manager.

    On entry the state is read, set to what ``wanted`` asks ('on', 'off' or
    'keep') when the transport allows, and read back; :attr:`state` is then
    what the drive reports ('' when unknown).  On exit, also after an
    exception or an :class:`~tkperf.errors.Interrupted`, a state the run
    changed is put back.  Every step worth telling is given to ``record``.
    A missing tool raises ToolError when a change was asked for; with
    'keep' it is only a warning.
    """

    def __init__(self, dev: DeviceInfo, wanted: str, record: Recorder,
                 run_program: ProgramRunner = run_tool) -> None:
        if wanted not in WANTED:
            raise ValueError(f"write cache {wanted!r}: choose on, off or keep")
        self.dev = dev
        self.wanted = wanted
        self.record = record
        self.run_program = run_program
        self.kind = transport_kind(dev)
        self.found = Reading("", "")
        self.current = Reading("", "")
        self.changed = False

    @property
    def state(self) -> str:
        """What the drive reports now: 'WCE', 'WCD' or '' (unknown)."""
        return self.current.state

    def __enter__(self) -> WriteCache:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    def start(self) -> None:
        """Read the state, and set it if the run asks for a change."""
        target = WANTED[self.wanted]
        known = without_volatile_cache(self.dev)
        if known:
            self.found = self.current = Reading(WCD, known)
            if target == WCE:
                self.record("warning", f"write cache cannot be set to WCE: {known} (WCD by construction)")
            else:
                self.record("note", f"write cache WCD by construction: {known}")
            return
        if not self.kind:
            verb = "set" if target else "read"
            self.record("warning", f"write cache cannot be {verb} on {unreachable(self.dev)}; state unknown")
            return
        if self.kind == "nvme" and self._no_volatile_cache():
            how = "NVMe Identify Controller: VWC bit 0 clear (no volatile write cache)"
            self.found = self.current = Reading(WCD, how)
            if target == WCE:
                self.record("warning", "write cache cannot be set to WCE: the drive has no volatile write "
                                       "cache (WCD by construction)")
            else:
                self.record("note", "no volatile write cache: write-cache-disabled by construction "
                                    "(NVMe Identify Controller VWC bit 0 clear)")
            return
        try:
            self.found = self.current = self._read()
        except ToolError as exc:
            if target:
                raise
            self.record("warning", f"write cache state unknown: {exc}")
            return
        if not target:
            self._kept()
        elif not self.found.state:
            self.record("warning", f"write cache not set to {target}: its state could not be read, "
                                   "so it could not be restored after the run")
        elif self.found.state == target:
            self.record("note", f"write cache already {target} as the run asks; "
                                f"left unchanged ({self.found.how})")
        else:
            self._change(target)

    def restore(self) -> None:
        """Put back the state found at the start if the run changed it; a
        second call does nothing."""
        if not self.changed:
            return
        self.changed = False
        try:
            self._restore()
        except (Interrupted, KeyboardInterrupt):
            # A signal cut the restore short; tkperf ignores further signals
            # while it cleans up, so a second try runs to the end.
            self._restore()
            raise

    # --- steps ----------------------------------------------------------------
    def _kept(self) -> None:
        if self.found.state:
            self.record("note", f"write cache {self.found.state}, kept as found ({self.found.how})")

    def _change(self, target: str) -> None:
        was = self.found.state
        self.changed = True  # before the command: an interruption inside it restores too
        try:
            error = self._apply(target)
        except BaseException:
            self.restore()
            raise
        self.changed = self.current.state != was
        if self.current.state == target:
            self.record("note", f"write cache set to {target} (was {was}) for the run")
        else:
            self.record("warning", f"write cache could not be set to {target}: "
                                   f"{error or 'the drive did not take it'}; "
                                   f"the drive reports {self.current.state or 'an unknown state'}")

    def _restore(self) -> None:
        was = self.found.state
        error = self._apply(was)
        if self.current.state == was:
            self.record("note", f"write cache restored to {was}")
            return
        by_hand = programs.command_line(set_command(self.kind, self.dev, was))
        self.record("warning", f"write cache could not be restored to {was}: "
                               f"{error or 'the drive did not take it'}; the drive reports "
                               f"{self.current.state or 'an unknown state'} (restore it by hand: {by_hand})")

    def _apply(self, state: str) -> str:
        """Issue the set command for ``state`` and read back; '' when the
        command succeeded, else its error."""
        argv = set_command(self.kind, self.dev, state)
        error = ""
        try:
            self.run_program(argv)
        except (TkperfError, OSError) as exc:
            error = str(exc)
        self.current = self._read()
        return error

    def _no_volatile_cache(self) -> bool:
        """True when the controller says it has no volatile write cache (its
        Get Features 6 then fails); False when it has one or cannot tell."""
        try:
            text = self.run_program([programs.require("nvme"), "id-ctrl", nvme_controller(self.dev),
                                     "--output-format=json"])
        except (TkperfError, OSError):
            return False
        return parse_vwc(text) is False

    def _read(self) -> Reading:
        """Read the state; a failing or unreadable command is a warning and
        an unknown state, a missing tool a ToolError."""
        argv = read_command(self.kind, self.dev)
        how = programs.command_line(argv)
        try:
            text = self.run_program(argv)
        except (TkperfError, OSError) as exc:
            self.record("warning", f"write cache could not be read: {exc} ({how})")
            return Reading("", how)
        state = PARSERS[self.kind](text)
        if not state:
            self.record("warning", f"write cache could not be read: {how} "
                                   "printed no state tkperf understands")
        return Reading(state, how)
