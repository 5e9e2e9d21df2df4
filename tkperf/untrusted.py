"""Text from elsewhere (result files, archives, description and feature
files, device identify strings, test hosts) made safe where it goes: a
terminal and an XML file.  The reST of the reports has its own escaping
(:func:`tkperf.render.rst.rst_escape`).

* :func:`for_terminal`: every character that a terminal would act on
  instead of showing (C0 controls but newline and tab, DEL, C1 controls,
  among them the 8-bit CSI, and the bidirectional overrides and isolates
  that reorder what is shown; lone surrogates, which stand for the bytes
  of a path that are not UTF-8, and would reach the terminal as those raw
  bytes) becomes a visible ``\\uXXXX``.  A crafted
  model string cannot retitle, clear or recolour the terminal, move the
  cursor, ring the bell or hide text.  The escape is JSON's, so a JSON
  document stays valid JSON.
* :class:`TerminalStream`: standard output and standard error wrapped in
  that, installed once by :func:`tkperf.cli.main`, so every line any
  command prints (``show``, ``check``, ``info``, ``compare``, every error
  message) passes through it.  The live progress display of ``rich`` writes
  its own escape sequences to :attr:`TerminalStream.raw` and escapes the
  text it shows itself.
* :func:`for_xml`: characters XML 1.0 cannot hold (C0 controls but tab,
  newline and carriage return; lone surrogates; U+FFFE/U+FFFF) become
  U+FFFD, so a device or an old file with such a string never stops a
  result from being saved.
"""
from __future__ import annotations

import functools
import re
from typing import IO, Any, Pattern, Tuple

_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def _escaped(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def for_terminal(text: object) -> str:
    """``text`` with every character a terminal would act on shown as ``\\uXXXX``."""
    return _TERMINAL.sub(_escaped, str(text))


@functools.cache
def _xml_illegal() -> Pattern[str]:
    """What XML 1.0 cannot hold, compiled when first asked (a few
    milliseconds of every start otherwise: ``tkperf --version``)."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def for_xml(text: object) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by U+FFFD."""
    return _xml_illegal().sub(REPLACEMENT, str(text))


def replace_controls(text: str) -> Tuple[str, int]:
    """``text`` with the characters :func:`for_terminal` escapes (and those
    XML cannot hold) replaced by U+FFFD, and how many there were: for data
    that is kept (an imported archive), not only shown."""
    out, n = _TERMINAL.subn(REPLACEMENT, text)
    out, m = _xml_illegal().subn(REPLACEMENT, out)
    return out, n + m


class TerminalStream:
    """A text stream that writes :func:`for_terminal` of everything to ``raw``."""

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(for_terminal(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding ...
        return getattr(self.raw, name)


def raw_stream(stream: IO[str]) -> IO[str]:
    """The stream under a :class:`TerminalStream` (for a writer of its own escape sequences)."""
    while isinstance(stream, TerminalStream):  # tkperf demo calls main() inside main()
        stream = stream.raw
    return stream
