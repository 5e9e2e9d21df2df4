"""The nightly QA wrapper of examples/nightly, run as cron would run it, on
a loop device this test makes: the first night sets the baseline, a night
within tolerance is silent, a regression prints the check and exits 1."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from lxml import etree

from conftest import needs_fio
from tkperf import store

pytestmark = needs_fio

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "nightly" / "tkperf-nightly"


def night(tmp_path: Path, loopdev: str, **extra: str) -> subprocess.CompletedProcess:
    # The script calls `tkperf` by name, as cron finds it on PATH.
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "tkperf"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tkperf "$@"\n')
    shim.chmod(0o755)
    env = {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(tmp_path),
           "TKPERF_DEVICE": loopdev, "TKPERF_BASELINE": str(tmp_path / "baseline.xml"),
           "TKPERF_OUTDIR": str(tmp_path / "nightly"), "TKPERF_QUICK": "1", "TKPERF_TESTS": "lat", **extra}
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)


def _scaled(s, factor: float):
    """One direction's response times (and histogram) scaled by ``factor``."""
    return dataclasses.replace(
        s, lat_mean_us=s.lat_mean_us * factor, lat_max_us=s.lat_max_us * factor,
        percentiles=tuple((p, v * factor) for p, v in s.percentiles),
        bins=tuple((max(1, int(ns * factor)), c) for ns, c in s.bins))


def scale_baseline(path: Path, factor: float) -> None:
    """Scale every response time of the baseline: 0.001 makes tonight look
    1000x worse; 100 makes tonight an improvement whatever the loop device's noise."""
    run = store.load(str(path))
    for t in run.tests:
        t.rounds[:] = [dataclasses.replace(r, workloads=tuple(
            dataclasses.replace(w, read=_scaled(w.read, factor), write=_scaled(w.write, factor))
            for w in r.workloads)) for r in t.rounds]
    store.save(run, str(path))


def test_nightly_sets_the_baseline_then_checks_against_it(tmp_path, loopdev):
    first = night(tmp_path, loopdev)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "no baseline yet" in first.stdout
    assert store.load(str(tmp_path / "baseline.xml")).status == "complete"
    # the first night is not judged: a JUnit file of skipped cases, named for the drive, night and host
    (first_dir,) = (tmp_path / "nightly").glob("nightly-*")
    first_junit = etree.parse(str(first_dir / "junit.xml")).getroot()
    assert int(first_junit.get("skipped")) == int(first_junit.get("tests")) > 0
    assert first_junit.get("name").startswith("tkperf check: loop device over ")
    assert ", night 20" in first_junit.get("name") and first_junit[0].get("hostname")
    assert json.loads((first_dir / "summary.json").read_text())["check"]["verdict"] == "not judged"

    # A loop device's MAX latency can jump tenfold from one night to the next
    # on a busy machine: a quiet night is made certain by a slower baseline.
    scale_baseline(tmp_path / "baseline.xml", 100.0)
    quiet = night(tmp_path, loopdev, TKPERF_TOLERANCE="50%")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert quiet.stdout == ""  # cron mails nothing on a good night
    night_dir = sorted((tmp_path / "nightly").glob("nightly-*"))[-1]
    junit = etree.parse(str(night_dir / "junit.xml")).getroot()
    assert int(junit.get("failures", junit[0].get("failures"))) == 0
    checked = json.loads((night_dir / "summary.json").read_text())["check"]
    assert checked["verdict"] == "ok" and checked["host"]["hostname"] == junit[0].get("hostname")
    assert (night_dir / "loadavg-start").read_text().count(" ") == 4  # the host's load, kept with the night

    # A worse night made certain the same way: a baseline 1000x faster than
    # the first night (a night on an idle machine can be 10x faster than one
    # beside load).
    scale_baseline(tmp_path / "baseline.xml", 0.001 / 100.0)
    worse = night(tmp_path, loopdev)
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert worse.stdout.startswith(f"tkperf nightly: REGRESSION against {tmp_path / 'baseline.xml'}, red since ")
    assert "lat_mean_us" in worse.stdout
    first_red = sorted((tmp_path / "nightly").glob("nightly-*"))[-1]
    assert json.loads((first_red / "summary.json").read_text())["check"]["red_since"]["nights"] == 1

    # The regression persists: the second red night says, in the files a CI
    # dashboard reads, that it is red since the first.
    again = night(tmp_path, loopdev)
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"red since {first_red.name} (2 night(s))" in again.stdout
    second_red = sorted((tmp_path / "nightly").glob("nightly-*"))[-1]
    suite = etree.parse(str(second_red / "junit.xml")).getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert (props["red_since"], props["red_nights"]) == (first_red.name, "2")
    assert props["red_since_result"] == str(first_red / f"{first_red.name}.xml")
    assert suite.find("system-out").text.startswith(f"red since {first_red.name} (")
    since = json.loads((second_red / "summary.json").read_text())["check"]["red_since"]
    assert (since["name"], since["nights"]) == (first_red.name, 2)


def test_nightly_without_a_device_says_so(tmp_path):
    proc = subprocess.run(["bash", str(SCRIPT)], env={"PATH": os.environ["PATH"]}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "TKPERF_DEVICE" in proc.stderr


def test_nightly_waits_for_three_good_nights_before_it_judges(tmp_path, loopdev):
    """Against the last nights: with fewer than 3 good nights listed no check
    is made (the two listed here do not even exist, which check would refuse
    with exit 7); from the third on, it is."""
    out = tmp_path / "nightly"
    out.mkdir()
    good = out / "good-nights"
    good.write_text(f"{tmp_path / 'gone-1.xml'}\n{tmp_path / 'gone-2.xml'}\n")
    third = night(tmp_path, loopdev, TKPERF_BASELINE="")
    assert third.returncode == 0 and third.stdout == "", third.stdout + third.stderr
    assert len(good.read_text().splitlines()) == 3
    fourth = night(tmp_path, loopdev, TKPERF_BASELINE="")
    assert fourth.returncode == 7, fourth.stdout + fourth.stderr  # judged: check met the missing files
    assert "check against the last 3 normal nights failed (exit 7)" in fourth.stdout


def test_the_nightly_benchmark_runs_on_a_tiny_setting():
    """benchmarks/nightly.py (docs/check.rst, "Measured rates") prints its
    figures next to their targets; here only that it runs, a few trials each."""
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "nightly.py"
    proc = subprocess.run([sys.executable, str(bench), "--tiny"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(bench.parent.parent)))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sum("target" in line for line in lines) == 11  # with the ceiling of the exact night, the extreme figure
    assert any(line.startswith("identical nights red, quick example (14 figures)") for line in lines)
    assert any(line.startswith("history, 15% step: named at the right night") for line in lines)


def test_a_mail_that_failed_is_said_where_cron_mails_it(tmp_path, loopdev):
    # Issue 60 item 4: the failure was only in the night's run.out; the night's exit code is unchanged
    import socket

    with socket.socket() as s:  # a port on loopback that nothing listens on: the SMTP connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = night(tmp_path, loopdev, TKPERF_MAIL="qa@example.org", TKPERF_SMTP=f"127.0.0.1:{port}")
    assert first.returncode == 0, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    assert lines and lines[0].startswith(f"tkperf nightly: mail to qa@example.org via 127.0.0.1:{port} failed: ")
