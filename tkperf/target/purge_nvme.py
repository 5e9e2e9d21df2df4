"""NVMe purges with nvme-cli: Format NVM with secure erase, and Sanitize.

What the controller supports comes from ``nvme id-ctrl`` (OACS bit 1:
Format NVM; FNA bit 0: a format reaches every namespace, bit 1: so does a
secure erase, bit 2: crypto erase; SANICAP bits 0-2: crypto erase, block
erase, overwrite), the namespace's format from ``nvme id-ns`` (FLBAS, DPS,
so the format keeps the LBA size and protection it has; DLFEAT: deallocated
blocks read as zeros) and the namespaces that exist from ``nn`` and
``nvme list-ns --all``.  A Sanitize always reaches the whole NVM subsystem,
so tkperf sanitizes only a controller with one namespace; it never erases a
namespace the user did not name.

Sanitize runs in the background inside the drive: tkperf starts it, then
reads the sanitize log (``nvme sanitize-log``) until it is done, logging the
progress.  tkperf runs nvme-cli's normal output; the identify parser also
takes its flat JSON (``-o json``).
"""
from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from tkperf import programs
from tkperf.errors import TargetError
from tkperf.model.results import DeviceInfo

log = logging.getLogger("tkperf")

VARIANTS = ("nvme", "nvme-format", "nvme-crypto", "sanitize-block", "sanitize-crypto", "sanitize-overwrite")
#: nvme-cli's --sanact values.
SANACT = {"sanitize-block": 2, "sanitize-overwrite": 3, "sanitize-crypto": 4}
SANICAP_BIT = {"sanitize-crypto": 0, "sanitize-block": 1, "sanitize-overwrite": 2}
#: What ``nvme`` (and ``auto``) tries, in order: a Format with user-data
#: erase is quick and per namespace; Sanitize where Format is not possible.
AUTO_ORDER = ("nvme-format", "sanitize-block", "sanitize-crypto")
SSTAT = {0: "never sanitized", 1: "completed successfully", 2: "in progress", 3: "failed",
         4: "completed successfully with deallocation"}
POLL_S = 10.0
#: A sanitize whose progress has not moved for this long is reported as stuck.
STALL_S = 6 * 3600.0

# Replaced by tests so that waiting takes no time.
sleep: Callable[[float], None] = time.sleep
clock: Callable[[], float] = time.monotonic


def fields(text: str) -> Dict[str, object]:
    """``key : value`` pairs of nvme-cli's normal output (``-H`` too), or a
    flat JSON object; numbers as ints (``0x5f``, ``32``)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}
    out: Dict[str, object] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*(\S+)", line)
        if not m or m.group(1) in out:
            continue
        try:
            out[m.group(1)] = int(m.group(2), 0)
        except ValueError:
            out[m.group(1)] = m.group(2)
    return out


def _int(d: Dict[str, object], key: str) -> int:
    v = d.get(key, 0)
    return v if isinstance(v, int) else 0


def namespace_ids(text: str) -> List[int]:
    """Namespace IDs of ``nvme list-ns`` (``[   0]:0x1`` lines)."""
    return [int(m.group(1), 16) for m in re.finditer(r"\[\s*\d+\]:0x([0-9a-fA-F]+)", text)]


@dataclass(frozen=True)
class NvmeFacts:
    oacs: int = 0
    fna: int = 0
    sanicap: int = 0
    nn: int = 0
    flbas: int = -1  # -1: the namespace's format could not be read
    dps: int = 0
    dlfeat: int = 0
    #: Namespaces that exist in the subsystem (None: could not tell).
    namespaces: Optional[int] = None

    @property
    def format_ok(self) -> bool:
        return bool(self.oacs & 0x2)

    @property
    def single_namespace(self) -> bool:
        return self.nn == 1 or self.namespaces == 1

    @property
    def zeros_after_deallocate(self) -> bool:
        return (self.dlfeat & 0x7) == 1

    def lbaf(self) -> int:
        return (self.flbas & 0xF) | ((self.flbas >> 1) & 0x30)


def parse(id_ctrl: str, id_ns: str, list_ns: str = "") -> NvmeFacts:
    c, n = fields(id_ctrl), fields(id_ns)
    ids = namespace_ids(list_ns) if list_ns.strip() else []
    return NvmeFacts(oacs=_int(c, "oacs"), fna=_int(c, "fna"), sanicap=_int(c, "sanicap"), nn=_int(c, "nn"),
                     flbas=_int(n, "flbas") if "flbas" in n else -1, dps=_int(n, "dps"),
                     dlfeat=_int(n, "dlfeat"), namespaces=len(ids) if ids else None)


def read_facts(dev: DeviceInfo) -> NvmeFacts:
    nvme = programs.require("nvme")
    ctrl = programs.output([nvme, "id-ctrl", dev.resolved])
    ns = programs.output([nvme, "id-ns", dev.resolved])
    facts = parse(ctrl, ns)
    if facts.nn > 1:
        # Fails on controllers without namespace management: then tkperf
        # cannot tell and treats the subsystem as having several.
        listed = programs.output([nvme, "list-ns", dev.resolved, "--all"])
        facts = parse(ctrl, ns, listed)
    return facts


def why_not(variant: str, f: NvmeFacts) -> str:
    """Why ``variant`` cannot run on this controller ('' when it can)."""
    several = ("the controller may hold other namespaces "
               f"(nn={f.nn}, {'unknown' if f.namespaces is None else f.namespaces} found) and it would "
               "erase them too")
    if variant in ("nvme-format", "nvme-crypto"):
        if not f.format_ok:
            return "the controller does not support Format NVM (OACS bit 1)"
        if f.flbas < 0:
            return "the namespace's current format (id-ns FLBAS) could not be read"
        if variant == "nvme-crypto" and not f.fna & 0x4:
            return "the controller does not support crypto erase in Format (FNA bit 2)"
        if f.fna & 0x3 and not f.single_namespace:
            return f"its format applies to all namespaces (FNA 0x{f.fna:x}) and {several}"
        return ""
    if not f.sanicap & (1 << SANICAP_BIT[variant]):
        return f"the controller does not support it (SANICAP 0x{f.sanicap:x})"
    if not f.single_namespace:
        return f"a sanitize reaches the whole NVM subsystem and {several}"
    return ""


def choose_variant(requested: str, dev: DeviceInfo, f: NvmeFacts) -> str:
    if requested in ("nvme", "auto"):
        for v in AUTO_ORDER:
            if not why_not(v, f):
                return v
        raise TargetError(f"{dev.path}: no NVMe purge is possible: " + "; ".join(
            f"{v}: {why_not(v, f)}" for v in AUTO_ORDER) + "; choose --purge discard or --purge-cmd")
    reason = why_not(requested, f)
    if reason:
        raise TargetError(f"{dev.path}: --purge {requested} is not possible: {reason}")
    return requested


def commands(variant: str, target: str, f: Optional[NvmeFacts] = None) -> List[List[str]]:
    nvme = programs.require("nvme")
    if variant in ("nvme-format", "nvme-crypto"):
        argv = [nvme, "format", target, f"--ses={2 if variant == 'nvme-crypto' else 1}"]
        if f is not None and f.flbas >= 0:
            # Keep the namespace's LBA format, metadata and protection as they are.
            argv += [f"--lbaf={f.lbaf()}", f"--pi={f.dps & 0x7}", f"--pil={(f.dps >> 3) & 1}",
                     f"--ms={(f.flbas >> 4) & 1}"]
        return [argv + ["--force"]]
    return [[nvme, "sanitize", target, f"--sanact={SANACT[variant]}"]]


@dataclass(frozen=True)
class SanitizeStatus:
    progress: int  # SPROG, of 65536
    sstat: int

    @property
    def status(self) -> int:
        return self.sstat & 0x7

    @property
    def running(self) -> bool:
        return self.status == 2

    def text(self) -> str:
        return f"{SSTAT.get(self.status, 'unknown status')} (SSTAT 0x{self.sstat:x})"


def parse_sanitize_log(text: str) -> Optional[SanitizeStatus]:
    """The sanitize log of ``nvme sanitize-log`` (normal output:
    ``Sanitize Progress (SPROG) :  655``, ``Sanitize Status (SSTAT) :  0x2``)."""
    prog = re.search(r"\(SPROG\)\s*:\s*(\S+)", text)
    stat = re.search(r"\(SSTAT\)\s*:\s*(\S+)", text)
    if not prog or not stat:
        return None
    try:
        return SanitizeStatus(int(prog.group(1), 0), int(stat.group(1), 0))
    except ValueError:
        return None


def read_sanitize_log(target: str) -> Optional[SanitizeStatus]:
    return parse_sanitize_log(programs.output([programs.require("nvme"), "sanitize-log", target]))


def wait_sanitize(target: str, timeout: float) -> SanitizeStatus:
    """Read the sanitize log until no sanitize runs; the last status."""
    start = last_change = clock()
    last_progress = -1
    while True:
        st = read_sanitize_log(target)
        if st is None:
            raise TargetError(f"{target}: the sanitize log cannot be read (nvme sanitize-log)")
        if not st.running:
            return st
        now = clock()
        if st.progress != last_progress:
            last_progress, last_change = st.progress, now
            log.info("purge: sanitize %.1f%% done", 100.0 * st.progress / 65536)
        if now - last_change > STALL_S:
            raise TargetError(f"{target}: the sanitize has not progressed for {STALL_S / 3600:.0f} h "
                              f"(SPROG {st.progress} of 65536); power-cycle the drive, and if it goes on, "
                              "ask its vendor")
        if now - start > timeout:
            raise TargetError(f"{target}: the sanitize did not finish within {timeout / 3600:.0f} h")
        sleep(POLL_S)


def sanitize(variant: str, target: str, timeout: float) -> Tuple[List[List[str]], str]:
    """Start a sanitize and wait for it; (argument lists run, verification text)."""
    before = read_sanitize_log(target)
    if before is not None and before.running:
        log.warning("purge: a sanitize is already running on %s (an earlier run?); waiting for it", target)
        wait_sanitize(target, timeout)
    (argv,) = commands(variant, target)
    programs.run(argv, timeout=300, what=f"purge ({variant})")
    try:
        st = wait_sanitize(target, timeout)
    except BaseException:
        log.warning("purge: %s goes on inside the drive until it is done (it cannot be stopped); the "
                    "drive refuses I/O until then and the next run waits for it", variant)
        raise
    if st.status not in (1, 4):
        raise TargetError(f"{target}: the sanitize ended as '{st.text()}'; the drive stays in sanitize "
                          "failure mode until a sanitize succeeds (run again, or 'nvme sanitize --sanact=1' "
                          "to exit it)")
    return [argv], f"sanitize log: {st.text()}"
