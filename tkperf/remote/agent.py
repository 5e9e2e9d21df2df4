"""``tkperf agent``: the test host's half of a remote run.

A run on ``HOST:/dev/...`` starts ``tkperf agent`` on HOST over SSH and
asks it, request by request (:mod:`tkperf.remote.wire`), to do what a
local run does to its target with :class:`~tkperf.target.side.LocalSide`:
the same code, on the host the drive is in.  The agent holds the device's
lock and O_EXCL for as long as the SSH session lasts, and when the session
ends, however it ends (the run finished, was killed, or the network went),
it puts back a write cache setting the run changed and lets go of the
device.  Every command line it runs is logged to the run's log file on the
controlling host, marked with the host's name.

It is not meant to be started by hand; it reads requests on stdin.
"""
from __future__ import annotations

import contextlib
import logging
import os
import platform
import queue
import signal
import stat
import sys
import threading
from typing import Any, BinaryIO, Callable, Dict, List, Optional

from tkperf import __version__
from tkperf.errors import Interrupted, TargetError
from tkperf.model.results import DeviceInfo
from tkperf.remote import wire
from tkperf.target import guard
from tkperf.target.side import CacheHandle, LocalSide

LOGGERS = ("tkperf", "tkperf.progress", "tkperf.debug")


class _Channel:
    """The agent's stdout: one JSON line at a time, from any thread."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def send(self, obj: Dict[str, Any]) -> None:
        data = wire.encode(obj)
        with self.lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the run is gone; the reader sees the end of stdin


class _Forward(logging.Handler):
    """Log records go to the run, which logs them on the controlling host."""

    def __init__(self, channel: _Channel) -> None:
        super().__init__(logging.DEBUG)
        self.channel = channel

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.channel.send({"log": [record.name, record.levelno, record.getMessage()]})
        except Exception:  # noqa: BLE001 - logging must never fail the work
            self.handleError(record)


class Agent:
    """The state of one remote run: its device, lock, O_EXCL and write cache."""

    def __init__(self, channel: _Channel) -> None:
        self.channel = channel
        self.side = LocalSide()
        self.dev: Optional[DeviceInfo] = None
        self.holds = contextlib.ExitStack()
        self.cache: Optional[CacheHandle] = None
        self.ops: Dict[str, Callable[..., Any]] = {
            "resolve": self.resolve, "safety": self.safety, "lock": self.lock,
            "check_safe": self.check_safe, "exclusive": self.exclusive, "host_info": self.host_info,
            "facts": self.facts, "cache_start": self.cache_start, "cache_restore": self.cache_restore,
            "purge": self.purge, "health": self.health, "heat": self.heat,
        }

    def _device(self) -> DeviceInfo:
        if self.dev is None:
            raise TargetError("no device resolved yet")
        return self.dev

    def resolve(self, path: str) -> Any:
        try:
            is_block = stat.S_ISBLK(os.stat(path).st_mode)
        except OSError:
            is_block = True  # resolve says what is wrong with it
        dev = self.side.resolve(path) if is_block else None
        if dev is None or dev.kind != "block":
            raise TargetError(f"{path} on {platform.node()} is not a block device; "
                              "a remote target must be one")
        self.dev = dev
        return wire.to_dict(dev)

    def safety(self) -> List[str]:
        return self.side.safety_problems(self._device())

    def lock(self) -> None:
        self.holds.enter_context(self.side.locked(self._device()))

    def check_safe(self, force: bool) -> List[str]:
        return self.side.check_safe(self._device(), bool(force))

    def exclusive(self) -> None:
        self.holds.enter_context(self.side.exclusive(self._device()))

    def host_info(self, fio_version: str) -> Any:
        return wire.to_dict(self.side.host_info(str(fio_version)))

    def facts(self) -> Any:
        return self.side.device_facts(self._device())

    def cache_start(self, wanted: str) -> str:
        self.cache = self.side.write_cache(self._device(), str(wanted),
                                           lambda kind, text: self.channel.send({"event": [kind, text]}))
        return self.cache.state

    def cache_restore(self) -> str:
        if self.cache is None:
            return ""
        self.cache.restore()
        return self.cache.state

    def purge(self, method: str) -> Any:
        return wire.to_dict(self.side.purge(str(method), self._device()))

    def health(self, when: str) -> Any:
        return wire.to_dict(self.side.health(self._device(), str(when)))

    def heat(self) -> Any:
        got = self.side.heat(self._device())
        return [got[0], [list(v) for v in got[1]]] if got else None

    def handle(self, request: Dict[str, Any]) -> Dict[str, Any]:
        rid = request.get("id")
        op = self.ops.get(str(request.get("op")))
        if op is None:
            return {"id": rid, "error": {"type": "RemoteError", "message": f"unknown request {request.get('op')!r}"}}
        try:
            return {"id": rid, "ok": op(**(request.get("args") or {}))}
        except (Exception, Interrupted, KeyboardInterrupt) as exc:  # noqa: BLE001 - every failure goes back to the run
            if not isinstance(exc, (Interrupted, KeyboardInterrupt)) and not getattr(exc, "exit_code", 0):
                logging.getLogger("tkperf").exception("agent: %s failed", request.get("op"))
            return {"id": rid, "error": wire.error_dict(exc)}

    def close(self) -> None:
        """The session ended: restore the write cache if the run has not, and let go."""
        try:
            if self.cache is not None:
                self.cache.restore()
        finally:
            self.holds.close()


def _reader(inp: BinaryIO, requests: "queue.Queue[Optional[dict]]", busy: threading.Event) -> None:
    """stdin to the queue; an ``interrupt`` line or the end of stdin while a
    request runs interrupts it (SIGINT / SIGTERM to this process)."""
    for line in iter(inp.readline, b""):
        try:
            msg = wire.decode(line)
        except ValueError:
            continue
        if msg.get("op") == "interrupt":
            if busy.is_set():
                os.kill(os.getpid(), signal.SIGINT)
            continue
        requests.put(msg)
    requests.put(None)
    if busy.is_set():
        os.kill(os.getpid(), signal.SIGTERM)


def serve(inp: BinaryIO, out: BinaryIO) -> int:
    channel = _Channel(out)
    handler = _Forward(channel)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    agent = Agent(channel)
    requests: "queue.Queue[Optional[dict]]" = queue.Queue()
    busy = threading.Event()
    threading.Thread(target=_reader, args=(inp, requests, busy), daemon=True).start()
    channel.send({"hello": {"tkperf": __version__, "python": platform.python_version(),
                            "host": platform.node(), "pid": os.getpid()}})
    try:
        while True:
            with guard.signals_raise():  # a signal while idle ends the session
                request = requests.get()
            if request is None:
                break
            busy.set()
            try:
                with guard.signals_raise():  # a signal in a request ends the request
                    reply = agent.handle(request)
            finally:
                busy.clear()
            channel.send(reply)
    except Interrupted:
        pass  # stopped between requests: the session is over either way
    finally:
        agent.close()
    return 0


def main() -> int:
    return serve(sys.stdin.buffer, sys.stdout.buffer)
