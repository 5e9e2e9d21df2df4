"""fio's CPU use: parsed per workload, and one warning per test when the
host CPU, not the drive, may have been the limit."""
import json

import pytest

from conftest import data_path, needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.engine import multi
from tkperf.fio import backend, output
from tkperf.fio.output import CPU_BOUND_MARK, CPU_BOUND_PCT, cpu_bound_warning, parse_jobs
from tkperf.model.results import Workload


def load(name):
    with open(data_path(name)) as fh:
        return json.load(fh)


def spec(rw, bs, mix=0, numjobs=1, iodepth=1):
    return dict(rw=rw, bs=bs, rwmixread=mix, numjobs=numjobs, iodepth=iodepth)


def cpu_of(job):
    return job["usr_cpu"] + job["sys_cpu"]


# --- parsing ----------------------------------------------------------------

def test_one_job_is_usr_plus_sys():
    report = load("fio-3.33-mixed.json")
    (w,) = parse_jobs(report, {"randrw-8k-65-35": spec("randrw", 8192, 65)})
    (job,) = report["jobs"]
    assert w.cpu_pct == pytest.approx(cpu_of(job))
    assert w.cpu_pct == pytest.approx(3.1 + 45.0)  # the file's numbers, not sys alone


def test_jobs_reported_apart_keep_the_busiest():
    report = load("fio-3.33-numjobs-separate.json")
    (w,) = parse_jobs(report, {"rnd-4k-0-100": spec("randwrite", 4096, 0, 2, 4)})
    figures = [cpu_of(j) for j in report["jobs"]]
    assert len(figures) == 2 and figures[0] != figures[1]
    assert w.cpu_pct == pytest.approx(max(figures))
    assert w.cpu_pct == pytest.approx(4.1 + 28.7)


def test_grouped_workloads_each_keep_their_own():
    report = load("fio-3.33-round-stonewall.json")
    names = ["rnd-4k-100-0", "rnd-4k-65-35", "rnd-4k-0-100"]
    specs = {n: spec("randrw", 4096, int(n.split("-")[2]), 2, 4) for n in names}
    ws = parse_jobs(report, specs)
    assert [w.cpu_pct for w in ws] == pytest.approx([cpu_of(j) for j in report["jobs"]])
    assert [w.cpu_pct for w in ws] == pytest.approx([0.85 + 7.2, 2.55 + 8.65, 4.05 + 24.55])


def test_a_report_without_cpu_figures_gives_zero():
    report = load("fio-3.33-read.json")
    for job in report["jobs"]:
        del job["usr_cpu"], job["sys_cpu"]
    (w,) = parse_jobs(report, {"randread-4k": spec("randread", 4096, 100, 1, 8)})
    assert w.cpu_pct == 0.0


# --- the decision -------------------------------------------------------------

def wl(name, cpu, numjobs=1):
    return Workload(name=name, rw="randwrite", bs=4096, rwmixread=0, numjobs=numjobs,
                    iodepth=32, runtime_ms=1000, cpu_pct=cpu)


def test_threshold_is_most_of_one_cpu():
    assert 80.0 <= CPU_BOUND_PCT < 100.0


@pytest.mark.parametrize("cpus", [[], [0.0], [12.5, 48.0], [CPU_BOUND_PCT - 0.1]])
def test_no_warning_below_the_threshold(cpus):
    assert cpu_bound_warning([wl(f"w{i}", c) for i, c in enumerate(cpus)]) == ""


@pytest.mark.parametrize("cpus, busiest, shown", [
    ([CPU_BOUND_PCT], "w0", f"{CPU_BOUND_PCT:.1f}%"),
    ([20.0, 97.25, 93.0], "w1", "97.2%"),
    ([99.96, 10.0], "w0", "100.0%"),
])
def test_warning_names_the_busiest_workload_and_its_share(cpus, busiest, shown):
    text = cpu_bound_warning([wl(f"w{i}", c) for i, c in enumerate(cpus)])
    assert text == (f"fio used {shown} of one CPU per job (usr+sys) in workload {busiest}: "
                    "the host CPU, not the drive, may have limited the result")
    assert CPU_BOUND_MARK in text


@pytest.mark.parametrize("sharing, said", [
    ({"runs": 3, "host_cpus": 4, "targets": []}, "; 3 runs shared the host and its 4 CPUs"),
    ({"runs": 2, "host_cpus": 0, "targets": []}, "; 2 runs shared the host"),
    ({"runs": 1, "host_cpus": 4, "targets": []}, ""),
    (None, ""),
    ("not a dict", ""),
    ({"runs": "2"}, ""),
])
def test_warning_says_when_other_runs_shared_the_host(sharing, said):
    text = cpu_bound_warning([wl("busy", 95.0)], sharing)
    assert text.endswith("may have limited the result" + said)


def test_threshold_can_be_given():
    ws = [wl("a", 50.0), wl("b", 60.0)]
    assert cpu_bound_warning(ws, threshold=55.0).endswith("in workload b: " + CPU_BOUND_MARK)
    assert cpu_bound_warning(ws, threshold=60.5) == ""


# --- end to end -----------------------------------------------------------------

SHARING = {"runs": 2, "host_cpus": 7, "targets": [{"name": "t", "device": "x"},
                                                    {"name": "u", "device": "y"}]}


@needs_fio
@pytest.mark.parametrize("threshold", [None, 0.0], ids=["as-shipped", "always-over"])
def test_quick_run_records_the_warning_as_parsed(loopdev, tmp_path, monkeypatch, threshold):
    """A real quick IOPS run: the warning is there exactly when a round's
    parsed CPU use reached the threshold, once for the test, from the first
    such round.  With the threshold at 0 every round is over it, so the run
    must still hold one warning (and says the host was shared, as told)."""
    parsed = []

    def spy(report, specs, *what):
        found = parse_jobs(report, specs, *what)
        parsed.append(found)
        return found

    monkeypatch.setattr(backend, "parse_jobs", spy)
    if threshold is not None:
        monkeypatch.setattr(output, "CPU_BOUND_PCT", threshold)
        monkeypatch.setenv(multi.HOST_SHARING_ENV, json.dumps(SHARING))
    limit = output.CPU_BOUND_PCT
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--tests", "iops", "--quick", "--yes", "--quiet",
               "--bs", "4k", "--mix", "0/100,100/0", "--max-rounds", "2",
               "--name", "t", "--outdir", str(out)])
    assert rc == 0
    run = store.load(str(out / "t.xml"))
    (t,) = run.tests
    assert len(t.rounds) == 2
    names = [w.name for w in t.rounds[0].workloads]
    rounds = [ws for ws in parsed if [w.name for w in ws] == names]
    assert len(rounds) == 2  # one fio report per round, besides the WIPC's
    assert all(w.cpu_pct > 0 for ws in rounds for w in ws)  # fio always uses some CPU
    warnings = [e for e in run.events if CPU_BOUND_MARK in e.message]
    over = [i for i, ws in enumerate(rounds, 1) if max(w.cpu_pct for w in ws) >= limit]
    if not over:
        assert warnings == []
        return
    (event,) = warnings
    assert event.kind == "warning" and event.test == "iops" and event.round == over[0]
    busiest = max(rounds[over[0] - 1], key=lambda w: w.cpu_pct)
    assert f"{busiest.cpu_pct:.1f}% of one CPU" in event.message
    assert f"in workload {busiest.name}:" in event.message
    if threshold is not None:
        assert over == [1, 2]
        assert event.message.endswith("; 2 runs shared the host and its 7 CPUs")


def test_cpu_use_is_not_part_of_a_workloads_identity():
    """The result file does not keep it, so a stored round trip stays equal."""
    assert wl("a", 95.0) == wl("a", 0.0)
    assert wl("a", 95.0) != wl("b", 95.0)
