"""Drawing a report's charts on both cores.

:class:`Drawing` (and :func:`draw_charts`, which waits for it) hands the
charts of one report to at most :data:`MAX_WORKERS` forked processes (the
first imports matplotlib and forks the others, so the import is paid once
and the parent never needs it) and waits for all of them; where no process
can be started (no fork, no processes allowed, a single chart) it draws
them one after the other in this process, as it draws any chart whose
process died before answering.  A chart that fails is a reason in the
answer, not an exception: the report says so and goes on.  Only an
:class:`~tkperf.errors.OutputError` (the plot directory cannot be written)
stops the build, as it would stop writing the documents.

:class:`Drawers` starts the first process before the charts are known
(``tkperf report`` does, before it loads the result file), so that
matplotlib is imported while the parent does other work.
"""
from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from tkperf.errors import Interrupted, OutputError
from tkperf.render.blocks import spec_of
from tkperf.render.pdf import PdfGraphic, svg_beside

MAX_WORKERS = 2
#: fcntl's F_SETPIPE_SZ (Linux; named in the fcntl module from Python 3.10).
_SETPIPE_SZ = 1031
#: prctl's PR_SET_PDEATHSIG (Linux).
_PR_SET_PDEATHSIG = 1
#: The room asked for in a pipe that carries charts (Linux's default
#: ceiling for a user, /proc/sys/fs/pipe-max-size): the drawn charts of a
#: whole report fit, so a drawing process does not wait for its reader.
PIPE_ROOM = 1 << 20


@dataclass(frozen=True)
class Drawn:
    """What became of one chart: ``error`` (and the exception's class in
    ``kind``) is empty when it was drawn; ``pid`` is the process that drew it."""

    path: str
    error: str
    pid: int
    kind: str = ""
    output_error: bool = False
    #: The chart for the PDF writer (a :class:`~tkperf.render.pdf.PdfGraphic`), when asked for.
    graphic: Optional[PdfGraphic] = None

    def warning(self, vector: bool = False) -> str:
        """What went wrong, naming the plot's file (its SVG with ``vector``)."""
        name = os.path.basename(svg_beside(self.path) if vector else self.path)
        return f"plot {name} could not be drawn: {self.kind}: {self.error}"


def _draw_one(path: str, spec: object, outputs: Sequence[str] = ("png",)) -> Drawn:
    try:
        from tkperf.render import charts, plotting  # matplotlib loads in the drawing processes only

        plotting.take_graphic(path)  # none left from an earlier drawing of this chart
        charts.draw(spec, path, outputs)
        graphic = plotting.take_graphic(path)
    except OutputError as exc:
        return Drawn(path, str(exc), os.getpid(), type(exc).__name__, output_error=True)
    except Exception as exc:  # noqa: BLE001 - a broken chart must not cost the report
        return Drawn(path, str(exc) or type(exc).__name__, os.getpid(), type(exc).__name__)
    return Drawn(path, "", os.getpid(), graphic=graphic)


def _cost(spec: object) -> int:
    """A rough relative drawing time, to start the slow charts first."""
    return {"HeatmapChart": 3, "BarsChart": 2, "CurvesChart": 2}.get(type(spec_of(spec)).__name__, 1)


def _preload() -> None:
    """Import what drawing needs (matplotlib, the charts, the recorder of
    PDF graphics), so that processes forked afterwards have it already."""
    from tkperf.render import charts  # noqa: F401 - matplotlib loads in the drawing processes only

    # What is loaded now lives as long as the process: the collector need not
    # go through it again after every chart (a tenth of the drawing time).
    gc.freeze()
    gc.set_threshold(10000, 20, 20)


def _end_with(parent: int) -> None:
    """Have this process ended (SIGTERM) when ``parent``, which forked it,
    ends first (Linux's PR_SET_PDEATHSIG): a drawing process never outlives
    a report that was stopped or killed, nor waits for ever on a lock that
    its stopped first process held.  Elsewhere, nothing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the request was made
        os._exit(0)


#: The signals a command stops on (tkperf's handlers raise them as Interrupted).
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stops_held() -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP wait (blocked in this thread), so
    that a process forked here starts with them waiting until it is inside
    its own code (:func:`stops_released`).  Otherwise one that comes while
    the fork is made is dropped by Python's own after-fork step, or runs
    the handler the child inherited before the child's code begins, where
    a raise (SIGINT's KeyboardInterrupt) carries the copy of this process
    on with its caller's code."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def stops_released() -> None:
    """In a process forked under :func:`stops_held`: a stop asked for since
    the fork is taken now."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def _started(parent: int, target: Callable[..., None], *args: Any) -> None:
    """``target(*args)`` in a process forked by ``parent`` (under
    :func:`stops_held`), ended with it.  A stop asked for since the fork
    is taken first; an :class:`Interrupted` raised by a handler it
    inherited ends it with the signal's exit status and no traceback on
    the command's stderr."""
    try:
        stops_released()
        _end_with(parent)
        target(*args)
    except Interrupted as exc:
        sys.exit(exc.exit_code)


def _draw_share(jobs: Sequence[Tuple[str, object]], outputs: Sequence[str], order: Sequence[int],
                taken: Any, answers: Any, lock: Any) -> None:
    """Draw charts until none is left: take the next index of ``order``
    (``taken`` counts the ones handed out, shared by the drawing processes),
    draw it and send (index, :class:`Drawn`) to the parent, one whole message
    at a time (``lock``)."""
    while True:
        with taken.get_lock():
            k = taken.value
            taken.value = k + 1
        if k >= len(order):
            return
        i = order[k]
        path, spec = jobs[i]
        done = _draw_one(path, spec, outputs)
        with lock:
            answers.send((i, done))


def _lead(jobs: Sequence[Tuple[str, object]], outputs: Sequence[str], order: Sequence[int], taken: Any,
          answers: Any, lock: Any, followers: int) -> None:
    """The first drawing process: it imports matplotlib once, then forks the
    others (which so start with it loaded) and draws beside them."""
    _preload()
    ctx = multiprocessing.get_context("fork")
    procs = []
    for _ in range(followers):
        proc = ctx.Process(target=_started, args=(os.getpid(), _draw_share, jobs, outputs, order, taken, answers,
                                                  lock), name="tkperf-charts", daemon=True)
        try:
            with stops_held():
                proc.start()
        except OSError:
            break  # fewer hands: this process draws the rest
        procs.append(proc)
    _draw_share(jobs, outputs, order, taken, answers, lock)
    for proc in procs:
        proc.join()


def roomy(conn: Any) -> None:
    """Give the pipe of ``conn`` (a multiprocessing connection) room for
    :data:`PIPE_ROOM` bytes where the system allows it; else it stays as it
    is (a writer then waits for its reader sooner, nothing worse)."""
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", _SETPIPE_SZ), PIPE_ROOM)
    except (ImportError, OSError, ValueError):
        pass


def _fork_leader(target: Callable[..., None], head: tuple, followers: int) -> Optional[Tuple[Any, Any]]:
    """Start ``target(*head, taken, answers, lock, followers)`` in a forked
    process, with a new hand-out counter, answer pipe and lock: (process,
    the answers' reading end), or None where no process can be started
    (no fork, no working semaphores, no processes allowed)."""
    try:
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
    except (ValueError, OSError):
        return None
    roomy(receive)  # the charts come back while the parent is busy (parsing the reST)
    try:
        taken, lock = ctx.Value("i", 0), ctx.Lock()
        leader = ctx.Process(target=_started, args=(os.getpid(), target) + head + (taken, send, lock, followers),
                             name="tkperf-charts")
        with stops_held():
            leader.start()
    except (ValueError, OSError, ImportError):
        receive.close()
        return None
    finally:
        send.close()  # the drawing processes hold the only writing ends: EOF when they are gone
    return leader, receive


def _stop(leader: Any, answers: Any, terminate: bool = True) -> None:
    """Collect a first drawing process (stopped first with ``terminate``)."""
    if terminate:
        leader.terminate()
    leader.join()
    answers.close()


def _lead_when_told(jobs_in: Any, parents_end: Any, taken: Any, answers: Any, lock: Any, followers: int) -> None:
    """A first drawing process started before its charts are known
    (:class:`Drawers`): it imports what drawing needs now, then waits for
    (jobs, outputs, order); a closed pipe (nothing to draw) ends it.  Its
    copy of the parent's writing end (``parents_end``, inherited by the
    fork) is closed first, so the parent's close is the end of the pipe:
    the process ends without a signal, which one arriving while the fork's
    own hooks run would lose."""
    parents_end.close()
    _preload()
    try:
        jobs, outputs, order = jobs_in.recv()
    except (EOFError, OSError):
        return
    finally:
        jobs_in.close()
    _lead(jobs, outputs, order, taken, answers, lock, min(followers, len(order) - 1))


class Drawers:
    """Drawing processes made ready before their charts are known: the
    first imports matplotlib at once, on the other core, while the caller
    loads the result file and assembles the report; the :class:`Drawing`
    given them (once) hands its charts over, and what to draw them as.  Use
    it as a context manager: drawers not used are stopped at its end."""

    def __init__(self, workers: int = MAX_WORKERS) -> None:
        self.workers = min(workers, os.cpu_count() or 1)
        self._ready: Optional[Tuple[Any, Any, Any]] = None
        if self.workers > 1:
            self._start()

    def _start(self) -> None:
        try:
            jobs_out, jobs_in = multiprocessing.get_context("fork").Pipe(duplex=False)
        except (ValueError, OSError):  # no fork, no pipes: the charts are drawn as Drawing can
            return
        roomy(jobs_in)  # the charts are handed over while the drawer still imports: no waiting for it
        started = _fork_leader(_lead_when_told, (jobs_out, jobs_in), self.workers - 1)
        jobs_out.close()  # the leader's end
        if started is None:
            jobs_in.close()
            return
        self._ready = started + (jobs_in,)

    def take(self) -> Optional[Tuple[Any, Any, Any]]:
        """(leader, answers, jobs pipe), once; None when none is ready."""
        ready, self._ready = self._ready, None
        return ready

    def close(self) -> None:
        """Stop drawers that were not used (they were only importing)."""
        ready, self._ready = self._ready, None
        if ready is not None:
            leader, answers, jobs_in = ready
            jobs_in.close()
            _stop(leader, answers)

    def __enter__(self) -> Drawers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Drawing:
    """Charts being drawn: started when made, so that the caller can go on
    (write the reST, load the document writers) until :meth:`wait`.

    One forked process imports matplotlib and forks the others from
    itself, so the import is paid once; they take the charts one at a time,
    slowest first, so that they finish close together, or (``in_order``)
    in the order given, for a reader that takes them as they come.  Use it as a context
    manager, so that the processes are stopped whatever happens between the
    two.
    """

    def __init__(self, jobs: Sequence[Tuple[str, object]], workers: int = MAX_WORKERS,
                 outputs: Sequence[str] = ("png",), in_order: bool = False,
                 drawers: Optional[Drawers] = None) -> None:
        self.jobs = list(jobs)
        self.outputs = tuple(outputs)
        self.in_order = in_order
        self._leader: Any = None
        self._answers: Any = None
        self._complete = False
        n = min(workers, len(self.jobs), os.cpu_count() or 1)
        ready = drawers.take() if drawers is not None and n > 1 else None
        if ready is not None:
            self._hand(ready)
        if n > 1 and self._leader is None:
            self._start(n)

    def _order(self) -> List[int]:
        if self.in_order:
            return list(range(len(self.jobs)))
        return sorted(range(len(self.jobs)), key=lambda i: -_cost(self.jobs[i][1]))

    def _hand(self, ready: Tuple[Any, Any, Any]) -> None:
        """Give the charts to drawers made ready before (:class:`Drawers`)."""
        leader, answers, jobs_in = ready
        try:
            jobs_in.send((self.jobs, self.outputs, self._order()))
        except Exception:  # noqa: BLE001 - a drawer gone, a chart that cannot travel: drawn as without them
            _stop(leader, answers)
            return
        finally:
            jobs_in.close()
        self._leader, self._answers = leader, answers

    def _start(self, workers: int) -> None:
        started = _fork_leader(_lead, (self.jobs, self.outputs, self._order()), workers - 1)
        if started is not None:  # else: drawn here
            self._leader, self._answers = started

    @property
    def parallel(self) -> bool:
        """Whether processes are drawing."""
        return self._leader is not None

    def _receive(self, arrived: Optional[Callable[[Drawn], None]]) -> Dict[int, Drawn]:
        got: Dict[int, Drawn] = {}
        try:
            while len(got) < len(self.jobs):
                i, done = self._answers.recv()
                got[i] = done
                if arrived is not None:
                    arrived(done)
        except (EOFError, OSError):
            pass  # a drawing process died: what it did not send is drawn here
        self._complete = len(got) == len(self.jobs)
        return got

    def wait(self, arrived: Optional[Callable[[Drawn], None]] = None) -> List[Drawn]:
        """One answer per job, in order; raises :class:`OutputError` when a
        chart could not be written for a reason the documents would meet too.
        ``arrived`` is told of each answer as it comes."""
        got: Dict[int, Drawn] = {}
        if self._leader is not None:
            try:
                got = self._receive(arrived)
            finally:
                self.close()
        done = []
        for i, (path, spec) in enumerate(self.jobs):
            if i not in got:
                got[i] = _draw_one(path, spec, self.outputs)
                if arrived is not None:
                    arrived(got[i])
            done.append(got[i])
        for d in done:
            if d.output_error:
                raise OutputError(d.error)
        return done

    def close(self) -> None:
        """Collect the drawing processes; stop them first when not every
        chart has come back (an interrupt, an error here).  A follower then
        stops at its next answer, which finds the pipe closed."""
        leader, self._leader = self._leader, None
        if leader is not None:
            _stop(leader, self._answers, terminate=not self._complete)

    def __enter__(self) -> Drawing:
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
