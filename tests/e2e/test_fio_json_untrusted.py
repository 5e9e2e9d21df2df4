"""fio's own output is untrusted (issue 32, class 3).

A real ``tkperf ssd run`` on a real loop device, with fio replaced through
``PATH`` by a script that runs the REAL fio and then corrupts its JSON in one
chosen way: NaN, 1e999, a negative latency, a missing ``iops``, an ``iops``
that fio's own counts contradict, a missing or doubled workload.  Each is a
fio failure: exit 6, one line naming the workload and the field, the round
not recorded, and ``tkperf resume`` with the real fio completes the run.

The unit tests make the recorded reports of tests/data (real fio 3.33
output, see tests/data/README.rst) hostile in memory, through the same
checks the local and the remote (``client_stats``) paths use."""
import copy
import json
import os
import shutil

import pytest

from conftest import needs_fio
from test_remote import QUICK as REMOTE_QUICK
from test_remote import loops, remote_options, servers  # noqa: F401 - fixtures
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, FioError
from tkperf.fio.checks import check_job, check_stream_report
from tkperf.fio.intervals import IntervalCutter
from tkperf.fio.output import first_json_object, json_objects, parse_jobs
from tkperf.remote.fio import client_jobs

REAL_FIO = shutil.which("fio")
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
JOB = "rnd-4k-0-100"  # the one workload of --tests lat --lat-bs 4k --lat-mix 0/100: all writes

#: The corrupting fio: runs the real one, then changes the first job of its
#: JSON report as MODE says (placeholders become tokens json cannot write).
CORRUPTER = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
REAL, MODE = {real!r}, {mode!r}
args = sys.argv[1:]
if args[:1] == ["--version"] or not any(
        a.endswith(".fio") and "time_based" in open(a).read() for a in args):
    os.execv(REAL, [REAL] + args)  # WIPC runs untouched: the failure hits a round
proc = subprocess.run([REAL] + args, stdout=subprocess.PIPE, text=True)
out = proc.stdout
start = out.find("{{")
report, end = json.JSONDecoder().raw_decode(out, start)
if "jobs" in report:
    jobs = report["jobs"]
else:  # fio --client: the entries of client_stats, less the sum of all clients
    jobs = [e for e in report["client_stats"] if e.get("jobname") != "All clients"]
w = jobs[0]["write"]
if MODE == "nan":
    w["iops"] = "@NAN@"
elif MODE == "inf":
    w["lat_ns"]["mean"] = "@INF@"
elif MODE == "neglat":
    w["clat_ns"]["min"] = -5
elif MODE == "noiops":
    del w["iops"]
elif MODE == "iops":
    w["iops"] = w["iops"] * 3 + 1000
elif MODE == "missing":
    del jobs[0]
text = json.dumps(report, indent=1).replace('"@NAN@"', "NaN").replace('"@INF@"', "1e999")
sys.stdout.write(out[:start] + text + out[end:])
sys.exit(proc.returncode)
'''

CASES = [
    ("nan", "write.iops is not a finite number (NaN)"),
    ("inf", "write.lat_ns.mean is not a finite number (1e999)"),
    ("neglat", "write.clat_ns.min is negative (-5)"),
    ("noiops", "write.iops is missing"),
    ("iops", "write.iops is "),
    ("missing", f"fio's report lacks workload {JOB} of lat round 1"),
]
# (a mean outside min..max and a doubled workload: the unit tests below)


def corrupting_fio(tmp_path, mode):
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    script = bindir / "fio"
    script.write_text(CORRUPTER.format(real=REAL_FIO, mode=mode))
    script.chmod(0o755)
    return str(bindir)


def run(loopdev, out):
    return main(["ssd", "run", loopdev, "--name", "f", "--outdir", str(out), "--tests", "lat",
                 "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1", "--wipc-loops", "1",
                 "--max-rounds", "2", "--yes", "--no-report", "-q"])  # 2 rounds: the resume completes


@needs_fio
@pytest.mark.parametrize("mode, words", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_fio_report_is_a_fio_failure_and_the_run_resumes(mode, words, loopdev, tmp_path,
                                                                   monkeypatch, capsys):
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", corrupting_fio(tmp_path, mode) + os.pathsep + path)
    out = tmp_path / "out"
    rc = run(loopdev, out)
    err = capsys.readouterr().err
    assert rc == EXIT_FIO, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    assert len(lines) == 1, err
    assert words in lines[0] and JOB in lines[0] and "lat round 1" in lines[0], lines[0]
    saved = store.load(str(out / "f.xml"))
    assert saved.status == "failed"
    (t,) = saved.tests
    assert t.status == "failed" and t.rounds == []  # nothing of the hostile report is kept
    assert t.wipc is not None
    # The real fio again: the run resumes from where it stopped and completes.
    monkeypatch.setenv("PATH", path)
    assert main(["resume", str(out / "f.xml"), "--yes", "--no-report", "-q"]) == 0
    done = store.load(str(out / "f.xml"))
    assert done.status == "complete"
    (t,) = done.tests
    assert t.rounds and all(w.write.ios > 0 and w.write.iops > 0 and w.read.ios == 0
                            for r in t.rounds for w in r.workloads)


#: A fio that passes a ``--status-interval`` stream through as it comes,
#: each report whole, with the write latency of the third and later ones
#: made negative (the earlier ones are cut into intervals as usual).
STREAMER = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
REAL = {real!r}
args = sys.argv[1:]
if not any(a.startswith("--status-interval") for a in args):
    os.execv(REAL, [REAL] + args)
proc = subprocess.Popen([REAL] + args, stdout=subprocess.PIPE, text=True)
buf, n = "", 0
for line in proc.stdout:
    buf += line
    if line.rstrip("\n") != "}}":
        continue
    start = buf.find("{{")
    report = json.loads(buf[start:])
    n += 1
    if n >= 3:
        for job in report["jobs"]:
            job["write"]["lat_ns"]["mean"] = -1.5
    sys.stdout.write(buf[:start] + json.dumps(report, indent=1) + "\n")
    sys.stdout.flush()
    buf = ""
sys.stdout.write(buf)
sys.exit(proc.wait())
'''


@needs_fio
def test_a_hostile_status_report_stops_a_stream(loopdev, tmp_path, monkeypatch, capsys):
    bindir = tmp_path / "streambin"
    bindir.mkdir()
    (bindir / "fio").write_text(STREAMER.format(real=REAL_FIO))
    (bindir / "fio").chmod(0o755)
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + path)
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--tests", "wsat", "--quick", "--yes", "-q", "--no-report",
               "--outdir", str(out), "--name", "s"])
    err = capsys.readouterr().err
    assert rc == EXIT_FIO, err
    lines = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "fio's JSON is inconsistent in workload " in lines[0]
    assert "write.lat_ns.mean is negative (-1.5)" in lines[0]
    saved = store.load(str(out / "s.xml"))
    assert saved.status == "failed"
    monkeypatch.setenv("PATH", path)
    assert main(["resume", str(out / "s.xml"), "--yes", "--no-report", "-q"]) == 0
    assert store.load(str(out / "s.xml")).status == "complete"


@needs_fio
def test_a_hostile_fio_client_report_fails_a_remote_run(ssh_lab, servers, loops, tmp_path, monkeypatch,  # noqa: F811
                                                        capsys):
    """A remote target: the fio client (here, on PATH) prints a NaN in its
    client_stats; the run on the test host fails the same way, and resumes."""
    (dev,) = loops(1)
    port = servers[0].port
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", corrupting_fio(tmp_path, "nan") + os.pathsep + path)
    out = tmp_path / "out"
    rc = main(["ssd", "run", f"127.0.0.2:{dev}", *REMOTE_QUICK, "--max-rounds", "1", "--no-report", "-q",
               "--name", "r", "--outdir", str(out), *remote_options(ssh_lab, port)])
    err = capsys.readouterr().err
    assert rc == EXIT_FIO, err
    lines = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"workload {JOB} of lat round 1: write.iops is not a finite number (NaN)" in lines[0]
    assert store.load(str(out / "r.xml")).tests[0].rounds == []
    monkeypatch.setenv("PATH", path)
    assert main(["resume", str(out / "r.xml"), "--yes", "--no-report", "-q",
                 *remote_options(ssh_lab, port)[:4]]) == 0
    assert store.load(str(out / "r.xml")).status == "complete"


# --- unit tests on recorded reports -----------------------------------------

def recorded(name):
    with open(os.path.join(DATA, name)) as fh:
        return fh.read()


def spec(rw, bs, numjobs=1):
    return dict(rw=rw, bs=bs, rwmixread=0 if "write" in rw else 100, numjobs=numjobs, iodepth=1)


WRITE = ("fio-3.33-write.json", {"seqwrite-128k": spec("write", 131072)})


def _parse(text, specs=WRITE[1]):
    return parse_jobs(first_json_object(text), specs, "test round 1")


def test_the_recordings_pass_as_they_are():
    for name in ("fio-3.33-write.json", "fio-3.33-read.json", "fio-3.33-mixed.json",
                 "fio-3.33-lat-percentiles.json", "fio-3.33-jsonplus-randread-2jobs.json",
                 "fio-3.33-numjobs.json", "fio-3.33-numjobs-separate.json",
                 "fio-3.33-randrw-2jobs-apart.json"):
        for job in first_json_object(recorded(name))["jobs"]:
            assert check_job(job, name) == job["jobname"]
    # a 100% write job: the read side is all zeros and 0 ms, which is valid
    (w,) = _parse(recorded(WRITE[0]))
    assert w.read.ios == 0 and w.read.iops == 0 and w.write.ios > 0


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999",
                                   "123456789012345678901234567890"])
def test_tokens_that_are_not_finite_numbers_are_named(token):
    text = recorded(WRITE[0])
    job = first_json_object(text)["jobs"][0]
    old = f'"iops" : {job["write"]["iops"]:f}'
    assert old in text
    with pytest.raises(FioError) as exc:
        _parse(text.replace(old, f'"iops" : {token}'))
    assert str(exc.value) == ("fio's JSON is inconsistent in workload seqwrite-128k of test round 1: "
                              f"write.iops is not a finite number ({token[:24]}"
                              + ("...)" if len(token) > 24 else ")"))


def _hostile(mutate, name=WRITE[0]):
    report = first_json_object(recorded(name))
    mutate(report["jobs"][0])
    return report


MUTATIONS = {
    "negative lat mean": (lambda j: j["write"]["lat_ns"].update(mean=-1.0), "write.lat_ns.mean is negative"),
    "negative slat max": (lambda j: j["write"]["slat_ns"].update(max=-3), "write.slat_ns.max is negative"),
    "min over max": (lambda j: j["write"]["clat_ns"].update(min=j["write"]["clat_ns"]["max"] + 1),
                     "write.clat_ns.min ("),
    "mean under min": (lambda j: j["write"]["lat_ns"].update(mean=j["write"]["lat_ns"]["min"] / 2),
                       "write.lat_ns.mean ("),
    "string iops": (lambda j: j["write"].update(iops="42"), "write.iops is not a number ('42')"),
    "bool ios": (lambda j: j["write"].update(total_ios=True), "write.total_ios is not an integer"),
    "float ios": (lambda j: j["write"].update(total_ios=1.5), "write.total_ios is not an integer"),
    "no total_ios": (lambda j: j["write"].pop("total_ios"), "write.total_ios is missing"),
    "no runtime": (lambda j: j["write"].pop("runtime"), "write.runtime is missing"),
    "no bytes": (lambda j: (j["write"].pop("io_bytes"), j["write"].pop("io_kbytes")), "write.io_bytes is missing"),
    "no bw": (lambda j: (j["write"].pop("bw_bytes"), j["write"].pop("bw")), "write.bw_bytes is missing"),
    "no lat": (lambda j: j["write"].pop("lat_ns"), "write.lat_ns is missing"),
    "no write": (lambda j: j.pop("write"), "write is missing"),
    "iops vs ios": (lambda j: j["write"].update(iops=j["write"]["iops"] * 2), "write.iops is "),
    "bytes vs bw": (lambda j: j["write"].update(io_bytes=j["write"]["io_bytes"] // 2,
                                                io_kbytes=j["write"]["io_kbytes"] // 2), "write.bw_bytes is "),
    "kbytes vs bytes": (lambda j: j["write"].update(io_kbytes=1), "write.io_kbytes is 1 but"),
    "bw vs bw_bytes": (lambda j: j["write"].update(bw=1), "write.bw is 1 but"),
    "ios but idle": (lambda j: j["read"].update(iops=5.0), "read.iops is 5 with no I/O counted"),
    "bytes no ios": (lambda j: j["read"].update(io_bytes=4096, io_kbytes=4), "read.io_bytes is 4096 with no I/O"),
    "iops in 0 ms": (lambda j: j["write"].update(runtime=0), "write.iops is"),
    "fewer bytes than ios": (lambda j: j["write"].update(io_bytes=1, io_kbytes=0, bw_bytes=0, bw=0, runtime=0,
                                                          iops=0), "write.io_bytes is 1, less than one byte"),
    "nan cpu": (lambda j: j.update(usr_cpu=float("nan")), "usr_cpu is not a finite number (nan)"),
    "negative cpu": (lambda j: j.update(sys_cpu=-1.0), "job.sys_cpu is negative"),
    "error not errno": (lambda j: j.update(error="EIO"), "error is not an error number"),
    "percentile down": (lambda j: j["write"]["clat_ns"]["percentile"].update({"99.990000": 1}),
                        "write.clat_ns.percentile.99.990000 (1) is smaller"),
    "percentile key": (lambda j: j["write"]["clat_ns"]["percentile"].update({"101": 5}),
                       "write.clat_ns.percentile.'101' is not a percentile"),
    "bad direction": (lambda j: j.update(read=[]), "read is not an object"),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_each_hostile_field_is_named(case):
    mutate, words = MUTATIONS[case]
    with pytest.raises(FioError) as exc:
        parse_jobs(_hostile(mutate), WRITE[1], "test round 1")
    msg = str(exc.value)
    assert msg.startswith("fio's JSON is inconsistent in workload seqwrite-128k of test round 1: "), msg
    assert words in msg and "\n" not in msg, msg


def test_jsonplus_bins_are_counts():
    name = "fio-3.33-jsonplus-randread-2jobs.json"
    specs = {"x": spec("randread", 4096, 2)}
    assert parse_jobs(first_json_object(recorded(name)), specs)
    for bad, words in ((-1, "is negative"), (1.5, "is not an integer"), ("7", "is not an integer")):
        def mutate(j, bad=bad):
            bins = j["read"]["lat_ns"]["bins"]
            bins[next(iter(bins))] = bad
        with pytest.raises(FioError, match=words):
            parse_jobs(_hostile(mutate, name), specs)

    def odd_key(j):
        j["read"]["lat_ns"]["bins"]["-5"] = 1
    with pytest.raises(FioError, match=r"read.lat_ns.bins.'-5' is not a latency in ns"):
        parse_jobs(_hostile(odd_key, name), specs)


def test_clones_reported_apart_count_up_to_numjobs():
    name = "fio-3.33-numjobs-separate.json"
    report = first_json_object(recorded(name))
    specs = {"rnd-4k-0-100": dict(rw="randwrite", bs=4096, rwmixread=0, numjobs=2, iodepth=4)}
    assert len(report["jobs"]) == 2 and parse_jobs(report, specs)
    report["jobs"].append(copy.deepcopy(report["jobs"][0]))
    with pytest.raises(FioError, match="jobname is reported 3 times, for 2 job"):
        parse_jobs(report, specs)


def test_a_client_report_gets_the_same_checks():
    """fio --client's client_stats (a real two-host recording): the remote path
    hands its entries to the same parser."""
    text = recorded(os.path.join("client", "fio-3.33-two-hosts-jsonplus.json"))
    report = first_json_object(text)
    hosts = sorted({e["hostname"] for e in report["client_stats"] if e.get("jobname") != "All clients"})
    entry = next(e for e in report["client_stats"] if e.get("hostname") == hosts[0])
    local = client_jobs(report, hosts[0])
    names = [e["jobname"] for e in local["jobs"]]
    specs = {n: dict(rw="randrw", bs=4096, rwmixread=50, numjobs=names.count(n), iodepth=1) for n in names}
    assert parse_jobs(local, specs)
    side = "read" if entry["read"]["total_ios"] else "write"
    text2 = text.replace(f'"iops" : {entry[side]["iops"]:f}', '"iops" : NaN', 1)
    assert text2 != text
    with pytest.raises(FioError, match=r"is not a finite number \(NaN\)"):
        for host in hosts:
            parse_jobs(client_jobs(first_json_object(text2), host), specs)


def test_stream_reports_are_checked_before_they_are_cut():
    text = recorded("fio-3.33-status-interval.json")
    reports = [obj for obj, _ in json_objects(text)]
    assert len(reports) > 2
    cutter = IntervalCutter(reports[0]["jobs"][0]["jobname"], 1.0, start=0.0)
    for i, r in enumerate(reports):
        cutter.feed(check_stream_report(r, "stream"), float(i + 1))
    assert cutter.count >= 1
    bad = json.loads(json.dumps(reports[-1]))
    bad["jobs"][0]["write"]["lat_ns"]["mean"] = -2.0
    with pytest.raises(FioError, match="inconsistent in workload .* of stream: write.lat_ns.mean is negative"):
        check_stream_report(bad, "stream")
    with pytest.raises(FioError, match="a report has no 'jobs' list"):
        check_stream_report({"jobs": {}}, "stream")
