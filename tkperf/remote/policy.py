"""What a test host's administrator allows its ``tkperf agent`` to do.

The agent may run as root for a plain user (the sudo rule of
docs/remote.rst), so nothing the controlling side sends can widen what a
local ``tkperf ssd run`` would do.  Two things a local run takes from its
command line are therefore taken from this file on the test host instead:

``allow_force = yes``
    ``--force`` (write to a device that looks in use) is honoured over SSH;
    without it the agent refuses such a device whatever the request says.
``purge_command = TOOL ... {device}``
    a vendor purge command the agent may run; a run's ``--purge-cmd`` must
    be one of these templates, letter for letter (repeat the line for
    several).  ``{device}`` becomes the device the agent resolved.

The file (``/etc/tkperf/agent.conf`` unless ``tkperf agent --policy FILE``)
is read only when it is a regular file owned by root and writable by no one
else, opened without following a link; otherwise the agent uses the
defaults (no force, no purge command) and says why.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import List, Tuple

DEFAULT_PATH = "/etc/tkperf/agent.conf"
MAX_SIZE = 64 << 10


@dataclass(frozen=True)
class Policy:
    allow_force: bool = False
    purge_commands: Tuple[str, ...] = ()
    #: Where it came from, and why the file was not used ('' when it was).
    source: str = ""
    problem: str = ""


def _parse(text: str, path: str) -> Tuple[bool, Tuple[str, ...], List[str]]:
    force, commands, problems = False, [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep:
            problems.append(f"{path}:{number}: not 'key = value'")
        elif key == "allow_force":
            if value.lower() not in ("yes", "no", "true", "false", "1", "0"):
                problems.append(f"{path}:{number}: allow_force takes yes or no")
            force = value.lower() in ("yes", "true", "1")
        elif key == "purge_command":
            if "{device}" not in value:
                problems.append(f"{path}:{number}: a purge_command needs {{device}}")
            else:
                commands.append(value)
        else:
            problems.append(f"{path}:{number}: unknown key {key!r}")
    return force, tuple(commands), problems


def load(path: str = DEFAULT_PATH) -> Policy:
    """The policy in ``path``; the defaults when there is none or it cannot be trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Policy(source=path)
    except OSError as exc:
        return Policy(source=path, problem=f"{path} not read ({exc.strerror}): the defaults apply")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Policy(source=path, problem=f"{path} is not a regular file: the defaults apply")
        if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return Policy(source=path, problem=f"{path} must be owned by root and writable by no one "
                                               "else: the defaults apply")
        data = os.read(fd, MAX_SIZE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SIZE:
        return Policy(source=path, problem=f"{path} is larger than {MAX_SIZE} bytes: the defaults apply")
    force, commands, problems = _parse(data.decode("utf-8", "replace"), path)
    if problems:
        return Policy(source=path, problem="; ".join(problems) + ": the defaults apply")
    return Policy(allow_force=force, purge_commands=commands, source=path)
