"""Durations as text, the one place tkperf words them and reads them
(:func:`parse`, behind every duration option), the one word for a
unit of time (:func:`unit_word`: 'µs' wherever the output can show it),
and the one unit chooser of a response time shown (:func:`latency`)."""
from __future__ import annotations

import io
import re
import sys
from typing import IO, Optional

from tkperf.errors import UsageError


def micro_unit(stream: Optional[IO[str]] = None) -> str:
    """'µs' where ``stream`` (stderr by default) can show it, else 'us': a
    terminal or log in ASCII (LANG=C) gets letters it can print."""
    stream = sys.stderr if stream is None else stream
    encoding = getattr(stream, "encoding", None)
    if encoding is None:  # a text buffer (io.StringIO) holds any character
        return "µs"
    try:
        "µ".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return "us"
    return "µs"


#: Where a text goes that holds any character: a report, a UTF-8 file.
ANY_TEXT: IO[str] = io.StringIO()
_MICRO_IN_LABEL = re.compile(r"(?<=[\s(\d])(?:us|µs)\b")


def unit_word(unit: str, stream: Optional[IO[str]] = None) -> str:
    """The one word for a unit wherever tkperf writes one: microseconds
    (test types and fio say 'us') as :func:`micro_unit` of ``stream``
    (stderr by default; :data:`ANY_TEXT` for a report), every other unit as
    it is."""
    return micro_unit(stream) if unit in ("us", "µs") else unit


def unit_words(text: str, stream: Optional[IO[str]] = None) -> str:
    """A label with microseconds in it ('mean response time (us)', '400.0 us')
    in :func:`unit_word`'s word for ``stream``."""
    return _MICRO_IN_LABEL.sub(micro_unit(stream), text)


def latency(us: float, stream: Optional[IO[str]] = None, micro: str = "") -> str:
    """A response time as a reader takes it in, the one unit chooser of
    every latency tkperf's text shows: microseconds below 1 ms
    ('721.7 µs'; ``micro`` the word for them, else :func:`micro_unit` of
    ``stream``), milliseconds with one decimal from 1 ms on ('14.0 ms',
    '1,250.3 ms')."""
    if abs(us) >= 999.95:  # what would print as '1,000.0 µs' is 1.0 ms
        return f"{us / 1000.0:,.1f} ms"
    return f"{us:,.1f} {micro or micro_unit(stream)}"


def duration(seconds: float, rough: bool = False) -> str:
    """A duration as a reader takes it in.

    Measured durations (reports): '4.0 s', '45 s', '12.5 min', '24.0 h'.
    ``rough`` for estimates and ETAs, which claim no more than they know:
    '45 s', '12 min', '3.5 h'.
    """
    if rough:
        if seconds < 120:
            return f"{seconds:.0f} s"
        if seconds < 7200:
            return f"{seconds / 60:.0f} min"
        return f"{seconds / 3600:.1f} h"
    if seconds >= 3 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 180:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


#: Units a duration option takes, in seconds; a number alone is seconds.
UNITS = {"": 1, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
         "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
         "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
         "d": 86400, "day": 86400, "days": 86400}
#: How the forms are named in help texts and errors.
FORMS = "60, 90s, 1m, 1m30s, 1.5h or 2d"
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]*)\s*")


def parse(text: str, what: str = "duration") -> int:
    """A duration option's value in whole seconds, the one parser of every
    duration option: '60' (seconds), '90s', '1m', '30min', '1.5h', '2d', and
    sums of them, largest first ('1h30m', '2m 30s').  Rounded to the second;
    zero, negative and unknown units are a UsageError."""
    t = (text or "").strip().lower()
    total, pos, last_unit = 0.0, 0, None
    while pos < len(t):
        m = _PART.match(t, pos)
        if m is None or m.group(2) not in UNITS:
            raise UsageError(f"{what} {text!r} is not a duration like {FORMS}")
        unit = UNITS[m.group(2)]
        if last_unit is not None and (unit >= last_unit or m.group(2) == ""):
            raise UsageError(f"{what} {text!r} is not a duration like {FORMS}")
        total += float(m.group(1)) * unit
        pos, last_unit = m.end(), unit
    if last_unit is None:
        raise UsageError(f"{what} {text!r} is not a duration like {FORMS}")
    seconds = int(round(total))
    if total <= 0:
        raise UsageError(f"{what} {text!r} must be longer than 0")
    if seconds <= 0:
        raise UsageError(f"{what} {text!r} must be at least 1 second")
    return seconds
