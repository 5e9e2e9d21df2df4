"""``tkperf export --csv`` over a hostile result file (issue 32, class 6):
every row a CSV reader sees has the header's number of cells, and no cell
starts a formula (OWASP's CSV injection rules)."""
import csv
import itertools
import os
import unicodedata
from dataclasses import replace

from tkperf import store
from tkperf.cli import export, main

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
FULL = os.path.join(EXAMPLES, "example-full.xml")

#: Texts an attacker or a careless lab puts into a result file.
HOSTILE = ["a\rb", "a\nb", "a\r\nb", "=cmd|' /C calc'!A0", "\t=1+1", " @SUM(1)", "+1", "-2+3",
           "@x", "\r=1", "\u00a0=1", "\u200b+1", " \t -1", 'say "=1"', "x,=1", "=1\r=2", "\n=1"]
FORMULA = ("=", "+", "-", "@")


def _blank(ch):
    """White space, a control or format character (independent of the code under test)."""
    return ch.isspace() or unicodedata.category(ch)[0] in ("C", "Z")


def _starts_formula(cell):
    """What a spreadsheet would take for a formula: a formula character
    first, also behind blanks and control characters, or TAB or CR first."""
    if cell[:1] in ("\t", "\r"):
        return True
    stripped = cell
    while stripped and _blank(stripped[0]):
        stripped = stripped[1:]
    return stripped[:1] in FORMULA


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _hostile_run():
    run = store.load(FULL)
    texts = itertools.cycle(HOSTILE)
    for t in run.tests:
        t.key, t.type = next(texts), next(texts)
        t.rounds = [replace(r, started=next(texts), workloads=tuple(
            replace(w, name=next(texts), rw=next(texts),
                    read=replace(w.read, percentiles=tuple((next(texts), v) for _, v in w.read.percentiles)))
            for w in r.workloads)) for r in t.rounds]
    return run


def _check_tables(outdir):
    seen = 0
    for kind in export.KINDS:
        with open(os.path.join(outdir, f"{kind}.csv"), newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        header, body = rows[0], rows[1:]
        assert body, kind
        for row in rows:
            assert len(row) == len(header), (kind, row)
            for cell in row:
                assert _is_number(cell) or not _starts_formula(cell), (kind, cell)
                seen += 1
    return seen


def test_every_cell_of_every_table_is_quoted_and_never_a_formula(tmp_path):
    run = _hostile_run()
    export.export_csv(run, str(tmp_path))
    assert _check_tables(tmp_path) > 1000
    with open(tmp_path / "rounds.csv", newline="", encoding="utf-8") as fh:
        first = list(csv.DictReader(fh))[0]
    # the text survives, only an apostrophe in front: a reader sees the CR inside the cell
    assert first["test"] == "a\rb" and first["type"] == "a\nb"


def test_export_of_a_hostile_file_written_to_disk(tmp_path, capsys):
    run = _hostile_run()
    # series and column names: words of letters, digits and _.:+@- (the format's rule)
    for t, kept in zip(run.tests, store.load(FULL).tests):
        t.type = kept.type  # an XML name (the format's rule)
        if t.series:  # a series' id is its test's key and its name: a word too
            t.key = f"-{len(t.rounds)}+{id(t) % 97}"
        for name in list(t.series):
            s = t.series.pop(name)
            s.name = "@SUM"
            t.series["@SUM"] = s
    run.description = "=cmd|' /C calc'!A0\r\n@SUM(1)"
    run.device = replace(run.device, model="\t=1+1", serial=" @SUM(1)\r", vendor="\r=2")
    path = tmp_path / "hostile.xml"
    store.save(run, str(path))
    assert store.load(str(path)).tests[0].key == "a\rb"  # the file keeps the CR
    assert main(["export", str(path), "--csv", str(tmp_path / "csv")]) == 0
    capsys.readouterr()
    assert _check_tables(tmp_path / "csv") > 1000
    with open(tmp_path / "csv" / "intervals.csv", newline="", encoding="utf-8") as fh:
        assert {r["series"] for r in csv.DictReader(fh)} == {"'@SUM"}


def test_a_header_cell_from_the_file_is_neutralised_too():
    assert export.workload_header(["+1"])[-1] == "write_p+1_us"
    assert export._text("+iops") == "'+iops"


def test_the_rule_cell_by_cell():
    for text in HOSTILE:
        if _starts_formula(text):
            assert export._text(text) == "'" + text
    for plain in ("iops", "rnd 4k", "a=b", "x-1", " plain", ""):
        assert export._text(plain) == plain
    assert export._csv(["a", "b"], [["x\ry", "1"]]) == b'a,b\n"x\ry",1\n'


def test_negative_numbers_tkperf_writes_stay_numbers():
    assert export._number(-2.5) == "-2.5" and export._number(-3) == "-3"
    assert export._number(float("nan")) == "" and export._number(float("-inf")) == ""
