"""OpenSSH to a test host, with the user's own configuration.

tkperf never asks for a password and never weakens host-key checking: every
connection is ``ssh -o BatchMode=yes`` (a key or an agent, else a clear
refusal) and what ``~/.ssh/config`` or ``--ssh-config FILE`` says about the
host (user, port, key, known hosts) applies.  The remote command is one
string, each word quoted for the remote shell.
"""
from __future__ import annotations

import subprocess
from typing import List, Optional, Sequence

from tkperf import programs
from tkperf.errors import RemoteError, ToolError, ToolTimeout

#: A dead connection is noticed within about a minute.
OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=15",
           "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4")
#: ssh's own failures (cannot connect, login refused, host key) exit with this.
SSH_FAILED = 255


class Ssh:
    """How to reach one test host."""

    def __init__(self, host: str, config: Optional[str] = None) -> None:
        if not host or host.startswith("-"):
            raise RemoteError(f"{host!r} is not a host name")
        self.host = host
        self.config = config

    def argv(self, remote: Sequence[str]) -> List[str]:
        """The local command line that runs ``remote`` on the host."""
        try:
            ssh = programs.require("ssh")
        except ToolError:
            raise ToolError("'ssh' not found on PATH; install it (Debian package openssh-client)") from None
        config = ["-F", self.config] if self.config else []
        return [ssh, *config, *OPTIONS, "-T", self.host, "--", programs.command_line(remote)]

    def failure(self, returncode: int, stderr: str, what: str) -> RemoteError:
        """The one line for an ssh that failed (exit 255: ssh itself)."""
        lines = [ln.strip() for ln in (stderr or "").splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit code {returncode}"
        if returncode == SSH_FAILED:
            return RemoteError(f"cannot reach {self.host} over SSH: {last}")
        if returncode == 127:
            return RemoteError(f"{what} on {self.host}: command not found ({last})")
        return RemoteError(f"{what} on {self.host} failed: {last}")

    def run(self, remote: Sequence[str], what: str, timeout: float = 60.0) -> str:
        """Run ``remote`` on the host; its stdout, or RemoteError."""
        try:
            proc = programs.run(self.argv(remote), timeout=timeout, check=False, what=f"ssh {self.host}")
        except ToolTimeout:
            raise RemoteError(f"{what} on {self.host}: no answer within {timeout:.0f} s") from None
        if proc.returncode != 0:
            raise self.failure(proc.returncode, proc.stderr, what)
        return proc.stdout

    def start(self, remote: Sequence[str]) -> subprocess.Popen:
        """``remote`` on the host as a tracked child with pipes on all three streams."""
        return programs.start(self.argv(remote), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
