"""``tkperf server`` and the hidden ``tkperf agent`` ('tkperf help remote');
the remote-target options of a run are :mod:`tkperf.cli.runargs`'."""
from __future__ import annotations

import argparse
from typing import List

from tkperf import programs
from tkperf.cli.runargs import settings_of
from tkperf.engine.opening import fio_port
from tkperf.errors import EXIT_OK, UsageError
from tkperf.fio.jobs import FioSettings
from tkperf.remote import FIO_PORT, fio_host

# --- tkperf server -------------------------------------------------------------

def server_command(bind: str, port: int, pidfile: str) -> List[str]:
    listen = f"ip:{bind}," if bind else ","
    return ["fio", f"--server={listen}{port}", f"--daemonize={pidfile}"]


def cmd_server(args: argparse.Namespace) -> int:
    port = fio_port(settings_of(args))
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
