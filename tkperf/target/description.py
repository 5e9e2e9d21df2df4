"""The two files a user writes about the drive: the description file
(``-dsc FILE``: facts the tools cannot read, such as NAND type, form factor
or the test sponsor) and the feature matrix (``-fm FILE``: features shown as
a table in the report).  docs/description.rst documents both formats;
examples/description.txt and examples/features.txt are filled-in examples.

Both are small UTF-8 text files of ``Name: value`` lines.  Anything else
(binary data, more than :data:`MAX_BYTES`, another encoding, a key the
description file does not know, a line that is not ``Name: value``) is
refused with a one-line :class:`~tkperf.errors.UsageError` (exit code 2)
before tkperf touches the device.
"""
from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from tkperf.errors import UsageError
from tkperf.model.files import read_limited

#: Largest description or feature file tkperf reads.
MAX_BYTES = 64 * 1024
#: Longest name and value of one line.
MAX_NAME = 80
MAX_VALUE = 1000


@dataclass(frozen=True)
class Key:
    """A key of the description file: its stored name, its label in the
    report, what it means, and the other spellings it is known by."""

    name: str
    label: str
    meaning: str
    aliases: Tuple[str, ...] = ()


#: Every key a description file may use, in the order docs/description.rst
#: lists them.  The names are what the result file stores and what the
#: report header reads (``tkperf.report.header``).
KEYS: Tuple[Key, ...] = (
    Key("vendor", "Vendor", "the drive's manufacturer", ("manufacturer", "mfgr", "make")),
    Key("model", "Model", "the model name or number", ("model_number", "model_no", "product")),
    Key("serial", "Serial", "the serial number", ("serial_number", "s/n", "sn")),
    Key("firmware", "Firmware", "the firmware revision",
        ("firmware_version", "firmware_revision", "firmware_rev", "firmware_ver", "fw")),
    Key("capacity", "Rated capacity", "the capacity the drive is sold with, e.g. 960 GB",
        ("rated_capacity", "user_capacity")),
    Key("interface", "Interface", "host interface and protocol, e.g. PCIe 4.0 x4 NVMe 1.4",
        ("transport", "bus")),
    Key("form_factor", "Form factor", "e.g. U.2 15 mm, M.2 2280, 2.5 inch 7 mm", ()),
    Key("nand_type", "NAND type", "the flash, e.g. 176-layer TLC",
        ("nand", "flash", "flash_type", "media", "media_type")),
    Key("controller", "Controller", "the drive's controller", ()),
    Key("write_cache", "Write cache", "WCE or WCD, where tkperf cannot read it from the drive",
        ("cache",)),
    Key("sponsor", "Test sponsor", "who had the test run (SNIA report header)", ("test_sponsor",)),
    Key("tested_by", "Tested by", "who ran the test", ("operator", "test_operator")),
    Key("notes", "Notes", "free text; may be given on several lines, which are joined",
        ("note", "comment", "comments", "remarks")),
)

#: Keys whose lines add up instead of being refused when repeated.
REPEATABLE = frozenset({"notes"})


def _norm(name: str) -> str:
    """'Model Number', 'model-number' and 'MODEL_NUMBER' are one key."""
    return re.sub(r"[\s_.\-]+", "_", name.strip().lower()).strip("_")


_BY_SPELLING: Dict[str, str] = {}
for _k in KEYS:
    for _spelling in (_k.name, _k.label) + _k.aliases:
        _BY_SPELLING[_norm(_spelling)] = _k.name


def key_names() -> List[str]:
    """The stored names of the description file's keys, in documented order."""
    return [k.name for k in KEYS]


def label(name: str) -> str:
    """The report's label of a stored description field (the name itself
    for a field an older tkperf stored under another name)."""
    for k in KEYS:
        if k.name == name:
            return k.label
    return name


@dataclass(frozen=True)
class Description:
    """A read description file: its text (as stored in the result file) and
    its fields by stored key name, in file order."""

    text: str
    fields: Dict[str, str]


def _read_text(path: str, what: str) -> str:
    """The file's text: a regular file of at most MAX_BYTES, UTF-8 (a BOM
    is dropped), no NUL or other control characters; line ends normalised."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"{what} {path}: {(exc.strerror or str(exc)).lower()}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{what} {path}: is a directory, not a text file")
    if not stat.S_ISREG(st.st_mode):
        # A FIFO would block the read, a device could be endless.
        raise UsageError(f"{what} {path}: not a regular file")
    if st.st_size > MAX_BYTES:
        raise UsageError(f"{what} {path}: {st.st_size:,} bytes is more than the "
                         f"{MAX_BYTES // 1024} KiB limit; is it the right file?")
    # Read through no link another user planted, and no FIFO swapped in since the stat.
    data = read_limited(path, what, MAX_BYTES, UsageError)
    for bom, name in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                      (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if data.startswith(bom):
            raise UsageError(f"{what} {path}: {name} text (it starts with a {name} byte-order mark); "
                             "save it as UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        raise UsageError(f"{what} {path}: binary data (a NUL byte at offset {nul}); "
                         "it must be a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_no = data[:exc.start].count(b"\n") + 1
        raise UsageError(f"{what} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line_no}); "
                         "save it as UTF-8") from None
    text = text[1:] if text.startswith("\ufeff") else text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for n, line in enumerate(text.split("\n"), 1):
        for ch in line:
            if ch != "\t" and not ch.isprintable():
                raise UsageError(f"{what} {path}: line {n}: control character U+{ord(ch):04X}; "
                                 "it must be plain text")
    return text


def _lines(text: str, path: str, what: str) -> List[Tuple[int, str, str]]:
    """(line number, name, value) of every 'Name: value' line; blank lines
    and lines starting with '#' are skipped."""
    out = []
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise UsageError(f"{what} {path}: line {n} is not 'Name: value': {_show(line)}")
        if len(name) > MAX_NAME:
            raise UsageError(f"{what} {path}: line {n}: the name is longer than {MAX_NAME} characters")
        if len(value) > MAX_VALUE:
            raise UsageError(f"{what} {path}: line {n}: the value is longer than {MAX_VALUE} characters")
        out.append((n, name, value))
    return out


def _show(line: str, width: int = 40) -> str:
    return repr(line if len(line) <= width else line[:width] + "...")


def read_description(path: Optional[str]) -> Description:
    """The description file at ``path`` (``-dsc``); an empty Description for
    no path.  Keys are matched without regard to case, spaces, '-' or '_',
    and stored under their documented name (``Model Number`` -> ``model``);
    a key given without a value is left out."""
    if not path:
        return Description("", {})
    what = "description file"
    text = _read_text(path, what)
    fields: Dict[str, str] = {}
    first: Dict[str, int] = {}
    for n, name, value in _lines(text, path, what):
        key = _BY_SPELLING.get(_norm(name))
        if key is None:
            raise UsageError(f"{what} {path}: line {n}: unknown key {_show(name)}; known keys: "
                             f"{', '.join(key_names())} (free text goes after 'Notes:')")
        if not value:
            continue
        if key in first and key not in REPEATABLE:
            raise UsageError(f"{what} {path}: line {n}: {label(key)} is given twice "
                             f"(first on line {first[key]})")
        first.setdefault(key, n)
        fields[key] = f"{fields[key]} {value}" if key in fields else value
    return Description(text.strip("\n") + "\n" if text.strip() else "", fields)


def read_features(path: Optional[str]) -> List[Tuple[str, str]]:
    """The feature matrix at ``path`` (``-fm``): (feature, value) in file
    order; an empty list for no path.  Feature names are free; each may
    appear once (compared without regard to case and spacing); a feature
    with no value is refused."""
    if not path:
        return []
    what = "feature file"
    text = _read_text(path, what)
    out: List[Tuple[str, str]] = []
    first: Dict[str, int] = {}
    for n, name, value in _lines(text, path, what):
        if not value:
            raise UsageError(f"{what} {path}: line {n}: feature {_show(name)} has no value")
        norm = " ".join(name.lower().split())
        if norm in first:
            raise UsageError(f"{what} {path}: line {n}: feature {_show(name)} is given twice "
                             f"(first on line {first[norm]})")
        first[norm] = n
        out.append((" ".join(name.split()), value))
    return out
