"""fio's per-interval log files (``write_lat_log``, ``write_iops_log`` ...):
finding the ones a job wrote and reading them."""
from __future__ import annotations

import glob
import io
import os
import re
import tempfile
from typing import List

import numpy as np

from tkperf.errors import OutputError


def log_directory(xml_path: str, prefix: str, what: str) -> str:
    """A fresh directory for fio's ``what`` (e.g. "latency logs") beside the
    result file, named ``prefix...``; OutputError when none can be made."""
    where = os.path.dirname(os.path.abspath(xml_path))
    try:
        return tempfile.mkdtemp(prefix=prefix, dir=where)
    except OSError as exc:
        raise OutputError(f"cannot make a directory for fio's {what} in {where}: "
                          f"{exc.strerror or exc}") from None


def log_files(prefix: str, kind: str) -> List[str]:
    """The ``kind`` logs (``lat``, ``iops``, ``bw`` ...) fio wrote for
    ``write_<kind>_log=prefix``: one per job, in job order
    (``prefix_<kind>.1.log``, ``prefix_<kind>.2.log`` ... ``.10.log``).
    fio's client writes the logs its server sent with the host appended
    (``prefix_<kind>.1.log.HOST``); those are found too."""
    pattern = re.compile(re.escape(os.path.basename(prefix)) + rf"_{re.escape(kind)}\.(\d+)\.log(\.[^/]+)?")
    found = []
    for path in glob.glob(glob.escape(prefix) + f"_{kind}.*.log*"):
        m = pattern.fullmatch(os.path.basename(path))
        if m:
            found.append((int(m.group(1)), path))
    return [p for _, p in sorted(found)]


def parse_log(text: str, source: str = "<log>") -> np.ndarray:
    """One fio log as an array of (time ms, value, direction) rows.

    A last line without its newline (fio killed while writing) is dropped;
    a line that does not start with three numbers raises ValueError naming
    ``source``.
    """
    body = text[:text.rfind("\n") + 1]  # a torn last line is dropped
    if not body.strip():
        return np.zeros((0, 3))
    try:
        return np.loadtxt(io.StringIO(body), delimiter=",", usecols=(0, 1, 2), ndmin=2, dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{source}: not a fio log: {str(exc).splitlines()[0][:120]}") from None
