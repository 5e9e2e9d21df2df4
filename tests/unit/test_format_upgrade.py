"""Format-1 result files (tkperf 0.x) load into the current model; files of a
test type nobody here knows keep its data."""
import glob
import os

import pytest
from lxml import etree

from conftest import DATA
from test_store import sample_run
from tkperf import store
from tkperf.errors import ResultFileError
from tkperf.store import seal
from tkperf.store.legacy import format1 as legacy

FORMAT1 = sorted(glob.glob(os.path.join(DATA, "format1", "*.xml")))


def test_there_are_format1_files():
    assert len(FORMAT1) >= 4


@pytest.mark.parametrize("path", FORMAT1, ids=os.path.basename)
def test_format1_file_upgrades(path, tmp_path):
    old = etree.parse(path).getroot()
    assert old.get("format") == "1"
    run = store.load(path)
    assert [t.type for t in run.tests] == [t.get("name") for t in old.iterfind("test")]
    for t, el in zip(run.tests, old.iterfind("test")):
        rounds = el.findall("round")
        if t.type != "wsat":
            assert len(t.rounds) == len(rounds) and not t.series
            continue
        # the intervals became a series with the rounds' figures, exactly
        assert not t.rounds and list(t.series) == ["intervals"]
        s = t.series["intervals"]
        assert s.columns == ("wall_s", "fio_s", "ios", "io_bytes", "iops", "lat_mean_us")
        assert len(s) == len(rounds) > 0
        write = [r.find("workload/write") for r in rounds]
        assert s.column("iops").tolist() == [float(w.get("iops")) for w in write]
        assert s.column("lat_mean_us").tolist() == [float(w.get("lat-mean-us")) for w in write]
        assert s.column("ios").tolist() == [int(w.get("ios")) for w in write]
        assert s.column("io_bytes").tolist() == [int(w.get("io-bytes")) for w in write]
        assert s.column("wall_s").tolist() == [float(r.get("wall-s")) for r in rounds]
        assert s.column("fio_s").tolist() == [float(r.get("fio-s")) for r in rounds]
        # its steady-state record is kept as it was
        ss = el.find("steadystate")
        assert t.steady is not None and t.steady.average == float(ss.get("average"))
        assert list(t.steady.values) == [float(p.get("value")) for p in ss.iterfind("point")]
        assert t.tracking_values()[0][1] == float(write[0].get("iops"))
    # saved, it is a file of the current format that loads back equal
    out = tmp_path / "upgraded.xml"
    store.save(run, str(out))
    assert etree.parse(str(out)).getroot().get("format") == str(store.FORMAT_VERSION)
    back = store.load(str(out))
    assert back == run
    store.save(back, str(tmp_path / "again.xml"))
    assert (tmp_path / "again.xml").read_bytes() == out.read_bytes()


def test_format1_is_checked_against_its_own_schema():
    with open(FORMAT1[0], "rb") as fh:
        data = fh.read()
    with pytest.raises(ResultFileError, match="not a valid tkperf result"):
        store.loads(data.replace(b'name="iops"', b'name="nosuchtest"', 1), "old.xml")
    with pytest.raises(ResultFileError, match="not a valid tkperf result"):
        store.loads(data.replace(b'<test name="iops"', b'<test type="iops"', 1), "old.xml")
    assert os.path.isfile(legacy.SCHEMA_1_PATH)


UNKNOWN_TEST = b"""  <test type="acme-endurance" key="acme-1" status="complete" started="s" finished="f" \
stop-reason="done">
    <tracking workload="" metric="" label=""/>
    <params><param name="cycles" value="3"/></params>
    <series id="acme-1.cycles" name="cycles" columns="cycle hours iops"/>
    <data>
      <item name="vendor-note" value="a &lt;note&gt; &amp; more"/>
      <item name="phase.1" value="cold"/>
    </data>
  </test>
</tkperf>
<?tkperf-row acme-1.cycles 1 1 0.5 1000.25?>
<?tkperf-row acme-1.cycles 2 2 1 990?>
"""


def test_unknown_test_type_keeps_its_data(tmp_path):
    data = store.dumps(sample_run())
    data = seal.sealed(data[: data.index(b"</tkperf>")] + UNKNOWN_TEST)
    run = store.loads(data, "acme.xml")
    t = run.test("acme-1")
    assert t.type == "acme-endurance"
    assert t.data == {"vendor-note": "a <note> & more", "phase.1": "cold"}
    assert t.raw is not None and t.raw.startswith(b"<data>")
    assert t.series["cycles"].column("iops").tolist() == [1000.25, 990.0]
    # a test type's code could change t.data; one not installed keeps raw, written back as it was
    t.data = {}
    path = tmp_path / "acme.xml"
    store.save(run, str(path))
    old = etree.fromstring(data[: data.index(b"</tkperf>") + 9], store.safe_parser())
    new = etree.parse(str(path), store.safe_parser()).getroot()
    assert etree.tostring(new.find("test[@key='acme-1']/data")) == \
        etree.tostring(old.find("test[@key='acme-1']/data"))
    back = store.load(str(path))
    assert back.test("acme-1").raw == t.raw
    assert back.test("acme-1").data == {"vendor-note": "a <note> & more", "phase.1": "cold"}
    assert back.test("acme-1").series == t.series


def test_test_data_is_written_when_there_is_no_raw(tmp_path):
    run = sample_run()
    run.tests[0].data = {"phase.1": "busy", "idle.1": "30.0"}
    path = tmp_path / "d.xml"
    store.save(run, str(path))
    back = store.load(str(path))
    assert back.tests[0].data == run.tests[0].data
    assert back.tests[0].raw == b'<data><item name="phase.1" value="busy"/><item name="idle.1" value="30.0"/></data>'
    run.tests[0].data = {}
    store.save(run, str(path))
    assert store.load(str(path)).tests[0].raw is None
