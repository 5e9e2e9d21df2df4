"""The controlling host's half of a remote run: :class:`RemoteSide`.

It starts ``tkperf agent`` on the test host over SSH (one session for the
whole run) and turns each :class:`~tkperf.target.side.TargetSide` call into
a request (:mod:`tkperf.remote.wire`).  What the agent logs, the command
lines it runs among them, goes to this run's log marked ``[HOST]``.

Ctrl-C during a request is passed on (the agent's own clean-up runs, as
for a local purge: an ATA password is cleared), then raised here.  When
the session ends, the agent restores a write cache setting the run made
and releases the device, even if this process was killed.
"""
from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from tkperf import __version__, programs
from tkperf.errors import Interrupted, RemoteError, TargetError
from tkperf.model.results import DeviceInfo, HealthSnapshot, HostInfo, PurgeRecord
from tkperf.remote import wire
from tkperf.remote.ssh import Ssh
from tkperf.target.side import CacheHandle, HeatReading, Recorder, TargetSide
from tkperf.untrusted import for_terminal

log = logging.getLogger("tkperf")
HELLO_TIMEOUT_S = 60.0
#: A quick request (facts, lock, health); a purge has no limit but the connection's.
REQUEST_TIMEOUT_S = 600.0
#: After Ctrl-C: how long the agent may take to clean up (an ATA password to clear).
CLEANUP_TIMEOUT_S = 300.0


class _Cache(CacheHandle):
    def __init__(self, side: RemoteSide, state: str, record: Recorder) -> None:
        self.side, self._state, self.record = side, state, record

    @property
    def state(self) -> str:
        return self._state

    def restore(self) -> None:
        self._state = self.side.call("cache_restore", on_event=self.record, parse=wire.text)


class RemoteSide(TargetSide):
    """A target on ``host``, reached with ``ssh`` and ``tkperf agent`` there."""

    def __init__(self, host: str, ssh: Ssh, remote_tkperf: Sequence[str]) -> None:
        self.host = host
        self.ssh = ssh
        self._ids = 0
        self._buf = b""
        self._err: List[str] = []
        #: Why the session ended before :meth:`close`, '' while it lasts.
        self.lost = ""
        #: Called (from another thread) when the session ends under the run.
        self.on_lost: List[Callable[[], None]] = []
        self._closing = False
        self._ready = False
        self.proc = ssh.start([*remote_tkperf, "agent"])
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        threading.Thread(target=self._watch, args=(self.proc,), daemon=True).start()
        try:
            hello = self._message(time.monotonic() + HELLO_TIMEOUT_S, "the agent's greeting").get("hello")
            if not isinstance(hello, dict):
                raise RemoteError(f"{host}: {' '.join(remote_tkperf)} agent did not greet as tkperf's agent")
            if hello.get("tkperf") != __version__:
                raise RemoteError(f"{host} has tkperf {hello.get('tkperf')}, this host {__version__}: "
                                  "install the same tkperf on both")
        except BaseException:
            self.close()
            raise
        self._ready = True
        self.hello = hello
        log.info("[%s] tkperf agent %s (Python %s, PID %s) on %s", host, hello.get("tkperf"),
                 hello.get("python"), hello.get("pid"), hello.get("host"))

    # --- the session -------------------------------------------------------
    def _drain_stderr(self) -> None:
        stderr = self.proc.stderr
        assert stderr is not None  # started with stderr=PIPE
        for line in iter(stderr.readline, b""):
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self._err = (self._err + [text])[-20:]
                log.info("[%s] ssh: %s", self.host, text)

    def _watch(self, proc) -> None:
        """A session that ends under a running run stops the run's fio now: the
        agent has let go of the device, so nothing may go on writing to it."""
        code = proc.wait()
        time.sleep(0.2)  # ssh's last words
        if self._closing or not self._ready:
            return
        tail = f": {self._err[-1]}" if self._err else ""
        self.lost = f"the SSH session to {self.host} ended (exit {code}){tail}"
        log.error("[%s] %s; stopping fio", self.host, self.lost)
        for stop in self.on_lost:
            stop()

    def _gone(self, what: str) -> RemoteError:
        if self.lost:
            return RemoteError(self.lost)
        try:
            code = self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - still running: the pipe broke instead
            code = None
        time.sleep(0.1)  # the last stderr line
        if code is not None and code != 0:
            return self.ssh.failure(code, "\n".join(self._err), "tkperf agent")
        tail = f": {self._err[-1]}" if self._err else ""
        return RemoteError(f"the SSH session to {self.host} ended while waiting for {what}{tail}")

    def _message(self, deadline: Optional[float], what: str) -> Dict[str, Any]:
        """The agent's next line as a dict (log lines are logged here and skipped by the caller)."""
        stdout = self.proc.stdout
        assert stdout is not None  # started with stdout=PIPE
        fd = stdout.fileno()
        while b"\n" not in self._buf:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    raise RemoteError(f"{self.host}: no answer from tkperf agent for {what}")
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._gone(what)
            self._buf += chunk
            if len(self._buf) > wire.MAX_LINE and b"\n" not in self._buf:
                raise self._broken(f"a line over {wire.MAX_LINE} bytes")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return wire.decode(line)
        except wire.WireError as exc:
            raise self._broken(f"{exc}: {for_terminal(line[:60].decode('utf-8', 'replace'))!r}") from None

    def _broken(self, what: str) -> RemoteError:
        """The agent broke the protocol: the session ends here (exit 13), so the
        agent lets go of the device and this run stops its fio."""
        self.lost = f"tkperf agent on {self.host} broke the protocol ({what}); the session is ended"
        log.error("[%s] %s", self.host, self.lost)
        for stop in self.on_lost:
            stop()
        return RemoteError(self.lost)

    def _send(self, obj: Dict[str, Any]) -> None:
        try:
            stdin = self.proc.stdin
            assert stdin is not None  # started with stdin=PIPE
            stdin.write(wire.encode(obj))
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._gone(str(obj.get("op"))) from None

    def _reply(self, rid: int, op: str, deadline: Optional[float],
               on_event: Optional[Recorder]) -> Dict[str, Any]:
        while True:
            msg = self._message(deadline, op)
            try:
                if "log" in msg:
                    name, level, text = wire.log_line(msg["log"])
                    logger = name if name in ("tkperf", "tkperf.progress", "tkperf.debug") else "tkperf"
                    logging.getLogger(logger).log(min(max(level, logging.DEBUG), logging.CRITICAL),
                                                  "[%s] %s", self.host, text)
                elif "event" in msg:
                    kind, text = wire.event_line(msg["event"])
                    if on_event is not None:
                        on_event(kind, text)
                elif "fatal" in msg:
                    raise RemoteError(f"{self.host}: {wire.text(msg['fatal'])}")
                elif msg.get("id") == rid:
                    if "error" not in msg and "ok" not in msg:
                        raise wire.WireError("a reply with neither ok nor error")
                    return msg
                elif not isinstance(msg.get("id"), int):
                    raise wire.WireError(f"a message of no known kind ({', '.join(sorted(msg))[:60]})")
            except wire.WireError as exc:
                raise self._broken(str(exc)) from None

    def call(self, op: str, timeout: Optional[float] = REQUEST_TIMEOUT_S,
             on_event: Optional[Recorder] = None, parse: Callable[[Any], Any] = lambda v: v,
             **args: Any) -> Any:
        """Ask the agent to do ``op``; its value checked by ``parse``, or its
        error raised here."""
        self._ids += 1
        rid = self._ids
        self._send({"id": rid, "op": op, "args": args})
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            reply = self._reply(rid, op, deadline, on_event)
        except (Interrupted, KeyboardInterrupt):
            log.info("[%s] interrupting the agent's %s", self.host, op)
            with contextlib.suppress(RemoteError):
                self._send({"op": "interrupt"})
                self._reply(rid, op, time.monotonic() + CLEANUP_TIMEOUT_S, on_event)
            raise
        if "error" not in reply:
            try:
                return parse(reply.get("ok"))
            except (ValueError, TypeError) as exc:  # a WireError, or a dataclass refusing a value
                raise self._broken(f"its answer to {op}: {exc}") from None
        err = reply["error"] if isinstance(reply["error"], dict) else {}
        message = for_terminal(str(err.get("message") or "failed"))[:2000]
        if err.get("type") in ("Interrupted", "KeyboardInterrupt"):
            raise RemoteError(f"on {self.host}: tkperf agent's {op} was interrupted ({message})")
        raise wire.error_class(str(err.get("type")))(f"on {self.host}: {message}")

    def close(self) -> None:
        """End the session: the agent restores and releases, then exits."""
        proc = getattr(self, "proc", None)
        if proc is None:
            return
        self._closing = True
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()
        try:
            proc.wait(timeout=CLEANUP_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a stuck session is killed
            programs.kill(proc)
            proc.wait()
        programs.forget(proc)
        self.proc = None  # type: ignore[assignment]

    def _argv(self) -> List[str]:
        """The SSH command line the agent runs under."""
        args: Any = self.proc.args  # the list it was started with
        return [str(a) for a in args]

    def describe(self) -> str:
        hello = getattr(self, "hello", {})
        return (f"{self.host} over SSH: {programs.command_line(self._argv()) if self.proc else ''}; "
                f"tkperf agent {hello.get('tkperf')} (PID {hello.get('pid')}) on {hello.get('host')}")

    # --- the TargetSide calls ------------------------------------------------
    def resolve(self, path: str, size: Optional[int] = None) -> DeviceInfo:
        if size is not None:
            raise TargetError(f"{self.host}:{path}: --size is for a file on this host; "
                              "a remote target is a block device")
        dev = self.call("resolve", parse=wire.device, path=path)
        return DeviceInfo(**{**wire.to_dict(dev), "path": f"{self.host}:{dev.path}"})

    def safety_problems(self, dev: DeviceInfo) -> List[str]:
        return self.call("safety", parse=wire.strings)

    @contextlib.contextmanager
    def locked(self, dev: DeviceInfo) -> Iterator[None]:
        self.call("lock")  # held by the agent until the session ends
        yield

    def check_safe(self, dev: DeviceInfo, force: bool) -> List[str]:
        return self.call("check_safe", parse=wire.strings, force=bool(force))

    @contextlib.contextmanager
    def exclusive(self, dev: DeviceInfo) -> Iterator[None]:
        self.call("exclusive")  # held by the agent until the session ends
        yield

    def prepare_file(self, dev: DeviceInfo) -> None:
        raise TargetError(f"{dev.path}: a remote target is a block device")

    def host_info(self, fio_version: str) -> HostInfo:
        return self.call("host_info", parse=wire.host_info, fio_version=fio_version)

    def device_facts(self, dev: DeviceInfo) -> dict:
        return self.call("facts", parse=wire.facts)

    def write_cache(self, dev: DeviceInfo, wanted: str, record: Recorder) -> CacheHandle:
        return _Cache(self, self.call("cache_start", on_event=record, parse=wire.text, wanted=wanted), record)

    def purge(self, method: str, dev: DeviceInfo) -> PurgeRecord:
        return self.call("purge", timeout=None, parse=wire.purge_record, method=method)

    def health(self, dev: DeviceInfo, when: str) -> Optional[HealthSnapshot]:
        return self.call("health", parse=wire.health, when=when)

    def heat(self, dev: DeviceInfo) -> HeatReading:
        return self.call("heat", parse=wire.heat)


def connect(host: str, ssh_config: Optional[str], remote_tkperf: Sequence[str]) -> RemoteSide:
    return RemoteSide(host, Ssh(host, ssh_config), remote_tkperf)

