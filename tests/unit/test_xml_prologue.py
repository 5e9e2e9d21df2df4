"""A DOCTYPE is refused wherever it stands and in any encoding (issue 32,
class 5): behind a comment, a processing instruction, a byte order mark and
whitespace, in UTF-16 (either byte order, with a BOM or only an encoding
declaration) -- through every command that reads a result file.

The hostile files are made here from the shipped example result (a real
run) and a real original-TKperf file (tests/data/tkperf2/), so that the only
thing wrong with them is the DOCTYPE and what it declares."""
import os

import pytest

from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_RESULT_FILE, ResultFileError
from tkperf.store.fileformat import has_doctype

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(os.path.dirname(HERE), "examples", "example-ssd.xml")
ARCHIVE = os.path.join(HERE, "data", "tkperf2", "ssd-2.2-apacer.xml")
MARK = "PWNED-ENTITY-TEXT"
DECL = "<?xml version='1.0' encoding='UTF-8'?>"

LAUGHS = "".join([f'<!ENTITY e0 "{MARK}">'] + [
    f'<!ENTITY e{i} "' + f"&e{i - 1};" * 10 + '">' for i in range(1, 10)])
DTDS = {
    "internal": f'<!DOCTYPE tkperf [<!ENTITY e "{MARK}">]>',
    "laughs": f"<!DOCTYPE tkperf [{LAUGHS}<!ENTITY e \"&e9;\">]>",
    "passwd": '<!DOCTYPE tkperf [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
    "parameter": ('<!DOCTYPE tkperf [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;'
                  f'<!ENTITY e "{MARK}">]>'),
}


def _body(text: str) -> str:
    """``text`` (a whole document) without its XML declaration, with the
    entity ``&e;`` in the run's description and the host name."""
    body = text.split("?>", 1)[1] if text.startswith("<?xml") else text
    body = body.replace("<text></text>", "<text>&e;</text>", 1)
    return body.replace('hostname="vm"', 'hostname="&e;"', 1)


def _variants(doc: str):
    """name -> bytes: the DOCTYPE kinds behind every prologue."""
    out = {}
    body = _body(doc)
    for kind, dtd in DTDS.items():
        out[f"comment-{kind}"] = (f"{DECL}\n<!-- made by tkperf -->\n{dtd}{body}").encode()
        out[f"pi-{kind}"] = (f"{DECL}\n<?xml-stylesheet href='x.xsl'?>\n{dtd}{body}").encode()
    out["bom-whitespace"] = b"\xef\xbb\xbf" + f"\n  \n{DTDS['internal']}{body}".encode()
    out["comment-lookalike"] = (f"{DECL}<!-- <a b='c'> -->{DTDS['internal']}{body}").encode()
    utf16 = f"<?xml version='1.0' encoding='UTF-16'?>\n<!-- c -->\n{DTDS['internal']}{body}"
    out["utf16le-bom"] = utf16.encode("utf-16")  # the platform's order, with its BOM
    out["utf16be-bom"] = b"\xfe\xff" + utf16.encode("utf-16-be")
    out["utf16le-decl-only"] = utf16.encode("utf-16-le")
    out["utf16-no-decl"] = b"\xff\xfe" + f"{DTDS['internal']}{body}".encode("utf-16-le")
    out["utf32-bom"] = f"{DTDS['internal']}{body}".encode("utf-32")
    return out


with open(EXAMPLE, encoding="utf-8") as _fh:
    RESULTS = _variants(_fh.read())
with open(ARCHIVE, encoding="utf-8") as _fh:
    ARCHIVES = {f"tkperf2-{k}": v for k, v in _variants(_fh.read()).items()
                if k in ("comment-internal", "pi-passwd", "utf16le-bom", "comment-lookalike")}
FILES = {**RESULTS, **ARCHIVES}


def _commands(bad: str, good: str, out: str):
    return {
        "show": ["show", bad],
        "show-json": ["show", "--json", bad],
        "report": ["report", bad, "--outdir", out, "--quiet"],
        "compare": ["compare", good, bad, "--outdir", out, "--quiet"],
        "check": ["check", bad, "--baseline", good],
        "check-baseline": ["check", good, "--baseline", bad],
        "history": ["history", bad, "--outdir", out, "--no-plots"],
        "import": ["import", bad, "-o", os.path.join(out, "new.tkperf.xml")],
        "export": ["export", bad, "--csv", out],
        "resume": ["resume", bad, "--yes"],
    }


COMMANDS = list(_commands("b", "g", "o"))


def _tree(root):
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files + ["/"])


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_parser_finds_the_doctype(name):
    data = FILES[name]
    if not name.endswith("utf32-bom"):  # libxml2 does not read UTF-32: not XML at all
        assert has_doctype(data), name
    with pytest.raises(ResultFileError, match="DOCTYPE" if "utf32" not in name else "not valid XML"):
        store.loads(data, "x.xml")


def test_a_plain_result_and_archive_have_none():
    for path in (EXAMPLE, ARCHIVE):
        with open(path, "rb") as fh:
            assert not has_doctype(fh.read())
    # The same document re-encoded without a DOCTYPE is refused for its encoding, not a DOCTYPE:
    # tkperf reads the UTF-8 it writes, whose bytes (end tag, closing record) it can check.
    with open(EXAMPLE, encoding="utf-8") as fh:
        text = fh.read().replace("encoding='UTF-8'", "encoding='UTF-16'", 1)
    with pytest.raises(ResultFileError, match="not in UTF-8") as info:
        store.loads(text.encode("utf-16"), "x.xml")
    assert "DOCTYPE" not in str(info.value)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", sorted(FILES))
def test_every_command_refuses_it(command, name, tmp_path, capsys):
    if command == "import" and not name.startswith("tkperf2-") and "utf16" not in name \
            and name not in ("comment-internal", "pi-passwd", "comment-laughs"):
        pytest.skip("import is covered by the archives and a few result-file variants")
    work = tmp_path / "work"
    work.mkdir()
    # resume wants the file under its run's name; the others take any name.
    bad = work / ("example-ssd.xml" if not name.startswith("tkperf2-") else "apacer.xml")
    bad.write_bytes(FILES[name])
    good = tmp_path / "good.xml"
    good.write_bytes(open(EXAMPLE, "rb").read())
    out = tmp_path / "out"
    before = _tree(tmp_path)
    rc = main(_commands(str(bad), str(good), str(out))[command])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert rc == EXIT_RESULT_FILE, text
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tkperf: error: "), text
    expected = "not valid XML" if name.endswith("utf32-bom") else "has a DOCTYPE"
    assert expected in lines[0] and str(bad) in lines[0], text
    assert "Traceback" not in text and MARK not in text and "root:x:0" not in text
    assert _tree(tmp_path) == before  # nothing written: no report, CSV, index or import
    assert bad.read_bytes() == FILES[name]
