"""The PDF written in a forked process: :class:`PdfChild` begins it while
the charts are still being drawn (its pages are laid out at once, from
each chart's known size) and is handed each chart's graphic as it is drawn
(:mod:`tkperf.render.documents` does both).
"""
from __future__ import annotations

import gc
import multiprocessing
import os
from typing import Any, List, Mapping, Optional, Tuple

from tkperf.errors import OutputError
from tkperf.render import parallel
from tkperf.render.pdf import PdfGraphic, render_pdf, svg_beside
from tkperf.store import atomic_write


def write_pdf(doctree: object, outdir: str, path: str, copy: bool,
               graphics: Optional[Mapping[str, PdfGraphic]] = None,
               sizes: Optional[Mapping[str, Tuple[float, float]]] = None) -> Tuple[bool, List[str]]:
    pdf, problems = render_pdf(doctree, outdir, copy, graphics, sizes)
    if pdf is not None:
        atomic_write(path, pdf)
    return pdf is not None, problems


class _Arriving(dict):
    """SVG path -> :class:`PdfGraphic`, read from ``feed`` (the pairs the
    parent sends as the charts are drawn) when one not here yet is asked for."""

    def __init__(self, feed: Any) -> None:
        super().__init__()
        self._feed = feed

    def __missing__(self, key: str) -> PdfGraphic:
        while True:
            try:
                path, graphic = self._feed.recv()
            except (EOFError, OSError) as exc:
                raise RuntimeError(f"the chart {os.path.basename(key)} never came") from exc
            self[path] = graphic
            if path == key:
                return graphic


class PdfChild:
    """The PDF being written by a forked process (which has the doctree as
    it was then, for free).  Started with the charts' sizes only, it is
    sent each chart's graphic as it is drawn (:meth:`send`) and draws the
    pages meanwhile, waiting where a chart has not come yet."""

    def __init__(self, proc: Any, answers: Any, feed: Any) -> None:
        self._proc = proc
        self._answers = answers
        self._feed = feed
        self.aborted = False

    @classmethod
    def start(cls, doctree: object, outdir: str, path: str,
              graphics: Optional[Mapping[str, PdfGraphic]] = None,
              sizes: Optional[Mapping[str, Tuple[float, float]]] = None) -> Optional[PdfChild]:
        """Fork the writer: with ``sizes``, the graphics come by :meth:`send`;
        None when no process can be forked."""
        try:
            ctx = multiprocessing.get_context("fork")
            receive, send = ctx.Pipe(duplex=False)
            feed_out, feed_in = ctx.Pipe(duplex=False) if sizes is not None else (None, None)
        except (ValueError, OSError):
            return None
        if feed_in is not None:
            parallel.roomy(feed_in)  # the parent passes charts on faster than the pages need them

        def child() -> None:
            gc.freeze()  # the parent's objects (the doctree) live as long as this process
            arriving = graphics
            if feed_in is not None:
                feed_in.close()  # the parent's end: EOF when the parent has sent all or is gone
                arriving = _Arriving(feed_out)
            try:
                parallel.stops_released()  # forked under stops_held: a stop asked for meanwhile comes now
                send.send(("ok",) + write_pdf(doctree, outdir, path, False, arriving, sizes))
            except OutputError as exc:
                send.send(("output", str(exc), []))
            except BaseException as exc:  # noqa: BLE001 - said by the parent
                send.send(("ok", False, [f"PDF not written: {type(exc).__name__}: {exc}"]))

        proc = ctx.Process(target=child, name="tkperf-pdf", daemon=True)
        try:
            with parallel.stops_held():
                proc.start()
        except OSError:
            for conn in (receive, send, feed_out, feed_in):
                if conn is not None:
                    conn.close()
            return None
        send.close()
        if feed_out is not None:
            feed_out.close()
        return cls(proc, receive, feed_in)

    def send(self, drawn: parallel.Drawn) -> None:
        """Pass on a chart's graphic; a chart that failed (the document
        changes: see :func:`publish`) or a writer that is gone ends this one."""
        if self.aborted or self._feed is None:
            return
        if drawn.kind or drawn.graphic is None:
            self.abort()
            return
        try:
            self._feed.send((os.path.abspath(svg_beside(drawn.path)), drawn.graphic))
        except OSError:
            self.abort()

    def abort(self) -> None:
        """Stop the writer; its file is never written (it needs every chart first)."""
        if not self.aborted:
            self.aborted = True
            self._proc.terminate()
            self._close()

    def _close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None
        self._answers.close()
        self._proc.join()

    def wait(self) -> Optional[tuple]:
        """The writer's answer: ("ok", written, warnings) or ("output",
        reason, []); None when it died or was stopped."""
        if self.aborted:
            return None
        if self._feed is not None:
            self._feed.close()  # all sent
            self._feed = None
        try:
            answer = self._answers.recv()
        except (EOFError, OSError):
            answer = None
        finally:
            self._close()
        return answer
