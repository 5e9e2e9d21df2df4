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
  (on a unit: a trim waits for it, a write's new page goes elsewhere),
  which is what a sequential overwrite does to whole blocks;
* foreground GC: when fewer than ``gc_low_blocks`` blocks are free, a write
  first copies the valid pages of the closed block with the fewest of them
  (greedy) and erases it;
* background GC: after ``bg_delay_ms`` without a command outstanding the
  drive collects blocks the same way until ``bg_free_blocks`` are free (0:
  the spare area's worth, physical less logical blocks) or no block would
  give a page back, working ``bg_duty_pct`` per cent of the time and
  freeing pages no faster than the spare area's pages in ``bg_spare_s``
  (its pace follows the drive's size and spare area), so that what idle
  time recovers grows with its length, the same share of the spare area
  at any capacity; a step under way when a command arrives delays it;
* a controller that takes ``cmd_us`` for every command, one command at a
  time, plus the command's bytes over the host link (``link_mbs``): no
  more than ``1 / (cmd_us + bytes / link_mbs)`` commands a second;
* ``units`` parallel units (dies).  A program, a GC copy and an erase
  take the die that is free first (the controller places writes where it
  can); a read goes to the die its page was programmed on and waits behind
  whatever that die is doing (a program, an erase: the mixed read/write
  dip), so random reads meet busy dies and their IOPS grow with
  outstanding I/O less than in proportion.  A page still in the write
  buffer is read from it, without a flash read;
* a read takes one ``read_us`` per die-page it touches (all planes at
  once): a read of ``program_pages`` pages written together costs one
  flash read, so large sequential reads run at the link's pace;
* a write buffer of ``buffer_programs`` programs: written pages collect in
  it and are programmed ``program_pages`` at a time (a flash page times its
  planes), so a write completes once its pages are in the buffer, small
  writes coalesce, and a large write costs one command for many pages;
* a read of a page never written (or trimmed) is answered by the
  controller alone, without a flash read.
"""
from __future__ import annotations

import heapq
from array import array
from typing import Any, Dict, List, Optional, Tuple

from tkperf.simdrive.params import PARAMS, check_params, physical_blocks, typecode

HISTORY_MAX = 86400  #: model seconds of history kept (a day)


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
        self.blocks = physical_blocks(self.logical_pages, p)
        self.t_read, self.t_prog = p["read_us"] / 1e6, p["program_us"] / 1e6
        self.t_erase, self.t_cmd = p["erase_us"] / 1e6, p["cmd_us"] / 1e6
        self.t_copy = p["copy_us"] / 1e6
        self.t_byte = 1.0 / (p["link_mbs"] * 1e6) if p["link_mbs"] else 0.0
        self.pp = p["program_pages"]
        self.units = p["units"]
        self.last_die = 0  #: the die the last operation on the die free first went to
        code = typecode(self.blocks * self.ppb)[0]
        self.l2p = array(code, [-1]) * self.logical_pages
        self.p2l = array(code, [-1]) * (self.blocks * self.ppb)
        self.valid = [0] * self.blocks
        self.free: List[int] = list(range(self.blocks - 1, -1, -1))  # pop() takes block 0 first
        self.is_free = [True] * self.blocks
        self.open_host: Optional[List[int]] = None  # [block, next page index]
        self.open_gc: Optional[List[int]] = None
        self.unit_free = [0.0] * p["units"]  #: when each die is free (indexed by die)
        #: the die each program's worth of physical pages went to (-1: erased, or still in the buffer)
        self.group_die = array("b" if p["units"] < 128 else "i", [-1]) * (self.blocks * self.ppb // self.pp + 1)
        self.fill_groups: List[int] = []  #: the groups of the pages in the slot being filled
        self.ctrl_free = 0.0  #: when the controller takes the next command
        self.slot_free = [0.0] * p["buffer_programs"]  #: when each write buffer slot is free (a heap)
        self.fill = 0  #: pages in the buffer slot being filled
        self.fill_at = 0.0  #: when that slot was free to fill
        self.fill_ready = 0.0  #: the flash may program that slot's pages from then on (after GC, an erase)
        self.now = 0.0
        self.busy_until = 0.0  # the last completion owed (commands and GC work)
        self.cmd_until = 0.0  # the last command's completion
        self.c: Dict[str, Any] = dict(host_write_bytes=0, host_read_bytes=0, host_trim_bytes=0, host_write_ios=0,
                      host_read_ios=0, host_trim_ios=0, nand_write_pages=0, erases=0, gc_copies=0,
                      bg_gc_copies=0, purges=0, unmapped_read_pages=0, flash_reads=0,
                      read_service_s=0.0, write_service_s=0.0, max_read_service_s=0.0,
                      max_write_service_s=0.0, host_wait_s=0.0, host_held_s=0.0)
        self.first_fg_gc: Optional[int] = None
        self.idle_time = 0.0
        self.mapped = 0
        self.history: List[Tuple[int, int, int]] = []
        self._next_sample = 0
        self._bg_next: Optional[float] = None  #: when background GC may take its next step
        #: the host said the time until the next command is its own (tkperf between two fio processes:
        #: the PTS runs its workloads with no idle between them): no background GC in it (:meth:`hold`)
        self.held = False
        #: background GC's least time per page it frees: the spare area's pages in bg_spare_s
        self.bg_page_s = p["bg_spare_s"] / max((self.blocks - self.logical_pages // self.ppb) * self.ppb, 1)

    # -- the clock ---------------------------------------------------------
    def _unit(self, ready: float, cost: float, die: int = -1) -> float:
        """One flash operation from ``ready`` on ``die`` (-1: the die free
        first, kept in ``self.last_die``) once it is free; its end."""
        free = self.unit_free
        if die < 0:
            die = min(range(self.units), key=free.__getitem__)
            self.last_die = die
        start = free[die]
        end = (start if start > ready else ready) + cost
        free[die] = end
        return end

    def advance(self, t: float) -> float:
        """Move the clock to ``t`` (never back): history samples, idle time
        and the background GC that fits into it; the clock's time."""
        if t < self.now:
            t = self.now
        elif t < self._next_sample and t <= self.cmd_until:  # the common case: commands owed, same second
            self.now = t
            return t
        c = self.c
        while self._next_sample <= t:
            self.history.append((self._next_sample, c["host_write_bytes"], c["host_write_ios"]))
            self._next_sample += 1
        if len(self.history) > HISTORY_MAX:
            del self.history[:len(self.history) - HISTORY_MAX]
        if t > self.cmd_until:  # no command outstanding: idle time, whatever GC does in it
            self.idle_time += t - max(self.cmd_until, self.now)
        if t > self.busy_until and not self.held:
            start = self._bg_next
            if start is None:
                start = self.busy_until + self.params["bg_delay_ms"] / 1e3
            rest = 100.0 / self.params["bg_duty_pct"] - 1.0
            if self.fill and start < t:  # idle: the buffer's last pages go to the flash
                self.busy_until = max(self.busy_until, self._program(start))
            while start < t and len(self.free) < self.params["bg_free_blocks"]:
                copies = self.c["bg_gc_copies"]
                end = self._gc_step(start, background=True)
                if end is None:
                    break
                self.busy_until = max(self.busy_until, end)
                freed = self.ppb - (self.c["bg_gc_copies"] - copies)  # the pages the block gave back
                start = max(end + (end - start) * rest, start + freed * self.bg_page_s)
            self._bg_next = start  # where it goes on: the same whether or not the clock stopped at t
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
            self.group_die[dst // self.pp] = self.last_die
        erased = self._erase(best, end)  # on a unit of its own: writes wait for the copies, not for it
        if erased > self.busy_until:
            self.busy_until = erased
        return end

    def _erase(self, b: int, t: float) -> float:
        for o in ("open_host", "open_gc"):
            ob = getattr(self, o)
            if ob is not None and ob[0] == b:
                setattr(self, o, None)
        self.valid[b] = 0
        self.is_free[b] = True
        self.free.append(b)
        self.c["erases"] += 1
        first = b * self.ppb // self.pp
        self.group_die[first:first + self.ppb // self.pp] = array(self.group_die.typecode, [-1]) * (self.ppb // self.pp)
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
    def _controller(self, t: float, length: int = 0) -> float:
        """The controller takes the command at ``t`` or once it is free, and
        its ``length`` bytes over the host link; when it is done."""
        start = t if t > self.ctrl_free else self.ctrl_free
        self.ctrl_free = start + self.t_cmd + length * self.t_byte
        return self.ctrl_free

    def _buffer(self, t: float, ready: float, ppn: int) -> float:
        """One written page (physical page ``ppn``) into the write buffer at
        ``t`` (the flash may program it from ``ready``); when it is in.  A
        full slot is programmed."""
        group = ppn // self.pp
        self.group_die[group] = -1  # in the buffer until programmed
        if not self.fill_groups or self.fill_groups[-1] != group:
            self.fill_groups.append(group)
        if self.fill == 0:
            slot = heapq.heappop(self.slot_free)
            self.fill_at = slot
            self.fill_ready = ready
        elif ready > self.fill_ready:
            self.fill_ready = ready
        inside = t if t > self.fill_at else self.fill_at
        self.fill += 1
        if self.fill == self.params["program_pages"]:
            end = self._program(inside)
            if end > self.busy_until:
                self.busy_until = end
        return inside

    def _program(self, t: float) -> float:
        """Program the slot being filled (all its planes at once) from ``t``; its end."""
        end = self._unit(max(t, self.fill_at, self.fill_ready), self.t_prog)
        for group in self.fill_groups:
            self.group_die[group] = self.last_die
        self.fill_groups = []
        heapq.heappush(self.slot_free, end)
        self.fill = 0
        return end

    def hold(self, t: float) -> None:
        """From ``t`` until the next command the host is busy, not idle (the
        drive's host says so: tkperf between one fio process and the next,
        however long the machine's load makes that): no background GC in
        that time, which counts as ``host_wait_s`` and ``host_held_s``.  A
        pause of the host must not become idle time that makes a loaded
        host's steady writes faster (issue 56)."""
        self.advance(t)
        self.held = True

    def release(self, t: float) -> None:
        """The host is done (a run of tkperf ended): idle time from ``t`` on
        is the drive's again, background GC from ``bg_delay_ms`` after it
        (not over the held time before it)."""
        self.advance(t)
        if self.held:
            self.held = False
            self._bg_next = t + self.params["bg_delay_ms"] / 1e3

    def _arrival(self, t: float) -> float:
        """A command arrives at ``t``: the clock moves there.  Idle time that
        it ends and that is shorter than ``bg_delay_ms`` is the host's path
        between the drive's last completion and this command (the drive had
        nothing to do, but the host was not idle): ``host_wait_s``; so is a
        held gap of any length (:meth:`hold`)."""
        gap = t - self.cmd_until
        if self.held:
            if gap > 0:
                self.c["host_wait_s"] += gap
                self.c["host_held_s"] += gap
            t = self.advance(t)
            self.held = False
            return t
        if 0 < gap < self.params["bg_delay_ms"] / 1e3:
            self.c["host_wait_s"] += gap
        return self.advance(t)

    def write(self, t: float, offset: int, length: int) -> float:
        t = self._arrival(t)
        self.c["host_write_bytes"] += length
        self.c["host_write_ios"] += 1
        start = self._controller(t, length)
        end = start
        for lpn in self._pages(offset, length):
            erased = self._invalidate(lpn, start, trim=False)  # an emptied block's erase: a unit's work,
            if erased > self.busy_until:  # not in the way of the new page, which goes elsewhere
                self.busy_until = erased
            ppn, ready = self._alloc(start, gc=False)
            self.p2l[ppn] = lpn
            self.l2p[lpn] = ppn
            self.valid[ppn // self.ppb] += 1
            self.mapped += 1
            self.c["nand_write_pages"] += 1
            inside = self._buffer(start, ready, ppn)
            if inside > end:
                end = inside
        return self._served(t, self._done(end), "write")

    def read(self, t: float, offset: int, length: int) -> float:
        """Mapped pages cost a flash read on the die that holds them, one per
        die-page (the ``program_pages`` pages programmed together, all planes
        read at once); a page never written (or trimmed) only the
        controller's time, as a drive answers it from its table."""
        t = self._arrival(t)
        self.c["host_read_bytes"] += length
        self.c["host_read_ios"] += 1
        start = self._controller(t, length)
        end = start
        l2p, pp, dies = self.l2p, self.pp, self.group_die
        read = set()
        for lpn in self._pages(offset, length):
            ppn = l2p[lpn]
            if ppn < 0:
                self.c["unmapped_read_pages"] += 1
            elif ppn // pp not in read and dies[ppn // pp] >= 0:  # not in the buffer: a flash read
                read.add(ppn // pp)
                end = max(end, self._unit(start, self.t_read, dies[ppn // pp]))
        self.c["flash_reads"] += len(read)
        return self._served(t, self._done(end), "read")

    def trim(self, t: float, offset: int, length: int) -> float:
        """Trim or zero a range: whole pages in it lose their mapping (reads give
        zeros); blocks left empty are erased.  A command that leaves nothing
        mapped returns the drive to fresh (counted in ``purges``)."""
        t = self._arrival(t)
        was_fresh = self.fresh
        self.c["host_trim_bytes"] += length
        self.c["host_trim_ios"] += 1
        first = -(-offset // self.page)
        last = (offset + length) // self.page
        t = end = self._controller(t)
        for lpn in range(first, min(last, self.logical_pages)):
            end = max(end, self._invalidate(lpn, t, trim=True))
        if self.mapped == 0:
            for b in range(self.blocks):
                if not self.is_free[b]:
                    end = max(end, self._erase(b, end))
            if not was_fresh:
                self.c["purges"] += 1
            self.first_fg_gc = None  # fresh again: the next cliff is this fill's, not an earlier one's
        return self._done(end)

    def flush(self, t: float) -> float:
        """The buffer's last pages go to the flash; the command completes with the
        controller (the buffer is the drive's: power-loss protected, as on
        enterprise drives)."""
        t = self._arrival(t)
        if self.fill:
            self.busy_until = max(self.busy_until, self._program(t))
        return self._done(self._controller(t))

    def _served(self, t: float, end: float, kind: str) -> float:
        """Count a command's service on the model's clock (its arrival ``t``
        to its completion ``end``): what the drive took, without the host."""
        took = end - t
        self.c[kind + "_service_s"] += took
        if took > self.c["max_" + kind + "_service_s"]:
            self.c["max_" + kind + "_service_s"] = took
        return end

    def _done(self, end: float) -> float:
        self._bg_next = None  # a command: background GC waits for bg_delay_ms of idle again
        if end > self.cmd_until:
            self.cmd_until = end
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
