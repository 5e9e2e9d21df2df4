"""A recording's raw events analysed while it records, a part at a time.

The recorder drains the kernel's trace four times a second into a part: an
unnamed temporary file in the output directory (``O_TMPFILE``, no name
another user could plant a link at).  Once a part holds
:data:`PART_BYTES`, the next drain starts a new one and the full part is
handed to the analysis, a thread beside the recorder that reads it into
the capture's figures and iolog (:class:`tkperf.rwsw.rawtrace.Stream`)
and closes it, which frees its disk space.  The raw events on disk are
then a part or two, not the whole recording: a day at 20,000 IOPS keeps
some 230 GB of them until its end otherwise (docs/rwsw.rst, "A day-long
capture").

This is ``tkperf capture --analysis during`` (and ``auto`` when the raw
events of the whole would not fit): analysed after the recording, the
events cost the application under capture no CPU while it records, and
the recording is one part.  The analysis thread runs on CPU time the host
leaves idle (Linux's ``SCHED_IDLE`` policy, set for that thread alone;
where it cannot be set, ``nice`` +19), yet a CPU-bound application still
loses throughput to it (measured in docs/rwsw.rst: fio at some 310,000
IOPS on two busy cores, 43% fewer).  When :data:`BEHIND` full parts
wait for it (a host kept busy), it runs at the normal priority until it
has caught up, so the raw events on disk stay bounded where its CPU
time is to be had at all; and at most :data:`MAX_WAITING` parts wait,
past which the recorder writes on to the part it has, so the file
descriptors held stay bounded.  What it has not read when the recording
ends is read then, at the capture's own priority.
"""
from __future__ import annotations

import os
import queue
import tempfile
import threading
from typing import IO, Callable, Optional, Tuple

from tkperf.errors import OutputError
from tkperf.rwsw.rawtrace import Stream

#: A part is handed to the analysis once it holds this many bytes (some 250,000 I/Os' events).
PART_BYTES = 32 << 20
#: At most this many full parts wait for the analysis; past it the recorder writes on to the part it has.
MAX_WAITING = 64
#: With this many full parts waiting, the analysis leaves idle CPU for the normal priority until it has
#: caught up: the raw events on disk stay within some BEHIND + 2 parts on a busy host too.
BEHIND = 8
#: The analysis thread's nice value where SCHED_IDLE cannot be set.
NICE = 19


def idle(on: bool) -> None:
    """The calling thread on idle CPU time only (``SCHED_IDLE``; else ``nice`` +:data:`NICE`), or back to
    the normal policy.  Linux sets both per thread: the recorder, in the main thread, keeps its own."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE if on else os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        if on:
            try:
                os.nice(NICE)
            except OSError:
                pass


class Parts:
    """The parts of one recording and the thread that analyses them.
    ``make()`` gives the stream they are read into; it is called once the
    first part is handed on (the recorder has read the trace's layout by
    then).  Not ``live``: the recording is one part, analysed once it ends.
    Use as a context manager: leaving it stops the analysis and closes every
    part (a recording cut short leaves nothing on disk)."""

    def __init__(self, outdir: str, name: str, make: Callable[[], Stream], live: bool = True) -> None:
        self.outdir, self.name, self.make, self.live = outdir, name, make, live
        # a part, where its last drain begins in it, and whether it is the recording's last
        self.waiting: queue.Queue[Optional[Tuple[IO[bytes], int, bool]]] = queue.Queue()
        self.stream: Optional[Stream] = None
        self.failed: Optional[BaseException] = None
        self.quit = threading.Event()
        self.after = threading.Event()  # set when the recording has ended
        self.caught_up = 0       # times the analysis left idle CPU to catch up (or to finish)
        self.handed = 0          # parts handed to the analysis
        self.read = 0            # parts the analysis has read (and closed: their disk space freed)
        self.peak_waiting = 0    # the most full parts waiting at once
        self.current: Optional[IO[bytes]] = None
        self.tail = 0            # where the current part's latest drain begins in it
        self.thread = threading.Thread(target=self._analyse, name="tkperf-capture-analysis", daemon=True)

    def __enter__(self) -> Parts:
        self.current = self._new()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.quit.set()
        if self.current is not None:
            self.current.close()
            self.current = None
        self.waiting.put(None)
        self.thread.join()
        while not self.waiting.empty():  # parts the analysis did not reach
            item = self.waiting.get_nowait()
            if item is not None:
                item[0].close()

    def _new(self) -> IO[bytes]:
        try:  # unnamed where the kernel can (O_TMPFILE), else a fresh name removed at once: no link to plant
            return tempfile.TemporaryFile(dir=self.outdir, prefix=f".{self.name}.", suffix=".trace.tmp")
        except OSError as exc:
            raise OutputError(f"cannot create a temporary file in {self.outdir}: {exc.strerror}") from None

    def fileno(self) -> int:
        """The part the recorder's next drain goes to (a new one once the current is full)."""
        assert self.current is not None
        at = os.lseek(self.current.fileno(), 0, os.SEEK_CUR)
        if self.live and at >= PART_BYTES and self.waiting.qsize() < MAX_WAITING:
            self._hand(self.current)
            self.current, at = self._new(), 0
        self.tail = at
        return self.current.fileno()

    def _hand(self, fh: IO[bytes], last: bool = False) -> None:
        self.waiting.put((fh, self.tail, last))
        self.handed += 1
        self.peak_waiting = max(self.peak_waiting, self.waiting.qsize())

    def close(self) -> Stream:
        """The recording is over: its last part is handed on and the analysis
        waited for; the stream every part was read into (not yet finished)."""
        assert self.current is not None
        self._hand(self.current, last=True)
        self.current = None
        self.waiting.put(None)
        self.after.set()  # the recording is over: what is left is read at the capture's own priority
        while self.thread.is_alive():
            self.thread.join(0.2)  # in steps: a signal to the main thread is handled meanwhile
        if self.failed is not None:
            raise self.failed
        if self.stream is None:  # no part was read: the recording never began
            self.stream = self.make()
        return self.stream

    def _analyse(self) -> None:
        idle(True)
        behind = False
        while True:
            item = self.waiting.get()
            if item is None:
                return
            late = self.after.is_set() or self.waiting.qsize() + 1 >= BEHIND
            if late != behind:  # fallen behind (or the recording is over): the normal priority; caught up: idle
                behind = late
                idle(not late)
                self.caught_up += late
            fh, tail, last = item
            with fh:
                if self.quit.is_set() or self.failed is not None:
                    continue
                try:
                    if self.stream is None:
                        self.stream = self.make()
                    self.stream.part(fh, None if last else tail, last)
                    self.read += 1
                except BaseException as exc:  # noqa: BLE001 - raised again in the main thread (close)
                    self.failed = exc
