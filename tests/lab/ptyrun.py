"""Run a command with its terminal output on a pseudo-terminal, as a user's
shell would, and collect everything it wrote there (for the tests of what
tkperf shows on a terminal: progress lines, units, colours)."""
from __future__ import annotations

import os
import pty
import subprocess
from typing import Mapping, Sequence, Tuple


def run_on_pty(argv: Sequence[str], env: Mapping[str, str], stdout_too: bool = False,
               timeout: float = 120) -> Tuple[int, str]:
    """(exit code, all ``argv`` wrote on the terminal): its stderr on a
    pseudo-terminal, its stdout too when ``stdout_too`` (else /dev/null)."""
    master, slave = pty.openpty()
    with open(os.devnull, "w") as devnull:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=slave if stdout_too else devnull,
                                stderr=slave, env=dict(env))
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")
