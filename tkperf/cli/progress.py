"""Showing a run's progress on stderr.

* :class:`LiveRenderer`: on a terminal, an in-place display drawn by
  ``rich`` (current test and phase, round n of max, what the running
  workload does now -- IOPS, MB/s and mean response time from fio's
  status reports, every second --, the last tracking values and how near
  the window is to steady, elapsed time, the ETA range); the progress
  lines scroll above it.
* :class:`PlainRenderer`: anywhere else (pipes, cron, nohup, TERM=dumb):
  one timestamped line per progress message with the ETA appended; nothing
  is ever redrawn.

Both are a ``logging.Handler`` for the ``tkperf.progress`` logger (the
engine's messages, unchanged) and a listener of the engine's
:class:`tkperf.kit.progress.Progress` (the structured state and ETA).
:func:`choose` picks one; ``--quiet`` picks none.  :func:`setup_logging`
sets up a run's log and its display; :func:`close_logging` ends both.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from typing import IO, Optional, Sequence, Tuple

from tkperf.durations import duration, latency, unit_words
from tkperf.kit import progress as engine_progress
from tkperf.kit.progress import Progress, RemoteRun, combined_eta, eta_text, finish_clock, tracking_text
from tkperf.untrusted import for_terminal, raw_stream

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")
debug_log = logging.getLogger("tkperf.debug")


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
        from rich.console import Console  # rich loads only when a live panel is shown
        from rich.live import Live

        # rich writes its own escape sequences; the text it shows is escaped here
        self.console = Console(file=raw_stream(stream), highlight=False, soft_wrap=True)
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
            self.console.print(for_terminal(f"{time.strftime('%H:%M:%S')} {record.getMessage()}"),
                               markup=False)
        except Exception:  # noqa: BLE001 - logging must never stop a run
            self.handleError(record)

    def render(self):
        from rich.table import Table  # rich loads only when a live panel is shown

        s = self.state
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold")
        grid.add_column()
        if s is None or not s.started:
            grid.add_row("tkperf", _text("starting"))
            return grid
        total = len(s.tests)
        grid.add_row("test", _text(f"{s.key or '-'} ({s.index} of {total})"))
        phase = s.phase
        if s.kind == "rounds" and s.round and s.per_round_s > 0:
            part = min((s.clock() - s.phase_since) / s.per_round_s, 1.0)
            phase += f", about {100 * part:.0f}% through (estimated from its time)"
        elif s.kind == "stream" and s.round:
            phase = f"interval {s.round}: {s.stream_iops:,.0f} IOPS, {s.stream_written / 1e9:.2f} GB written"
        grid.add_row("phase", _text(phase))
        now = s.live_now()
        if now is not None:
            grid.add_row("now", _text(now.text()))
        if s.values:
            last = ", ".join(tracking_text(v) for v in s.values[-5:])
            grid.add_row("tracking", _text(f"{unit_words(s.label)}: {last}"))
            near = s.closeness()
            if near:
                verdict = "steady" if getattr(s.steady, "steady", False) else "not steady yet"
                grid.add_row("steady", _text(f"{near} ({verdict})"))
        grid.add_row("elapsed", _text(duration(s.elapsed(), rough=True)))
        eta = self.eta()
        if eta:
            grid.add_row("ETA", _text(eta[4:]))
        return grid


def _text(text: str):
    """A cell of the live display: rich's Text, escaped for the terminal."""
    from rich.text import Text  # rich loads only when a live panel is shown

    return Text(for_terminal(text))


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


#: The display a run's progress is shown on now (None: none).
_renderer: Optional[_Renderer] = None


def setup_logging(log_path: Optional[str], quiet: bool, debug: bool = False) -> None:
    """The run's log file (``log_path``) and the progress on stderr: an
    in-place display on a terminal, timestamped lines elsewhere, nothing
    with ``quiet``.  ``debug`` keeps the ``tkperf.debug`` detail (the log
    file, and stderr when it shows plain lines)."""
    global _renderer
    log.setLevel(logging.DEBUG)
    close_logging()
    debug_log.setLevel(logging.DEBUG if debug else logging.INFO)
    if log_path:
        fh = logging.FileHandler(log_path)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(fh)
    renderer = choose(sys.stderr, quiet)
    if renderer is not None:
        progress.addHandler(renderer)
        if debug and isinstance(renderer, PlainRenderer):
            debug_log.addHandler(renderer)
        renderer.start()
        _renderer = renderer


def stop_progress() -> None:
    """End the in-place display (before printing the summary); idempotent."""
    global _renderer
    renderer, _renderer = _renderer, None
    if renderer is not None:
        renderer.stop()


def close_logging() -> None:
    stop_progress()
    for logger in (log, progress, debug_log):
        for h in list(logger.handlers):
            if not isinstance(h, logging.NullHandler):
                logger.removeHandler(h)
                h.close()


# --- several runs at once (``tkperf ssd run DEV DEV ...``) ---------------------

def _eta_words(eta: Optional[Tuple[float, float]]) -> str:
    if eta is None:
        return "ETA not known yet"
    lo, hi = eta
    return f"{eta_text(lo, hi)} ({finish_clock(lo, hi)})"


class CombinedPlain:
    """Several runs as lines: each run's progress line as
    'YYYY-MM-DD HH:MM:SS tkperf[NAME]: MESSAGE; ETA ...', notes about all of
    them as 'YYYY-MM-DD HH:MM:SS tkperf: NOTE; all: ETA ...', and what a run
    prints as '[NAME] LINE' on the stream it printed it on."""

    def __init__(self, err: IO[str], out: IO[str], quiet: bool = False) -> None:
        self.err, self.out, self.quiet = err, out, quiet
        self.runs: Sequence[RemoteRun] = ()

    def start(self, runs: Sequence[RemoteRun]) -> None:
        self.runs = runs

    def _write(self, stream: IO[str], line: str) -> None:
        try:
            stream.write(line + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed terminal must not stop the runs
            pass

    def message(self, run: RemoteRun, text: str) -> None:
        if not self.quiet:
            self._write(self.err, f"{stamp()} tkperf[{run.name}]: {text}; {_eta_words(run.eta())}")

    def note(self, text: str) -> None:
        running = [r for r in self.runs if not r.ended]
        tail = f"; all: {_eta_words(combined_eta(running))}" if running else ""
        self._write(self.err, f"{stamp()} tkperf: {text}{tail}")

    def output(self, run: RemoteRun, line: str, stream: str) -> None:
        self._write(self.out if stream == "out" else self.err, f"[{run.name}] {line}")

    def refresh(self) -> None:
        """Lines are never redrawn."""

    def stop(self) -> None:
        """Nothing to take down."""


class CombinedLive(CombinedPlain):
    """A table drawn in place by ``rich``, one row per run (test, phase,
    last tracking values, elapsed, ETA) and one for all of them; progress
    lines and what the runs print scroll above it."""

    def __init__(self, err: IO[str], out: IO[str], quiet: bool = False) -> None:
        super().__init__(err, out, quiet)
        from rich.console import Console  # rich loads only when a live panel is shown
        from rich.live import Live

        self.console = Console(file=raw_stream(err), highlight=False, soft_wrap=True)
        self.live = Live(console=self.console, get_renderable=self.render, refresh_per_second=2,
                         transient=False, redirect_stdout=False, redirect_stderr=False)
        self.running = False

    def start(self, runs: Sequence[RemoteRun]) -> None:
        super().start(runs)
        self.running = True
        self.live.start()

    def _print(self, text: str) -> None:
        try:
            self.console.print(for_terminal(text), markup=False)
        except Exception:  # noqa: BLE001 - showing must never stop the runs
            pass

    def message(self, run: RemoteRun, text: str) -> None:
        if not self.quiet:
            self._print(f"{time.strftime('%H:%M:%S')} [{run.name}] {text}")

    def note(self, text: str) -> None:
        self._print(f"{time.strftime('%H:%M:%S')} {text}")

    def output(self, run: RemoteRun, line: str, stream: str) -> None:
        if stream == "out" and not self.out.isatty():
            super().output(run, line, stream)  # stdout goes where the user sent it
        else:
            self._print(f"[{run.name}] {line}")

    def refresh(self) -> None:
        if self.running:
            self.live.refresh()

    def stop(self) -> None:
        if self.running:
            self.running = False
            self.live.stop()

    def render(self):
        from rich.table import Table  # rich loads only when a live panel is shown

        table = Table(box=None, padding=(0, 1), show_edge=False)
        for column in ("target", "device", "test", "phase", "tracking", "elapsed", "ETA"):
            table.add_column(column, style="bold" if column == "target" else None)
        for r in self.runs:
            table.add_row(*(_text(c) for c in combined_row(r)))  # Text: never rich markup
        running = [r for r in self.runs if not r.ended]
        table.add_row("all", "", "", f"{len(running)} of {len(self.runs)} running", "", "",
                      _eta_words(combined_eta(running))[4:] if running else "done")
        return table


def combined_row(run: RemoteRun) -> Tuple[str, str, str, str, str, str, str]:
    """The cells of one run's row in the combined view, as plain text."""
    s = run.state
    if run.ended:
        phase = "done" if run.exit_code == 0 else f"stopped (exit {run.exit_code})"
    else:
        phase = str(s.get("phase", "")) or "starting"
        now = s.get("live")
        if isinstance(now, dict):
            phase += _live_words(now)
    test = f"{s['test']} ({s.get('index', 0)} of {s.get('tests', 0)})" if s.get("test") else "-"
    values = s.get("values") or []
    tracking = ", ".join(tracking_text(float(v)) for v in values[-3:])
    if tracking:
        tracking += " (steady)" if s.get("steady") else ""
    eta = run.eta()
    eta_cell = "" if run.ended else (eta_text(*eta)[4:] if eta is not None else "not known yet")
    return (run.name, run.device, test, phase, tracking, duration(run.elapsed(), rough=True), eta_cell)


def _live_words(now: dict) -> str:
    """', now 45,210 IOPS, 185.2 MB/s, 702.4 µs' of a run's snapshot."""
    try:
        return (f", now {float(now['iops']):,.0f} IOPS, {float(now['bw_bytes']) / 1e6:,.1f} MB/s, "
                f"{latency(float(now['lat_mean_us']))}")
    except (KeyError, TypeError, ValueError):
        return ""


def choose_combined(err: IO[str], out: IO[str], quiet: bool) -> CombinedPlain:
    """The combined view for ``err``: a live table on a terminal, lines
    elsewhere; ``quiet`` leaves out the runs' progress lines (notes and
    what the runs print still show)."""
    if wants_live(err) and not quiet:
        try:
            return CombinedLive(err, out, quiet)
        except ImportError:
            pass
    return CombinedPlain(err, out, quiet)
