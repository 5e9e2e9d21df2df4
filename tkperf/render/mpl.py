"""matplotlib as tkperf draws with it: its own built-in settings and tkperf's
style, never a settings file of the caller's.

matplotlib reads a ``matplotlibrc`` when it is imported: from the current
folder first (which may be anyone's: a shared folder, a user's home that
``sudo`` keeps), then ``$MATPLOTLIBRC``, ``$MPLCONFIGDIR`` and
``~/.config/matplotlib``; one there restyles root's charts, and one of its
settings (``text.usetex``) runs LaTeX.  Every module that draws imports
matplotlib through this one (before any ``matplotlib.*`` import), which

* imports it with ``MATPLOTLIBRC`` set to an empty file (``/dev/null``),
  which it takes before any file of the caller's, and without
  ``MPLBACKEND``; in a process with no other thread (the drawing processes
  and a plain command) from the root folder, so ``./matplotlibrc`` is not
  even opened (a FIFO there would hang it; elsewhere what matplotlib says
  of its lines, which may be anything, is not shown);
* and draws every chart from matplotlib's built-in settings with tkperf's
  over them (:func:`drawing_style`), whatever ``rcParams`` hold (a matplotlib
  imported before tkperf's, by a program using tkperf's API).

matplotlib still keeps its font cache where ``$MPLCONFIGDIR`` (or
``$XDG_CACHE_HOME``, else ``~/.cache/matplotlib``) says.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from typing import Any, Dict, Iterator, Mapping, Optional

#: Settings of matplotlib's that are not a chart's style (its backend:
#: Agg, set by the drawing modules), left as they are.
_NOT_STYLE = ("backend", "backend_fallback", "interactive", "toolbar", "tk.window_focus", "figure.raise_window",
              "webagg.")


def _import() -> None:
    if "matplotlib" in sys.modules:
        return
    saved = {name: os.environ.pop(name, None) for name in ("MATPLOTLIBRC", "MPLBACKEND")}
    os.environ["MATPLOTLIBRC"] = os.devnull
    here = -1
    if threading.active_count() == 1:  # the working folder is the whole process's
        try:
            here = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            os.chdir("/")
        except OSError:
            pass
    # Where a settings file is read after all (another thread held the
    # working folder), what matplotlib says of its lines is not shown.
    logger = logging.getLogger("matplotlib")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import matplotlib  # noqa: F401 - loaded now, with the settings above
    finally:
        logger.setLevel(level)
        if here >= 0:
            os.fchdir(here)
            os.close(here)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_import()

import matplotlib as matplotlib  # noqa: E402 - the drawing modules' matplotlib

_defaults: Optional[Dict[str, Any]] = None


def style(own: Mapping[Any, Any]) -> Dict[Any, Any]:
    """matplotlib's built-in settings with ``own`` over them: every chart's
    ``rc_context``, whatever ``matplotlib.rcParams`` hold now."""
    global _defaults
    if _defaults is None:
        _defaults = {k: v for k, v in matplotlib.rcParamsDefault.items() if not k.startswith(_NOT_STYLE)}
    return {**_defaults, **own}


@contextlib.contextmanager
def drawing_style(own: Mapping[Any, Any]) -> Iterator[None]:
    """Within: ``matplotlib.rcParams`` are :func:`style` (``own`` over the
    built-in settings); as they were afterwards."""
    with matplotlib.rc_context():
        with warnings.catch_warnings():  # a built-in setting a newer matplotlib deprecates is still drawn with
            warnings.simplefilter("ignore", matplotlib.MatplotlibDeprecationWarning)
            matplotlib.rcParams.update(style(own))
        yield
