"""Several targets in one command: ``tkperf ssd run DEV DEV ...``.

End to end on real loop devices: every run complete with its own result,
log and report, the comparison, the combined JSON summary and the worst
exit code; a target that fails for real (a loop device over a file on a
16 MiB tmpfs: fio gets ENOSPC in the WIPC) while the other completes;
SIGINT to the process group of a real ``python -m tkperf ssd run A B``
leaving both files resumable.  The rest are the parts: names, options
passed on, the child's hooks, the combined view, the exit-code order.
"""
import errno
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.cli import progress as shown
from tkperf.engine import child, multi, parallel
from tkperf.engine import request as request_file
from tkperf.errors import EXIT_FIO, EXIT_OK, EXIT_OUTPUT, EXIT_SIGINT, EXIT_USAGE
from tkperf.kit import progress as ep
from tkperf.target.loopdev import try_loop
from tkperf.testtypes.latency import LatencySettings

MiB = 1024 * 1024
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: A child's command line after the interpreter: isolated mode, this checkout's tkperf.
CHILD = ("-I", os.path.join(REPO, "tkperf", "bootstrap.py"), "tkperf")
# One workload, two rounds, one WIPC pass: a run of a few seconds.
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1",
         "--max-rounds", "2",
         "-nj", "1", "-iod", "4", "--wipc-loops", "1", "--yes", "--report-format", "rst"]


@pytest.fixture
def loops(tmp_path):
    """make(n, directory=None): n fresh 256 MiB loop devices, all detached afterwards."""
    made = []

    def make(n, directory=None):
        out = []
        for _ in range(n):
            loop, why = try_loop(256 * MiB, str(directory or tmp_path))
            if loop is None:
                pytest.skip(f"needs loop devices: {why}")
            made.append(loop)
            out.append(loop.path)
        return out

    yield make
    for loop in made:
        loop.__exit__(None, None, None)


@pytest.fixture
def small_fs(tmp_path):
    """A 16 MiB tmpfs: a 256 MiB loop device over a sparse file on it runs out of space."""
    where = tmp_path / "small"
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {res.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _doc(path):
    with open(path) as fh:
        return json.load(fh)


@needs_fio
def test_two_loop_devices_run_at_once_with_comparison_and_summary(loops, tmp_path, capsys, monkeypatch):
    a, b = loops(2)
    out, summary = tmp_path / "out", tmp_path / "all.json"
    given = []  # (child's argv, its request) as the parent wrote them

    def target(*a, **kw):
        t = make_target(*a, **kw)
        given.append((t.argv, request_file.load(t.argv[-1])))
        return t

    make_target = parallel._target
    monkeypatch.setattr(parallel, "_target", target)
    rc = main(["ssd", "run", a, b, *QUICK, "--outdir", str(out), "--json-summary", str(summary)])
    captured = capsys.readouterr()
    assert rc == EXIT_OK, captured.err
    names = [os.path.basename(a), os.path.basename(b)]
    for (argv, req), dev, name in zip(given, (a, b), names):  # the request, not a rebuilt command line
        assert argv[1:] == (*CHILD, "ssd", "run", dev, "--request", argv[-1])
        assert req.devices == (dev,) and req.name == name and req.outdir == str(out / name)
        assert req.yes and req.quiet and req.report_formats == ("rst",)
        assert req.options.tests == ("lat",) and req.options.max_rounds == 2
        assert not os.path.exists(argv[-1])  # the parent's temporary directory is gone
    for name in names:  # each as if run alone: result, log, report in OUTDIR/NAME
        run = store.load(str(out / name / f"{name}.xml"))
        assert run.status == "complete" and run.tests[0].status == "complete"
        assert len(run.tests[0].rounds) == 2
        assert run.facts["host_sharing"]["runs"] == 2
        assert [t["name"] for t in run.facts["host_sharing"]["targets"]] == names
        assert (out / name / f"{name}.log").stat().st_size > 0
        assert (out / name / f"{name}.rst").exists()
        assert f"tkperf[{name}]: [lat] round 2" in captured.err  # the combined progress lines
    comparison = (out / "comparison" / "comparison.rst").read_text()
    assert all(name in comparison for name in names)
    doc = _doc(summary)
    assert doc["schema"] == multi.SUMMARY_SCHEMA and doc["exit_code"] == 0
    assert [t["name"] for t in doc["targets"]] == names
    assert [t["device"] for t in doc["targets"]] == [a, b]
    for t in doc["targets"]:
        assert t["status"] == "complete" and t["exit_code"] == 0
        assert t["summary"]["schema"] == "tkperf-summary" and t["summary"]["exit_code"] == 0
        assert t["summary"]["paths"]["result"] == t["result"]
        assert t["cpu"]["tkperf_s"] > 0
    assert doc["comparison"]["reports"] == [str(out / "comparison" / "comparison.rst")]
    assert doc["host_sharing"]["runs"] == 2


@needs_fio
def test_one_target_fails_for_real_while_the_other_completes(loops, small_fs, tmp_path, capsys):
    good, = loops(1)
    full, = loops(1, small_fs)  # writes past 16 MiB get ENOSPC: fio fails in the WIPC
    out, summary = tmp_path / "out", tmp_path / "all.json"
    rc = main(["ssd", "run", full, good, *QUICK, "--purge", "none", "--name", "lab", "--outdir", str(out),
               "--json-summary", str(summary)])
    captured = capsys.readouterr()
    assert rc == EXIT_FIO, captured.err  # the worst of 6 and 0
    g, f = f"lab-{os.path.basename(good)}", f"lab-{os.path.basename(full)}"
    assert store.load(str(out / g / f"{g}.xml")).status == "complete"
    failed = store.load(str(out / f / f"{f}.xml"))
    assert failed.status == "failed"
    assert "No space left on device" in failed.events[-1].message
    doc = _doc(summary)
    assert [(t["name"], t["status"], t["exit_code"]) for t in doc["targets"]] == \
        [(f, "failed", EXIT_FIO), (g, "complete", EXIT_OK)]
    assert doc["exit_code"] == EXIT_FIO
    assert "No space left on device" in doc["targets"][0]["error"]  # from the child's channel
    assert doc["comparison"]["reports"] == []
    assert f"left out: {f} (failed)" in doc["comparison"]["note"]
    assert "exit code 6 (the worst of the targets')" in captured.out


def _wait_for_rounds(proc, names):
    """Read the combined progress lines until every run has finished round 1."""
    seen, lines = set(), []
    for line in proc.stderr:
        lines.append(line)
        seen.update(n for n in names if f"tkperf[{n}]: [lat] round 1:" in line)
        if seen == set(names):
            return lines
    raise AssertionError("the runs ended before round 1:\n" + "".join(lines))


@needs_fio
def test_sigint_to_the_process_group_stops_all_and_resume_completes_them(loops, tmp_path):
    a, b = loops(2)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=REPO)
    run = [*QUICK, "--runtime", "2", "--max-rounds", "4"]  # later options win: 2 s workloads, 4 rounds
    proc = subprocess.Popen([sys.executable, "-m", "tkperf", "ssd", "run", a, b, *run, "--outdir", str(out),
                             "--json-summary", str(tmp_path / "all.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    names = [os.path.basename(a), os.path.basename(b)]
    try:
        _wait_for_rounds(proc, names)
        time.sleep(0.5)  # into round 2's fio job
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == EXIT_SIGINT
    doc = _doc(tmp_path / "all.json")
    assert doc["stopped_by"] == "SIGINT" and doc["exit_code"] == EXIT_SIGINT
    assert [t["status"] for t in doc["targets"]] == ["interrupted", "interrupted"]
    xmls = [str(out / n / f"{n}.xml") for n in names]
    for xml in xmls:
        assert store.load(xml).status == "interrupted"
    resumed = [subprocess.Popen([sys.executable, "-m", "tkperf", "resume", xml, "--yes", "--no-report",
                                 "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env) for xml in xmls]
    for p in resumed:
        _, err = p.communicate(timeout=120)
        assert p.returncode == EXIT_OK, err
    for xml in xmls:
        run_ = store.load(xml)
        assert run_.status == "complete" and len(run_.tests[0].rounds) == 4
        assert run_.facts["host_sharing"]["runs"] == 2  # kept from the start


# --- refused before anything runs ----------------------------------------------

@pytest.mark.parametrize("case", ["twice", "same-file", "summary-dir", "resume-missing"])
def test_bad_command_lines_are_refused_before_anything_runs(case, tmp_path, capsys):
    f1, f2 = tmp_path / "a.img", tmp_path / "b.img"
    args = {
        "twice": ([str(f1), str(f1)], [], EXIT_USAGE, "given twice"),
        "same-file": ([str(f1), f"{tmp_path}/./a.img"], [], EXIT_USAGE, "same target"),
        "summary-dir": ([str(f1), str(f2)], ["--json-summary", str(tmp_path)], EXIT_OUTPUT, "is a directory"),
        "resume-missing": ([str(f1), str(f2)], ["--resume"], EXIT_USAGE, "no saved run"),
    }[case]
    devices, extra, code, words = args
    rc = main(["ssd", "run", *devices, "--size", "64m", "--yes", "--outdir", str(tmp_path / "o"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == code and len(err) == 1 and words in err[0] and err[0].startswith("tkperf: error:")
    assert not f1.exists() and not f2.exists() and not (tmp_path / "o").exists()


def test_no_terminal_and_no_yes_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    rc = main(["ssd", "run", str(tmp_path / "a.img"), str(tmp_path / "b.img"), "--size", "64m"])
    assert rc == 11 and "pass --yes" in capsys.readouterr().err
    assert not (tmp_path / "a.img").exists()


@pytest.mark.parametrize("profile,tests", [("ssd", "lat"), ("hdd", "hdd-lat")])
def test_dry_run_of_several_targets_prints_each_plan_and_touches_nothing(profile, tests, tmp_path, capsys):
    targets = [str(tmp_path / "x" / "t.img"), str(tmp_path / "y" / "t.img")]
    for t in targets:
        os.makedirs(os.path.dirname(t))
    rc = main([profile, "run", *targets, "--size", "64m", "--dry-run", "--tests", tests])
    out = capsys.readouterr().out
    assert rc == EXIT_OK
    assert f"# ===== {targets[0]}: run t.img in t.img" in out
    assert f"# ===== {targets[1]}: run t.img-2 in t.img-2" in out  # names never collide
    assert not any(os.path.exists(t) for t in targets)


def test_bad_host_sharing_environment_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(multi.HOST_SHARING_ENV, '{"runs": 0}')
    rc = main(["ssd", "run", str(tmp_path / "t.img"), "--size", "64m", "--yes", "--outdir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == EXIT_USAGE and "TKPERF_HOST_SHARING" in err
    assert not (tmp_path / "t.img").exists()


# --- the parts ---------------------------------------------------------------------

def test_each_child_gets_the_request_with_its_own_target_names_and_summary(tmp_path):
    from tkperf.cli import build_parser, runargs
    from tkperf.engine import request as request_file

    argv = ["ssd", "run", "/dev/a", "/dev/b", "--tests", "lat", "-rt", "3", "--quick", "--refill-buffers",
            "--mail", "x@example.org", "--mail", "y@example.org", "--smtp", "mx", "--name", "p",
            "--outdir", "o", "--yes", "-q", "--report-format", "rst", "--lat-bs", "4k", "--size", "1g"]
    request = runargs.request_from_args(build_parser().parse_args(argv), "ssd")
    (tmp_path / "requests").mkdir()
    planned = parallel.Planned("/dev/b", None, request.options, "p-b", False, None)
    target = parallel._target(request, planned, "o/p-b", str(tmp_path))
    assert target.argv[:1] == (sys.executable,)  # isolated, with this tkperf (tests/e2e/test_caller_folder.py)
    assert target.argv[1:] == (*CHILD, "ssd", "run", "/dev/b", "--request", target.argv[-1])
    assert oct(os.stat(target.argv[-1]).st_mode & 0o777) == "0o600"
    child = request_file.load(target.argv[-1])
    assert child.devices == ("/dev/b",) and child.name == "p-b" and child.outdir == "o/p-b"
    assert child.yes and child.quiet and child.json_summary == target.summary_path
    assert child.size is None  # --size is for file targets alone
    assert child.options == request.options
    assert child.options.of(LatencySettings).bs == request.options.of(LatencySettings).bs == (4096,)
    assert child.mail.recipients == ("x@example.org", "y@example.org") and child.mail.smtp == "mx"
    assert child.report_formats == ("rst",)


_CHILD = """
import json, os, signal, sys
how = sys.argv[1]
fd = int(os.environ["TKPERF_PROGRESS_FD"])
print("tkperf: error: a line on stderr is output, not the reason", file=sys.stderr)
if how == "says":
    os.write(fd, b'{"t": "error", "text": "the device is locked", "exit": 10}\\n{"t": "end"}\\n')
    sys.exit(10)
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(3)
"""


@pytest.mark.parametrize("how, code, error", [
    ("says", 10, "the device is locked"),
    ("quiet", 3, "exited with code 3"),
    ("kill", 137, "killed by SIGKILL"),
])
def test_why_a_child_stopped_comes_from_its_channel(tmp_path, how, code, error):
    class Seen(multi.Listener):
        lines = []

        def output(self, o, line, stream):
            self.lines.append((stream, line))

    target = multi.Target("t", "/dev/t", str(tmp_path), (sys.executable, "-c", _CHILD, how),
                          str(tmp_path / "none.json"))
    seen = Seen()
    o, = multi.ParallelRuns([target], seen).run()
    assert (o.exit_code, o.error) == (code, error)
    assert ("err", "tkperf: error: a line on stderr is output, not the reason") in seen.lines


def test_worst_exit_is_the_highest_code():
    assert multi.worst_exit([]) == 0
    assert multi.worst_exit([0, 0]) == 0
    assert multi.worst_exit([0, 6, 3]) == 6
    assert multi.worst_exit([70, 130, 6]) == 130
    assert multi.exit_code_of_returncode(-9) == 137 and multi.exit_code_of_returncode(4) == 4


def test_sharing_merges_over_a_resume_and_refuses_nonsense():
    first = multi.parse_sharing('{"runs": 2, "targets": [{"name": "a", "device": "/dev/a"}, '
                                '{"name": "b", "device": "/dev/b"}]}')
    again = multi.parse_sharing('{"runs": 3, "targets": [{"name": "b", "device": "/dev/b"}, '
                                '{"name": "c", "device": "/dev/c"}, {"name": "d", "device": "/dev/d"}]}')
    merged = multi.merge_sharing(first, again)
    assert merged["runs"] == 3 and [t["name"] for t in merged["targets"]] == ["a", "b", "c", "d"]
    for bad in ("[]", "{}", '{"runs": "2"}', '{"runs": 1, "targets": [1]}', "nope"):
        with pytest.raises(ValueError):
            multi.parse_sharing(bad)


class _Session:
    def __init__(self):
        self.run = type("Run", (), {"facts": {}})()


def test_child_hooks_send_progress_and_record_host_sharing(caplog):
    caplog.set_level(logging.INFO, logger="tkperf.progress")
    read_fd, write_fd = os.pipe()
    env = {multi.PROGRESS_FD_ENV: str(write_fd), multi.HOST_SHARING_ENV: '{"runs": 2, "targets": []}'}
    session = _Session()
    with pytest.raises(EnvironmentError):
        with child.child_hooks(env) as hooks:
            assert env == {}  # no program the run starts sees them
            hooks.attach(session)
            prog = ep.Progress(clock=lambda: 100.0)
            prog.run_started([ep.PlannedTest("lat", 10.0, 50.0)])
            logging.getLogger("tkperf.progress").info("[lat] round 1: ok")
            raise OSError(errno.ENOSPC, "No space left on device", "/x/y.xml")
    assert session.run.facts["host_sharing"]["runs"] == 2
    with os.fdopen(read_fd) as fh:
        msgs = [json.loads(line) for line in fh]
    assert [m["t"] for m in msgs] == ["state", "msg", "error", "end"]
    assert msgs[0]["state"]["tests"] == 1 and msgs[0]["state"]["eta"] == [10.0, 50.0]
    assert msgs[1]["text"] == "[lat] round 1: ok"
    assert msgs[2] == {"t": "error", "text": "cannot write /x/y.xml: No space left on device",
                       "exit": EXIT_OUTPUT}
    assert msgs[3]["cpu_self_s"] > 0
    assert child.ChildHooks.from_env({}) is None
    with child.child_hooks({}) as alone:
        assert alone is None


def test_combined_view_counts_down_and_waits_for_every_run():
    now = [0.0]
    a = ep.RemoteRun("a", "/dev/a", clock=lambda: now[0])
    b = ep.RemoteRun("b", "/dev/b", clock=lambda: now[0])
    assert ep.combined_eta([a, b]) is None  # b has not said yet
    a.update({"started": True, "eta": [10.0, 40.0], "elapsed": 5.0, "test": "lat", "index": 1, "tests": 2,
              "phase": "round 2 of 25", "values": [100.0, 110.0], "near": "window 2/5"})
    b.update({"started": True, "eta": [30.0, 35.0], "elapsed": 1.0})
    now[0] = 5.0
    assert ep.combined_eta([a, b]) == (25.0, 35.0)
    row = shown.combined_row(a)
    assert row[:4] == ("a", "/dev/a", "lat (1 of 2)", "round 2 of 25") and row[5] == "10 s"
    b.exit_code = 6
    assert shown.combined_row(b)[3] == "stopped (exit 6)"
    err, out = io.StringIO(), io.StringIO()
    view = shown.choose_combined(err, out, quiet=False)
    view.start([a, b])
    view.message(a, "[lat] round 2: x")
    view.output(b, "results: b.xml", "out")
    view.note("b: ended")
    assert "tkperf[a]: [lat] round 2: x; ETA" in err.getvalue()
    assert out.getvalue() == "[b] results: b.xml\n"
    assert "tkperf: b: ended; all: ETA" in err.getvalue()
