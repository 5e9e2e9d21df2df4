"""The emulated SSD's parameters: their defaults, units and meaning
(:data:`PARAMS`, in the order ``tkperf simdrive up`` and the stats list
them), their checks (:func:`check_params`), and what they allow before
any request: the fresh drive's rates (:func:`rates`) and the memory its
tables take (:func:`table_bytes`).  ``docs/simdrive.rst`` says what each
one does to the curves; the FTL that uses them is
:mod:`tkperf.simdrive.model`."""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

#: name -> (default, unit, what it is); the order is the order of ``params``.
PARAMS: Dict[str, Tuple[float, str, str]] = {
    "op_pct": (7.0, "%", "over-provisioning: physical space beyond the capacity"),
    "page_kib": (4, "KiB", "the unit of mapping (a logical page)"),
    "block_pages": (64, "pages", "pages per erase block"),
    "program_pages": (8, "pages", "pages programmed at once: a flash page times its planes"),
    "units": (10, "units", "parallel units (dies) that work at the same time"),
    "read_us": (440.0, "us", "one read on a die (up to program_pages pages, all planes at once)"),
    "program_us": (6600.0, "us", "one program (program_pages pages, all planes at once)"),
    "copy_us": (1265.0, "us", "GC copying one valid page (its read and its share of a program)"),
    "erase_us": (26400.0, "us", "erasing one block"),
    "cmd_us": (61.0, "us", "the controller's time for one command (one command at a time)"),
    "link_mbs": (64.0, "MB/s", "the host link: a command's data takes its bytes over this on the controller "
                               "(0: no time)"),
    "buffer_programs": (32, "programs", "write buffer, in programs: writes complete once in it"),
    "gc_low_blocks": (2, "blocks", "foreground GC runs while fewer blocks than this are free"),
    "bg_free_blocks": (0, "blocks", "background GC collects in idle time until this many are free "
                                    "(0: the spare area's worth)"),
    "bg_delay_ms": (100.0, "ms", "idle time before background GC starts"),
    "bg_duty_pct": (10.0, "%", "share of idle time background GC works (it rests the rest)"),
    "bg_spare_s": (15.0, "s", "background GC collects the spare area's worth of blocks in no less idle time "
                              "than this (0: bg_duty_pct alone sets its pace)"),
}
INT_PARAMS = ("page_kib", "block_pages", "program_pages", "units", "buffer_programs", "gc_low_blocks",
              "bg_free_blocks")


def check_params(capacity: int, params: Dict[str, float]) -> Dict[str, Any]:
    """The full parameter set (defaults filled in); ValueError names a bad one."""
    out: Dict[str, Any] = {name: _checked(name, params.get(name, default))
                           for name, (default, _unit, _what) in PARAMS.items()}
    unknown = set(params) - set(PARAMS)
    if unknown:
        raise ValueError(f"unknown model parameter {sorted(unknown)[0]}")
    if out["op_pct"] > 400:
        raise ValueError(f"op_pct must be at most 400, not {out['op_pct']}")
    if out["bg_duty_pct"] > 100:
        raise ValueError(f"bg_duty_pct must be at most 100, not {out['bg_duty_pct']}")
    page = _page_bytes(capacity, out)
    blocks = physical_blocks(capacity // page, out)
    if out["gc_low_blocks"] < 2:
        raise ValueError("gc_low_blocks must be at least 2 (GC needs a block to copy into)")
    if blocks - capacity // page // out["block_pages"] < out["gc_low_blocks"] + 2:
        raise ValueError(f"op_pct {out['op_pct']} leaves fewer spare blocks than GC needs "
                         f"(gc_low_blocks + 2 = {out['gc_low_blocks'] + 2}); raise --op or the capacity")
    if out["block_pages"] % out["program_pages"]:
        raise ValueError(f"program_pages must divide block_pages ({out['block_pages']}), not {out['program_pages']}")
    if out["bg_free_blocks"] == 0:  # the spare area's worth
        out["bg_free_blocks"] = blocks - capacity // page // out["block_pages"]
    out["bg_free_blocks"] = max(out["bg_free_blocks"], out["gc_low_blocks"])
    return out


#: The parameters that may be 0 (every other one must be positive).
ZERO_ALLOWED = ("cmd_us", "bg_delay_ms", "read_us", "program_us", "copy_us", "erase_us", "op_pct",
                "bg_free_blocks", "link_mbs", "bg_spare_s")


def _checked(name: str, value: float) -> Any:
    """One parameter's value checked on its own (whole where it counts
    something, finite, at least 0 or positive); ValueError names it."""
    if name in INT_PARAMS:
        if value != int(value):
            raise ValueError(f"{name} must be a whole number, not {value}")
        value = int(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value}")
    if not value >= 0 or (value == 0 and name not in ZERO_ALLOWED):
        raise ValueError(f"{name} must be {'positive' if value == 0 else 'at least 0'}, not {value}")
    return value


def _page_bytes(capacity: int, out: Dict[str, Any]) -> int:
    """The page in bytes: a power of two from 4 to 64 KiB that divides the capacity."""
    page = out["page_kib"] * 1024
    if page & (page - 1) or page < 4096 or page > 65536:
        raise ValueError(f"page_kib must be a power of two from 4 to 64, not {out['page_kib']}")
    if capacity <= 0 or capacity % page:
        raise ValueError(f"the capacity must be a positive multiple of the {out['page_kib']} KiB page")
    return int(page)


def table_bytes(capacity: int, params: Optional[Dict[str, float]] = None) -> int:
    """The memory the model's tables take (ValueError as :func:`check_params`):
    a logical-to-physical and a physical-to-logical entry per page, 4 bytes
    each (8 above 2**31 pages), and a few per block."""
    p = check_params(capacity, params or {})
    logical = capacity // (p["page_kib"] * 1024)
    blocks = physical_blocks(logical, p)
    physical = blocks * p["block_pages"]
    return (logical + physical) * typecode(physical)[1] + blocks * 24


def typecode(pages: int) -> Tuple[str, int]:
    """The array type code and item size that hold page numbers up to ``pages``."""
    return ("i", 4) if pages < 2 ** 31 - 1 else ("q", 8)


def rates(params: Optional[Dict[str, float]] = None) -> Dict[str, float]:
    """What the parameters allow, fresh (no GC): 4 KiB read and write IOPS
    with every die busy (the controller's pace or the dies', whichever is
    slower; random reads meet busy dies and reach it only at a high queue
    depth), QD 1 4 KiB read and write service (s), sequential write bytes a
    second (whole blocks: programs and their erase, or the link) and
    sequential read bytes a second (128 KiB commands: the link's pace or
    the dies', a read per ``program_pages`` pages)."""
    p = check_params(1 << 30, params or {})
    page = p["page_kib"] * 1024
    link = 1.0 / (p["link_mbs"] * 1e6) if p["link_mbs"] else 0.0
    cmd4k = p["cmd_us"] / 1e6 + 4096 * link
    ctrl = 1.0 / cmd4k if cmd4k else math.inf
    per_block = p["block_pages"] // p["program_pages"] * p["program_us"] + p["erase_us"]
    flash_pages = p["units"] * p["block_pages"] / (per_block / 1e6) if per_block else math.inf
    read = p["units"] / (p["read_us"] / 1e6) if p["read_us"] else math.inf
    cmd128k = p["cmd_us"] / 1e6 + 131072 * link
    seq_read = min(131072 / cmd128k if cmd128k else math.inf,
                   read * p["program_pages"] * page)
    seq_write = min(flash_pages * page, 131072 / cmd128k if cmd128k else math.inf)
    return dict(read_iops=min(ctrl, read), read_qd1_iops=1.0 / (cmd4k + p["read_us"] / 1e6),
                write_iops=min(ctrl, flash_pages), seq_write_bytes_s=seq_write, seq_read_bytes_s=seq_read,
                read_qd1_s=cmd4k + p["read_us"] / 1e6, write_qd1_s=cmd4k)


def physical_blocks(logical_pages: int, p: Dict[str, Any]) -> int:
    """Blocks of the physical space: the capacity plus ``op_pct``, rounded up, and one open block."""
    ppb = p["block_pages"]
    return -(-int(logical_pages * (1 + p["op_pct"] / 100.0)) // ppb) + 1
