"""Showing a run's progress on stderr.

* :class:`LiveRenderer`: on a terminal, an in-place display drawn by
  ``rich`` (current test and phase, round n of max, the last tracking
  values and how near the window is to steady, elapsed time, the ETA
  range); the progress lines scroll above it.
* :class:`PlainRenderer`: anywhere else (pipes, cron, nohup, TERM=dumb):
  one timestamped line per progress message with the ETA appended; nothing
  is ever redrawn.

Both are a ``logging.Handler`` for the ``tkperf.progress`` logger (the
engine's messages, unchanged) and a listener of the engine's
:class:`tkperf.engine.progress.Progress` (the structured state and ETA).
:func:`choose` picks one; ``--quiet`` picks none.
"""
from __future__ import annotations

import logging
import os
import time
from typing import IO, Optional

from tkperf.engine import progress as engine_progress
from tkperf.durations import duration
from tkperf.engine.progress import Progress, eta_text, finish_clock


def stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def wants_live(stream: IO[str]) -> bool:
    """An in-place display only on a terminal that can redraw."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and os.environ.get("TERM", "") not in ("", "dumb")


class _Renderer(logging.Handler):
    """Shared by both renderers: the state the engine last reported."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream
        self.state: Optional[Progress] = None

    def on_progress(self, prog: Progress, event: str) -> None:
        self.state = prog

    def eta(self) -> str:
        s = self.state
        if s is None or not s.started or s.finished:
            return ""
        lo, hi = s.eta()
        return f"{eta_text(lo, hi)} ({finish_clock(lo, hi)})"

    def start(self) -> None:
        engine_progress.add_listener(self.on_progress)

    def stop(self) -> None:
        engine_progress.remove_listener(self.on_progress)


class PlainRenderer(_Renderer):
    """Timestamped lines: 'YYYY-MM-DD HH:MM:SS tkperf: MESSAGE; ETA 2 min to 9 min (...)'."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = f"{stamp()} tkperf: {record.getMessage()}"
            if record.levelno >= logging.INFO and record.name == "tkperf.progress":
                eta = self.eta()
                if eta:
                    line += f"; {eta}"
            self.stream.write(line + "\n")
            self.stream.flush()
        except Exception:  # noqa: BLE001 - logging must never stop a run
            self.handleError(record)


class LiveRenderer(_Renderer):
    """The in-place display of ``rich``; messages are printed above it."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream)
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=stream, highlight=False, soft_wrap=True)
        self.live = Live(console=self.console, get_renderable=self.render, refresh_per_second=2,
                         transient=False, redirect_stdout=False, redirect_stderr=False)
        self.running = False

    def start(self) -> None:
        """Listen; the display itself starts with the run (after any prompt)."""
        super().start()

    def stop(self) -> None:
        super().stop()
        if self.running:
            self.running = False
            self.live.stop()

    def on_progress(self, prog: Progress, event: str) -> None:
        super().on_progress(prog, event)
        if not self.running:
            self.running = True
            self.live.start()
        self.live.refresh()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.print(f"{time.strftime('%H:%M:%S')} {record.getMessage()}", markup=False)
        except Exception:  # noqa: BLE001 - logging must never stop a run
            self.handleError(record)

    def render(self):
        from rich.table import Table
        from rich.text import Text

        s = self.state
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold")
        grid.add_column()
        if s is None or not s.started:
            grid.add_row("tkperf", Text("starting"))
            return grid
        total = len(s.tests)
        grid.add_row("test", Text(f"{s.key or '-'} ({s.index} of {total})"))
        phase = s.phase
        if s.kind == "rounds" and s.round and s.per_round_s > 0:
            part = min((s.clock() - s.phase_since) / s.per_round_s, 1.0)
            phase += f", about {100 * part:.0f}% through (estimated from its time)"
        elif s.kind == "stream" and s.round:
            phase = f"interval {s.round}: {s.stream_iops:.0f} IOPS, {s.stream_written / 1e9:.2f} GB written"
        grid.add_row("phase", Text(phase))
        if s.values:
            last = ", ".join(f"{v:.6g}" for v in s.values[-5:])
            grid.add_row("tracking", Text(f"{s.label}: {last}"))
            near = s.closeness()
            if near:
                verdict = "steady" if getattr(s.steady, "steady", False) else "not steady yet"
                grid.add_row("steady", Text(f"{near} ({verdict})"))
        grid.add_row("elapsed", Text(duration(s.elapsed(), rough=True)))
        eta = self.eta()
        if eta:
            grid.add_row("ETA", Text(eta[4:]))
        return grid


def choose(stream: IO[str], quiet: bool) -> Optional[_Renderer]:
    """The renderer for ``stream``: none with ``--quiet``."""
    if quiet:
        return None
    if wants_live(stream):
        try:
            return LiveRenderer(stream)
        except ImportError:  # rich missing: plain lines still say everything
            pass
    return PlainRenderer(stream)
