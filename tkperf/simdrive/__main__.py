"""``python -m tkperf.simdrive RUNDIR``: the emulated SSD's server process
(started and stopped by :mod:`tkperf.simdrive.control`)."""
from __future__ import annotations

import signal
import sys

from tkperf.simdrive.server import serve


def main(argv: list) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
