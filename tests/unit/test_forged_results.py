"""Forged result files (issue 44 item 5): every test type's stored fields
are read through one validating layer (tkperf.model.stored, the schema,
tkperf.model.ranges), so a stored value replaced with text, NaN, a
negative or a huge number, or an unknown element or attribute added, makes
``show``, ``report``, ``export``, ``check``, ``compare`` and ``history``
exit 0 (the test left out, said) or 7 (the file refused), never 70.

The sweep is over a real result file of each of the 16 built-in test
types (tests/data/golden/inputs and examples/example-ssd.xml): every
distinct element and attribute, every data item and param."""
from __future__ import annotations

import copy
import math
import os
import re
from typing import Dict, Iterator, List, Tuple

import pytest
from lxml import etree

from tkperf import store
from tkperf.cli import main
from tkperf.kit.registry import builtins
from tkperf.model import stored
from tkperf.report import checked
from tkperf.store.xml_read import split_tail
from sealing import reseal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "inputs")
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
FILES = [EXAMPLE] + sorted(os.path.join(GOLDEN, f) for f in os.listdir(GOLDEN) if f.endswith(".xml"))
#: What a forger writes in a stored value.
BAD = ("text", "NaN", "-1", "1e308", "99999999999999999999999", "inf", "", "0x10", " 12 ")
OK = (0, 7)
#: ``check`` also answers with its verdicts: a regression (1), not comparable (12).
CHECK_OK = (0, 1, 7, 12)


def _tests() -> Dict[str, Tuple[str, int]]:
    """Each built-in type: (a file holding a test of it, the test's index there)."""
    out: Dict[str, Tuple[str, int]] = {}
    for path in FILES:
        for i, t in enumerate(store.load(path).tests):
            out.setdefault(t.type, (path, i))
    return out


TYPES = _tests()


def test_the_sweep_covers_every_built_in_type():
    assert sorted(TYPES) == sorted(name for name, _value, _ep in builtins()) and len(TYPES) == 16


def _pattern(key: str) -> str:
    return re.sub(r"\d+", "N", key)


def _items(test) -> Iterator[Tuple[str, str, str]]:
    """(where, key, value) of one item per key pattern: data first, then params."""
    seen = set()
    for where, items in (("data", test.data), ("params", test.params)):
        for key, value in items.items():
            if (where, _pattern(key)) not in seen:
                seen.add((where, _pattern(key)))
                yield where, key, value


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_every_stored_number_has_its_range(kind):
    """Every data item and param a type stores as a number is named in the
    layer's tables, so none reaches a reader unchecked."""
    path, i = TYPES[kind]
    test = store.load(path).tests[i]
    missing = [f"{where} {key}={value!r}" for where, key, value in _items(test)
               if _number(value.split(",")[0]) and stored.rule_of(stored.DATA if where == "data" else stored.PARAMS,
                                                                 key) is None]
    assert missing == []


def _in_range(text: str, rule: stored.Rule) -> bool:
    """Whether ``text`` is a number of the rule's kind in its range (the lists' one item)."""
    if rule.kind == "pair":
        return False  # none of the forged values is two numbers
    try:
        value = int(text) if rule.kind in ("whole", "wholes") else float(text)
    except ValueError:
        return False
    return math.isfinite(value) and rule.low <= value <= rule.high


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_the_layer_leaves_out_every_bad_number(kind):
    """Each numeric item replaced by each forged value: the test is left out
    with one line naming the item, or (a value that is its kind after all)
    kept; the rest of the run is kept either way."""
    path, i = TYPES[kind]
    run = store.load(path)
    for where, key, _value in _items(run.tests[i]):
        table = stored.DATA if where == "data" else stored.PARAMS
        rule = stored.rule_of(table, key)
        if rule is None:
            continue
        for bad in BAD:
            forged = copy.deepcopy(run)
            getattr(forged.tests[i], where)[key] = bad
            try:
                stored.check_test(forged.tests[i])
                refused = ""
            except stored.StoredValueError as exc:
                refused = str(exc)
            said = checked.problems(forged)
            label = f"{kind} {where} {key}={bad!r}"
            assert bool(refused) == (bad.strip() != "" and not _in_range(bad, rule)), label
            if refused:  # left out, said in one line naming the item; the rest of the run kept
                assert said == [f"test {run.tests[i].key} is left out: its stored data is not what {kind} "
                                f"writes ({refused})"] and key in refused, label
            if said:
                assert [t.key for t in forged.tests] == [t.key for j, t in enumerate(run.tests) if j != i], label


def _head(path: str) -> Tuple[etree._Element, bytes]:
    head, tail, _ = split_tail(open(path, "rb").read())
    return etree.fromstring(head), tail


def _bytes(root: etree._Element, tail: bytes) -> bytes:
    """The forged file, sealed again as its forger would (tests/lab/sealing.py)."""
    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8") + tail
    return reseal(data) if b"<?tkperf-seal" in tail else data


def _path_of(el: etree._Element) -> str:
    names = []
    while el is not None:
        names.append(el.tag)
        el = el.getparent()
    return "/".join(reversed(names))


def _plan() -> Dict[str, Tuple[List[Tuple[int, str]], List[int]]]:
    """Per file: the (element number, attribute) points it forges and the
    elements it adds to.  Each distinct element path and attribute is forged
    in the smallest file that has it (the format's elements are read by the
    same code whatever the test type); each data item and param pattern of
    a test in every file that holds it (its type's own)."""
    seen = set()
    plan = {}
    for path in sorted(FILES, key=os.path.getsize):
        root, _tail = _head(path)
        points, adds = [], []
        for n, el in enumerate(e for e in root.iter() if isinstance(e.tag, str)):
            where = _path_of(el)
            if where not in seen:
                adds.append(n)
            for attr in el.attrib:
                own = el.tag in ("item", "param") and attr == "value"
                key = (where, attr, path if own else "", _pattern(el.get("name", "")) if own else "")
                if key not in seen:
                    seen.add(key)
                    points.append((n, attr))
            seen.add(where)
        plan[path] = (points, adds)
    return plan


PLAN = _plan()


def _mutants(path: str) -> Iterator[Tuple[str, bytes]]:
    """(label, file bytes) of every forgery of ``path`` (:func:`_plan`): a
    point set to text, NaN, a negative and a huge number; an unknown
    attribute and an unknown element added (made on the parsed tree and
    undone after each)."""
    root, tail = _head(path)
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    points, adds = PLAN[path]
    for n, attr in points:
        el = elements[n]
        kept = el.get(attr)
        for bad in ("text", "NaN", "-1", "1e308"):
            el.set(attr, bad)
            yield f"{_path_of(el)}@{attr}={bad!r}", _bytes(root, tail)
        el.set(attr, kept)
    for n in adds:
        el = elements[n]
        el.set("forged", "1e308")
        yield f"{_path_of(el)} + unknown attribute", _bytes(root, tail)
        del el.attrib["forged"]
        child = etree.SubElement(el, "forged", {"value": "NaN"})
        child.text = "text"
        yield f"{_path_of(el)} + unknown element", _bytes(root, tail)
        el.remove(child)


def _exit(argv: List[str], capsys) -> int:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    _exit.err = err  # type: ignore[attr-defined]
    return code


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_every_forgery_of_every_field_shows_or_is_refused(path, tmp_path, capsys):
    """``show --json`` (the cheapest reader of every field) of every forgery
    of every distinct element, attribute, data item and param: 0 or 7."""
    target = tmp_path / "forged.xml"
    codes: Dict[Tuple[int, bool], int] = {}
    for label, data in _mutants(path):
        target.write_bytes(data)
        code = _exit(["show", str(target), "--json"], capsys)
        assert code in OK, label
        left_out = code == 0 and " is left out: " in _exit.err  # type: ignore[attr-defined]
        codes[code, left_out] = codes.get((code, left_out), 0) + 1
    assert codes.get((0, True))  # forged numbers of the type's own: the test left out, said
    if path == min(FILES, key=os.path.getsize):
        assert codes.get((7, False))  # the format's elements: the file refused


def _only(path: str, i: int) -> Tuple[etree._Element, bytes]:
    """The file's head with its ``i``-th test alone (the others and their
    series rows dropped: example-ssd.xml holds four types), and its tail."""
    root, tail = _head(path)
    tests = root.findall("test")
    keep = {decl.get("id") for decl in tests[i].iter("series")}
    for j, t in enumerate(tests):
        if j != i:
            root.remove(t)
    ids = {k.encode() for k in keep if k}
    rows = [line for line in tail.split(b"\n") if len(line.split()) > 1 and line.split()[1] in ids]
    return root, (b"\n" + b"\n".join(rows) + b"\n") if rows else b"\n"


def _forged_in_range(path: str, i: int) -> bytes:
    """The test's every param and data item forged at once, but past the
    layer: text where text is stored (markup, a control character, NaN,
    a number), each number at the top of its range."""
    root, tail = _only(path, i)
    test = root.findall("test")[0]
    texts = ["<b>NaN</b>", "-1", "1e308", "\x1b[2Jtext", "inf"]
    for n, el in enumerate(test.iter("item", "param")):
        table = stored.DATA if el.tag == "item" else stored.PARAMS
        rule = stored.rule_of(table, el.get("name", ""))
        if rule is None:
            el.set("value", texts[n % len(texts)].replace("\x1b", ""))
        elif rule.kind == "pair":
            el.set("value", f"{rule.high!r},{rule.high!r}")
        else:
            el.set("value", str(int(rule.high)) if rule.kind == "whole" else repr(rule.high))
    return _bytes(root, tail)


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_every_command_reads_a_forged_test(kind, tmp_path, capsys):
    """Every stored field of the test forged at once within the layer's
    ranges: show, report, export, check, compare and history all exit 0 or 7."""
    path, i = TYPES[kind]
    forged = tmp_path / "forged.xml"
    forged.write_bytes(_forged_in_range(path, i))
    bad = tmp_path / "bad.xml"
    root, tail = _only(path, i)
    for el in root.findall("test")[0].iter("item", "param"):
        table = stored.DATA if el.tag == "item" else stored.PARAMS
        if stored.rule_of(table, el.get("name", "")) is not None:
            el.set("value", "NaN")
    bad.write_bytes(_bytes(root, tail))
    for f in (str(forged), str(bad)):
        for argv in (["show", f], ["show", f, "--json"], ["export", f, "--csv", str(tmp_path / "csv")],
                     ["check", f, "--baseline", path], ["check", path, "--baseline", f, "--json"],
                     ["history", f, path, "--json"]):
            assert _exit(argv, capsys) in (CHECK_OK if argv[0] == "check" else OK), argv
    assert _exit(["report", str(forged), "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"], capsys) in OK
    assert _exit(["compare", str(bad), path, "--format", "rst", "--outdir", str(tmp_path / "c")], capsys) in OK
