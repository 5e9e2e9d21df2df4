"""Talk to ``tkperf agent`` on pipes as a run does: the requests go in,
stdin stays open until each has its reply (or the agent has ended the
session), then closes.  Closing stdin while a request runs interrupts that
request (the controller went away), so a test that wrote its requests and
closed stdin at once would race the agent's first request."""
from __future__ import annotations

import json
import subprocess
import threading
from typing import Iterable, List, Sequence, Tuple


def converse(argv: Sequence[str], requests: Iterable[dict], timeout: float = 120) -> Tuple[int, List[dict], str]:
    """(exit code, every message the agent wrote, its stderr)."""
    requests = list(requests)
    want = {r["id"] for r in requests if "id" in r}
    proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err: List[bytes] = []
    drain = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    drain.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        messages: List[dict] = []
        while want - {m.get("id") for m in messages}:
            line = proc.stdout.readline()
            if not line:  # the agent ended the session
                break
            messages.append(json.loads(line))
        proc.stdin.close()
        messages += [json.loads(ln) for ln in proc.stdout.read().splitlines()]
        rc = proc.wait()
    finally:
        timer.cancel()
    drain.join(timeout)
    return rc, messages, b"".join(err).decode("utf-8", "replace")
