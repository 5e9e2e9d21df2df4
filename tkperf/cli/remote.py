"""Remote targets on the command line: ``HOST:/dev/...``, ``tkperf server``
and the hidden ``tkperf agent`` ('tkperf help remote')."""
from __future__ import annotations

import argparse
import os
import shlex
from typing import Dict, List, Optional, Tuple

from tkperf import programs
from tkperf.engine.request import RemoteSettings
from tkperf.errors import EXIT_OK, UsageError
from tkperf.fio.backend import FioBackend
from tkperf.fio.jobs import FioSettings
from tkperf.model.results import DeviceInfo
from tkperf.remote import FIO_PORT, fio_host, split_target
from tkperf.target.side import LocalSide, TargetSide

DEFAULT_REMOTE_TKPERF = "tkperf"


def add_options(p: argparse.ArgumentParser, fio: bool = True) -> None:
    g = p.add_argument_group("Remote targets (HOST:/dev/...; 'tkperf help remote')")
    if fio:
        g.add_argument("--fio-port", type=int, metavar="PORT",
                       help=f"port of the fio server on the test hosts (default {FIO_PORT})")
    g.add_argument("--ssh-config", metavar="FILE",
                   help="OpenSSH client configuration to use instead of ~/.ssh/config (ssh -F)")
    g.add_argument("--remote-tkperf", metavar="CMD",
                   help=f"how to start tkperf on the test hosts (default '{DEFAULT_REMOTE_TKPERF}'; "
                        "e.g. 'sudo -n /opt/tkperf/bin/tkperf' for a login that is not root)")


def settings_of(args: argparse.Namespace) -> RemoteSettings:
    """The remote options as given (a command may lack some of them)."""
    return RemoteSettings(fio_port=getattr(args, "fio_port", None), ssh_config=getattr(args, "ssh_config", None),
                          remote_tkperf=getattr(args, "remote_tkperf", None))


def _port(given: RemoteSettings, saved: Optional[dict] = None) -> int:
    port = given.fio_port
    if port is None:
        port = int((saved or {}).get("fio_port") or FIO_PORT)
    if not 0 < port < 65536:
        raise UsageError(f"--fio-port {port}: give a TCP port, 1 to 65535")
    return port


def _remote_tkperf(given: RemoteSettings, saved: Optional[dict] = None) -> List[str]:
    text = given.remote_tkperf or (saved or {}).get("remote_tkperf") or DEFAULT_REMOTE_TKPERF
    try:
        words = shlex.split(str(text))
    except ValueError as exc:
        raise UsageError(f"--remote-tkperf {text!r}: {exc}") from None
    if not words:
        raise UsageError("--remote-tkperf needs a command")
    return words


def _ssh_config(given: RemoteSettings, saved: Optional[dict] = None) -> Optional[str]:
    path = given.ssh_config or (saved or {}).get("ssh_config") or None
    if path and not os.path.isfile(path):
        raise UsageError(f"--ssh-config {path}: no such file")
    return os.path.abspath(path) if path else None


def open_target(target: str, size: Optional[int], given: RemoteSettings,
                saved: Optional[dict] = None) -> Tuple[TargetSide, DeviceInfo]:
    """The side of ``target`` (this host, or a test host over SSH) and its device.
    ``saved``: a resumed run's ``facts["remote"]``, for what the command line leaves out."""
    where = split_target(target)
    if where is None:  # the remote options are for the remote targets among several
        side: TargetSide = LocalSide()
        return side, side.resolve(target, size)
    from tkperf.remote import proxy  # a local run never loads the remote side

    host, path = where
    _port(given, saved)  # a bad port is refused before any connection
    side = proxy.connect(host, _ssh_config(given, saved), _remote_tkperf(given, saved))
    try:
        return side, side.resolve(path, size)
    except BaseException:
        side.close()
        raise


def backend(side: TargetSide, settings, outdir: str, given: RemoteSettings,
            saved: Optional[dict] = None) -> Optional[FioBackend]:
    """fio's client for a remote side (its server checked now, before anything
    is written); None on this host (the session makes its own)."""
    if not side.host:
        return None
    from tkperf.remote.fio import RemoteFio  # a local run never loads the remote side

    return RemoteFio(settings, outdir, side.host, _port(given, saved), session=side)


def facts(side: TargetSide, given: RemoteSettings, saved: Optional[dict] = None) -> Dict[str, object]:
    """``facts["remote"]`` of a run: how it reached its target, for the header and a resume."""
    if not side.host:
        return {}
    config = _ssh_config(given, saved)
    return {"host": side.host, "fio_host": fio_host(side.host), "fio_port": _port(given, saved),
            "remote_tkperf": " ".join(shlex.quote(w) for w in _remote_tkperf(given, saved)),
            **({"ssh_config": config} if config else {})}


def saved_remote(run_facts: dict) -> dict:
    got = run_facts.get("remote") if isinstance(run_facts, dict) else None
    return got if isinstance(got, dict) else {}


# --- tkperf server -------------------------------------------------------------

def server_command(bind: str, port: int, pidfile: str) -> List[str]:
    listen = f"ip:{bind}," if bind else ","
    return ["fio", f"--server={listen}{port}", f"--daemonize={pidfile}"]


def cmd_server(args: argparse.Namespace) -> int:
    port = _port(settings_of(args))
    pidfile = f"/run/tkperf-fio-{port}.pid"
    argv = server_command(args.bind or "", port, pidfile)
    if not args.start:
        print(programs.command_line(argv))
        return EXIT_OK
    if not args.host:
        raise UsageError("tkperf server --start needs the test host: tkperf server HOST --start")
    from tkperf.remote.ssh import Ssh  # only tkperf server and remote runs load the remote side

    ssh = Ssh(args.host, args.ssh_config)
    ssh.run(argv, what="starting the fio server", timeout=60.0)
    from tkperf.remote.fio import RemoteFio  # only tkperf server and remote runs load the remote side

    version = RemoteFio(FioSettings(filename="/dev/null"), ".", args.host, port).server
    print(f"fio server {version} listening on {fio_host(args.host)} port {port} "
          f"(pid file {pidfile} on {args.host})")
    return EXIT_OK


def cmd_agent(args: argparse.Namespace) -> int:
    from tkperf.remote import agent  # only tkperf agent loads the remote side

    return agent.main(args.policy)


def register(sub) -> None:
    s = sub.add_parser("server", help="print, or start over SSH, the fio server a test host needs",
                       allow_abbrev=False,
                       description="Without --start: print the fio server command to run on a test "
                                   "host. With --start HOST: run it there over SSH (as a daemon) and "
                                   "check that it answers with this host's fio version.")
    s.add_argument("host", nargs="?", help="the test host (as ssh knows it)")
    s.add_argument("--start", action="store_true", help="start the fio server on HOST over SSH")
    s.add_argument("--bind", metavar="ADDR", help="the address the server listens on (default: all)")
    s.add_argument("--fio-port", type=int, metavar="PORT", help=f"its port (default {FIO_PORT})")
    s.add_argument("--ssh-config", metavar="FILE", help="OpenSSH client configuration (ssh -F)")
    s.set_defaults(func=cmd_server)
    a = sub.add_parser("agent", allow_abbrev=False,
                       description="The test host's half of a remote run, started by tkperf over "
                                   "SSH; it reads requests on stdin. Not for use by hand.")
    a.add_argument("--policy", metavar="FILE", default="/etc/tkperf/agent.conf",
                   help="what this test host allows (--force, purge commands); a root-owned file "
                        "(default /etc/tkperf/agent.conf)")
    a.set_defaults(func=cmd_agent)
