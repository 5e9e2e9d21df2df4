"""Captures of several devices at once and captures combined (issue 57 item 7):
the pairing keeps each device's requests apart (the same sectors, flushes
of their own), each device's figures beside the whole's, the file (version
4, earlier files one device), show, and --combine --as days|hosts."""
from __future__ import annotations

import dataclasses
import io
import json
import os

import jsonschema
import pytest

import tkperf
from tkperf.cli import main
from tkperf.errors import UsageError
from tkperf.rwsw import iolog, model, packedlog, several, steps, summary, tracing
from tkperf.rwsw.trace import KIND_FLUSH, KIND_READ, KIND_WRITE, Pairer, Span
from tkperf.store import seal

MiB = 1 << 20
SIZES = (64 * MiB, 32 * MiB)


def _events(n: int = 400):
    """Device 0: 4 KiB random reads (100 µs each); device 1: 64 KiB sequential
    writes from sector 0 (300 µs), a flush after every 4th; interleaved, the
    same sectors on both."""
    out = []
    for i in range(n):
        t = i * 1e-3
        sector = (i * 7919) % 16384 * 8
        out.append((t, "issue", KIND_READ, sector, 8, 0))
        out.append((t + 1e-4, "complete", KIND_READ, sector, 8, 0))
        w = t + 2e-4
        out.append((w, "issue", KIND_WRITE, i * 128, 128, 1))
        out.append((w + 3e-4, "complete", KIND_WRITE, i * 128, 128, 1))
        if i % 4 == 3:
            out.append((w + 4e-4, "issue", KIND_FLUSH, 0, 0, 1))
            out.append((w + 4.5e-4, "complete", KIND_FLUSH, 2 ** 64 - 1, 0, 1))
    return sorted(out, key=lambda e: e[0])


def _two_devices(name="two", n=400, started="2026-12-07T10:00:00Z", host="db1"):
    """A capture of two devices through the pairing and the split, and its iolog's text."""
    spans = (Span(7 << 20 | 1, 0, None, 0), Span(7 << 20 | 2, 0, None, SIZES[0]))
    log = io.BytesIO()
    whole = steps.Accumulator(0.1, log, lost_known=True)
    parts = [steps.Accumulator(0.1, None, lost_known=True) for _ in spans]
    p = Pairer(several.Split(whole, parts, [s.base for s in spans]), spans=spans)
    for t, kind, rq, sector, count, dev in _events(n):
        p.event(t, kind, rq, sector, count, dev)
    p.finish()
    meta = {"name": name, "source": "tracefs", "started": started, "iolog": f"{name}.iolog", "host": host}
    names = ("/dev/loopA", "/dev/loopB")
    cap = whole.finish(device=several.joined(names), size=sum(SIZES), lost_events=0, **meta)
    devs = tuple(several.device(a.finish(device=nm, size=sz, lost_events=0, **meta), nm, sz, s.base, host)
                 for a, nm, sz, s in zip(parts, names, SIZES, spans))
    return dataclasses.replace(cap, devices=devs), log.getvalue(), p


def _text(packed: bytes) -> str:
    """A packed iolog as fio's text iolog (what an exact replay is given)."""
    return "".join(packedlog.text_lines(io.BytesIO(packed), "two.iolog", "rwsw.capture"))


def test_each_device_keeps_its_own_requests_flushes_and_addresses():
    cap, log, p = _two_devices()
    a, b = cap.devices
    assert (a.ios, b.ios) == (400, 400) and sum(s.ios for s in cap.streams) == 800
    assert p.flushes_paired == 100 and not p.skipped  # every completion paired with its own device's issue
    assert [s.key for s in a.streams] == ["RND 4KiB read"]
    assert {s.key: s.ios for s in b.streams} == {"SEQ 64KiB write": 399, "RND 64KiB write": 1}
    assert (a.seen.flushes, b.seen.flushes, cap.seen.flushes) == (0, 100, 100)
    assert abs(a.seen.lat.mean_us - 100) < 2 and abs(b.seen.lat.mean_us - 300) < 4
    assert next(s for s in b.streams if s.key == "SEQ 64KiB write").flushes == 100
    # per step: each device's I/Os add up to the whole's
    for k, st in enumerate(cap.steps):
        assert sum(s.ios for s in st.streams) == sum(sum(s.ios for s in d.steps[k].streams) for d in cap.devices)
        assert abs(st.qd - a.steps[k].qd - b.steps[k].qd) < 1e-9
    # the iolog lays the devices end to end: device B's writes from 64 MiB on
    writes = [line.split() for line in _text(log).splitlines() if " write " in line]
    assert [int(w[3]) for w in writes[:3]] == [SIZES[0], SIZES[0] + 65536, SIZES[0] + 2 * 65536]
    reads = [int(line.split()[3]) for line in _text(log).splitlines() if " read " in line]
    assert max(reads) < SIZES[0]


def test_the_file_keeps_each_device_and_an_old_file_is_one_device(tmp_path):
    cap, _, _ = _two_devices()
    again = model.loads(model.dumps(cap))
    assert again == cap and len(again.parts) == 2 and again.host == "db1"
    text = model.dumps(model.Capture("old", "/dev/sdb", 1 << 30, "tracefs", "2026-01-01T00:00:00Z", 1.0, 1.0, (),
                                     (), 0.0, 0.0, 0.0, None))
    body = text[:text.index(b"<?tkperf-seal")].replace(b'version="4"', b'version="2"')
    c = model.loads(body, "old.xml")  # a version 2 file: no closing record, no devices, no host
    assert c.devices == () and [d.name for d in c.parts] == ["/dev/sdb"] and c.host is None


@pytest.mark.parametrize("mutate, words", [
    (lambda t: t.replace(b"<device ", b"<gone ", 1).replace(b"</device>", b"</gone>", 1), "1 <device>"),
    (lambda t: t.replace(b'offset="67108864"', b'offset="100"', 1), "lies within"),
    (lambda t: t.replace(b'size="33554432"', b'size="999999999999"', 1), "beyond the capture's size"),
])
def test_a_bad_device_list_is_one_line_and_exit_7(tmp_path, capsys, mutate, words):
    cap, _, _ = _two_devices()
    text = model.dumps(cap)
    body = mutate(text[:text.index(b"<?tkperf-seal")])
    path = tmp_path / "bad.xml"
    path.write_bytes(seal.sealed(body))
    assert main(["show", str(path)]) == 7
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1, err


def _facts(monkeypatch, table):
    monkeypatch.setattr(tracing, "device_facts", lambda name: table[name])


@pytest.mark.parametrize("given, words", [
    (("/dev/a", "/dev/a"), "given twice"),
    (("/dev/a", "/dev/a1"), "/dev/a1 is a partition of /dev/a"),
    (("/dev/a1", "/dev/a"), "/dev/a1 is a partition of /dev/a"),
    (("/dev/a1", "/dev/a2"), "partitions of one disk"),
    (tuple(f"/dev/x{i}" for i in range(9)), "at most 8"),
])
def test_devices_that_cannot_be_captured_together_are_exit_2(monkeypatch, given, words):
    table = {"/dev/a": tracing.DeviceFacts("/dev/a", 8, 0, 0, 1000),
             "/dev/a1": tracing.DeviceFacts("/dev/a1", 8, 0, 8, 100),
             "/dev/a2": tracing.DeviceFacts("/dev/a2", 8, 0, 200, 100),
             **{f"/dev/x{i}": tracing.DeviceFacts(f"/dev/x{i}", 9, i, 0, 10) for i in range(9)}}
    _facts(monkeypatch, table)
    with pytest.raises(UsageError, match=words):
        several.facts(given)


def test_show_gives_each_device_per_step_and_json_by_its_schema(tmp_path, capsys):
    cap, _, _ = _two_devices()
    path = tmp_path / "two.xml"
    model.save(cap, str(path))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "/dev/loopA: 400 I/Os" in out and "/dev/loopB: 400 I/Os" in out and "on db1" in out
    assert sum("db1:/dev/loopB:" in line for line in out.splitlines()) == 1 + len(cap.steps)  # whole, each step
    assert main(["show", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    with open(os.path.join(os.path.dirname(tkperf.__file__), "model", "data", "capture-show.schema.json")) as fh:
        jsonschema.validate(doc, json.load(fh), cls=jsonschema.Draft202012Validator)
    assert [d["ios"] for d in doc["devices"]] == [400, 400] and doc["version"] == summary.JSON_VERSION
    assert [len(d["steps"]) for d in doc["devices"]] == [len(doc["steps"])] * 2


def _saved(folder, **kw):
    cap, log, _ = _two_devices(**kw)
    xml = os.path.join(folder, f"{cap.name}.xml")
    model.save(cap, xml)
    with open(os.path.join(folder, f"{cap.name}.iolog"), "wb") as fh:
        fh.write(log)
    return xml, cap, log


def _io_lines(path):
    return [line.split() for line in iolog.text_lines(str(path)) if len(line.split()) == 5]


def test_combine_as_days_puts_them_one_after_the_other(tmp_path, capsys):
    a, ca, _ = _saved(str(tmp_path), name="mon", n=400)
    b, cb, _ = _saved(str(tmp_path), name="tue", n=200, started="2026-12-08T10:00:00Z")
    rc = main(["capture", "--combine", a, b, "--as", "days", "--name", "both", "--outdir", str(tmp_path), "-q"])
    assert rc == 0, capsys.readouterr().err
    c = model.load(str(tmp_path / "both.xml"))
    assert c.combined == "days" and [s.file for s in c.sources] == ["mon.xml", "tue.xml"]
    assert [s.at for s in c.sources] == [0.0, ca.duration] and c.duration == ca.duration + cb.duration
    assert len(c.steps) == len(ca.steps) + len(cb.steps) and [st.number for st in c.steps] == list(
        range(1, len(c.steps) + 1))
    assert sum(s.ios for s in c.streams) == 1200 and [d.ios for d in c.devices] == [600, 600]
    assert c.seen.flushes == 150 and c.devices[1].seen.flushes == 150
    lines = _io_lines(tmp_path / "both.iolog")
    assert len(lines) == 1200 + 150
    times = [int(x[0]) for x in lines]
    assert times == sorted(times) and times[-1] >= int(ca.duration * 1e6)
    out = capsys.readouterr().out
    assert "source 2: tue.xml" in out and "upper bound" in out
    assert main(["show", str(tmp_path / "both.xml")]) == 0
    shown = capsys.readouterr().out
    assert "combined (days: one after the other in time) of 2 captures" in shown
    assert "tue.xml (tue): host db1, db1:/dev/loopA, db1:/dev/loopB, started 2026-12-08T10:00:00Z" in shown


def test_combine_as_hosts_overlays_them_each_device_its_own(tmp_path, capsys):
    a, ca, _ = _saved(str(tmp_path), name="h1", n=400, host="db1")
    b, cb, _ = _saved(str(tmp_path), name="h2", n=200, host="db2")
    assert main(["capture", "--combine", a, b, "--as", "hosts", "--name", "all", "--outdir", str(tmp_path),
                 "-q"]) == 0
    c = model.load(str(tmp_path / "all.xml"))
    assert [d.label for d in c.devices] == ["db1:/dev/loopA", "db1:/dev/loopB", "db2:/dev/loopA", "db2:/dev/loopB"]
    assert [d.ios for d in c.devices] == [400, 400, 200, 200] and c.duration == ca.duration
    assert len(c.steps) == len(ca.steps) and c.host is None
    assert sum(s.ios for s in c.steps[0].streams) == sum(s.ios for s in ca.steps[0].streams) + sum(
        s.ios for s in cb.steps[0].streams)
    assert [d.offset for d in c.devices] == [0, SIZES[0], sum(SIZES), sum(SIZES) + SIZES[0]]
    lines = _io_lines(tmp_path / "all.iolog")
    assert len(lines) == 1200 + 150
    times = [int(x[0]) for x in lines]
    assert times == sorted(times)
    # host 2's reads moved to its device A's place, beyond host 1's devices
    assert sum(1 for x in lines if x[2] == "read" and int(x[3]) >= sum(SIZES)) == 200


def test_combine_never_replaces_without_force_nor_a_source(tmp_path, capsys):
    a, _, _ = _saved(str(tmp_path), name="x1")
    b, _, _ = _saved(str(tmp_path), name="x2")
    args = ["capture", "--combine", a, b, "--as", "days", "--outdir", str(tmp_path), "-q"]
    assert main(args + ["--name", "c"]) == 0
    capsys.readouterr()
    assert main(args + ["--name", "c"]) == 8
    assert "exists" in capsys.readouterr().err
    assert main(args + ["--name", "c", "--force"]) == 0
    assert main(args + ["--name", "x1", "--force"]) == 2
    assert "replace one of its sources" in capsys.readouterr().err
    assert main(["capture", "--combine", a, a, "--as", "days", "--name", "d", "--outdir", str(tmp_path)]) == 2
    assert main(["capture", "--combine", a, b, "--as", "hosts", "--name", "d", "--outdir", str(tmp_path)]) == 2
    assert "db1:/dev/loopA is in" in capsys.readouterr().err  # the same host's same device twice side by side
    assert main(["capture", "--combine", a, b, "--name", "d", "--outdir", str(tmp_path)]) == 2
    assert "--as days" in capsys.readouterr().err
    assert main(["capture", "--import", a, "--name", "d", "--force"]) == 2  # an import never replaces a file


def test_a_replay_onto_one_target_names_the_devices_it_folded(tmp_path):
    from tkperf.api import TestRun
    from tkperf.kit import options
    from tkperf.kit.registry import get

    cap, _, _ = _two_devices()
    path = tmp_path / "two.xml"
    model.save(cap, str(path))
    kind = get("replay")
    (plan,) = kind.plan(options.build({"tests": ("replay",), "rwsw_workload": str(path)}), 1 << 30)
    assert plan.params["capture_folded"] == "db1:/dev/loopA, db1:/dev/loopB"
    test = TestRun("replay", "replay", "", "", "", params=dict(plan.params))
    said = [d for d in kind.pts.result_deviations(kind, test, {}, None, 1 << 30) if "several devices" in d]
    assert said == ["replay: the capture is of several devices (db1:/dev/loopA, db1:/dev/loopB), replayed onto this "
                    "one target: their addresses laid end to end and folded into its range, a stream of several "
                    "devices one stream"]
    one = tmp_path / "one.xml"
    model.save(dataclasses.replace(cap, devices=()), str(one))
    (plan,) = kind.plan(options.build({"tests": ("replay",), "rwsw_workload": str(one)}), 1 << 30)
    assert "capture_folded" not in plan.params


def test_the_report_gives_each_device_per_step_and_a_combined_capture_its_sources(tmp_path, capsys):
    a, _, _ = _saved(str(tmp_path), name="h1", n=400, host="db1")
    b, _, _ = _saved(str(tmp_path), name="h2", n=200, host="<b>db2</b>")
    assert main(["capture", "--combine", a, b, "--as", "hosts", "--name", "all", "--outdir", str(tmp_path),
                 "-q"]) == 0
    assert main(["report", str(tmp_path / "all.xml"), "--format", "rst,html"]) == 0
    rst = (tmp_path / "all.rst").read_text()
    for words in ("Devices", "Each device in total", "Each device per step", "Sources", "The captures combined",
                  "upper bound", "db1\\:/dev/loopB"):  # reST escapes text from the file
        assert words in rst, words
    assert "device-iops.svg" in os.listdir(tmp_path / "all-plots")
    html = (tmp_path / "all.html").read_text()
    assert "<b>db2</b>" not in html and "&lt;b&gt;db2" in html


@pytest.mark.parametrize("name", ["rwsw-wsat", "rwsw-dirth"])
def test_the_applied_workload_of_several_devices_names_them(tmp_path, name):
    """rwsw-wsat and rwsw-dirth apply the devices' streams together as one workload: said, not silent."""
    from tkperf.api import TestRun
    from tkperf.kit import options
    from tkperf.kit.registry import get

    cap, _, _ = _two_devices()
    path = tmp_path / "two.xml"
    model.save(cap, str(path))
    kind = get(name)
    plans = kind.plan(options.build({"tests": (name,), "rwsw_workload": str(path)}), 1 << 30)
    assert {p.params["capture_folded"] for p in plans} == {"db1:/dev/loopA, db1:/dev/loopB"}
    test = TestRun(name, name, "", "", "", params=dict(plans[0].params))
    said = [d for d in kind.pts.result_deviations(kind, test, {}, None, 1 << 30) if "several devices" in d]
    assert said == [f"{name}: the capture is of several devices (db1:/dev/loopA, db1:/dev/loopB), applied to this "
                    "one target as one workload: its streams are the devices' together (a stream of several devices "
                    "one stream), their shares of the whole capture"]
    one = tmp_path / "one.xml"
    model.save(dataclasses.replace(cap, devices=()), str(one))
    plans = kind.plan(options.build({"tests": (name,), "rwsw_workload": str(one)}), 1 << 30)
    assert all("capture_folded" not in p.params for p in plans)
    test = TestRun(name, name, "", "", "", params=dict(plans[0].params))
    assert not [d for d in kind.pts.result_deviations(kind, test, {}, None, 1 << 30) if "several devices" in d]
