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
from tkperf.render.report import build_report
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
    for kind in (nodes.target, nodes.substitution_reference, nodes.footnote_reference,
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
    from docutils import nodes
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
