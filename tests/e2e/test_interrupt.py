"""Kill a real run on a loop device at several points; the XML must always
parse and validate, no fio may be left, and resume must finish the run with
the same tests and rounds as an uninterrupted one."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_LOCKED, EXIT_RESUME
from tkperf.target.loopdev import try_loop

pytestmark = needs_fio
MiB = 1024 * 1024
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Two tests, one workload each, 2 rounds (never steady: fewer than 5), so an
# uninterrupted run always has exactly: iops 2 rounds, lat 2 rounds.
RUN = ["--tests", "iops,lat", "--bs", "4k", "--mix", "0/100", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture",
       "0",
       "--runtime", "1", "--max-rounds", "2", "-nj", "1", "-iod", "4", "--yes", "--no-report"]


@pytest.fixture
def bigloop(tmp_path):
    loop, why = try_loop(512 * MiB, str(tmp_path))
    if loop is None:
        pytest.skip(why)
    try:
        yield loop.path
    finally:
        loop.__exit__(None, None, None)


def start(dev, out):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.Popen([sys.executable, "-m", "tkperf", "ssd", "run", dev, "--name", "k",
                             "--outdir", str(out), *RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def signal_on(proc, marker, sig, delay, out=None):
    """Send ``sig`` ``delay`` s after a stderr progress line contains ``marker``;
    with ``out``, once the next round's fio runs after that line (a round's
    line comes after its fio has ended): the run is mid-round then, however
    late a loaded host starts it, where a fixed delay may still find it
    between rounds."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if marker in line:
            if out is not None:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and proc.poll() is None and \
                        not [p for p in fio_of(out) if int(p) != proc.pid]:
                    time.sleep(0.02)
            time.sleep(delay)
            proc.send_signal(sig)
            break
    rest = proc.communicate(timeout=120)
    return "".join(seen) + rest[1]


def fio_of(out):
    res = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True)
    return [p for p in res.stdout.split() if int(p) != os.getpid()]


# (id, progress line to wait for, signal, delay, exit code, where the run says it stopped);
# a "mid-round" point waits for the next round's fio, then signals at once
POINTS = [
    ("sigint-purge", "[iops] purge", signal.SIGINT, 0.0, 130, ("purge of iops", "WIPC of iops")),
    ("sigint-wipc", "[iops] WIPC:", signal.SIGINT, 0.1, 130, ("WIPC of iops",)),
    ("sigint-mid-round", "[iops] round 1:", signal.SIGINT, 0.0, 130, ("round 2 of iops",)),
    ("sigint-between-rounds", "[lat] round 1:", signal.SIGINT, 0.0, 130, ("round 1 of lat", "round 2 of lat")),
    ("sigterm-wipc", "[lat] WIPC:", signal.SIGTERM, 0.1, 143, ("WIPC of lat",)),
    ("sighup-mid-round", "[lat] round 1:", signal.SIGHUP, 0.0, 129, ("round 2 of lat",)),
    ("sigkill-mid-round", "[iops] round 1:", signal.SIGKILL, 0.0, -9, ()),
    ("sigkill-writing-xml", "[iops] round 2:", signal.SIGKILL, 0.0, -9, ()),
    ("sigkill-purge", "[lat] purge", signal.SIGKILL, 0.0, -9, ()),
]


@pytest.mark.parametrize("point", POINTS, ids=[p[0] for p in POINTS])
def test_kill_then_resume(point, bigloop, tmp_path):
    _, marker, sig, delay, code, where = point
    out = tmp_path / "out"
    proc = start(bigloop, out)
    err = signal_on(proc, marker, sig, delay, out if "mid-round" in point[0] else None)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    time.sleep(0.2)
    assert fio_of(out) == [], "fio left running after the run was stopped"
    saved = store.load(str(out / "k.xml"))  # parses and validates
    if sig != signal.SIGKILL:
        assert saved.status == "interrupted"
        (event,) = [e for e in saved.events if e.kind == "interrupted"]
        assert any(f"during {w}" in event.message for w in where), event.message
        assert "completed rounds are saved" in err
        assert f"tkperf: continue the run with: tkperf resume {out / 'k.xml'} --yes" in err
    else:
        assert saved.status == "running"  # the last atomic write before the kill
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")] or sig == signal.SIGKILL

    rc = main(["resume", str(out / "k.xml"), "--yes", "--no-report", "-q"])
    assert rc == 0
    done = store.load(str(out / "k.xml"))
    assert done.status == "complete" and done.resumed
    assert [t.key for t in done.tests] == ["iops", "lat"]
    assert [len(t.rounds) for t in done.tests] == [2, 2]
    assert all(t.status == "complete" and t.purge is not None and t.wipc is not None for t in done.tests)
    assert [r.index for t in done.tests for r in t.rounds] == [1, 2, 1, 2]
    assert not [n for n in os.listdir(out) if n.endswith((".tmp", ".fio"))]


def test_second_run_on_the_same_device_is_refused(bigloop, tmp_path, capsys):
    proc = start(bigloop, tmp_path / "first")
    try:
        for line in proc.stderr:
            if "[iops] round 1:" in line:
                break
        rc = main(["ssd", "run", bigloop, "--quick", "--yes", "--no-report", "--outdir", str(tmp_path / "b")])
        err = capsys.readouterr().err
        assert rc == EXIT_LOCKED
        assert f"(PID {proc.pid})" in err and len(err.strip().splitlines()) == 1
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)


def test_resume_refuses_other_options_and_other_device(bigloop, tmp_path, capsys):
    out = tmp_path / "out"
    proc = start(bigloop, out)
    signal_on(proc, "[iops] round 1:", signal.SIGINT, 0.0)
    base = ["ssd", "run", bigloop, "--name", "k", "--outdir", str(out), "--resume", "-q"]
    rc = main(base + [a if a != "4" else "8" for a in RUN])  # -iod 8 instead of 4
    assert rc == EXIT_RESUME
    assert "option iodepth was '4' in the saved run, now '8'" in capsys.readouterr().err
    other, why = try_loop(256 * MiB, str(tmp_path))
    if other is None:
        pytest.skip(why)
    try:
        rc = main(["ssd", "run", other.path, "--name", "k", "--outdir", str(out), "--resume", "-q", *RUN])
        assert rc == EXIT_RESUME
        assert "not the same device" in capsys.readouterr().err
    finally:
        other.__exit__(None, None, None)
    assert store.load(str(out / "k.xml")).status == "interrupted"  # untouched by the refusals


def test_resume_keeps_a_test_that_had_reached_steady_state(bigloop, tmp_path):
    out = tmp_path / "out"
    rc = main(["ssd", "run", bigloop, "--name", "k", "--outdir", str(out), *RUN, "-q"])
    assert rc == 0
    xml = out / "k.xml"
    run = store.load(str(xml))
    iops = run.tests[0]
    # as if killed after iops reached steady state but before it was marked complete
    from tkperf.model.steadystate import SteadyState
    iops.status, run.status = "running", "running"
    iops.steady = SteadyState(True, (1, 2), (1.0, 1.0), 0.0, 1.0, 1.0, 0.0, 0.0, 5)
    rounds_before = list(iops.rounds)
    run.tests[1].status = "running"
    store.save(run, str(xml))
    assert main(["resume", str(xml), "--yes", "--no-report", "-q"]) == 0
    done = store.load(str(xml))
    assert done.tests[0].rounds == rounds_before  # kept, not rerun
    msg = [e.message for e in done.events if e.kind == "resume"][0]
    assert "iops had reached steady state" in msg and "lat was interrupted" in msg


def test_dry_run_touches_nothing(bigloop, tmp_path, capsys):
    head = open(bigloop, "rb").read(MiB)
    rc = main(["ssd", "run", bigloop, "--dry-run", "--jobs", "--outdir", str(tmp_path / "never")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "stonewall" in out and "[rnd-1024k-100-0]" in out and "[wipc-seq-128k-w]" in out
    assert "# total:" in out
    assert "56 workloads" in out
    assert not (tmp_path / "never").exists()
    assert open(bigloop, "rb").read(MiB) == head
