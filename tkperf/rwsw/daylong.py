"""What a long capture needs, said and checked before it starts, and imports of any size
(docs/rwsw.rst, "A day-long capture").

**Disk.**  A recording writes the kernel's raw trace events to temporary
files in ``--outdir`` (:data:`RAW_BYTES_PER_IO`, two events an I/O), a part
at a time, each analysed and freed while the recording goes on
(:mod:`tkperf.rwsw.liveparts`), and the packed iolog beside the capture
(:data:`IOLOG_BYTES_PER_IO`).  The analysis runs on idle CPU time only:
where it keeps up with the rate (:data:`ANALYSIS_US_PER_IO` of CPU an I/O
within :data:`KEEP_UP_SHARE` of the idle cores the host had over the same
look, ``/proc/stat``), the raw events need :data:`RAW_PARTS` parts at
most; where it cannot, all of them may wait until the end, and the
estimate counts them all.  The
rate is the device's own counters over a short look
(``/sys/class/block/NAME/stat``: reads, writes, discards and flushes
completed; :data:`LOOK_S`), or ``--expect-iops``.  :func:`check_disk` says
the estimate and refuses (:class:`~tkperf.errors.OutputError`, exit 8) a
capture whose files would not fit in what ``--outdir``'s file system has
free (``os.statvfs``), unless ``--force``.

**Imports of any size.**  An import streams: the pairer holds what is in
flight, the steps what they sum (:mod:`tkperf.rwsw.trace`), so the file's
size does not matter; only its lines are read at most :data:`MAX_LINE`
bytes at a time (:func:`lines`: a longer line is no blkparse line, and is
skipped without being held), and blktrace's binary records are turned into
text through a pipe (:func:`blkparse_text`), not a temporary copy.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import IO, Callable, Iterator, Optional, Sequence, Tuple

from tkperf import durations, programs
from tkperf.errors import OutputError, ToolError, UsageError
from tkperf.rwsw.liveparts import BEHIND, PART_BYTES

#: Bytes of raw trace events an I/O costs in the temporary file (two events
#: an I/O, the binary pages of tracefs): measured by ``benchmarks/rwsw.py --day``.
RAW_BYTES_PER_IO = 160
#: CPU time the analysis takes an I/O (µs), measured ibid. (5.5 at load 14).
ANALYSIS_US_PER_IO = 5.5
#: The analysis is taken to keep up with a rate that takes it at most this share of the host's idle cores.
KEEP_UP_SHARE = 0.5
#: Parts of raw events on disk at once while the analysis keeps up: those that may wait before it leaves
#: idle CPU to catch up (:data:`tkperf.rwsw.liveparts.BEHIND`), the one written and the one read.
RAW_PARTS = BEHIND + 2
#: Bytes of packed iolog an I/O costs (:mod:`tkperf.rwsw.packedlog`): random
#: offsets over a large device cost the most (measured ibid.).
IOLOG_BYTES_PER_IO = 8
#: How long the device's counters are looked at for its rate (seconds).
LOOK_S = 0.5
#: The longest line an import reads; a longer one is not blkparse's.
MAX_LINE = 4096
#: Room kept beside the estimate: the capture's XML, the file system's own.
SLACK = 1.1


@dataclass(frozen=True)
class Need:
    """A capture's disk estimate: its rate, the bytes it needs and those free."""

    iops: float
    #: 'counters' (the device's own over :data:`LOOK_S`) or 'expected' (``--expect-iops``).
    source: str
    seconds: float
    need: int
    free: int
    #: The cores the host left idle while the rate was looked at (None: not known).
    idle_cores: Optional[float] = None
    #: The events analysed while recording (``--analysis during``), else after it.
    live: bool = False
    #: ``--analysis auto`` chose to analyse while recording: the raw events of the whole would not fit.
    chosen: bool = False

    @property
    def fits(self) -> bool:
        return self.need <= self.free

    @property
    def keeps_up(self) -> bool:
        """Whether the analysis keeps up with the rate while recording (the raw events then stay few)."""
        return keeps_up(self.iops, self.idle_cores)

    def line(self, outdir: str) -> str:
        how = (f"the device's counters over {LOOK_S:g} s" if self.source == "counters" else "--expect-iops")
        idle = "not known" if self.idle_cores is None else f"{self.idle_cores:.1f} cores idle"
        if not self.live:
            raw = f"{RAW_BYTES_PER_IO} of raw events until their analysis after the recording"
        elif self.keeps_up:
            raw = (f"raw events analysed while recording on idle CPU ({idle}), {size(RAW_PARTS * PART_BYTES)} "
                   "of them at most")
        else:
            raw = (f"{RAW_BYTES_PER_IO} bytes an I/O of raw events, which the analysis while recording on idle CPU "
                   f"({idle}) may not read before the end")
        if self.chosen:
            raw += "; --analysis auto: during the recording, as its raw events whole would not fit"
        return (f"disk: a {durations.duration(self.seconds)} capture at about {self.iops:,.0f} I/Os a second "
                f"({how}) needs about {size(self.need)} in {outdir} ({IOLOG_BYTES_PER_IO} bytes an I/O of iolog, "
                f"{raw}); {size(self.free)} free")


def size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 1e3:,.1f} kB"


def parse_iops(text: Optional[str]) -> Optional[float]:
    """``--expect-iops N``: a rate above 0 (and below 10^8), or None when not given."""
    if text is None:
        return None
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise UsageError(f"--expect-iops {text!r} is not a number of I/Os a second") from None
    if not 0 < value < 1e8:
        raise UsageError(f"--expect-iops {text!r} is out of range (above 0, below 100,000,000)")
    return value


def _completed(stat: str) -> Optional[int]:
    """Reads + writes + discards + flushes completed, from a block device's stat file, or None."""
    try:
        with open(stat, encoding="ascii") as fh:
            fields = fh.read().split()
        return sum(int(fields[i]) for i in (0, 4, 11, 15) if i < len(fields))
    except (OSError, ValueError, IndexError):
        return None


def stat_file(device: str) -> str:
    """``/sys/class/block/NAME/stat`` of a device path (its link resolved: ``/dev/mapper/x`` is dm-N's)."""
    return os.path.join("/sys/class/block", os.path.basename(os.path.realpath(device)), "stat")


def device_iops(devices: Sequence[str], look: float = LOOK_S,
                sleep: Callable[[float], None] = time.sleep) -> Optional[float]:
    """The devices' I/Os a second together, from their counters over ``look`` seconds; None where a
    device has none to read."""
    files = [stat_file(d) for d in devices]
    before = [_completed(f) for f in files]
    start = time.monotonic()
    sleep(look)
    after = [_completed(f) for f in files]
    took = max(time.monotonic() - start, 1e-3)
    done = 0
    for a, b in zip(after, before):
        if a is None or b is None:
            return None
        done += a - b
    return max(0, done) / took


def free_bytes(outdir: str) -> int:
    st = os.statvfs(outdir)
    return int(st.f_bavail) * int(st.f_frsize)


def keeps_up(iops: float, idle_cores: Optional[float]) -> bool:
    """Whether the analysis, on idle CPU only, keeps up with ``iops`` (not known: taken as not)."""
    return idle_cores is not None and iops * ANALYSIS_US_PER_IO / 1e6 <= KEEP_UP_SHARE * idle_cores


def estimate(iops: float, seconds: float, free: int, source: str, idle_cores: Optional[float] = None,
             live: bool = False) -> Need:
    """The disk a capture needs: its iolog, and its raw events -- all of them, unless they are analysed while
    recording (``live``) and the analysis keeps up, then :data:`RAW_PARTS` parts at most -- with :data:`SLACK`
    more."""
    ios = iops * seconds
    raw = ios * RAW_BYTES_PER_IO
    if live and keeps_up(iops, idle_cores):
        raw = min(raw, RAW_PARTS * PART_BYTES)
    return Need(iops, source, seconds, int((ios * IOLOG_BYTES_PER_IO + raw) * SLACK), free, idle_cores, live)


#: ``--analysis``: when the recorded events are analysed.
ANALYSIS = ("auto", "after", "during")


def _cpu_jiffies() -> Optional[Tuple[int, int]]:
    """(idle + iowait, all) jiffies of every CPU so far, from ``/proc/stat``; None where it cannot be read."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields[:8])
    except (OSError, ValueError, IndexError):
        return None


def idle_cores(before: Optional[Tuple[int, int]], after: Optional[Tuple[int, int]]) -> Optional[float]:
    """The cores left idle between two :func:`_cpu_jiffies` readings (None when either is missing)."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or 1)


def check_disk(devices: Sequence[str], seconds: float, outdir: str, expect_iops: Optional[float] = None,
               force: bool = False, look: float = LOOK_S, analysis: str = "auto") -> Optional[Need]:
    """The disk a recording of ``devices`` for ``seconds`` needs in ``outdir``, its events analysed as
    ``analysis`` says (``auto``: during the recording only where its raw events analysed after it would
    not fit and analysed during it they would; after it costs the application under capture no CPU while
    it records, docs/rwsw.rst); an OutputError (exit 8) when it would not fit and not ``force``.
    None when neither the rate nor the free space is known (a device without counters: the recording
    itself says what is wrong with it; it is then analysed after, but for ``during``)."""
    cpu = _cpu_jiffies()
    iops = device_iops(devices, look)  # the look also gives the host's idle CPU, for the analysis
    idle = idle_cores(cpu, _cpu_jiffies())
    iops = expect_iops if expect_iops is not None else iops
    try:
        free = free_bytes(outdir)
    except OSError:
        return None  # the capture's own check of --outdir says why
    if iops is None:
        return None
    need = estimate(iops, seconds, free, "expected" if expect_iops is not None else "counters", idle,
                    analysis == "during")
    if analysis == "auto" and not need.fits:
        during = estimate(iops, seconds, free, need.source, idle, live=True)
        if during.fits:
            need = dataclasses.replace(during, chosen=True)
    if not need.fits and not force:
        raise OutputError(f"--outdir {outdir}: {size(need.free)} free, but a {durations.duration(seconds)} capture "
                          f"at about {need.iops:,.0f} I/Os a second needs about {size(need.need)}; free some, "
                          "choose another --outdir, give --expect-iops N for the rate expected, or --force")
    return need


def lines(fh: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of ``fh``, each read at most ``limit`` bytes at a time: a longer line is skipped
    (read on to its end a piece at a time, never held whole)."""
    read = fh.readline
    while True:
        line = read(limit)
        if not line:
            return
        if len(line) == limit and not line.endswith(b"\n"):
            while True:
                rest = read(1 << 16)
                if not rest or rest.endswith(b"\n"):
                    break
            continue
        yield line


@contextlib.contextmanager
def blkparse_text(src: int, path: str) -> Iterator[IO[bytes]]:
    """blktrace's binary records (the descriptor ``src`` of ``path``) as blkparse's text, read from a pipe
    as blkparse writes it: blkparse is given no file name to open, so it follows no link."""
    argv = [programs.require("blkparse"), "-i", "-"]
    with tempfile.TemporaryFile() as err:
        proc = programs.start(argv, stdin=src, stdout=subprocess.PIPE, stderr=err)
        try:
            assert proc.stdout is not None
            yield proc.stdout
            proc.stdout.read()  # what the reader left (nothing, when it read to the end)
            code = proc.wait(timeout=3600)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            programs.forget(proc)
        if code != 0:
            err.seek(0)
            last = err.read().decode(errors="replace").strip().splitlines()
            raise ToolError(f"blkparse failed on {path}: {last[-1] if last else f'exit code {code}'}")
