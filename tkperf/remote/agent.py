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
import logging.handlers
import os
import platform
import queue
import signal
import stat
import sys
import threading
from typing import Any, BinaryIO, Callable, Dict, List, Optional

from tkperf import __version__
from tkperf.errors import EXIT_REMOTE, Interrupted, RefusedError, TargetError
from tkperf.model.results import DeviceInfo
from tkperf.remote import policy as policies
from tkperf.remote import wire
from tkperf.target import device as devices
from tkperf.target import guard, identity, purge
from tkperf.target.side import CacheHandle, LocalSide

LOGGERS = ("tkperf", "tkperf.progress", "tkperf.debug")
log = logging.getLogger("tkperf")

#: Every request the agent serves, with the arguments it takes and their
#: types: anything else is not the protocol and ends the session.
REQUESTS: Dict[str, Dict[str, type]] = {
    "resolve": {"path": str}, "safety": {}, "lock": {}, "check_safe": {"force": bool}, "exclusive": {},
    "host_info": {"fio_version": str}, "facts": {}, "cache_start": {"wanted": str}, "cache_restore": {},
    "purge": {"method": str}, "health": {"when": str}, "heat": {},
}
WRITE_CACHE_SETTINGS = ("on", "off", "keep")
HEALTH_MOMENTS = ("before", "after")


def check_request(msg: Dict[str, Any]) -> Dict[str, Any]:
    """``msg`` if it is a well-formed request; WireError otherwise."""
    rid, op, args = msg.get("id"), msg.get("op"), msg.get("args", {})
    if not isinstance(rid, int) or isinstance(rid, bool) or not isinstance(op, str) or op not in REQUESTS:
        raise wire.WireError(f"not a request: id {rid!r}, op {str(op)[:40]!r}")
    if not isinstance(args, dict) or set(args) != set(REQUESTS[op]):
        raise wire.WireError(f"{op}: the arguments must be {sorted(REQUESTS[op]) or 'none'}")
    for name, kind in REQUESTS[op].items():
        if not isinstance(args[name], kind) or (kind is not bool and isinstance(args[name], bool)):
            raise wire.WireError(f"{op}: {name} must be a {kind.__name__}")
    return msg


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
    """The state of one remote run: its device, lock, O_EXCL and write cache.

    The agent is a privilege boundary (it may run as root for a plain user):
    it enforces on its own side everything a local run enforces, whatever
    the requests say.  It acts only on the one block device it resolved in
    this session; it writes to it (write cache, purge) only while it holds
    the device's lock and O_EXCL and after its own safety check passed, and
    checks again right before each write; ``--force`` counts only where the
    test host's policy allows it, and a purge command comes only from that
    policy (:mod:`tkperf.remote.policy`)."""

    def __init__(self, channel: _Channel, policy: Optional[policies.Policy] = None) -> None:
        self.channel = channel
        self.side = LocalSide()
        self.policy = policy or policies.Policy()
        self.dev: Optional[DeviceInfo] = None
        self.holds = contextlib.ExitStack()
        self.cache: Optional[CacheHandle] = None
        self.held_lock = self.held_exclusive = self.cleared = False
        self.forced = False
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

    def _refuse(self, message: str) -> RefusedError:
        log.warning("agent refused: %s", message)
        return RefusedError(message)

    def _may_write(self, what: str) -> DeviceInfo:
        """The device, if this session may write to it now; RefusedError otherwise."""
        dev = self._device()
        if not (self.held_lock and self.held_exclusive and self.cleared):
            raise self._refuse(f"{what} refused: the agent writes to {dev.resolved} only after it locked "
                               "the device, passed its safety check and holds it open exclusively")
        if not self.forced:  # the device may have been mounted since the check
            devices.check_safe(self._fresh(dev), False)
        return dev

    def _fresh(self, dev: DeviceInfo) -> DeviceInfo:
        now = self.side.resolve(dev.resolved)
        if now.devnum != dev.devnum:
            raise self._refuse(f"{dev.resolved} is now device {now.devnum or '?'}, not the {dev.devnum} this "
                               "session resolved; nothing was written")
        return now

    def resolve(self, path: str) -> Any:
        if self.dev is not None:
            raise self._refuse(f"this session already serves {self.dev.resolved}; one device per session")
        if not path.startswith("/"):
            raise self._refuse(f"{path!r} is not an absolute device path")
        # The agent resolves the path itself, as the kernel does (a path
        # through a non-directory is refused), whatever the run did with it.
        try:
            where = identity.resolve(path)
        except TargetError as exc:
            log.warning("agent refused: %s", exc)  # to the test host's syslog, too
            raise
        if where.st is None or not stat.S_ISBLK(where.st.st_mode):
            raise TargetError(f"{path} on {platform.node()} is not a block device; "
                              "a remote target must be one")
        dev = self.side.resolve(path)
        if dev.kind != "block" or dev.devnum != where.devnum:
            raise self._refuse(f"{path} changed while the agent resolved it")
        self.dev = dev
        return wire.to_dict(dev)

    def safety(self) -> List[str]:
        return self.side.safety_problems(self._device())

    def lock(self) -> None:
        if not self.held_lock:
            self.holds.enter_context(self.side.locked(self._device()))
            self.held_lock = True

    def check_safe(self, force: bool) -> List[str]:
        dev = self._fresh(self._device())
        problems = devices.safety_problems(dev)
        if problems and force and not self.policy.allow_force:
            raise self._refuse(f"refusing to write: {problems[0]} (--force is not allowed over SSH by this "
                               f"test host's policy: allow_force in {self.policy.source or policies.DEFAULT_PATH})")
        devices.check_safe(dev, force)
        self.cleared = True
        self.forced = bool(problems) and force
        return problems

    def exclusive(self) -> None:
        if not self.held_exclusive:
            self.holds.enter_context(self.side.exclusive(self._device()))
            self.held_exclusive = True

    def host_info(self, fio_version: str) -> Any:
        return wire.to_dict(self.side.host_info(str(fio_version)))

    def facts(self) -> Any:
        return self.side.device_facts(self._device())

    def cache_start(self, wanted: str) -> str:
        if wanted not in WRITE_CACHE_SETTINGS:
            raise self._refuse(f"write cache setting {wanted!r} is not one of {', '.join(WRITE_CACHE_SETTINGS)}")
        if self.cache is not None:
            raise self._refuse("the write cache was set already in this session")
        self.cache = self.side.write_cache(self._may_write("setting the write cache"), wanted,
                                           lambda kind, text: self.channel.send({"event": [kind, text]}))
        return self.cache.state

    def cache_restore(self) -> str:
        if self.cache is None:
            return ""
        self.cache.restore()
        return self.cache.state

    def purge(self, method: str) -> Any:
        if method.startswith(purge.CMD_PREFIX):
            if method[len(purge.CMD_PREFIX):] not in self.policy.purge_commands:
                raise self._refuse("a purge command comes from this test host's policy, never from the "
                                   "controlling side: the --purge-cmd template is not a purge_command in "
                                   f"{self.policy.source or policies.DEFAULT_PATH}")
        elif method not in purge.METHODS:
            raise self._refuse(f"unknown purge method {method!r}")
        return wire.to_dict(self.side.purge(method, self._may_write("the purge")))

    def health(self, when: str) -> Any:
        if when not in HEALTH_MOMENTS:
            raise self._refuse(f"health snapshot {when!r} is not one of {', '.join(HEALTH_MOMENTS)}")
        return wire.to_dict(self.side.health(self._device(), when))

    def heat(self) -> Any:
        got = self.side.heat(self._device())
        return [got[0], [list(v) for v in got[1]]] if got else None

    def handle(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Answer one request checked by :func:`check_request`."""
        rid = request["id"]
        op = self.ops[request["op"]]
        try:
            return {"id": rid, "ok": op(**request.get("args", {}))}
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


def _reader(inp: BinaryIO, requests: queue.Queue[Optional[dict]], busy: threading.Event,
            fatal: List[str]) -> None:
    """stdin to the queue; an ``interrupt`` line or the end of stdin while a
    request runs interrupts it (SIGINT / SIGTERM to this process).  A line
    that is not the protocol (over-long, not JSON, too deep, mistyped) ends
    the session: its reason goes to ``fatal``."""
    while True:
        line = inp.readline(wire.MAX_REQUEST + 1)
        if not line:
            break
        try:
            if len(line) > wire.MAX_REQUEST:
                raise wire.WireError(f"a request line over {wire.MAX_REQUEST} bytes")
            msg = wire.decode(line, wire.MAX_REQUEST)
            if msg.get("op") == "interrupt" and set(msg) == {"op"}:
                if busy.is_set():
                    os.kill(os.getpid(), signal.SIGINT)
                continue
            requests.put(check_request(msg))
        except wire.WireError as exc:
            fatal.append(str(exc))
            break
    requests.put(None)
    if busy.is_set():
        os.kill(os.getpid(), signal.SIGTERM)


def serve(inp: BinaryIO, out: BinaryIO, policy_path: str = policies.DEFAULT_PATH) -> int:
    channel = _Channel(out)
    handler = _Forward(channel)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    _syslog()
    policy = policies.load(policy_path)
    if policy.problem:
        log.warning("agent policy: %s", policy.problem)
    agent = Agent(channel, policy)
    requests: queue.Queue[Optional[dict]] = queue.Queue()
    busy = threading.Event()
    fatal: List[str] = []
    threading.Thread(target=_reader, args=(inp, requests, busy, fatal), daemon=True).start()
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
    if fatal:
        message = f"tkperf agent on {platform.node()} ended the session: the controlling side sent {fatal[0]}"
        log.error("%s", message)
        channel.send({"fatal": message})
        sys.stderr.write(f"tkperf: error: {message}\n")
        return EXIT_REMOTE
    return 0


def _syslog() -> None:
    """Refusals and failures also go to the test host's own log (syslog),
    where its administrator sees them whatever the controlling side does."""
    if not os.path.exists("/dev/log"):
        return
    try:
        handler = logging.handlers.SysLogHandler(address="/dev/log")
    except OSError:
        return
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("tkperf-agent[%(process)d]: %(message)s"))
    logging.getLogger("tkperf").addHandler(handler)


def main(policy_path: str = policies.DEFAULT_PATH) -> int:
    return serve(sys.stdin.buffer, sys.stdout.buffer, policy_path)
