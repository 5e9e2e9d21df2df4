"""`tkperf capture --import`: blkparse's text output of a recorded block trace
(tests/data/rwsw/blkparse-mix.txt, tests/data/README.rst says how it was
made), the capture file's model, and files that are not what they claim."""
import gzip
import json
import os
import shutil

import pytest

from conftest import data_path
from sealing import reseal
from tkperf.cli import main
from tkperf.rwsw import iolog, model

MIX = data_path(os.path.join("rwsw", "blkparse-mix.txt"))


def test_import_of_a_recorded_blkparse_output(tmp_path, capsys):
    assert main(["capture", "--import", MIX, "--name", "mix", "--outdir", str(tmp_path), "--step", "10s"]) == 0
    c = model.load(str(tmp_path / "mix.xml"))
    assert c.source == "import" and c.device == "7,0"
    by_key = {s.key: s for s in c.streams}
    # fio chose 274 random 4 KiB reads and 126 sequential 64 KiB writes; the
    # first write of the sequential run has nothing before it: random.  One
    # random read starts by chance where an earlier read ended (the stream
    # rule remembers 512 runs; on this 256 MiB device that is ~0.8% of them)
    assert by_key["RND 4KiB read"].ios == 273 and by_key["SEQ 4KiB read"].ios == 1
    assert by_key["SEQ 64KiB write"].ios == 125 and by_key["RND 64KiB write"].ios == 1
    assert sum(s.ios for s in c.streams) == 400
    assert abs(sum(s.share for s in c.streams) - 1) < 1e-9 and abs(sum(s.byte_share for s in c.streams) - 1) < 1e-9
    assert by_key["SEQ 64KiB write"].byte_share == pytest.approx(125 * 65536 / (274 * 4096 + 126 * 65536))
    assert len(c.steps) == 1 and c.steps[0].streams == c.streams
    # iodepth 1: never more than one I/O outstanding
    assert 0.2 < c.qd <= 1.0
    log = list(iolog.text_lines(str(tmp_path / "mix.iolog")))
    assert log[0] == "fio version 3 iolog" and len(log) == 400 + 4
    first_write = next(ln for ln in log if " write " in ln).split()
    assert first_write[3:] == ["0", "65536"]  # fio's sequential writes start at the device's start
    out = capsys.readouterr().out
    assert "RND 4KiB read" in out and "capture: " in out


def test_show_of_a_capture_text_and_json(tmp_path, capsys):
    assert main(["capture", "--import", MIX, "--name", "mix", "--outdir", str(tmp_path), "-q"]) == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "mix.xml"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "tkperf-capture-show"
    assert [(s["access"], s["rw"], s["bs"], s["ios"]) for s in doc["streams"][:2]] == [
        ("random", "read", 4096, 273), ("sequential", "write", 65536, 125)]
    assert doc["streams"][0]["share"] == pytest.approx(273 / 400)
    # what the application saw: every I/O completed, no flush in fio's direct I/O
    assert doc["figures_recorded"] is True and doc["read"]["lat_ios"] == 274 and doc["write"]["lat_ios"] == 126
    assert 0 < doc["lat_mean_us"] <= doc["lat_max_us"] and doc["lat_p99_us"] <= doc["lat_max_us"]
    assert (doc["flushes"], doc["fua"], doc["discards"], doc["lost_events"]) == (0, 0, 0, None)
    assert doc["coverage_ios_pct"] == pytest.approx(99.5)
    assert doc["steps"][0]["number"] == 1 and doc["steps"][0]["lat_max_us"] == doc["lat_max_us"]
    assert len(doc["steps"]) == 1 and doc["steps"][0]["streams"][0]["key"] == "RND 4KiB read"
    assert main(["show", str(tmp_path / "mix.xml")]) == 0
    text = capsys.readouterr().out
    assert "SEQ 64KiB write" in text and "68.25%" in text
    assert "response time (issue to completion at the block layer): mean" in text
    assert "events lost by the trace buffer: not recorded (an import)" in text


SEEN = model.Seen(lat=model.Latency(100, 400.0, 800.0, 900.0), read=model.Latency(70, 300.0, 700.0, 800.0),
                  write=model.Latency(30, 633.3, 850.0, 900.0), flushes=3, fua=2, discards=1, discard_bytes=4096,
                  lost_events=0)


def _capture(**kw):
    s = (model.Stream("random", "read", 4096, 70, 0.7, 0.2), model.Stream("sequential", "write", 65536, 30, 0.3, 0.8))
    base = dict(name="x", device="/dev/loop0", size=1 << 30, source="tracefs", started="2026-01-01T00:00:00Z",
                duration=10.0, step=5.0, steps=(model.Step(0, 0.0, 5.0, s, 2.0, 10.0, 1.0, SEEN),
                                               model.Step(1, 5.0, 5.0, s[:1], 1.0, 7.0, 0.1)),
                streams=s, qd=1.5, iops=8.5, mbps=0.6, iolog="x.iolog", seen=SEEN, stopped_at=7.5,
                stopped_by="SIGINT")
    base.update(kw)
    return model.Capture(**base)


def test_model_round_trip_and_dominant(tmp_path):
    c = _capture(device="dev\x1b[31mred")
    path = str(tmp_path / "x.xml")
    model.save(c, path)
    back = model.load(path)
    assert back.device == "dev\ufffd[31mred"  # XML cannot hold the escape character
    assert back == model.Capture(**{**c.__dict__, "device": back.device})
    c = back
    with pytest.raises(Exception, match="exists"):
        model.save(c, path)
    model.save(c, path, overwrite=True)
    d = model.dominant(c.streams, 0.6)
    assert [s.key for s in d] == ["RND 4KiB read"] and d[0].share == 1.0
    d = model.dominant(c.streams, 0.8)
    assert [round(s.share, 6) for s in d] == [0.7, 0.3]
    assert model.dominant((), 0.8) == ()


@pytest.mark.parametrize("mutate, words", [
    (lambda t: t.replace('share="0.7"', 'share="NaN"', 1), "share"),
    (lambda t: t.replace('share="0.7"', 'share="1.5"', 1), "share"),
    (lambda t: t.replace('access="random"', 'access="chaotic"', 1), "access"),
    (lambda t: t.replace('iolog="x.iolog"', 'iolog="../../etc/passwd"', 1), "iolog"),
    (lambda t: t.replace(f'version="{model.VERSION}"', 'version="9"', 1), "newer"),
    (lambda t: t.replace('number="2"', 'number="5"', 1), "numbers"),
    (lambda t: t.replace('number="1"', 'number="0"', 1), "number"),
    # a version 1 file has index, not number
    (lambda t: t.replace(f'version="{model.VERSION}"', 'version="1"', 1), "index"),
    (lambda t: t.replace('mean-us="400.0"', 'mean-us="inf"', 1), "mean-us"),
    (lambda t: t.replace('max-us="900.0"', 'max-us="10.0"', 1), "max-us"),
    (lambda t: t.replace('flushes="3"', 'flushes="-3"', 1), "flushes"),
    (lambda t: t.replace('stopped-by="SIGINT"', 'stopped-by="&lt;b&gt;"', 1), "stopped-by"),
    (lambda t: t.replace('stopped-early-at="7.5"', 'stopped-early-at="70.5"', 1), "stopped-early-at"),
    (lambda t: t[: len(t) // 2], "cut short: no closing record"),
    (lambda t: t[: t.index("<?tkperf-seal") + 20], "cut short or damaged: its closing record"),
    (lambda t: t.replace('share="0.7"', 'share="0.8"', 1), "damaged: "),
    (lambda t: t.replace("<tkperf-capture", '<!DOCTYPE x [<!ENTITY a "b">]><tkperf-capture', 1), "DOCTYPE"),
])
def test_a_bad_capture_file_is_one_line_and_exit_7(tmp_path, capsys, mutate, words):
    path = tmp_path / "x.xml"
    text = model.dumps(_capture()).decode()
    text = text.replace("<?xml version='1.0' encoding='UTF-8'?>\n", "")
    forged = mutate(text)
    if words not in ("cut short", "damaged") and not words.startswith(("cut short", "damaged")) \
            and "<?tkperf-seal" in forged:
        forged = reseal(forged.encode()).decode()  # as a forger who knows the format would
    path.write_text(forged)
    assert main(["show", str(path)]) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and err[0].startswith("tkperf: error:"), err


@pytest.mark.parametrize("content, words", [
    (b"", "no issued I/O"),
    (b"this is not a trace\n\x1b]0;pwned\x07\n", "no issued I/O"),
    (b"  8,0 0 1 0.1 5 D W 0 + 8 [a]\n  8,16 0 2 0.2 5 D W 8 + 8 [a]\n", "more than one device"),
])
def test_a_corrupt_import_is_one_line_and_exit_7(tmp_path, capsys, content, words):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    assert main(["capture", "--import", str(bad), "--name", "x", "--outdir", str(tmp_path)]) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert "\x1b" not in err[0]
    assert not (tmp_path / "x.xml").exists() and not (tmp_path / "x.iolog").exists()


def test_import_refuses_replacing_and_missing_files(tmp_path, capsys):
    assert main(["capture", "--import", str(tmp_path / "none.txt"), "--name", "x", "--outdir", str(tmp_path)]) == 7
    (tmp_path / "x.iolog").write_text("mine")
    assert main(["capture", "--import", MIX, "--name", "x", "--outdir", str(tmp_path)]) == 8
    assert (tmp_path / "x.iolog").read_text() == "mine" and not (tmp_path / "x.xml").exists()
    assert main(["capture", "/dev/null", "--import", MIX, "--name", "y", "--outdir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "No such file" in err and "exists" in err and "not both" in err


def test_names_of_imported_text_never_reach_the_files(tmp_path):
    hostile = tmp_path / "hostile.txt"
    hostile.write_bytes(b"  7,0 0 1 0.000001 5 D W 0 + 8 [<b>\x1b[2J</b>]\n"
                        b"  7,0 0 2 0.000101 0 C W 0 + 8 [0]\n")
    assert main(["capture", "--import", str(hostile), "--name", "h", "--outdir", str(tmp_path), "-q"]) == 0
    data = (tmp_path / "h.xml").read_bytes() + (tmp_path / "h.iolog").read_bytes()
    assert b"\x1b" not in data and b"<b>" not in data


def test_show_json_of_the_example_capture_matches_its_schema(capsys):
    import jsonschema

    import tkperf

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                        "rwsw",
                        "pgbench.xml")
    assert main(["show", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    with open(os.path.join(os.path.dirname(tkperf.__file__), "model", "data", "capture-show.schema.json")) as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    assert (doc["schema"], doc["version"]) == ("tkperf-capture-show", 3)
    # a database's capture: its writes are mostly whole 8 KiB pages
    writes = [s for s in doc["streams"] if s["rw"] == "write"]
    assert sum(s["ios"] for s in writes if s["bs"] % 8192 == 0) / sum(s["ios"] for s in writes) > 0.8


@pytest.mark.skipif(shutil.which("blkparse") is None, reason="needs blkparse (Debian blktrace)")
def test_import_of_blktrace_binary_records_goes_through_blkparse(tmp_path, capsys):
    binary = tmp_path / "mix.blktrace"
    with gzip.open(data_path(os.path.join("rwsw", "blktrace-mix.bin.gz"))) as src:
        binary.write_bytes(src.read())
    assert main(["capture", "--import", str(binary), "--name", "bin", "--outdir", str(tmp_path), "-q"]) == 0
    assert main(["capture", "--import", MIX, "--name", "txt", "--outdir", str(tmp_path), "-q"]) == 0
    a, b = model.load(str(tmp_path / "bin.xml")), model.load(str(tmp_path / "txt.xml"))
    assert a.streams == b.streams and a.steps == b.steps
    assert (tmp_path / "bin.iolog").read_bytes() == (tmp_path / "txt.iolog").read_bytes()
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
