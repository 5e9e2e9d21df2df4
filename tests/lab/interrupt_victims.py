"""Two tests for tests/e2e/test_suite_interrupt.py to interrupt, not part of
the suite (pytest collects ``test_*.py`` files; that test names this one):
each makes what a test makes, a loop device or an emulated SSD, and holds
it until the run is interrupted, for at most :data:`HOLD_S`.  Real tests
as victims could end before the interrupt came on a loaded machine (a CI
run saw both victims pass in 22.6 s, the interrupt too late)."""
from __future__ import annotations

import time

HOLD_S = 300


def _hold() -> None:
    end = time.monotonic() + HOLD_S
    while time.monotonic() < end:
        time.sleep(0.2)


def test_holds_a_loop_device(loopdev):
    _hold()


def test_holds_an_emulated_ssd(simdrive):
    simdrive(capacity="32M")
    _hold()
