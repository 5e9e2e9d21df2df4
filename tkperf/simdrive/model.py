"""The emulated SSD's flash translation layer: a page-mapped FTL with its own clock.

Pure arithmetic, no I/O: :class:`Drive` takes requests with their arrival
time on the model's clock (seconds) and returns when each completes, so
the same request sequence always gives the same answers.  The server maps
that clock to the wall clock (``tkperf.simdrive.server``).

What it models (``docs/simdrive.rst`` says what each parameter does to the
curves):

* logical pages of ``page_kib`` KiB mapped to physical pages in blocks of
  ``block_pages`` pages; the physical space is the capacity plus
  ``op_pct`` per cent over-provisioning, rounded up to whole blocks;
* writes go to an open block; an overwritten or trimmed page becomes
  invalid; a closed block whose last valid page goes is erased at once
  (the erase is charged to the command that emptied it), which is what a
  sequential overwrite does to whole blocks;
* foreground GC: when fewer than ``gc_low_blocks`` blocks are free, a write
  first copies the valid pages of the closed block with the fewest of them
  (greedy) and erases it;
* background GC: after ``bg_delay_ms`` without a command outstanding the
  drive collects blocks the same way until ``bg_free_blocks`` are free;
  a step under way when a command arrives delays it;
* ``units`` parallel units (dies): every page operation (read, program, a
  GC copy = read + program, an erase) occupies the unit free first, so
  IOPS grow with outstanding I/O up to ``units`` and response time grows
  after that; ``cmd_us`` is added to every command's response time.
"""
from __future__ import annotations

import heapq
from array import array
from typing import Any, Dict, List, Optional, Tuple

#: name -> (default, unit, what it is); the order is the order of ``params``.
PARAMS: Dict[str, Tuple[float, str, str]] = {
    "op_pct": (7.0, "%", "over-provisioning: physical space beyond the capacity"),
    "page_kib": (4, "KiB", "flash page: the unit of mapping, read and program"),
    "block_pages": (64, "pages", "pages per erase block"),
    "units": (4, "units", "parallel units (dies) that work at the same time"),
    "read_us": (400.0, "us", "reading one page"),
    "program_us": (500.0, "us", "programming one page"),
    "copy_us": (500.0, "us", "GC copying one valid page inside the flash (copy-back)"),
    "erase_us": (3000.0, "us", "erasing one block"),
    "cmd_us": (20.0, "us", "fixed overhead added to every command's response time"),
    "gc_low_blocks": (2, "blocks", "foreground GC runs while fewer blocks than this are free"),
    "bg_free_blocks": (8, "blocks", "background GC collects in idle time until this many are free"),
    "bg_delay_ms": (5.0, "ms", "idle time before background GC starts"),
}
INT_PARAMS = ("page_kib", "block_pages", "units", "gc_low_blocks", "bg_free_blocks")
HISTORY_MAX = 86400  #: model seconds of history kept (a day)


def check_params(capacity: int, params: Dict[str, float]) -> Dict[str, Any]:
    """The full parameter set (defaults filled in); ValueError names a bad one."""
    out: Dict[str, Any] = {}
    for name, (default, _unit, _what) in PARAMS.items():
        value = params.get(name, default)
        if name in INT_PARAMS:
            if value != int(value):
                raise ValueError(f"{name} must be a whole number, not {value}")
            value = int(value)
        if not value >= 0 or (value == 0 and name not in ("cmd_us", "bg_delay_ms", "read_us",
                                                          "program_us", "copy_us", "erase_us", "op_pct")):
            raise ValueError(f"{name} must be {'positive' if value == 0 else 'at least 0'}, not {value}")
        out[name] = value
    unknown = set(params) - set(PARAMS)
    if unknown:
        raise ValueError(f"unknown model parameter {sorted(unknown)[0]}")
    if out["op_pct"] > 400:
        raise ValueError(f"op_pct must be at most 400, not {out['op_pct']}")
    page = out["page_kib"] * 1024
    if page & (page - 1) or page < 4096 or page > 65536:
        raise ValueError(f"page_kib must be a power of two from 4 to 64, not {out['page_kib']}")
    if capacity <= 0 or capacity % page:
        raise ValueError(f"the capacity must be a positive multiple of the {out['page_kib']} KiB page")
    blocks = _physical_blocks(capacity // page, out)
    if out["gc_low_blocks"] < 2:
        raise ValueError("gc_low_blocks must be at least 2 (GC needs a block to copy into)")
    if blocks - capacity // page // out["block_pages"] < out["gc_low_blocks"] + 2:
        raise ValueError(f"op_pct {out['op_pct']} leaves fewer spare blocks than GC needs "
                         f"(gc_low_blocks + 2 = {out['gc_low_blocks'] + 2}); raise --op or the capacity")
    out["bg_free_blocks"] = max(out["bg_free_blocks"], out["gc_low_blocks"])
    return out


def _physical_blocks(logical_pages: int, p: Dict[str, Any]) -> int:
    ppb = p["block_pages"]
    return -(-int(logical_pages * (1 + p["op_pct"] / 100.0)) // ppb) + 1


class Drive:
    """The FTL and its clock.  Times are model seconds; every method that
    takes a time ``t`` requires ``t`` not to go backwards."""

    def __init__(self, capacity: int, params: Optional[Dict[str, float]] = None) -> None:
        self.params = check_params(capacity, params or {})
        p = self.params
        self.capacity = capacity
        self.page = p["page_kib"] * 1024
        self.ppb = p["block_pages"]
        self.logical_pages = capacity // self.page
        self.blocks = _physical_blocks(self.logical_pages, p)
        self.t_read, self.t_prog = p["read_us"] / 1e6, p["program_us"] / 1e6
        self.t_erase, self.t_cmd = p["erase_us"] / 1e6, p["cmd_us"] / 1e6
        self.t_copy = p["copy_us"] / 1e6
        self.l2p = array("q", [-1]) * self.logical_pages
        self.p2l = array("q", [-1]) * (self.blocks * self.ppb)
        self.valid = [0] * self.blocks
        self.free: List[int] = list(range(self.blocks - 1, -1, -1))  # pop() takes block 0 first
        self.is_free = [True] * self.blocks
        self.open_host: Optional[List[int]] = None  # [block, next page index]
        self.open_gc: Optional[List[int]] = None
        self.unit_free = [0.0] * p["units"]
        self.now = 0.0
        self.busy_until = 0.0  # the last completion owed (commands and GC work)
        self.c = dict(host_write_bytes=0, host_read_bytes=0, host_trim_bytes=0, host_write_ios=0,
                      host_read_ios=0, host_trim_ios=0, nand_write_pages=0, erases=0, gc_copies=0,
                      bg_gc_copies=0, purges=0)
        self.first_fg_gc: Optional[int] = None
        self.idle_time = 0.0
        self.mapped = 0
        self.history: List[Tuple[int, int, int]] = []
        self._next_sample = 0

    # -- the clock ---------------------------------------------------------
    def _unit(self, ready: float, cost: float) -> float:
        """One page operation on the unit that is free first; its end."""
        start = heapq.heappop(self.unit_free)
        end = (start if start > ready else ready) + cost
        heapq.heappush(self.unit_free, end)
        return end

    def advance(self, t: float) -> float:
        """Move the clock to ``t`` (never back): history samples, idle time
        and the background GC that fits into it; the clock's time."""
        if t < self.now:
            t = self.now
        c = self.c
        while self._next_sample <= t:
            self.history.append((self._next_sample, c["host_write_bytes"], c["host_write_ios"]))
            self._next_sample += 1
        if len(self.history) > HISTORY_MAX:
            del self.history[:len(self.history) - HISTORY_MAX]
        if t > self.busy_until:
            idle_from = max(self.busy_until, self.now)
            self.idle_time += t - idle_from
            start = max(self.busy_until + self.params["bg_delay_ms"] / 1e3, self.now)
            while start < t and len(self.free) < self.params["bg_free_blocks"]:
                end = self._gc_step(start, background=True)
                if end is None:
                    break
                start = end
                self.busy_until = max(self.busy_until, end)
        self.now = t
        return t

    # -- blocks ------------------------------------------------------------
    def _alloc(self, t: float, gc: bool) -> Tuple[int, float]:
        """A physical page to program; foreground GC first when blocks run short."""
        attr = "open_gc" if gc else "open_host"
        ob = getattr(self, attr)
        if ob is None or ob[1] == self.ppb:
            if not gc:
                while len(self.free) < self.params["gc_low_blocks"]:
                    end = self._gc_step(t, background=False)
                    if end is None:
                        break
                    t = end
            if not self.free:
                raise RuntimeError("no free block (the model's spare blocks are exhausted)")
            b = self.free.pop()
            self.is_free[b] = False
            ob = [b, 0]
            setattr(self, attr, ob)
        ppn = ob[0] * self.ppb + ob[1]
        ob[1] += 1
        return ppn, t

    def _closed(self, b: int) -> bool:
        return not self.is_free[b] and all(o is None or o[0] != b for o in (self.open_host, self.open_gc))

    def _gc_step(self, t: float, background: bool) -> Optional[float]:
        """Collect the closed block with the fewest valid pages (greedy); its end time."""
        best, best_v = -1, self.ppb
        valid, ppb = self.valid, self.ppb
        for b in range(self.blocks):
            v = valid[b]
            if v < best_v and self._closed(b):
                best, best_v = b, v
        if best < 0:
            return None
        if not background and self.first_fg_gc is None:
            self.first_fg_gc = self.c["host_write_bytes"]
        end = t
        base = best * ppb
        for i in range(ppb):
            lpn = self.p2l[base + i]
            if lpn < 0:
                continue
            dst, _ = self._alloc(t, gc=True)
            self.p2l[base + i] = -1
            self.p2l[dst] = lpn
            self.l2p[lpn] = dst
            self.valid[best] -= 1
            self.valid[dst // ppb] += 1
            self.c["nand_write_pages"] += 1
            self.c["bg_gc_copies" if background else "gc_copies"] += 1
            end = max(end, self._unit(t, self.t_copy))
        return max(end, self._erase(best, end))

    def _erase(self, b: int, t: float) -> float:
        for o in ("open_host", "open_gc"):
            ob = getattr(self, o)
            if ob is not None and ob[0] == b:
                setattr(self, o, None)
        self.valid[b] = 0
        self.is_free[b] = True
        self.free.append(b)
        self.c["erases"] += 1
        return self._unit(t, self.t_erase)

    def _invalidate(self, lpn: int, t: float, trim: bool) -> float:
        """Drop the mapping of ``lpn``; an emptied block is erased (its end time)."""
        ppn = self.l2p[lpn]
        if ppn < 0:
            return t
        self.l2p[lpn] = -1
        self.p2l[ppn] = -1
        self.mapped -= 1
        b = ppn // self.ppb
        self.valid[b] -= 1
        if self.valid[b] == 0 and (trim or self._closed(b)):
            return self._erase(b, t)
        return t

    def _pages(self, offset: int, length: int) -> range:
        return range(offset // self.page, (offset + length - 1) // self.page + 1)

    # -- commands ----------------------------------------------------------
    def write(self, t: float, offset: int, length: int) -> float:
        t = self.advance(t)
        self.c["host_write_bytes"] += length
        self.c["host_write_ios"] += 1
        end = t
        for lpn in self._pages(offset, length):
            ready = self._invalidate(lpn, t, trim=False)
            ppn, ready = self._alloc(ready, gc=False)
            self.p2l[ppn] = lpn
            self.l2p[lpn] = ppn
            self.valid[ppn // self.ppb] += 1
            self.mapped += 1
            self.c["nand_write_pages"] += 1
            end = max(end, self._unit(ready, self.t_prog))
        return self._done(end + self.t_cmd)

    def read(self, t: float, offset: int, length: int) -> float:
        """Mapped or not, a page read costs ``read_us`` (so reads never outrun the server)."""
        t = self.advance(t)
        self.c["host_read_bytes"] += length
        self.c["host_read_ios"] += 1
        end = t
        for _ in self._pages(offset, length):
            end = max(end, self._unit(t, self.t_read))
        return self._done(end + self.t_cmd)

    def trim(self, t: float, offset: int, length: int) -> float:
        """Trim or zero a range: whole pages in it lose their mapping (reads give
        zeros); blocks left empty are erased.  A command that leaves nothing
        mapped returns the drive to fresh (counted in ``purges``)."""
        t = self.advance(t)
        was_fresh = self.fresh
        self.c["host_trim_bytes"] += length
        self.c["host_trim_ios"] += 1
        first = -(-offset // self.page)
        last = (offset + length) // self.page
        end = t
        for lpn in range(first, min(last, self.logical_pages)):
            end = max(end, self._invalidate(lpn, t, trim=True))
        if self.mapped == 0:
            for b in range(self.blocks):
                if not self.is_free[b]:
                    end = max(end, self._erase(b, end))
            if not was_fresh:
                self.c["purges"] += 1
        return self._done(end + self.t_cmd)

    def flush(self, t: float) -> float:
        t = self.advance(t)
        return self._done(t + self.t_cmd)

    def _done(self, end: float) -> float:
        if end > self.busy_until:
            self.busy_until = end
        return end

    # -- what it tells -----------------------------------------------------
    @property
    def fresh(self) -> bool:
        return self.mapped == 0 and len(self.free) == self.blocks

    def stats(self, history: bool = False) -> Dict[str, Any]:
        c = self.c
        nand = c["nand_write_pages"] * self.page
        out: Dict[str, Any] = {k: v for k, v in c.items() if k != "nand_write_pages"}
        out.update(
            capacity_bytes=self.capacity, physical_blocks=self.blocks, nand_write_bytes=nand,
            mapped_bytes=self.mapped * self.page, free_blocks=len(self.free),
            first_fg_gc_host_write_bytes=self.first_fg_gc, model_time_s=self.now,
            idle_time_s=self.idle_time, fresh=self.fresh,
            waf=(nand / c["host_write_bytes"]) if c["host_write_bytes"] else None,
            params={name: {"value": value, "unit": PARAMS[name][1], "what": PARAMS[name][2]}
                    for name, value in self.params.items()})
        if history:
            out["history"] = [list(h) for h in self.history]
        return out
