"""Drawing a report's charts on both cores.

:class:`Drawing` (and :func:`draw_charts`, which waits for it) hands the
charts of one report to a pool of at most
:data:`MAX_WORKERS` forked processes (each imports matplotlib itself, so
the parent never needs to) and waits for all of them; where no pool can be
started (no fork, no processes allowed, a single chart) it draws them one
after the other in this process.  A chart that fails is a reason in the
answer, not an exception: the report says so and goes on.  Only an
:class:`~tkperf.errors.OutputError` (the plot directory cannot be written)
stops the build, as it would stop writing the documents.
"""
from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf.errors import OutputError
from tkperf.render.pdf import svg_beside

MAX_WORKERS = 2


@dataclass(frozen=True)
class Drawn:
    """What became of one chart: ``error`` (and the exception's class in
    ``kind``) is empty when it was drawn; ``pid`` is the process that drew it."""

    path: str
    error: str
    pid: int
    kind: str = ""
    output_error: bool = False
    #: The SVG read for the PDF writer (a reportlab drawing), when asked for.
    drawing: object = None

    def warning(self, vector: bool = False) -> str:
        """What went wrong, naming the plot's file (its SVG with ``vector``)."""
        name = os.path.basename(svg_beside(self.path) if vector else self.path)
        return f"plot {name} could not be drawn: {self.kind}: {self.error}"


def _draw_one(path: str, spec: object, outputs: Sequence[str] = ("png",)) -> Drawn:
    try:
        from tkperf.render import charts  # matplotlib loads in the drawing processes only

        charts.draw(spec, path, outputs)
        drawing = None
        if "svg" in outputs and "pdf-drawing" in outputs:
            # Read here, on both cores, not by the PDF writer after all charts.
            from svglib.svglib import svg2rlg

            drawing = svg2rlg(charts.svg_path(path))
    except OutputError as exc:
        return Drawn(path, str(exc), os.getpid(), type(exc).__name__, output_error=True)
    except Exception as exc:  # noqa: BLE001 - a broken chart must not cost the report
        return Drawn(path, str(exc) or type(exc).__name__, os.getpid(), type(exc).__name__)
    return Drawn(path, "", os.getpid(), drawing=drawing)


def _serial(jobs: Sequence[Tuple[str, object]], outputs: Sequence[str]) -> List[Drawn]:
    return [_draw_one(path, spec, outputs) for path, spec in jobs]


def _cost(spec: object) -> int:
    """A rough relative drawing time, to start the slow charts first."""
    return {"HeatmapChart": 3, "BarsChart": 2, "CurvesChart": 2}.get(type(spec).__name__, 1)


class Drawing:
    """Charts being drawn: started when made, so that the caller can go on
    (write the reST, load the document writers) until :meth:`wait`.

    Use it as a context manager, so that the pool is shut down whatever
    happens between the two.
    """

    def __init__(self, jobs: Sequence[Tuple[str, object]], workers: int = MAX_WORKERS,
                 outputs: Sequence[str] = ("png",)) -> None:
        self.jobs = list(jobs)
        self.outputs = tuple(outputs)
        self._pool = None
        self._futures: Optional[list] = None
        n = min(workers, len(self.jobs), os.cpu_count() or 1)
        if n > 1:
            self._start(n)

    def _start(self, workers: int) -> None:
        from concurrent.futures import ProcessPoolExecutor

        try:
            self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
            # Slowest first, so that the workers finish close together.
            order = sorted(range(len(self.jobs)), key=lambda i: -_cost(self.jobs[i][1]))
            futures = {i: self._pool.submit(_draw_one, *self.jobs[i], self.outputs) for i in order}
            self._futures = [futures[i] for i in range(len(self.jobs))]
        except (ValueError, OSError, ImportError, RuntimeError):  # no working semaphores, no fork: draw here
            self.close()

    @property
    def parallel(self) -> bool:
        """Whether a pool of processes is drawing."""
        return self._futures is not None

    def wait(self) -> List[Drawn]:
        """One answer per job, in order; raises :class:`OutputError` when a
        chart could not be written for a reason the documents would meet too."""
        from concurrent.futures.process import BrokenProcessPool

        done: Optional[List[Drawn]] = None
        if self._futures is not None:
            try:
                done = [f.result() for f in self._futures]
            except (BrokenProcessPool, OSError):
                done = None
            finally:
                self.close()
        if done is None:
            done = _serial(self.jobs, self.outputs)
        for d in done:
            if d.output_error:
                raise OutputError(d.error)
        return done

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._futures = None

    def __enter__(self) -> "Drawing":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def draw_charts(jobs: Sequence[Tuple[str, object]], workers: int = MAX_WORKERS,
                outputs: Sequence[str] = ("png",)) -> List[Drawn]:
    """Draw every (path, spec), in parallel where possible; see :meth:`Drawing.wait`."""
    with Drawing(jobs, workers, outputs) as drawing:
        return drawing.wait()


def failures(done: Sequence[Drawn]) -> Dict[str, str]:
    """File name -> reason, of every chart that could not be drawn."""
    return {os.path.basename(d.path): d.error for d in done if d.kind}
