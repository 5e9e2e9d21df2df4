"""The emulated SSD's server: one process, one event loop.

``python -m tkperf.simdrive RUNDIR`` (:func:`serve`) mounts a FUSE file system at
``RUNDIR/mnt`` whose one file, ``drive``, is the emulated SSD; the data
lives in memory (a sparse memfd, mapped: pages never written take none), the model's
parameters come from ``RUNDIR/params.json``.  ``RUNDIR/control`` is a Unix
socket that answers ``stats`` and ``stats history`` with the model's
counters as JSON, ``hold`` (the host is busy until its next command:
``Drive.hold``) with ``{"held": true}`` and ``release`` (idle time is the
drive's again: ``Drive.release``) with ``{"held": false}``.  The process prints ``ready`` on standard output once the
kernel's INIT is answered.

The clock: model time is wall time minus a fixed offset.  A request's
arrival is its wall time mapped so; its reply is sent when the model says
it completes, mapped back.  Replies wait in a heap, so the drive's parallel
units overlap as the model says.  Work-conserving: when the server itself
sends replies late (other load on the machine), the host answers them
late too; so a request that arrives while the server runs late is dated
back by the lateness of the last reply sent (one arriving more than
``LAG_WINDOW_S`` after that reply is not: the host was idle).  The
server's delay is then neither idle time nor work for the drive, and the
wall clock catches up with the model's as soon as the server does.
"""
from __future__ import annotations

import errno
import heapq
import json
import mmap
import os
import select
import signal
import socket
import sys
import time
from typing import Any, Dict, List, Tuple

from tkperf.simdrive import fuse_proto as fp
from tkperf.simdrive.model import Drive

LATE_S = 0.001   #: a reply later than this is counted in ``late_replies``
LAG_WINDOW_S = 0.01  #: a request this soon after a late reply answers it: dated back (later: host idle)
EARLY_S = 20e-6  #: a reply this close to its due time goes out with the others
RT_PRIORITY = 10  #: SCHED_FIFO priority of the server (the kernel's RT throttling still applies)
DRAIN = 64       #: requests read in one go before replies are looked at again


class Server:
    def __init__(self, rundir: str) -> None:
        with open(os.path.join(rundir, "params.json"), encoding="utf-8") as fh:
            spec = json.load(fh)
        self.rundir = rundir
        self.size = int(spec["capacity"])
        self.drive = Drive(self.size, spec["params"])
        self.datafd = os.memfd_create("tkperf-simdrive-data")  # memory: no write-back to any disk
        os.ftruncate(self.datafd, self.size)
        self.data = mmap.mmap(self.datafd, self.size)
        self.fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        self.mnt = os.path.join(rundir, "mnt")
        self.ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ctl.bind(os.path.join(rundir, "control"))
        self.ctl.listen(4)
        self.pending: List[Tuple[float, int, bytes, Any]] = []  # (model end, seq, header, body)
        self.seq = 0
        self.lag = 0.0  #: how late the last reply went out (s): arrivals are dated back by it
        self.replied = 0.0  #: when the last reply went out (wall)
        self.late_replies = 0
        self.max_late = 0.0
        self.pending_max = 0  #: the most replies owed at once (the queue depth the drive saw)
        self.offset = time.monotonic()  # wall = model + offset
        self.stop = False
        self.ready = False

    # -- the loop ------------------------------------------------------------
    def run(self) -> None:
        fp.mount(self.fd, self.mnt)
        os.set_blocking(self.fd, False)
        buf = bytearray(fp.BUFFER)
        mv = memoryview(buf)
        fd, ctl = self.fd, self.ctl.fileno()
        pending = self.pending
        while not self.stop:
            now = time.monotonic()
            if pending:
                self._send_due(now)
            timeout = None
            if pending:
                timeout = max(0.0, pending[0][0] + self.offset - time.monotonic())
            try:
                readable, _, _ = select.select([fd, ctl], [], [], timeout)
            except InterruptedError:
                continue
            if ctl in readable:
                self._control()
            if fd in readable:
                for _ in range(DRAIN):
                    try:
                        n = os.readv(fd, [buf])
                    except BlockingIOError:
                        break
                    except InterruptedError:
                        continue
                    except OSError as exc:
                        if exc.errno == errno.ENODEV:  # unmounted
                            self.stop = True
                            break
                        if exc.errno == errno.ENOENT:  # the request was interrupted meanwhile
                            continue
                        raise
                    now = time.monotonic()
                    self._request(mv[:n], now)
                    if pending and pending[0][0] + self.offset <= now:  # due while draining
                        self._send_due(now)

    def _send_due(self, now: float) -> None:
        pending = self.pending
        while pending and pending[0][0] + self.offset <= now + EARLY_S:
            end, _, head, body = heapq.heappop(pending)
            late = now - (end + self.offset)
            self.lag = late if late > 0 else 0.0
            self.replied = now
            if late > LATE_S:
                self.late_replies += 1
                if late > self.max_late:
                    self.max_late = late
            self._write(head, body)

    def _write(self, head: bytes, body: Any) -> None:
        try:
            if body is None:
                os.write(self.fd, head)
            else:
                os.writev(self.fd, [head, body])
        except (FileNotFoundError, InterruptedError):
            pass  # the kernel dropped the request (interrupted): nothing to answer

    def _reply(self, unique: int, error: int = 0, body: bytes = b"") -> None:
        self._write(fp.out(unique, error, body), None)

    def _later(self, end: float, unique: int, body: Any = None, length: int = 0, head: bytes = b"") -> None:
        """Answer when the model's clock reaches ``end`` (``head``: the whole reply, when it is ready made)."""
        if not head:
            head = fp.OUT_HEADER.pack(fp.OUT_HEADER.size + length, 0, unique)
        late = time.monotonic() - (end + self.offset)
        if late >= -EARLY_S and not self.pending:
            self.lag = late if late > 0 else 0.0
            self.replied = time.monotonic()
            self._write(head, body)
            return
        self.seq += 1
        heapq.heappush(self.pending, (end, self.seq, head, body))
        if len(self.pending) > self.pending_max:
            self.pending_max = len(self.pending)

    # -- requests --------------------------------------------------------------
    def _request(self, req: memoryview, wall: float) -> None:
        op, unique, node = fp.HEAD.unpack_from(req)
        t = wall - self.offset - (self.lag if wall - self.replied < LAG_WINDOW_S else 0.0)
        drive = self.drive
        if op == fp.WRITE:  # the hot path first
            _fh, off, size, _flags = fp.RW_IN.unpack_from(req, fp.IN_HEADER.size)
            if off + size > self.size:
                return self._reply(unique, errno.ENOSPC)
            start = fp.IN_HEADER.size + fp.WRITE_IN_SIZE
            self.data[off:off + size] = req[start:start + size]
            return self._later(drive.write(t, off, size), unique, head=fp.WRITE_REPLY.pack(24, 0, unique, size, 0))
        body = req[fp.IN_HEADER.size:]
        if op == fp.READ:
            _fh, off, size, _flags = fp.RW_IN.unpack_from(body)
            size = max(0, min(size, self.size - off))
            data = self.data[off:off + size]
            if not size:
                return self._reply(unique)
            return self._later(drive.read(t, off, size), unique, data, size)
        if op == fp.FALLOCATE:
            _fh, off, length, mode = fp.FALLOCATE_IN.unpack_from(body)
            if mode & ~(fp.FALLOC_FL_KEEP_SIZE | fp.FALLOC_FL_PUNCH_HOLE | fp.FALLOC_FL_ZERO_RANGE):
                return self._reply(unique, errno.EOPNOTSUPP)
            if not mode & (fp.FALLOC_FL_PUNCH_HOLE | fp.FALLOC_FL_ZERO_RANGE):
                if off + length > self.size:
                    return self._reply(unique, errno.ENOSPC)
                return self._reply(unique)  # preallocation: the drive is all there already
            length = max(0, min(length, self.size - off))
            if length:
                fp.punch(self.datafd, off, length)
            return self._later(drive.trim(t, off, length), unique)
        if op in (fp.FLUSH, fp.FSYNC):
            return self._later(drive.flush(t), unique)
        if op in fp.NO_REPLY:
            return None
        return self._meta(op, unique, node, body)

    def _meta(self, op: int, unique: int, node: int, body: memoryview) -> None:
        if op == fp.INIT:
            self._reply_raw(fp.init_reply(unique, body))
            if not self.ready:
                self.ready = True
                sys.stdout.write("ready\n")
                sys.stdout.flush()
            return None
        if op == fp.LOOKUP:
            if node != fp.ROOT_ID or bytes(body).rstrip(b"\0") != fp.FILE_NAME:
                return self._reply(unique, errno.ENOENT)
            entry = fp.ENTRY_OUT.pack(fp.FILE_ID, 1, 3600, 3600, 0, 0) + fp.attr(fp.FILE_ID, self.size)
            return self._reply(unique, 0, entry)
        if op in (fp.GETATTR, fp.SETATTR):
            if node not in (fp.ROOT_ID, fp.FILE_ID):
                return self._reply(unique, errno.ENOENT)
            return self._reply(unique, 0, fp.ATTR_OUT.pack(3600, 0, 0) + fp.attr(node, self.size))
        if op in (fp.OPEN, fp.OPENDIR):
            return self._reply(unique, 0, fp.OPEN_OUT.pack(0, 0, 0))
        if op == fp.READDIR:
            _fh, off, size, _flags = fp.RW_IN.unpack_from(body)
            return self._reply(unique, 0, fp.dirents()[:size] if off == 0 else b"")
        if op in (fp.RELEASE, fp.RELEASEDIR, fp.FSYNCDIR, fp.SYNCFS):
            return self._reply(unique)
        if op == fp.STATFS:
            blocks = self.size // 4096
            return self._reply(unique, 0, fp.STATFS_OUT.pack(blocks, 0, 0, 2, 0, 4096, 255, 4096))
        if op == fp.DESTROY:
            self.stop = True
            return self._reply(unique)
        return self._reply(unique, errno.ENOSYS)

    def _reply_raw(self, data: bytes) -> None:
        self._write(data, None)

    # -- the control socket ----------------------------------------------------
    def _control(self) -> None:
        try:
            conn, _ = self.ctl.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(1.0)
            try:
                line = conn.recv(256).decode("ascii", "replace").split()
                doc: Dict[str, Any]
                if line[:1] == ["stats"]:
                    self.drive.advance(time.monotonic() - self.offset)
                    doc = self.drive.stats(history="history" in line)
                    doc["pending_replies"] = len(self.pending)
                    doc["pending_max"] = self.pending_max
                    doc["late_replies"] = self.late_replies
                    doc["max_late_s"] = self.max_late
                    doc["pid"] = os.getpid()
                elif line[:1] == ["hold"]:  # the host is busy until its next command (tkperf between fio runs)
                    self.drive.hold(time.monotonic() - self.offset)
                    doc = {"held": True}
                elif line[:1] == ["release"]:  # idle from now on is the drive's again
                    self.drive.release(time.monotonic() - self.offset)
                    doc = {"held": False}
                else:
                    doc = {"error": "unknown request"}
                conn.sendall(json.dumps(doc).encode() + b"\n")
            except (OSError, ValueError):
                pass


def serve(rundir: str) -> None:
    """Serve the drive of ``rundir`` until SIGTERM (the process's entry:
    ``tkperf/simdrive/__main__.py``, which turns SIGTERM into an exit)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # replies on time on a busy host: the server sleeps in select() most of the time
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    except (OSError, AttributeError):
        pass  # not permitted here: replies may come late under load (late_replies counts them)
    Server(rundir).run()
