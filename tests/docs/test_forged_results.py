"""Forged result files (issue 44 item 5): every test type's stored fields
are read through one validating layer (tkperf.model.stored, the schema,
tkperf.model.ranges), so a stored value replaced with text, NaN, a
negative or a huge number, or an unknown element or attribute added, makes
``show``, ``report``, ``export``, ``check``, ``compare`` and ``history``
exit 0 (the test left out, said) or 7 (the file refused), never 70.

The sweep is over a real result file of each of the 16 built-in test
types (tests/data/golden/inputs and examples/example-ssd.xml): every
distinct element and attribute, every data item and param.  Issue 54 item
4 extends it to every other stored value: each run option (a number out of
its range, text, NaN, 5,000 digits: the file refused, exit 7, naming the
option), each fact tkperf reads back (an emulated SSD's late replies, the
runs that shared the host, a test host, an imported file's record: the
fact left out, said, exit 0) and an exact replay's counters and
block-layer counters (the test left out, said)."""
from __future__ import annotations

import copy
import json
import math
import os
import re
from typing import Dict, Iterator, List, Tuple

import pytest
from lxml import etree

from sealing import reseal
from tkperf import store
from tkperf.cli import main
from tkperf.kit.registry import builtins
from tkperf.model import stored
from tkperf.report import checked
from tkperf.store.xml_read import split_tail

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "data", "golden", "inputs")
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
FILES = [EXAMPLE] + sorted(os.path.join(GOLDEN, f) for f in os.listdir(GOLDEN) if f.endswith(".xml"))
#: What a forger writes in a stored value.
BAD = ("text", "NaN", "-1", "1e308", "99999999999999999999999", "inf", "", "0x10", " 12 ", "1" * 5000, "\u00b2")
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
    series rows dropped: example-ssd.xml holds four types), and its tail
    with the closing record kept where it stood, so :func:`_bytes` seals
    the forged file again (without it the file is refused as cut short)."""
    root, tail = _head(path)
    tests = root.findall("test")
    keep = {decl.get("id") for decl in tests[i].iter("series")}
    for j, t in enumerate(tests):
        if j != i:
            root.remove(t)
    ids = {k.encode() for k in keep if k}
    rows = [line for line in tail.split(b"\n") if line.startswith(b"<?tkperf-seal ")
            or (len(line.split()) > 1 and line.split()[1] in ids)]
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


# --- issue 54 item 4: an exact replay's counters ------------------------------------------------

#: What an exact replay stores (realworld/exact.py, blockstats.py: its counters and its trace, replay.py's plan).
EXACT_DATA = {"phase.1": "exact", "exact.reads": "14000", "exact.writes": "6000", "exact.flushes": "12",
              "exact.discards": "3", "exact.moved": "5", "exact.dropped": "1", "exact.span": "1073741824",
              "exact.length_us": "6000000", "exact.iodepth": "32", "exact.timing": "measured",
              "exact.lag_max_us": "52000", "exact.lag_p99_us": "31000", "exact.zero_us": "190000",
              "exact.step.1.captured": "20000", "exact.step.1.replayed": "19990", "exact.step.1.edge": "40",
              "block.1.ios": "20000", "block.1.busy_ms": "30000", "block.1.flushes": "12", "block.1.flush_ms": "4",
              "block.1.discards": "3", "block.1.discard_ms": "2",
              "trace.1.ios": "20000", "trace.1.busy_us": "29000000", "trace.1.lat_mean_us": "1450.5",
              "trace.1.lat_p99_us": "4100.25", "trace.1.lat_max_us": "9000.0", "trace.1.flushes": "12",
              "trace.1.discards": "3", "trace.1.lost": "0"}
EXACT_PARAMS = {"mode": "exact", "iodepth": "32", "iolog": "golden.iolog", "span": "1073741824",
                "iolog_ios": "20000", "iolog_flushes": "12", "iolog_discards": "3", "capture_duration": "6.0",
                "capture_lat_mean_us": "1500.0", "capture_lat_p99_us": "4000.0", "capture_flushes": "12",
                "capture_fua": "0", "capture_discards": "3"}


def _exact_replay(data: Dict[str, str] = EXACT_DATA, params: Dict[str, str] = EXACT_PARAMS) -> bytes:
    """The golden replay made an exact one (one round, the counters an exact
    replay stores, each as given), sealed."""
    path, i = TYPES["replay"]
    root, tail = _only(path, i)
    test = root.find("test")
    for r in test.findall("round")[1:]:
        test.remove(r)
    p, d = test.find("params"), test.find("data")
    for el in list(p):
        if el.get("name").startswith(("step.", "stream.", "share.")) or el.get("name") in ("steps", "step_time",
                                                                                            "mode"):
            p.remove(el)
    for el in list(d):
        d.remove(el)
    for parent, tag, items in ((p, "param", params), (d, "item", data)):
        for k, v in items.items():
            etree.SubElement(parent, tag, name=k, value=v)
    return _bytes(root, tail)


def test_an_exact_replay_stores_only_numbers_the_tables_name(tmp_path, capsys):
    target = tmp_path / "exact.xml"
    target.write_bytes(_exact_replay())
    test = store.load(str(target)).tests[0]
    missing = [f"{where} {key}" for where, key, value in _items(test)
               if _number(value) and stored.rule_of(stored.DATA if where == "data" else stored.PARAMS, key) is None]
    assert missing == []
    assert _exit(["show", str(target)], capsys) == 0 and " is left out" not in _exit.err  # type: ignore[attr-defined]


def test_every_exact_replay_counter_is_checked(tmp_path, capsys):
    """Each counter of an exact replay (the captured I/Os, flushes and
    discards, the block layer's counters around the replay, its length)
    forged: the test is left out, said, whatever reads it (a negative
    block-layer count too); show and report exit 0."""
    target = tmp_path / "exact.xml"
    for key in sorted({**EXACT_DATA, **EXACT_PARAMS}.keys() - {"phase.1", "mode", "iolog", "exact.timing"}):
        for bad in ("-1", "text", "NaN", "1" * 5000, "1e999", "\u00b2"):
            data, params = dict(EXACT_DATA), dict(EXACT_PARAMS)
            (data if key in data else params)[key] = bad
            target.write_bytes(_exact_replay(data, params))
            for argv in (["show", str(target), "--json"],
                         ["report", str(target), "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"]):
                assert _exit(argv, capsys) == 0, (key, bad, argv)
                err = _exit.err  # type: ignore[attr-defined]
                assert "test replay is left out" in err and key in err, (key, bad, argv, err)


# --- issue 54 item 4: the facts tkperf reads back -------------------------------------------------

EMULATED = os.path.join(ROOT, "examples", "example-emulated.xml")
#: Facts no example holds, as tkperf writes them (engine/multi.py, engine/opening.py, store/legacy).
MORE_FACTS = {"host_sharing": {"runs": 2, "host_cpus": 4, "targets": [{"name": "a", "device": "/dev/loop1"},
                                                                     {"name": "b", "device": "/dev/loop2"}]},
              "remote": {"host": "testhost", "fio_host": "testhost", "fio_port": 8765}}
#: What a forger writes in a fact, as JSON text (Python's json reads NaN,
#: Infinity and 1e999 as floats, and 5,000 digits as an int before 3.11).
FORGED = ('"text"', "NaN", "Infinity", "-1", "1" * 5000, "1e999", "null", "[]", "{}", "true")


def _value(token: str) -> object:
    return 10 ** 4999 if token == "1" * 5000 else json.loads(token)


def _facts_base() -> Tuple[etree._Element, bytes, dict]:
    """The emulated SSD's example with every fact of stored.FACTS: its own,
    the two above, and an imported file's record (a TKperf 2.2 import's)."""
    root, tail = _head(EMULATED)
    facts = json.loads(root.findtext("facts"))
    facts.update(copy.deepcopy(MORE_FACTS))
    facts["imported"] = store.load(os.path.join(ROOT, "tests", "data", "tkperf2", "ssd-2.2-apacer.xml")).facts[
        "imported"]
    assert sorted(k for k in stored.FACTS if k in facts) == sorted(stored.FACTS)
    return root, tail, facts


def _fact_points(facts: dict) -> List[Tuple[Tuple[object, ...], object]]:
    """(path, spec) of every member of a fact stored.FACTS names that the
    base holds, objects and lists too (their first item, one member of a map)."""
    out: List[Tuple[Tuple[object, ...], object]] = []

    def walk(value: object, spec: object, path: Tuple[object, ...]) -> None:
        out.append((path, spec))
        inner = spec.spec if isinstance(spec, stored.Maybe) else spec
        if isinstance(inner, stored.Many) and isinstance(value, list) and value:
            walk(value[0], inner.spec, path + (0,))
        elif isinstance(inner, stored.Each) and isinstance(value, dict) and value:
            first = next(iter(value))
            walk(value[first], inner.spec, path + (first,))
        elif isinstance(inner, dict) and isinstance(value, dict):
            for k, part in inner.items():
                if k in value:
                    walk(value[k], part, path + (k,))

    for key, spec in stored.FACTS.items():
        walk(facts[key], spec, (key,))
    return out


def _fits(spec: object, value: object) -> bool:
    """Whether tkperf writes ``value`` where ``spec`` stands (the forged lists and objects are empty)."""
    if isinstance(spec, stored.Maybe):
        return value is None or _fits(spec.spec, value)
    if isinstance(spec, stored.Text):
        return isinstance(value, str)
    if isinstance(spec, stored.Switch):
        return isinstance(value, bool)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(spec, stored.Scalar):
        return isinstance(value, (str, bool)) or (number and math.isfinite(value) and abs(value) < 2 ** 63)
    if isinstance(spec, stored.Rule):
        whole = isinstance(value, int) if spec.kind == "whole" else number
        return number and whole and math.isfinite(value) and spec.low <= value <= spec.high
    return value == ([] if isinstance(spec, stored.Many) else {})


def _forge_facts(root: etree._Element, tail: bytes, facts: dict, paths, token: str) -> bytes:
    doc = copy.deepcopy(facts)
    for path in paths:
        obj = doc
        for step in path[:-1]:
            obj = obj[step]
        obj[path[-1]] = "@@FORGED@@"
    element = root.find("facts")
    kept = element.text
    element.text = json.dumps(doc).replace('"@@FORGED@@"', token)
    try:
        return _bytes(root, tail)
    finally:
        element.text = kept


def test_every_fact_tkperf_reads_is_checked(tmp_path, capsys):
    """Each member of each fact tkperf reads back, forged with text, NaN,
    infinities, -1, 5,000 digits, null, an empty list or object: ``show``
    and ``show --json`` exit 0 with the fact left out and said when the
    value is not what tkperf writes there, kept when it is; 7 only when
    Python's json itself refuses the number (5,000 digits, Python 3.11)."""
    root, tail, facts = _facts_base()
    target = tmp_path / "forged.xml"
    points = _fact_points(facts)
    assert len(points) > 40
    for path, spec in points:
        for token in FORGED:
            target.write_bytes(_forge_facts(root, tail, facts, [path], token))
            label = f"{'.'.join(map(str, path))}={token[:10]}"
            for argv in (["show", str(target), "--json"], ["show", str(target)]):
                code = _exit(argv, capsys)
                err = _exit.err  # type: ignore[attr-defined]
                if code == 7:
                    assert token == "1" * 5000 and "facts are not JSON" in err, (label, err)
                    continue
                assert code == 0, (label, argv)
                assert (f"fact {path[0]} is left out" in err) == (not _fits(spec, _value(token))), (label, err)


@pytest.mark.parametrize("tokens", [('"text"',), ("NaN", "1" * 5000), ("Infinity",), ("-1", "[]")],
                         ids=("text", "NaN-digits", "Infinity", "-1-list"))
def test_every_command_reads_forged_facts(tokens, tmp_path, capsys):
    """Every member of every fact forged at once: ``show``, ``report`` and
    ``compare`` exit 0 (each fact left out, said) or 7, never 70."""
    root, tail, facts = _facts_base()
    paths = [path for path, _spec in _fact_points(facts)]
    leaves = [p for p in paths if not any(q[:len(p)] == p and q != p for q in paths)]
    target = tmp_path / "forged.xml"
    whole = tmp_path / "whole.xml"
    whole.write_bytes(_forge_facts(root, tail, facts, [], '""'))
    for token in tokens:
        target.write_bytes(_forge_facts(root, tail, facts, leaves, token))
        for argv in (["show", str(target)], ["show", str(target), "--json"],
                     ["report", str(target), "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"],
                     ["compare", str(whole), str(target), "--json", "--format", "rst", "--outdir",
                      str(tmp_path / "c")]):
            code = _exit(argv, capsys)
            assert code in OK, (token[:10], argv)
            if code == 0:  # text is what most members are: the numbers' facts go whatever the token
                assert "fact simdrive_host is left out" in _exit.err, argv  # type: ignore[attr-defined]


# --- issue 54 item 4: the run's options ----------------------------------------------------------

#: What a forger writes in an option.
FORGED_OPTIONS = ("text", "NaN", "-1", "1" * 5000, "1e999", "\u00b2")


def _option_plan() -> Dict[str, List[str]]:
    """Per file, the options it forges: each option name once, in the smallest file that holds it."""
    seen, plan = set(), {}
    for path in sorted(FILES + [EMULATED], key=os.path.getsize):
        names = [k for k in store.load(path).options if k not in seen]
        seen.update(names)
        plan[path] = names
    return plan


OPTION_PLAN = _option_plan()


def _refused(parse, text: str) -> bool:
    try:
        parse(text)
    except Exception:  # noqa: BLE001 - whatever a type's parser raises
        return True
    return False


@pytest.mark.parametrize("path", sorted(OPTION_PLAN), ids=os.path.basename)
def test_every_option_is_checked(path, tmp_path, capsys):
    """Each run option forged with text, NaN, -1, 5,000 digits, an infinity
    and a superscript digit: every command exits 0 or 7; a number (test
    range, active range, segments, window ...) or a switch that is not one
    refuses the file in one line naming the option; a test type's option,
    when its own parser refuses the value; options that are text show."""
    root, tail = _head(path)
    parsers = checked.option_parsers()
    target = tmp_path / "forged.xml"
    for option in root.find("options").iter("option"):
        name, kept = option.get("name"), option.get("value")
        if name not in OPTION_PLAN[path]:
            continue
        for bad in FORGED_OPTIONS:
            option.set("value", bad)
            target.write_bytes(_bytes(root, tail))
            label = f"{name}={bad[:10]!r}"
            code = _exit(["show", str(target), "--json"], capsys)
            err = _exit.err  # type: ignore[attr-defined]
            assert code in OK, label
            if code == 7:
                assert err.count("\n") == 1 and f"option {name} is" in err and len(err) < 1000, (label, err)
            if name in stored.OPTIONS or name in stored.SWITCHES:
                assert code == 7, label
            elif name in parsers:  # its type's own parser decides
                assert code == (7 if _refused(parsers[name], bad) else 0), label
            else:
                assert code == 0, label
            if bad == "1" * 5000:  # the slower readers too (the digits that made report exit 70)
                for argv in (["show", str(target)],
                             ["report", str(target), "--format", "rst", "--outdir", str(tmp_path / "r"), "-q"],
                             ["compare", str(target), path, "--format", "rst", "--outdir", str(tmp_path / "c")]):
                    assert _exit(argv, capsys) == code, (label, argv)
        option.set("value", kept)
