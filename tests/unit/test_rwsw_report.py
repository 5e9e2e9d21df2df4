"""`tkperf report N.xml` of a capture: the charts and tables of docs/rwsw.rst,
as reST, HTML and PDF; text from the file is never markup."""
import os
import shutil
import subprocess

import pytest

from conftest import data_path
from tkperf.cli import main
from tkperf.rwsw import model

MIX = data_path(os.path.join("rwsw", "blkparse-mix.txt"))


def test_report_of_a_capture(tmp_path, capsys):
    assert main(["capture", "--import", MIX, "--name", "mix", "--outdir", str(tmp_path), "-q"]) == 0
    xml = tmp_path / "mix.xml"
    c = model.load(str(xml))
    # a device text that would be markup in HTML or reST if it were not escaped
    model.save(model.Capture(**{**c.__dict__, "device": "<script>alert(1)</script> `x`_ |y|"}), str(xml),
               overwrite=True)
    assert main(["report", str(xml), "--format", "rst,html,pdf"]) == 0
    out = capsys.readouterr().out
    assert "report: " in out
    plots = sorted(os.listdir(tmp_path / "mix-plots"))
    assert plots == ["cumulative-workload.svg", "queue-depth.svg", "response-time.svg", "stream-map.svg"]
    rst = (tmp_path / "mix.rst").read_text()
    for heading in ("Cumulative workload", "IO stream map over time", "Queue depth over time"):
        assert heading in rst
    assert "RND 4KiB read" in rst and "SEQ 64KiB write" in rst and "68.25" in rst
    for fact in ("Response time (issue to completion at the block layer)", "Flushes", "FUA writes",
                 "Events lost by the trace buffer", "Dominant streams' coverage", "Response time over time"):
        assert fact in rst
    assert "99.5% of the I/Os, 99.3% of the bytes" in rst and "Coverage: the dominant" not in rst
    html = (tmp_path / "mix.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    # each plot names the capture and its device, as text (issue 60 item 7)
    from lxml import etree
    svg = etree.parse(str(tmp_path / "mix-plots" / "stream-map.svg"), etree.XMLParser(resolve_entities=False))
    ns = "{http://www.w3.org/2000/svg}"
    assert "capture mix " in svg.find(f"{ns}title").text
    assert "<script>alert(1)</script> `x`_ |y|" in svg.find(f"{ns}title").text
    assert not svg.getroot().findall(f".//{ns}script")
    assert any("<script>alert(1)</script>" in "".join(t.itertext()) for t in svg.iter(f"{ns}text"))
    pdf = (tmp_path / "mix.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(tmp_path / "mix.pdf"), "-"], capture_output=True, text=True).stdout
        assert "Cumulative workload" in text and "Queue depth over time" in text


def test_report_of_a_corrupt_capture_is_exit_7(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text('<tkperf-capture version="1" name="x"><steps><step index="0"/></steps></tkperf-capture>')
    assert main(["report", str(bad)]) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tkperf: error:")
    assert not (tmp_path / "x.html").exists()


@pytest.mark.parametrize("fmt", ["html"])
def test_report_of_an_empty_capture(tmp_path, capsys, fmt):
    c = model.Capture(name="idle", device="/dev/loop9", size=1 << 20, source="tracefs",
                      started="2026-01-01T00:00:00Z", duration=1.0, step=300.0,
                      steps=(model.Step(0, 0.0, 1.0, (), 0.0, 0.0, 0.0),), streams=(), qd=0.0, iops=0.0, mbps=0.0,
                      iolog=None)
    model.save(c, str(tmp_path / "idle.xml"))
    assert main(["report", str(tmp_path / "idle.xml"), "--format", fmt]) == 0
    assert "No I/O was seen" in (tmp_path / "idle.html").read_text()


def test_report_of_a_version_1_capture_says_not_recorded_and_warns_of_coverage(tmp_path, capsys):
    xml = tmp_path / "old.xml"
    shutil.copyfile(data_path(os.path.join("rwsw", "pgbench-v1.xml")), xml)
    c = model.load(str(xml))
    model.save(model.Capture(**{**c.__dict__, "stopped_at": 7.25, "stopped_by": "SIGTERM"}), str(xml), overwrite=True)
    assert main(["report", str(xml), "--format", "rst", "--outdir", str(tmp_path / "r")]) == 0
    rst = (tmp_path / "r" / "pgbench.rst").read_text()
    assert "not recorded (a capture of an earlier tkperf)" in rst and "n.r." in rst
    # its dominant streams hold 82.9% of the I/Os but 70.9% of the bytes
    assert "82.9% of the I/Os, 70.9% of the bytes" in rst
    assert "below 80% of the bytes" in rst and "Response time over time" not in rst
    assert "by SIGTERM after 7.2 s" in rst or "by SIGTERM after 7.3 s" in rst
