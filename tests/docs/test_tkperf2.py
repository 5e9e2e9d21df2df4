"""Result files of the original TKperf (2.x, 1.x): read by content wherever a
tkperf file is read, converted by ``tkperf import``, numbers kept, steady
state recomputed and held against the file's own, bad files refused.

The files in tests/data/tkperf2 are hand-made (README.rst there); every
expected figure below is computed from the matrices they hold, or written
out where the arithmetic is short enough to check by hand.
"""
import json
import os
from statistics import fmean as mean

import pytest
from lxml import etree

from conftest import data_path
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_REGRESSION, EXIT_RESULT_FILE, EXIT_USAGE, ResultFileError
from tkperf.report import summary
from tkperf.store.legacy import tkperf2, tkperf2_run

APACER = data_path("tkperf2/ssd-2.2-apacer.xml")
XG6 = data_path("tkperf2/ssd-2.0-4kn-nvme.xml")
S840 = data_path("tkperf2/ssd-1.0-samsung840.xml")
HDD = data_path("tkperf2/hdd-2.2-hdwd110.xml")
OLD_FILES = (APACER, XG6, S840, HDD)
EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "example-ssd.xml")


def element(path, test, name=""):
    """An element's JSON value, read the way TKperf read it (``test`` alone: a root element)."""
    root = etree.parse(path, etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    return json.loads(root.find(test).findtext(name) if name else root.findtext(test))


def show_json(path, capsys):
    assert main(["show", path, "--json"]) == EXIT_OK
    return json.loads(capsys.readouterr().out)


def headline(doc, key):
    return next(t for t in doc["tests"] if t["key"] == key)["headline"]


# --- found by content ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", OLD_FILES)
def test_old_files_are_detected_and_marked_as_imported(path):
    data = open(path, "rb").read()
    assert tkperf2.detect(data)
    run = store.load(path)
    info = run.facts["imported"]
    assert info["source"] == os.path.basename(path) and info["tool"] == "TKperf"
    assert info["version"] == element(path, "ioperfversion")
    assert run.events[0].kind == "import" and os.path.basename(path) in run.events[0].message
    assert run.host.hostname == "" and run.host.cpu == "" and run.host.memory_bytes == 0
    assert "host name, CPU and memory" in info["not_recorded"]


def test_tkperf_files_are_not_taken_for_old_ones():
    assert not tkperf2.detect(open(EXAMPLE, "rb").read())
    assert not tkperf2.detect(b"<!DOCTYPE x>\n<x><devinfo>\"a\"</devinfo></x>")  # left to check_head
    # a TKperf run that was named "tkperf": its root has no format attribute
    data = open(APACER, "rb").read().replace(b"apacer-as340>", b"tkperf>")
    assert tkperf2.detect(data) and store.loads(data, "tkperf.xml").name == "tkperf"


# --- numbers: each test type and shape -----------------------------------------------------------

def test_iops_cells_hold_the_matrix_exactly_and_the_window_averages_are_the_headline(capsys):
    mats = element(APACER, "iops", "roundmat")
    test = store.load(APACER).test("iops")
    sizes = ("1024k", "128k", "64k", "32k", "16k", "8k", "4k", "512")
    mixes = (100, 95, 65, 50, 35, 5, 0)
    assert len(test.rounds) == len(mats) == 5
    for rnd, mat in zip(test.rounds, mats):
        for mix, row in zip(mixes, mat):
            for bs, value in zip(sizes, row):
                w = rnd.workload(f"rnd-{bs}-{mix}-{100 - mix}")
                assert w.iops == value  # read + write gives back TKperf's total exactly
    h = headline(show_json(APACER, capsys), "iops")
    assert h["rnd_4k_write_iops"] == pytest.approx((11448 + 11016 + 10800 + 10692 + 10908) / 5)
    assert h["rnd_4k_write_iops"] == pytest.approx(mean(m[6][6] for m in mats))
    assert h["rnd_4k_mixed_iops"] == pytest.approx(mean(m[2][6] for m in mats))
    assert h["rnd_4k_read_iops"] == pytest.approx(mean(m[0][6] for m in mats))


def test_only_wsat_gives_the_fob(capsys):
    # TKperf ran a WIPC before the IOPS rounds but its file does not record it:
    # round 1 is neither FOB nor known to follow a WIPC, so it is left out (issue 19).
    doc = show_json(APACER, capsys)
    iops = next(t for t in doc["tests"] if t["key"] == "iops")
    assert iops["fob"] == {} and iops["round1_after_wipc"] == {}
    wsat = next(t for t in doc["tests"] if t["key"] == "wsat")["fob"]
    assert wsat == {"first_interval_iops": element(APACER, "writesat", "roundmat")[0][0]}


def test_lat_min_max_mean_in_microseconds(capsys):
    mats = element(APACER, "lat", "roundmat")  # rounds x [100/0, 65/35, 0/100] x [8k, 4k, 512] x [min, max, mean]
    test = store.load(APACER).test("lat")
    w = test.rounds[2].workload("rnd-4k-65-35")
    assert (w.lat_mean_us, w.read.lat_min_us, w.write.lat_max_us) == (mats[2][1][1][2], mats[2][1][1][0],
                                                                       mats[2][1][1][1])
    read_only = test.rounds[0].workload("rnd-512-100-0")
    assert read_only.read.lat_mean_us == read_only.lat_mean_us == mats[0][0][2][2]  # what LAT's tables show
    assert {w.numjobs for r in test.rounds for w in r.workloads} == {1}
    h = headline(show_json(APACER, capsys), "lat")
    assert h["rnd_4k_write_lat_mean_us"] == pytest.approx(mean(m[2][1][2] for m in mats))
    # MAX: the per-round maxima averaged over the window; the slowest I/O is "largest" (issue 19)
    assert h["rnd_4k_write_lat_max_us"] == pytest.approx(mean(m[2][1][1] for m in mats))
    assert h["rnd_4k_write_lat_largest_us"] == max(m[2][1][1] for m in mats)
    assert h["rnd_4k_write_lat_mean_us"] == pytest.approx((42.75 + 45.0 + 45.9 + 44.55 + 45.45) / 5)


def test_tp_kb_per_second_become_mb_per_second_for_every_block_size(capsys):
    mat = element(APACER, "tp", "roundmat")  # block sizes x [read KB/s per round, write KB/s per round]
    doc = show_json(APACER, capsys)
    for bs, (reads, writes) in zip(("1024k", "64k", "8k", "4k", "512"), mat):
        h = headline(doc, f"tp-{bs}")
        assert h["seq_write_mb_s"] == pytest.approx(mean(writes) * 1024 / 1e6)
        assert h["seq_read_mb_s"] == pytest.approx(mean(reads) * 1024 / 1e6)
    assert headline(doc, "tp-1024k")["seq_write_mb_s"] == pytest.approx(
        (504000 + 480000 + 470400 + 484800 + 475200) / 5 * 1024 / 1e6)


def test_wsat_intervals_keep_iops_and_latencies(capsys):
    iops, lats = element(APACER, "writesat", "roundmat")
    test = store.load(APACER).test("wsat")
    s = test.series["intervals"]
    assert list(s.column("iops")) == iops and len(s) == 10
    assert [list(r) for r in zip(s.column("lat_min_us"), s.column("lat_max_us"), s.column("lat_mean_us"))] == lats
    assert test.params["interval"] == "60" and test.stop_reason.startswith("TGBW limit")
    h = headline(show_json(APACER, capsys), "wsat")
    assert h["first_interval_iops"] == 40000
    assert h["last_5_intervals_iops"] == pytest.approx(mean(iops[-5:]))
    assert h["gb_written"] == pytest.approx(sum(iops) * 60 * 4096 / 1e9)


def test_a_4k_native_drive_has_no_512_and_4096_byte_sectors():
    run = store.load(XG6)
    assert run.test("iops").params["block_sizes"] == "1024k,128k,64k,32k,16k,8k,4k"
    assert [t.key for t in run.tests_of("tp")] == ["tp-1024k", "tp-64k", "tp-8k", "tp-4k"]
    assert run.device.logical_sector == 4096 and run.device.size_bytes == 512110190592
    assert (run.device.model, run.device.transport, run.device.path) == ("KXG6AZNV512G TOSHIBA", "nvme",
                                                                         "/dev/nvme0n1")


def test_tkperf_1_0_file_without_fio_version_or_runtime():
    run = store.load(S840)
    info = run.facts["imported"]
    assert info["version"] == "1.0" and run.host.fio_version == "" and run.host.kernel == ""
    assert {"fio version", "seconds per workload", "kernel", "command line and tested device path"} <= set(
        info["not_recorded"])
    assert "runtime" not in run.options and run.options["numjobs"] == "2"
    assert run.test("lat").steady.steady  # reachStdyState, as 1.x spelt it, was read
    assert info["steady_state"]["lat"]["file"]["steady"] is True
    assert any("TC2/QD16" in e.message for e in run.events)  # LAT ran at 1/1 whatever 1.x stored
    assert run.device.write_cache == "" and run.device.model == "Samsung SSD 840 Series"


def test_hdd_mode_zones_and_whole_disk_averages(capsys):
    iops = element(HDD, "iops", "roundmat")  # 128 zones x [100/0, 50/50, 0/100] x [64k, 16k, 4k]
    tp = element(HDD, "tp", "roundmat")      # [1024k, 4k] x [read, write] x 128 zones
    run = store.load(HDD)
    assert run.profile == "hdd" and run.device.rotational and run.device.write_cache == "WCE"
    assert run.test("hdd-iops").steady.rounds == tuple(range(1, 129))
    doc = show_json(HDD, capsys)
    h = headline(doc, "hdd-iops")
    assert h["rnd_4k_read_qd1_iops"] == pytest.approx(mean(z[0][2] for z in iops))
    assert h["rnd_4k_write_qd1_iops"] == pytest.approx(mean(z[2][2] for z in iops))
    z = headline(doc, "hdd-zones")
    assert z["seq_read_outer_mb_s"] == pytest.approx(tp[0][0][0] * 1024 / 1e6)
    assert z["seq_write_inner_mb_s"] == pytest.approx(tp[0][1][-1] * 1024 / 1e6)
    assert headline(doc, "hdd-zones-4k")["seq_write_zone_mean_mb_s"] == pytest.approx(mean(tp[1][1]) * 1024 / 1e6)
    step = 1000204 * 10 ** 6 // 128 // 4096 * 4096  # TKperf: capacity / 128, aligned down to 4 KiB
    data = run.test("hdd-zones").data
    assert data["zone.1.offset"] == "0" and data["zone.128.offset"] == str(127 * step)


def _with_wsat(iops, lats, rndnr):
    data = open(APACER, "rb").read()
    old = data[data.index(b"<writesat>"):data.index(b"</writesat>")]
    new = old[:old.index(b"<roundmat>")] + b"<roundmat>" + json.dumps([iops, lats]).encode() + \
        b"</roundmat><rndnr>" + str(rndnr).encode() + b"</rndnr>"
    return data.replace(old, new)


def test_a_full_day_of_wsat_as_1x_counted_it():
    """TKperf 1.x stored 1440 as the last round of a WSAT that ran all 24 h
    of one-minute rounds (2.x: 1439); both are read, anything else is refused."""
    iops, lats = [10000 + i % 7 for i in range(1440)], [[5.0, 900.0, 400.0]] * 1440
    for rndnr in (1439, 1440):
        test = store.loads(_with_wsat(iops, lats, rndnr), "old.xml").test("wsat")
        assert test.done == 1440 and test.stop_reason.startswith("time limit")
    with pytest.raises(ResultFileError, match="is 1441, but <roundmat> holds 1440 rounds"):
        store.loads(_with_wsat(iops, lats, 1441), "old.xml")
    with pytest.raises(ResultFileError, match="IOPS per round has 1441 values; TKperf writes 1 to 1440"):
        store.loads(_with_wsat(iops + [1], lats + [[1.0, 2.0, 3.0]], 1440), "old.xml")


def test_feature_matrix_and_unknown_elements():
    run = store.load(APACER)
    assert run.features == [("Form factor", "2.5 inch"), ("NAND", "MLC")]
    data = open(APACER, "rb").read().replace(b"<kernel>", b"<raidconfig>{}</raidconfig><kernel>", 1)
    run = store.loads(data, "old.xml")
    assert any("raidconfig" in e.message for e in run.events if e.kind == "note")


def test_a_test_without_rounds_is_left_out_with_a_note():
    """One 2.x commit returned from LAT's run() before its rounds: an empty roundmat."""
    data = open(S840, "rb").read()
    start, end = data.index(b"<lat>"), data.index(b"</lat>")
    lat = data[start:end]
    empty = lat[:lat.index(b"<roundmat>")] + b"<roundmat>[]</roundmat>"
    run = store.loads(data.replace(lat, empty), "old.xml")
    assert [t.key for t in run.tests] == ["iops"]
    assert any("<lat> (an empty roundmat" in e.message for e in run.events)
    iops = data[data.index(b"<iops>"):data.index(b"</iops>")]
    only_empty = data.replace(lat, empty).replace(iops, b"<iops><roundmat>[]</roundmat>")
    with pytest.raises(ResultFileError, match="no test of this original TKperf file holds a measured round"):
        store.loads(only_empty, "old.xml")


@pytest.mark.parametrize("name,model,serial,size", [
    ("facts/hdparm-I-seagate-st9320423as-frozen.txt", "ST9320423AS", "5VH5M0LY", 320072 * 10 ** 6),
    ("facts/hdparm-I-crucial-m4-ct128m4ssd2-locked.txt", "M4-CT128M4SSD2", "", 128035 * 10 ** 6),
    ("facts/sg_readcap-16-toshiba-mk1059gs-sata.txt", "", "", 1000204886016),
    ("purge/sg_readcap-hitachi-husmh842-type2.txt", "", "", 100030242816)])
def test_devinfo_lines_as_tkperf_kept_them(name, model, serial, size):
    """Real recorded hdparm -I and sg_readcap output, filtered as TKperf filtered it."""
    keep = ("Model Number", "Serial Number", "Firmware Revision", "device size with M = 1000*1000", "Device size")
    devinfo = "".join(line + "\n" for line in open(data_path(name)).read().split("\n") if any(k in line for k in keep))
    facts = tkperf2_run.device_facts(devinfo)
    assert (facts.get("model", ""), facts.get("serial", "")) == (model, serial)
    assert tkperf2_run.capacity(facts, "old.xml")[0] == size


# --- steady state: recomputed, held against the file's own --------------------------------------------

def test_agreeing_verdicts_are_noted():
    run = store.load(APACER)
    verdicts = run.facts["imported"]["steady_state"]
    assert {k: v["agree"] for k, v in verdicts.items() if v["file"]} == {"iops": True, "lat": True, "tp-1024k": True}
    iops = verdicts["iops"]["file"]
    assert iops["rounds"] == [1, 2, 3, 4, 5] and iops["average"] == element(APACER, "iops", "stdyavg")
    assert iops["slope"] == pytest.approx(run.test("iops").steady.slope)
    assert iops["intercept"] == pytest.approx(run.test("iops").steady.intercept)  # rounds now count from 1
    assert not [e for e in run.events if e.kind == "warning"]


def test_a_disagreement_is_reported_not_hidden(tmp_path, capsys):
    """The 4K-native file: TKperf tracked 8k (its next-to-last block size) and
    stopped steady; tkperf tracks 4k, which is not steady in that window."""
    run = store.load(XG6)
    rec = run.facts["imported"]["steady_state"]["iops"]
    assert rec["agree"] is False and rec["file"]["steady"] is True and rec["tkperf"]["steady"] is False
    warning = next(e for e in run.events if e.kind == "warning" and e.test == "iops")
    assert "rnd-8k-0-100" in warning.message and "NOT reached" in warning.message
    assert rec["file"]["slope"] == element(XG6, "iops", "stdyslope")[-2]  # the last of the appended pairs
    assert not run.test("iops").steady.steady
    assert main(["import", XG6, "-o", str(tmp_path / "xg6.xml")]) == EXIT_OK
    assert "iops: TKperf's verdict and tkperf's 20/10 check DISAGREE" in capsys.readouterr().out


def test_a_verdict_the_numbers_do_not_support(tmp_path):
    data = open(APACER, "rb").read()
    lat = data.index(b"<lat>")
    bad = data[:lat] + data[lat:].replace(b"<reachstdystate>true", b"<reachstdystate>false", 1)
    run = store.loads(bad, "edited.xml")
    rec = run.facts["imported"]["steady_state"]["lat"]
    assert rec["agree"] is False and run.test("lat").steady.steady
    assert any(e.kind == "warning" and e.test == "lat" and "says steady state was NOT reached" in e.message
               for e in run.events)


# --- import, round trip, report, compare, check ---------------------------------------------------------

def test_import_round_trip_keeps_every_number(tmp_path, capsys):
    new = str(tmp_path / "apacer.xml")
    assert main(["import", APACER, "-o", new]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"-> {new}" in out and "not recorded:" in out
    old_doc, new_doc = show_json(APACER, capsys), show_json(new, capsys)
    assert [t["headline"] for t in new_doc["tests"]] == [t["headline"] for t in old_doc["tests"]]
    assert headline(new_doc, "iops")["rnd_4k_write_iops"] == pytest.approx(
        mean(m[6][6] for m in element(APACER, "iops", "roundmat")))
    run = store.load(new)
    assert run.events[0].kind == "import" and run.facts["imported"]["version"] == "2.2"
    assert json.loads(run.test("iops").data["tkperf2.roundmat"]) == element(APACER, "iops", "roundmat")
    assert json.loads(run.test("tp-512").data["tkperf2.roundmat"]) == element(APACER, "tp", "roundmat")[4]


def test_import_default_name_and_refusals(tmp_path, capsys):
    old = tmp_path / "s840.xml"
    old.write_bytes(open(S840, "rb").read())
    assert main(["import", str(old)]) == EXIT_OK
    assert (tmp_path / "s840.tkperf.xml").exists()
    assert main(["import", str(old)]) == EXIT_OUTPUT  # exists
    assert main(["import", str(old), "--force"]) == EXIT_OK
    assert main(["import", str(old), "-o", str(old)]) == EXIT_USAGE
    assert main(["import", str(tmp_path / "s840.tkperf.xml"), "-o", str(tmp_path / "x.xml")]) == EXIT_RESULT_FILE
    assert "already a tkperf result file" in capsys.readouterr().err


def test_report_from_an_old_file_with_charts(tmp_path):
    assert main(["report", APACER, "--outdir", str(tmp_path), "--format", "rst,html", "-q"]) == EXIT_OK
    rst = (tmp_path / "apacer-as340.rst").read_text()
    assert "imported from ssd-2.2-apacer.xml" in rst and "Apacer AS340 120GB" in rst
    pngs = os.listdir(tmp_path / "apacer-as340-plots")
    assert {"iops-iops-matrix.svg", "lat-convergence.svg", "tp-1024k-window.svg", "wsat-iops-vs-time.svg"} <= set(pngs)
    assert (tmp_path / "apacer-as340.html").stat().st_size > 0


def test_compare_an_old_file_with_a_new_run(tmp_path):
    assert main(["compare", APACER, EXAMPLE, "--outdir", str(tmp_path), "--format", "rst", "-q"]) == EXIT_OK
    rst = (tmp_path / "comparison.rst").read_text()
    assert "apacer-as340" in rst and "example-ssd" in rst


def test_check_an_import_against_its_old_file_and_a_worse_one(tmp_path, capsys):
    new = str(tmp_path / "new.xml")
    assert main(["import", XG6, "-o", new]) == EXIT_OK
    assert main(["check", new, "--baseline", XG6]) == EXIT_OK
    mats = element(XG6, "iops", "roundmat")
    worse = open(XG6, "rb").read().replace(json.dumps(mats).encode(),
                                           json.dumps([[[v // 2 for v in row] for row in m] for m in mats]).encode())
    (tmp_path / "worse.xml").write_bytes(worse)
    capsys.readouterr()
    assert main(["check", str(tmp_path / "worse.xml"), "--baseline", new]) == EXIT_REGRESSION
    assert "REGRESSION" in capsys.readouterr().out


def test_not_recorded_is_said_not_invented():
    run = store.load(APACER)
    assert run.test("iops").purge.method == "not recorded" and run.test("iops").wipc is None
    lat = [w for r in run.test("lat").rounds for w in r.workloads]
    assert len(lat) > 0 and all(not w.read.percentiles and not w.write.percentiles for w in lat)
    assert set(run.options) == {"tests", "numjobs", "iodepth", "runtime", "refill_buffers", "iops_bs", "iops_mixes",
                                "lat_bs", "lat_mixes", "tp_bs"}
    assert run.options["refill_buffers"] == "true"  # -rfb: xargs ["refill_buffers"]
    assert "pts" not in run.options and "active_range" not in run.options
    lines = summary.lines(run)
    assert lines[0].startswith("apacer-as340: Apacer AS340 120GB (120.0 GB")


# --- bad and hostile old files --------------------------------------------------------------------------

BAD = {
    "truncated": (lambda d: d[: len(d) // 2], "not valid XML (truncated or corrupt?)"),
    "bad-json": (lambda d: d.replace(b"<iodepth>16</iodepth>", b"<iodepth>16,</iodepth>", 1),
                 "<iops>/<iodepth> is not JSON"),
    "nan": (lambda d: d.replace(b"[[[318,", b"[[[NaN,", 1), "<iops>/<roundmat> is not JSON (NaN"),
    "huge-number": (lambda d: d.replace(b"[[[520000,", b"[[[1e308,", 1),
                    "<tp>/<roundmat> 1024k read KB/s, value 1 is not a finite number fio could have reported"),
    "deep-json": (lambda d: d.replace(b"<rndnr>4</rndnr>", b"<rndnr>" + b"[" * 200000 + b"</rndnr>", 1),
                  "<iops>/<rndnr>"),
    "wrong-shape-mixes": (lambda d: d.replace(b"[[[318, 2544, 5088, 9540, 16960, 25440, 38160, 40280], ",
                                              b"[[", 1), "<iops>/<roundmat> round 1 has 6 R/W mixes"),
    "wrong-shape-cell": (lambda d: d.replace(b"[[[318, 2544,", b"[[[[318], 2544,", 1),
                         "<iops>/<roundmat> round 1, R/W 100/0, 1024k is [318], not a number"),
    "wrong-shape-tp": (lambda d: d.replace(b"<roundmat>[[[520000", b"<roundmat>[[[520000, 1", 1),
                       "<tp>/<roundmat> 1024k has 6 read and 5 write rounds"),
    "wrong-last-round": (lambda d: d.replace(b"<rndnr>9</rndnr>", b"<rndnr>12</rndnr>", 1),
                         "<writesat>/<rndnr> is 12, but <roundmat> holds 10 rounds"),
    "doctype": (lambda d: b'<!DOCTYPE apacer-as340 [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n' + d,
                "has a DOCTYPE"),
    "newer-tkperf": (lambda d: d.replace(b'"2.2"', b'"3.0"', 1), "written by TKperf 3.0"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_old_files_give_one_line_and_exit_7(name, tmp_path, capsys):
    change, message = BAD[name]
    data = change(open(APACER, "rb").read())
    assert data != open(APACER, "rb").read()
    path = tmp_path / "old.xml"
    path.write_bytes(data)
    with pytest.raises(ResultFileError) as err:
        store.load(str(path))
    assert message in str(err.value) and "\n" not in str(err.value)
    for argv in (["show", str(path)], ["show", str(path), "--json"], ["import", str(path), "-o", str(tmp_path / "n")],
                 ["check", str(path), "--baseline", APACER], ["report", str(path), "--outdir", str(tmp_path)],
                 ["compare", APACER, str(path), "--outdir", str(tmp_path / "c")]):
        assert main(argv) == EXIT_RESULT_FILE, argv
        err_text = capsys.readouterr().err
        assert err_text.count("\n") == 1 and message in err_text and "Traceback" not in err_text
    assert not (tmp_path / "n").exists()


def test_huge_old_files_are_refused_before_reading(tmp_path, monkeypatch, capsys):
    path = tmp_path / "old.xml"
    path.write_bytes(open(APACER, "rb").read())
    monkeypatch.setattr(store, "MAX_FILE_BYTES", 1000)
    monkeypatch.setattr(tkperf2, "MAX_FILE_BYTES", 1000)
    for argv in (["show", str(path)], ["import", str(path), "-o", str(tmp_path / "n.xml")]):
        assert main(argv) == EXIT_RESULT_FILE
        assert "larger than the 1000 byte limit" in capsys.readouterr().err
    with pytest.raises(ResultFileError, match="larger than the 1000 byte limit"):
        tkperf2_run.loads(open(APACER, "rb").read(), "old.xml")
