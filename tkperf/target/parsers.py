"""Pure parsers of what drive tools print, into plain JSON-able dicts.

Each function takes the tool's output (text, or the JSON text) and never
runs anything: ``hdparm -I`` (:func:`hdparm_identify`, :func:`ata_security`),
``nvme id-ctrl -o json`` / ``nvme id-ns -o json`` (:func:`nvme_id_ctrl`,
:func:`nvme_id_ns`), ``sg_inq`` / ``sg_readcap`` (:func:`sg_inq`,
:func:`sg_readcap`) and ``smartctl -j`` (:func:`smartctl`).  A field the
output does not have is left out (or ``None`` in :class:`AtaSecurity`);
output that is not what the tool prints raises ``ValueError``.
Recorded outputs of real drives are in ``tests/data/facts/``.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional

# --- hdparm -I -----------------------------------------------------------------


@dataclass(frozen=True)
class AtaSecurity:
    """The ATA Security feature set as ``hdparm -I`` reports it.

    ``present`` is False when the output has no ``Security:`` section (the
    drive does not implement the feature set, or it is not an ATA drive);
    every flag is then False.  ``erase_minutes`` and
    ``enhanced_erase_minutes`` are the drive's estimates for SECURITY ERASE
    UNIT and its enhanced form (``None`` when it gives none);
    ``erase_time_at_least`` is True when hdparm printed "more than N min"
    (the estimate field is saturated).  ``level`` is ``"high"``,
    ``"maximum"`` or ``""`` (no password set).  A PURGE by ATA SECURITY
    ERASE needs ``supported and not frozen and not locked``
    (:attr:`erase_possible`)."""

    present: bool = False
    supported: bool = False
    enabled: bool = False
    locked: bool = False
    frozen: bool = False
    count_expired: bool = False
    enhanced_erase_supported: bool = False
    erase_minutes: Optional[int] = None
    enhanced_erase_minutes: Optional[int] = None
    erase_time_at_least: bool = False
    master_password_revision: Optional[int] = None
    level: str = ""

    @property
    def erase_possible(self) -> bool:
        """True when SECURITY ERASE UNIT can be issued now."""
        return self.supported and not self.frozen and not self.locked

    def as_dict(self) -> Dict[str, object]:
        d: Dict[str, object] = asdict(self)
        d["erase_possible"] = self.erase_possible
        return d


_SECURITY_FLAGS = {
    "supported": "supported", "enabled": "enabled", "locked": "locked", "frozen": "frozen",
    "expired: security count": "count_expired", "supported: enhanced erase": "enhanced_erase_supported",
}
_ERASE_TIME = re.compile(r"(more than\s+)?(\d+)\s*min for (ENHANCED )?SECURITY ERASE UNIT", re.I)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _section(text: str, title: str) -> List[str]:
    """The lines under a ``title:`` line of hdparm -I, up to the next line
    indented no deeper than the title.  hdparm prints the title at the
    start of the line, but copies of its output (and some wrappers) indent
    the whole listing with spaces."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == f"{title}:":
            out = []
            for follow in lines[i + 1:]:
                if follow.strip() and _indent(follow) <= _indent(line):
                    break
                out.append(follow)
            return out
    return []


def ata_security(text: str) -> AtaSecurity:
    """The ``Security:`` section of ``hdparm -I`` output.  hdparm writes a
    flag as ``\\t\\tfrozen`` when set and ``\\tnot\\tfrozen`` when clear."""
    lines = _section(text, "Security")
    if not lines:
        return AtaSecurity()
    values: Dict[str, object] = {"present": True}
    for line in lines:
        words = line.split()
        negated = bool(words) and words[0] == "not"
        phrase = " ".join(words[1:] if negated else words)
        if phrase in _SECURITY_FLAGS:
            values[_SECURITY_FLAGS[phrase]] = not negated
            continue
        m = re.match(r"Master password revision code = (\d+)", phrase)
        if m:
            values["master_password_revision"] = int(m.group(1))
        m = re.match(r"Security level (high|maximum)", phrase, re.I)
        if m:
            values["level"] = m.group(1).lower()
        for more, minutes, enhanced in _ERASE_TIME.findall(phrase):
            values["enhanced_erase_minutes" if enhanced else "erase_minutes"] = int(minutes)
            if more:
                values["erase_time_at_least"] = True
    return AtaSecurity(**values)  # type: ignore[arg-type]


def _field(text: str, label: str) -> Optional[str]:
    m = re.search(rf"^\s*{re.escape(label)}:[ \t]*(.*?)\s*$", text, re.M)
    return m.group(1) if m else None


def hdparm_identify(text: str) -> Dict[str, object]:
    """Identity, geometry, features and security from ``hdparm -I``."""
    if "ATA device" not in text and "Model Number:" not in text:
        raise ValueError("hdparm -I printed no ATA identification (not an ATA device?)")
    out: Dict[str, object] = {}
    for key, label in (("model", "Model Number"), ("serial", "Serial Number"),
                       ("firmware", "Firmware Revision"), ("transport", "Transport"),
                       ("form_factor", "Form Factor"), ("rotation", "Nominal Media Rotation Rate")):
        value = _field(text, label)
        if value is not None:
            out[key] = value
    m = re.search(r"LBA48\s+user addressable sectors:\s*(\d+)", text) or \
        re.search(r"LBA\s+user addressable sectors:\s*(\d+)", text)
    logical = re.search(r"Logical\s+Sector size:\s*(\d+)", text)
    physical = re.search(r"Physical Sector size:\s*(\d+)", text)
    if m:
        out["sectors"] = int(m.group(1))
        out["size_bytes"] = int(m.group(1)) * (int(logical.group(1)) if logical else 512)
    if logical:
        out["logical_sector"] = int(logical.group(1))
    if physical:
        out["physical_sector"] = int(physical.group(1))
    qd = re.search(r"Queue depth:\s*(\d+)", text)
    if qd:
        out["queue_depth"] = int(qd.group(1))
    features: Dict[str, bool] = {}
    for line in _section(text, "Commands/features"):
        fm = re.match(r"^\t\s*(\*?)\s*\t(.+?)\s*$", line)
        if fm:
            features[fm.group(2)] = fm.group(1) == "*"
    out["write_cache"] = {"supported": "Write cache" in features,
                          "enabled": features.get("Write cache", False)}
    out["trim"] = any(f.startswith("Data Set Management TRIM supported") for f in features)
    out["sanitize"] = "SANITIZE feature set" in features
    out["features"] = features
    out["security"] = ata_security(text).as_dict()
    return out


# --- nvme-cli JSON -----------------------------------------------------------------


def _json_object(text: str, what: str) -> Dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what}: not a JSON object")
    return data


def _int(data: Dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, str):  # some nvme-cli versions print hex strings
        return int(value, 0) if value.strip() else 0
    return int(value)


def _bits(value: int, names: Dict[int, str]) -> Dict[str, bool]:
    return {name: bool(value >> bit & 1) for bit, name in names.items()}


def nvme_id_ctrl(text: str) -> Dict[str, object]:
    """``nvme id-ctrl DEV -o json``: identity, capacity and the PURGE-related
    capabilities (Format NVM, Sanitize, crypto erase, write cache)."""
    data = _json_object(text, "nvme id-ctrl")
    if "mn" not in data or "vid" not in data:
        raise ValueError("nvme id-ctrl: no model number (mn) or vendor id (vid)")
    ver = _int(data, "ver")
    out: Dict[str, object] = {
        "model": str(data.get("mn", "")).strip(),
        "serial": str(data.get("sn", "")).strip(),
        "firmware": str(data.get("fr", "")).strip(),
        "vendor_id": f"0x{_int(data, 'vid'):04x}",
        "subsystem_vendor_id": f"0x{_int(data, 'ssvid'):04x}",
        "version": f"{ver >> 16}.{ver >> 8 & 0xff}.{ver & 0xff}" if ver else "",
        "total_capacity_bytes": _int(data, "tnvmcap"),
        "namespaces": _int(data, "nn"),
        "volatile_write_cache": bool(_int(data, "vwc") & 1),
        "admin_commands": _bits(_int(data, "oacs"), {0: "security_send_receive", 1: "format_nvm",
                                                    2: "firmware_download", 3: "namespace_management",
                                                    4: "device_self_test"}),
        "format": _bits(_int(data, "fna"), {0: "all_namespaces", 1: "secure_erase_all_namespaces",
                                           2: "crypto_erase"}),
        "sanitize": _bits(_int(data, "sanicap"), {0: "crypto_erase", 1: "block_erase", 2: "overwrite"}),
        "io_commands": _bits(_int(data, "oncs"), {0: "compare", 1: "write_uncorrectable",
                                                 2: "dataset_management", 3: "write_zeroes"}),
        "fields": {k: v for k, v in data.items() if not isinstance(v, (list, dict))},
    }
    return out


def nvme_id_ns(text: str) -> Dict[str, object]:
    """``nvme id-ns DEV -o json``: size, capacity, use and the LBA formats
    (``lba_bytes`` = 2**lbads; the format in use is picked by ``flbas``)."""
    data = _json_object(text, "nvme id-ns")
    if "nsze" not in data:
        raise ValueError("nvme id-ns: no namespace size (nsze)")
    in_use = _int(data, "flbas") & 0xF
    formats = []
    for i, f in enumerate(data.get("lbafs") or []):
        formats.append({"index": i, "lba_bytes": 1 << int(f.get("ds", 0)), "metadata_bytes": int(f.get("ms", 0)),
                        "relative_performance": int(f.get("rp", 0)), "in_use": i == in_use})
    lba = next((f["lba_bytes"] for f in formats if f["in_use"]), None)
    out: Dict[str, object] = {"size_blocks": _int(data, "nsze"), "capacity_blocks": _int(data, "ncap"),
                              "used_blocks": _int(data, "nuse"), "lba_format": in_use, "formats": formats}
    if lba:
        out["lba_bytes"] = lba
        out["size_bytes"] = _int(data, "nsze") * int(lba)
    return out


# --- sg3_utils -------------------------------------------------------------------


def sg_inq(text: str) -> Dict[str, object]:
    """Standard INQUIRY from ``sg_inq DEV`` (also with ``-v``, whose cdb
    lines are skipped): vendor, product, revision, unit serial number,
    peripheral device type, SPC version, protection and command queuing."""
    if "standard INQUIRY" not in text:
        raise ValueError("not sg_inq output (no standard INQUIRY)")
    out: Dict[str, object] = {}
    for key, label in (("vendor", "Vendor identification"), ("product", "Product identification"),
                       ("revision", "Product revision level"), ("serial", "Unit serial number")):
        value = _field(text, label)
        if value is not None:
            out[key] = value.strip()
    m = re.search(r"\b(?:PDT|Device_type)=(\d+)", text)
    if m:
        out["peripheral_type"] = int(m.group(1))
    m = re.search(r"Peripheral device type:\s*(.+?)\s*$", text, re.M)
    if m:
        out["device_type"] = m.group(1)
    m = re.search(r"version=(0x[0-9a-f]+)\s+\[([^\]]+)\]", text, re.I)
    if m:
        out["version"] = m.group(1)
        out["standard"] = m.group(2)
    for key, flag in (("protect", "Protect"), ("command_queuing", "CmdQue")):
        m = re.search(rf"\b{flag}=(\d)", text)
        if m:
            out[key] = m.group(1) == "1"
    # A SATA drive behind a SCSI/ATA translation layer (libata, a USB bridge)
    # reports the vendor "ATA": its ATA tools (hdparm) reach it too.
    out["ata_behind_satl"] = out.get("vendor") == "ATA"
    return out


def sg_readcap(text: str) -> Dict[str, object]:
    """``sg_readcap [--long] DEV``: blocks, block lengths, size, protection
    and logical block provisioning."""
    if "Read Capacity results" not in text:
        raise ValueError("not sg_readcap output (no Read Capacity results)")
    out: Dict[str, object] = {}
    m = re.search(r"Last (?:LBA|logical block address)=(\d+)", text)
    if m:
        out["last_lba"] = int(m.group(1))
    m = re.search(r"Number of (?:logical )?blocks=(\d+)", text)
    if m:
        out["blocks"] = int(m.group(1))
    m = re.search(r"Logical block length=(\d+)", text)
    if m:
        out["logical_block_bytes"] = int(m.group(1))
    m = re.search(r"per physical block exponent=(\d+)", text)
    if m and "logical_block_bytes" in out:
        out["physical_block_bytes"] = int(out["logical_block_bytes"]) << int(m.group(1))  # type: ignore[call-overload]
    m = re.search(r"Device size:\s*(\d+) bytes", text)
    if m:
        out["size_bytes"] = int(m.group(1))
    m = re.search(r"prot_en=(\d), p_type=(\d)", text)
    if m:
        out["protection"] = {"enabled": m.group(1) == "1", "type": int(m.group(2)) + 1 if m.group(1) == "1" else 0}
    m = re.search(r"lbpme=(\d), lbprz=(\d)", text)
    if m:
        out["thin_provisioned"] = m.group(1) == "1"
        out["reads_zeros_after_unmap"] = m.group(2) == "1"
    m = re.search(r"Lowest aligned (?:LBA|logical block address)=(\d+)", text)
    if m:
        out["lowest_aligned_lba"] = int(m.group(1))
    return out


# --- smartctl -j -----------------------------------------------------------------

#: ATA attributes worth a line in the summary: id -> tkperf's name (raw values).
ATA_ATTRIBUTES = {5: "reallocated_sectors", 187: "reported_uncorrectable", 197: "pending_sectors",
                  198: "offline_uncorrectable", 199: "crc_errors", 241: "total_lbas_written_raw"}
NVME_HEALTH = ("critical_warning", "available_spare", "available_spare_threshold", "percentage_used",
               "media_errors", "unsafe_shutdowns", "num_err_log_entries", "data_units_written",
               "data_units_read")


def _obj(data: object, key: str) -> Dict[str, object]:
    """``data[key]`` when both are JSON objects, else an empty dict."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def smartctl(text: str) -> Dict[str, object]:
    """A summary of ``smartctl -j -a DEV`` for ATA, NVMe and SCSI drives:
    identity, capacity, overall health, temperature, power-on hours and the
    counters that tell wear and errors.  ``exit_status`` is smartctl's own
    bit mask (bit 3 and up: the drive reports problems; the JSON is valid)."""
    data = _json_object(text, "smartctl -j")
    if "smartctl" not in data or "device" not in data:
        raise ValueError("smartctl -j: no 'smartctl' or 'device' object")
    tool = _obj(data, "smartctl")
    out: Dict[str, object] = {"protocol": _obj(data, "device").get("protocol", ""),
                              "exit_status": tool.get("exit_status", 0)}
    out.update(_smartctl_identity(data))
    for key, source, field in (("capacity_bytes", "user_capacity", "bytes"),
                               ("smart_passed", "smart_status", "passed"),
                               ("temperature_c", "temperature", "current"),
                               ("power_on_hours", "power_on_time", "hours")):
        if field in _obj(data, source):
            out[key] = _obj(data, source)[field]
    health = _obj(data, "nvme_smart_health_information_log")
    if health:
        out["nvme"] = {k: health[k] for k in NVME_HEALTH if k in health}
        if "data_units_written" in health:  # NVMe data units are 1000 x 512 bytes
            out["host_written_bytes"] = int(health["data_units_written"]) * 512000  # type: ignore[call-overload]
    table = _obj(data, "ata_smart_attributes").get("table")
    if isinstance(table, list):
        out.update(_ata_attributes(table))
    if "scsi_grown_defect_list" in data or "scsi_error_counter_log" in data:
        log = _obj(data, "scsi_error_counter_log")
        out["scsi"] = {"grown_defects": data.get("scsi_grown_defect_list"),
                       "uncorrected_read_errors": _obj(log, "read").get("total_uncorrected_errors"),
                       "uncorrected_write_errors": _obj(log, "write").get("total_uncorrected_errors"),
                       "gigabytes_written": _obj(log, "write").get("gigabytes_processed")}
    messages = tool.get("messages")
    if isinstance(messages, list) and messages:
        out["messages"] = [m.get("string", "") for m in messages if isinstance(m, dict)]
    return out


def _smartctl_identity(data: Dict[str, object]) -> Dict[str, object]:
    """Model, serial, firmware, rotation rate and power cycles, as ATA, NVMe or SCSI drives report them."""
    out: Dict[str, object] = {}
    if "model_name" in data:
        out["model"] = data["model_name"]
    elif "scsi_vendor" in data:
        out["model"] = " ".join(str(data.get(k, "")).strip() for k in ("scsi_vendor", "scsi_product")).strip()
    for key, source in (("serial", "serial_number"), ("firmware", "firmware_version"),
                        ("rotation_rate", "rotation_rate"), ("power_cycles", "power_cycle_count")):
        if source in data:
            out[key] = data[source]
    if "firmware" not in out and "scsi_revision" in data:
        out["firmware"] = data["scsi_revision"]
    return out


def _ata_attributes(table: List[object]) -> Dict[str, object]:
    """The ATA attributes worth a line (:data:`ATA_ATTRIBUTES`, raw values) and every attribute's row."""
    rows = [a for a in table if isinstance(a, dict)]
    return {"ata": {ATA_ATTRIBUTES[a["id"]]: _obj(a, "raw").get("value")
                    for a in rows if a.get("id") in ATA_ATTRIBUTES},
            "attributes": [{"id": a.get("id"), "name": a.get("name"), "value": a.get("value"),
                            "worst": a.get("worst"), "thresh": a.get("thresh"),
                            "raw": _obj(a, "raw").get("string")} for a in rows]}
