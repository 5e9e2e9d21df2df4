"""Text from elsewhere (description and feature files, device identify
strings, result files) is data in every output: never a link other than
http(s), a directive, a role, a substitution, a reference or raw markup in
the reST, HTML and PDF; never a terminal control sequence on a terminal."""
import html as html_mod
import io
import re
import zlib
from dataclasses import replace

import pytest

from test_store import sample_run
from tkperf.model.results import Event
from tkperf.render import documents, rst
from tkperf.report.report import build_report
from tkperf.target import description

#: Each a way docutils would otherwise make a link, a reference or markup.
HOSTILE = [
    "javascript:alert(document.cookie)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/shadow",
    "vbscript:msgbox(1)",
    "mailto:victim@example.org",
    "admin@evil.example",
    "(javascript:alert(1))",
    "x_javascript:alert(2)",
    "<javascript:alert(3)>",
    "`click <javascript:alert(4)>`_",
    "tel:+15551234",
    "news:comp.risks",
    ":raw-html:`<script>alert(5)</script>`",
    "|sub| [1]_ [#]_ [cite]_ name_ `target`_ _`inline`",
    ".. raw:: html",
    "..  _t: javascript:alert(6)",
    "__ javascript:alert(7)",
    "ends in a literal block::",
    '<a href="javascript:alert(9)">reportlab markup</a> <link href="file:///etc/shadow">x</link>',
    "&lt;a href=&quot;javascript:alert(10)&quot;&gt;entities&lt;/a&gt; <script>alert(11)</script>",
    "http://plain.example/ok",
]


def _files(tmp_path):
    dsc = tmp_path / "dsc.txt"
    keys = ["Vendor", "Model", "Serial", "Firmware", "Capacity", "Interface", "Form factor",
            "NAND type", "Controller", "Test sponsor", "Tested by"]
    dsc.write_text("".join(f"{k}: {h}\n" for k, h in zip(keys, HOSTILE))
                   + "".join(f"Notes: {h}\n" for h in HOSTILE), encoding="utf-8")
    fm = tmp_path / "fm.txt"
    fm.write_text("".join(f"Feature {i}: {h}\n" for i, h in enumerate(HOSTILE)), encoding="utf-8")
    return description.read_description(str(dsc)), description.read_features(str(fm))


def _hostile_run(tmp_path):
    desc, features = _files(tmp_path)
    run = sample_run()
    run.name = "hostile"
    run.description, run.description_fields, run.features = desc.text, dict(desc.fields), features
    run.device = replace(run.device, model="javascript:alert(8) admin@evil.example", serial="data:text/html,x")
    run.events.append(Event("2026-11-22T03:05:00+00:00", "warning", "file:///etc/passwd vbscript:x", "iops", 1))
    return run


def _uris_in_pdf(data: bytes):
    """Every /URI of the PDF, also inside compressed object streams."""
    chunks = [data]
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
        try:
            chunks.append(zlib.decompress(m.group(1)))
        except zlib.error:
            pass
    return [u for c in chunks for u in re.findall(rb"/URI\s*\((.*?)\)", c, re.S)]


def test_no_link_but_http_from_untrusted_text_in_any_format(tmp_path):
    run = _hostile_run(tmp_path)
    out = tmp_path / "out"
    result = build_report(run, str(out), ("rst", "html", "pdf"))
    text = (out / "hostile.rst").read_text(encoding="utf-8")
    html = (out / "hostile.html").read_text(encoding="utf-8")
    pdf = (out / "hostile.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    # The reST parses to a tree without a link, target, substitution, footnote,
    # citation or raw node from the text (only the writer's PDF page breaks).
    from docutils import nodes
    from docutils.core import publish_doctree
    tree = publish_doctree(text, settings_overrides={"report_level": 5, "_disable_config": True,
                                                     "file_insertion_enabled": False})
    refs = [r.get("refuri") for r in tree.findall(nodes.reference)]
    assert all(u is None or u.startswith(("http://", "https://")) for u in refs), refs
    # the one target is the report's own: the deviation list the test headers link to
    assert [t.get("refid") for t in tree.findall(nodes.target)] == ["deviations"]
    assert {r.get("refid") for r in tree.findall(nodes.reference) if r.get("refid")} <= {"deviations"}
    for kind in (nodes.substitution_reference, nodes.footnote_reference,
                 nodes.citation_reference, nodes.problematic):
        assert not list(tree.findall(kind)), kind
    assert {r.get("format") for r in tree.findall(nodes.raw)} <= {"pdf"}
    assert all("FrameBreak" in r.astext() for r in tree.findall(nodes.raw))
    # HTML: every href is http(s) or inside the document; no script.
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h.startswith(("http://", "https://", "#")) for h in hrefs), hrefs
    assert "<script" not in html.lower()
    # The hostile text is shown, as text.
    assert "javascript:alert(document.cookie)" in html
    assert "admin@evil.example" in html_mod.unescape(html)
    # PDF: every link annotation's URI is http(s).
    uris = _uris_in_pdf(pdf)
    assert all(u.startswith((b"http://", b"https://")) for u in uris), uris
    assert not [w for w in result.warnings if "made plain text" in w], result.warnings


@pytest.mark.parametrize("text", HOSTILE)
def test_each_hostile_line_escaped_parses_to_plain_text(text):
    # docutils itself, without the tree check behind the escaping.
    from docutils.core import publish_doctree
    warnings = io.StringIO()
    tree = publish_doctree(rst.rst_escape(text) + "\n", settings_overrides={
        "warning_stream": warnings, "_disable_config": True, "file_insertion_enabled": False})
    assert tree.astext().strip() == " ".join(text.split()), tree.astext()
    assert [n.tagname for n in tree.findall() if n.tagname not in ("document", "paragraph", "#text")] == []
    assert not warnings.getvalue()


def test_the_tree_check_unlinks_what_escaping_missed():
    # reST written by hand (not through rst_escape): the second guard.
    tree, warnings = documents.parse_rst("javascript:alert(1) and x@y.example and http://ok.example\n",
                                         "x.rst")
    from docutils import nodes
    assert [r["refuri"] for r in tree.findall(nodes.reference)] == ["http://ok.example"]
    assert len([w for w in warnings if "made plain text" in w]) == 2


# --- terminals -------------------------------------------------------------------

import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from tkperf import store  # noqa: E402
from tkperf.cli import main  # noqa: E402
from tkperf.untrusted import for_terminal  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "example-ssd.xml")
#: Anything a terminal acts on instead of showing: C0 but newline and tab,
#: DEL, C1 (0x9b is an 8-bit CSI), bidirectional overrides and isolates.
ACTS_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What a result file can carry in XML 1.0 (ESC and BEL it cannot).
HOSTILE_MODEL = "EVIL\r\u009b2J\u009d0;retitled\u009c\u202eTXT\u0085\u0090x"


def _hostile_result(tmp_path, name="evil", firmware="F1"):
    run = store.load(EXAMPLE)
    run.name = name
    run.device = replace(run.device, model=HOSTILE_MODEL, serial="S\u009b31m\u202e", firmware=firmware)
    run.events.append(Event("2026-11-22T03:05:00+00:00", "warning", "bad\r\u009bK hidden", "", 0))
    path = tmp_path / f"{name}.xml"
    store.save(run, str(path))
    return path


def test_saving_a_string_xml_cannot_hold_replaces_it(tmp_path):
    # ESC and BEL (from a device's identify data): replaced when saved
    run = store.load(str(_hostile_result(tmp_path, firmware="\x1b]0;pwned\x07")))
    assert run.device.firmware == "\ufffd]0;pwned\ufffd"
    assert run.device.model == HOSTILE_MODEL  # XML holds these; the terminal gets them escaped


def test_for_terminal_escapes_everything_a_terminal_acts_on():
    every = "".join(chr(c) for c in range(0x00, 0xa0)) + "\u061c\u200e\u200f\u202a\u202e\u2066\u2069"
    shown = for_terminal(every)
    assert not ACTS_ON.search(shown.replace("\n", "").replace("\t", ""))
    assert "\n" in shown and "\t" in shown and "\\u001b" in shown and "\\u009b" in shown
    assert json.loads(json.dumps(["x"]).replace("x", for_terminal("\u009b\u202e"))) == ["\u009b\u202e"]


@pytest.mark.parametrize("argv", [
    ["show", "{evil}"],
    ["show", "{evil}", "--json"],
    ["check", "{evil}", "--baseline", EXAMPLE],
    ["check", "{evil}", "--baseline", EXAMPLE, "--json", "--allow-other-drive"],  # its model is another's
    ["compare", "{evil}", EXAMPLE, "--format", "rst", "--outdir", "{tmp}/cmp"],
    ["history", "{evil}"],
    ["history", "{evil}", "--json", "--outdir", "{tmp}/history"],
    ["show", "{tmp}/no\x1b]0;such\x07\u009b2J.xml"],
    ["report", "{tmp}/missing\r\x1b[2K.xml"],
], ids=["show", "show-json", "check", "check-json", "compare", "history", "history-json", "error-path",
        "error-report"])
def test_commands_print_no_control_sequence(argv, tmp_path, capsys):
    evil = _hostile_result(tmp_path)
    argv = [a.format(evil=evil, tmp=tmp_path) for a in argv]
    main(argv)
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert not ACTS_ON.search(text.replace("\n", "").replace("\t", "")), repr(text)
    if argv[0] == "show" and "no" not in argv[1]:
        assert "EVIL\\u000d\\u009b2J" in captured.out
    if "--json" in argv:
        json.loads(captured.out)  # still JSON: the escapes are JSON's
    if argv[0] == "history" and "--outdir" in argv:  # the pages: the model as escaped text, no markup
        pages = sorted((tmp_path / "history").glob("*.html"))
        assert pages, "history --outdir wrote no page"
        for page in pages:
            text = page.read_text()
            assert "EVIL" in text and "<script" not in text.lower()


@pytest.mark.parametrize("name", ["evil\x1b]0;pwned\x07\u009b2J.img".encode(), b"evil\xff\x1b]0;pwned\x07.img"],
                         ids=["utf-8", "not-utf-8"])
def test_info_of_a_device_with_a_hostile_name(tmp_path, name):
    # A loop device over a file whose name carries an OSC (retitle) sequence
    # and a BEL, in UTF-8 or with a byte that is not (a path is any bytes).
    backing = os.fsencode(tmp_path) + b"/" + name
    with open(backing, "wb") as fh:
        fh.truncate(16 << 20)
    proc = subprocess.run(["losetup", "-f", "--show", backing], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip(f"needs a loop device: {proc.stderr.strip()}")
    dev = proc.stdout.strip()
    try:
        for extra in ([], ["--json"]):
            out = subprocess.run([sys.executable, "-m", "tkperf", "info", dev, *extra], capture_output=True,
                                 text=True, errors="strict", timeout=120)
            assert out.returncode == 0, out.stderr
            assert "pwned" in out.stdout
            assert not ACTS_ON.search((out.stdout + out.stderr).replace("\n", "").replace("\t", ""))
            if extra:  # JSON still, valid UTF-8: a byte that is not UTF-8 as U+FFFD (strictjson.text)
                facts = json.loads(out.stdout)
                assert facts["sysfs"]["loop"]["backing_file"] == os.fsdecode(backing).replace("\udcff", "\ufffd")
                facts["sysfs"]["loop"]["backing_file"].encode("utf-8")
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
