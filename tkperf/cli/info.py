"""``tkperf info DEVICE [--json]``: everything known about a device, read-only.

The facts come from :func:`tkperf.target.facts.collect` (lsblk, sysfs and,
by transport, hdparm, nvme-cli, sg3-utils and smartctl); this module only
prints them: grouped as device, queue, identity, security and SMART, or the
dictionary itself with ``--json``.  Missing programs are named with their
Debian package and never make the command fail.
"""
from __future__ import annotations

import argparse
from typing import Any, Dict, List, Tuple

from tkperf import strictjson
from tkperf.cli import runargs
from tkperf.engine import opening
from tkperf.errors import EXIT_OK
from tkperf.target import facts as device_facts
from tkperf.target.identity import split_target

Rows = List[Tuple[str, str]]

#: What ``info --json`` prints: its ``schema`` name and ``version``
#: (tkperf/model/data/info.schema.json) before the facts.
JSON_SCHEMA = "tkperf-info"
JSON_VERSION = 1


def _yes(value: object) -> str:
    return "yes" if value else "no"


def _bytes(value: object) -> str:
    if not isinstance(value, int):
        return str(value)
    return f"{value:,} bytes ({value / 1e9:,.2f} GB)"


def _ident(model: object, serial: object, firmware: object) -> str:
    """``model, serial S, firmware F`` without the parts a drive left blank."""
    parts = [str(model or "")] + [f"{k} {v}" for k, v in (("serial", serial), ("firmware", firmware)) if v]
    return ", ".join(p for p in parts if p)


def _get(facts: Dict[str, Any], source: str) -> Dict[str, Any]:
    value = facts.get(source)
    return value if isinstance(value, dict) else {}


def _device(facts: Dict[str, object]) -> Rows:
    t = _get(facts, "target")
    rows: Rows = [("path", str(t.get("path", ""))), ("resolved", str(t.get("resolved", ""))),
                  ("kind", f"{t.get('kind', '')} ({t.get('transport') or 'unknown transport'})"),
                  ("size", _bytes(t.get("size_bytes", "")))]
    for key in ("vendor", "model", "serial", "firmware"):
        if t.get(key):
            rows.append((key, str(t[key])))
    for key, label in (("wwn", "WWN"), ("eui64", "EUI-64"), ("nguid", "NGUID"), ("nsid", "namespace"),
                       ("inode", "inode")):
        if t.get(key):
            rows.append((label, str(t[key])))
    if t.get("kind") == "block":
        rows.append(("rotational", _yes(t.get("rotational"))))
    f = _get(facts, "file")
    if f:
        rows.append(("exists", _yes(f.get("exists"))))
        if f.get("exists"):
            rows.append(("allocated", _bytes(f.get("allocated_bytes", 0))))
            if f.get("mount_point"):
                where = f"{f.get('fstype', '')} on {f['mount_point']} ({f.get('source', '')})"
                rows.append(("filesystem", where))
    loop = _get(_get(facts, "sysfs"), "loop")
    if loop.get("backing_file"):
        rows.append(("backing file", f"{loop['backing_file']} (direct I/O {_yes(loop.get('dio'))})"))
    sim = _get(facts, "simdrive")
    if sim:
        params = _get(sim, "params")
        rows.append(("emulated SSD", f"{sim.get('name', '')}: page-mapped FTL, {sim.get('physical_blocks')} blocks; "
                                     + ", ".join(f"{k} {_get(params, k).get('value')} {_get(params, k).get('unit')}"
                                                 for k in params)))
        waf = sim.get("waf")
        rows.append(("model state", f"{'fresh' if sim.get('fresh') else 'not fresh'}, "
                                    f"{sim.get('mapped_bytes', 0):,} bytes mapped, {sim.get('free_blocks')} blocks "
                                    f"free, WAF {waf:.2f}" if isinstance(waf, float) else
                     f"{'fresh' if sim.get('fresh') else 'not fresh'}, {sim.get('mapped_bytes', 0):,} bytes "
                     f"mapped, {sim.get('free_blocks')} blocks free, nothing written yet"))
    return rows


def _queue(facts: Dict[str, object]) -> Rows:
    sysfs = _get(facts, "sysfs")
    q = _get(sysfs, "queue")
    if not q:
        return []
    others = [s for s in q.get("schedulers", []) if s != q.get("scheduler")]
    also = f" (also: {' '.join(others)})" if others else ""
    rows: Rows = [("scheduler", f"{q.get('scheduler', '')}{also}"),
                  ("rotational", _yes(q.get("rotational"))),
                  ("max sectors", f"{q.get('max_sectors_kb', '?')} KiB "
                                  f"(hardware {q.get('max_hw_sectors_kb', '?')} KiB)"),
                  ("write cache", write_cache_words(facts)),
                  ("block size", f"{q.get('logical_block_size', '?')} B logical, "
                                 f"{q.get('physical_block_size', '?')} B physical"),
                  ("io sizes", f"minimum {q.get('minimum_io_size', '?')} B, optimal {q.get('optimal_io_size', '?')} B"),
                  ("requests", f"{q.get('nr_requests', '?')}, read-ahead {q.get('read_ahead_kb', '?')} KiB")]
    if q.get("discard_max_bytes"):
        rows.append(("discard", f"granularity {q.get('discard_granularity')} B, max {q.get('discard_max_bytes')} B"))
    else:
        rows.append(("discard", "not supported"))
    if q.get("zoned") not in (None, "none"):
        rows.append(("zoned", str(q.get("zoned"))))
    rows.append(("read-only", _yes(sysfs.get("read_only"))))
    return rows


def write_cache_words(facts: Dict[str, object]) -> str:
    """The write cache, said once with its source, as a run records it: the
    drive's own setting where a tool reads it (hdparm -W, nvme get-feature,
    sdparm), else unknown; the kernel's ``queue/write_cache`` ('write back')
    only says that a volatile cache exists, so it is named as such."""
    wc = _get(facts, "write_cache")
    q = _get(_get(facts, "sysfs"), "queue")
    kernel = str(q.get("write_cache", "") or "")
    fua = ", FUA" if q.get("fua") == 1 else ""
    state = str(wc.get("state", "") or "")
    if state in ("WCE", "WCD"):
        return f"{'on' if state == 'WCE' else 'off'} ({state}, read by {wc.get('read_by') or 'the drive tool'}){fua}"
    notes = [str(n) for n in wc.get("notes", []) if n] if isinstance(wc.get("notes"), list) else []
    why = "; ".join(notes) if notes else "no tool reaches the drive's setting on this target"
    kernel_words = f"; the kernel's queue/write_cache '{kernel}' says only that a volatile cache exists" \
        if kernel else ""
    return f"unknown, as a run records it ({why}){kernel_words}{fua}"


def _identity(facts: Dict[str, object]) -> Rows:
    rows: Rows = []
    h = _get(facts, "hdparm")
    if h:
        rows.append(("hdparm -I", _ident(h.get("model"), h.get("serial"), h.get("firmware"))))
        rows.append(("", f"{_bytes(h.get('size_bytes', '?'))}, sectors {h.get('logical_sector', '?')}/"
                         f"{h.get('physical_sector', '?')} B, rotation {h.get('rotation', '?')}"))
        rows.append(("", f"TRIM {_yes(h.get('trim'))}, "
                         f"SANITIZE feature set {_yes(h.get('sanitize'))}"))
    n = _get(facts, "nvme_id_ctrl")
    if n:
        rows.append(("nvme id-ctrl", _ident(n.get("model"), n.get("serial"), n.get("firmware"))))
        rows.append(("", f"vendor {n.get('vendor_id', '')}, NVMe {n.get('version') or '?'}, "
                         f"capacity {_bytes(n.get('total_capacity_bytes', '?'))}, "
                         f"{n.get('namespaces', '?')} namespace(s), "
                         f"volatile write cache {_yes(n.get('volatile_write_cache'))}"))
    ns = _get(facts, "nvme_id_ns")
    if ns:
        formats = ns.get("formats")
        count = len(formats) if isinstance(formats, list) else "?"
        rows.append(("nvme id-ns", f"{ns.get('size_blocks', '?')} blocks of {ns.get('lba_bytes', '?')} B "
                                   f"(format {ns.get('lba_format', '?')} of {count})"))
    i = _get(facts, "sg_inq")
    if i:
        rows.append(("sg_inq", f"{i.get('vendor', '')} {i.get('product', '')}, revision {i.get('revision', '')}, "
                               f"serial {i.get('serial', '')}, {i.get('device_type', '')} {i.get('standard', '')}"))
    r = _get(facts, "sg_readcap")
    if r:
        prot = _get(r, "protection")
        protection = f", protection type {prot.get('type')}" if prot.get("enabled") else ""
        rows.append(("sg_readcap", f"{r.get('blocks', '?')} blocks of {r.get('logical_block_bytes', '?')} B "
                                   f"(physical {r.get('physical_block_bytes', '?')} B), "
                                   f"{_bytes(r.get('size_bytes', '?'))}{protection}"))
    return rows


def ata_security_words(sec: Dict[str, object]) -> str:
    """One line on an ATA security state: ``supported, not enabled, ...``."""
    if not sec.get("present"):
        return "no Security section in hdparm -I (feature set not implemented)"
    words = [("" if sec.get(k) else "not ") + w for k, w in
             (("supported", "supported"), ("enabled", "enabled"), ("locked", "locked"), ("frozen", "frozen"),
              ("count_expired", "expired"), ("enhanced_erase_supported", "enhanced erase supported"))]
    text = ", ".join(words)
    if sec.get("erase_minutes") is not None:
        more = "more than " if sec.get("erase_time_at_least") else ""
        text += f"; erase takes {more}{sec['erase_minutes']} min"
        if sec.get("enhanced_erase_minutes") is not None:
            text += f" (enhanced {more}{sec['enhanced_erase_minutes']} min)"
    return text


def _security(facts: Dict[str, object]) -> Rows:
    rows: Rows = []
    h = _get(facts, "hdparm")
    if h:
        sec = _get(h, "security")
        rows.append(("ATA security", ata_security_words(sec)))
        if sec.get("present"):
            why = [w for w in ("frozen", "locked") if sec.get(w)] or ([] if sec.get("supported") else ["unsupported"])
            rows.append(("", "SECURITY ERASE " + ("possible now" if sec.get("erase_possible") else
                                                  f"not possible now ({', '.join(why)})")))
    n = _get(facts, "nvme_id_ctrl")
    if n:
        fmt, san = _get(n, "format"), _get(n, "sanitize")
        rows.append(("NVMe Format", f"supported {_yes(_get(n, 'admin_commands').get('format_nvm'))}, "
                                    f"crypto erase {_yes(fmt.get('crypto_erase'))}"))
        kinds = [k.replace("_", " ") for k, v in san.items() if v]
        rows.append(("NVMe Sanitize", ", ".join(kinds) if kinds else "not supported"))
    return rows


def _smart(facts: Dict[str, object]) -> Rows:
    s = _get(facts, "smartctl")
    if not s:
        return []
    passed = s.get("smart_passed")
    rows: Rows = [("health", "PASSED" if passed else "FAILED" if passed is False else "unknown"),
                  ("model", f"{s.get('model', '')} ({s.get('protocol', '')})")]
    for key, label, unit in (("temperature_c", "temperature", " C"), ("power_on_hours", "power-on", " h"),
                             ("power_cycles", "power cycles", "")):
        if key in s:
            rows.append((label, f"{s[key]}{unit}"))
    nvme = _get(s, "nvme")
    if nvme:
        rows.append(("wear", f"{nvme.get('percentage_used', '?')}% used, spare {nvme.get('available_spare', '?')}%, "
                             f"media errors {nvme.get('media_errors', '?')}, "
                             f"critical warning {nvme.get('critical_warning', '?')}"))
    if "host_written_bytes" in s:
        rows.append(("written", _bytes(s["host_written_bytes"])))
    for key, label in (("ata", "ATA counters"), ("scsi", "SCSI counters")):
        counters = _get(s, key)
        if counters:
            rows.append((label, ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counters.items())))
    if s.get("exit_status"):
        rows.append(("smartctl status", f"{s['exit_status']} (bit mask; see smartctl(8) RETURN VALUES)"))
    return rows


def render(facts: Dict[str, Any]) -> List[str]:
    """The readable view of :func:`tkperf.target.facts.collect`'s dictionary."""
    groups = [("Device", _device(facts)), ("Queue", _queue(facts)), ("Identity", _identity(facts)),
              ("Security", _security(facts)), ("SMART", _smart(facts))]
    missing = [m for m in facts.get("missing", []) if isinstance(m, dict)]
    errors = [e for e in facts.get("errors", []) if isinstance(e, dict)]
    groups.append(("Not installed", [(m["tool"], f"Debian package {m['package']}") for m in missing]))
    groups.append(("Failed here", [(e["source"], f"{e['message']} ({e['command']})") for e in errors]))
    groups.append(("Notes", [("", str(n)) for n in facts.get("notes", [])]))
    lines: List[str] = []
    for title, rows in groups:
        if not rows:
            continue
        lines.append(f"{title}:")
        width = max(len(k) for k, _ in rows)
        lines.extend(f"  {k:<{width}}  {v}".rstrip() for k, v in rows)
    return lines


def cmd_info(args: argparse.Namespace) -> int:
    if split_target(args.device) is None:
        facts = device_facts.collect(args.device)
    else:  # read on the test host by its tkperf agent (docs/remote.rst)
        side, dev = opening.open_target(args.device, None, runargs.settings_of(args))
        try:
            facts = side.device_facts(dev)
        finally:
            side.close()
    if args.json:
        print(strictjson.dumps({"schema": JSON_SCHEMA, "version": JSON_VERSION, **facts}, indent=2, sort_keys=False))
    else:
        print("\n".join(render(facts)))
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("info", help="everything known about a device (read-only)", allow_abbrev=False,
                       description="Facts about a block device or file target from lsblk, sysfs and, "
                                   "by transport, hdparm, nvme-cli, sg3-utils and smartctl. Nothing is "
                                   "written to the device.")
    p.add_argument("device", help="a block device (e.g. /dev/nvme0n1), a regular file, or HOST:/dev/... "
                                  "on a test host (read there over SSH, 'tkperf help remote')")
    p.add_argument("--json", action="store_true", help="the facts as one JSON object")
    runargs.add_remote_options(p, fio=False)
    p.set_defaults(func=cmd_info)
