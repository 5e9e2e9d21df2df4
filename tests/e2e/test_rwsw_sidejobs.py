"""A steps replay keeps what its 16 stream jobs leave out: the streams
beyond them (one mixed job at their bytes per second), the discards (a fio
randtrim job) and each flush on the stream that issued it (issue 57, items
4 and 6).  Held to fio's own counts (its JSON, kept beside the result) and
the loop device's."""
from __future__ import annotations

import dataclasses
import glob
import gzip
import json
import os
import signal
import subprocess
import time

import pytest

import rwsw_captures
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.fio.output import json_objects
from tkperf.rwsw import model
from tkperf.testtypes.realworld import blockstats
from tkperf.verdict import conformance

MiB = 1 << 20
STEP_S = 3.0
DISCARDS = 30


def _discards(dev: str) -> int:
    with open(f"/sys/block/{os.path.basename(dev)}/stat", encoding="ascii") as fh:
        return int(fh.read().split()[11])  # discards completed


def _seen(flushes: int, discards: int) -> model.Seen:
    return model.Seen(lat=None, read=None, write=None, flushes=flushes, fua=0, discards=discards,
                      discard_bytes=discards * MiB, lost_events=0)


def _capture(folder: str) -> str:
    """One 3 s step of 20 streams: 18 random reads (100 .. 49 I/Os, 4 .. 72 KiB), a log writer
    (300 sequential 4 KiB writes, each flushed) and 300 random 8 KiB writes that never flush;
    30 discards of 1 MiB."""
    spec = [("random", "read", 4096 * (i + 1), 100 - 3 * i) for i in range(18)] + [
        ("sequential", "write", 4096, 300), ("random", "write", 8192, 300)]
    cap = rwsw_captures.capture(step_s=STEP_S, steps=((1.0, spec),))
    (st,) = cap.steps
    streams = tuple(dataclasses.replace(s, flushes=(300 if s.key == "SEQ 4KiB write" else 0) if s.rw == "write"
                                        else None) for s in st.streams)
    cap = dataclasses.replace(cap, steps=(dataclasses.replace(st, streams=streams, seen=_seen(300, DISCARDS)),),
                              seen=_seen(300, DISCARDS))
    path = os.path.join(folder, "cap.xml")
    model.save(cap, path)
    return path


def _run(target: str, tmp_path, path: str, *args: str):
    out = tmp_path / "out"
    rc = main(["ssd", "run", target, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", "--purge", "none", "--tests", "replay", "--workload", path,
               *args])
    assert rc in (0, 1), rc
    run = store.load(str(out / "r.xml"))
    (json_gz,) = glob.glob(str(out / "r.fio-json" / "*step-1.json.gz"))
    with gzip.open(json_gz, "rt") as fh:
        text = fh.read()
    fio = json.loads(text[text.index("{"):])
    return run, {j["jobname"]: j for j in fio["jobs"]}


@needs_fio
def test_discards_left_out_streams_and_each_streams_flushes_are_replayed(loopdev, tmp_path):
    path = _capture(str(tmp_path))
    cap = model.load(path)
    rest = sorted(cap.steps[0].streams, key=lambda s: (-s.share, s.key))[16:]
    run, jobs = _run(loopdev, tmp_path, path)
    (test,) = run.tests
    # the discards: fio's trims, each one a discard at the loop device
    trims = jobs["st1-trim"]["trim"]["total_ios"]
    assert 0.5 * DISCARDS <= trims <= DISCARDS + 1, trims
    counters = blockstats.stored(test.data, test.rounds[0].index)
    assert counters is not None and counters.discards >= trims, (counters, trims)
    # the flushes: on the log writer alone, one per write (fio's fsync count), none on the random writer
    log = jobs["st1-s1-seq-4kib-write"]
    assert log["sync"]["total_ios"] >= log["write"]["total_ios"] - 1 > 0.5 * 300, log["sync"]
    assert jobs["st1-s0-rnd-8kib-write"].get("sync", {}).get("total_ios", 0) == 0
    # the streams beyond the 16 largest: one job at their captured bytes per second
    asked = sum(s.ios * s.bs for s in rest)
    moved = jobs["st1-rest"]["read"]["io_bytes"]
    assert 0.5 * asked <= moved <= 1.25 * asked, (moved, asked)
    deviations = conformance.of_run(run).deviations
    assert not [d for d in deviations if d.startswith("replay: step 1:") and "discards" in d], deviations
    assert "replay: a step's captured discards as a fio randtrim job of their mean size (whole 4 KiB) at their " \
           "captured rate (step 1)" in deviations
    assert [d for d in deviations if d.startswith("replay: step 1: the streams beyond the 16 largest")]


@needs_fio
def test_discards_a_file_cannot_take_are_named_not_replayed(tmp_path):
    path = _capture(str(tmp_path))
    run, jobs = _run(str(tmp_path / "target.img"), tmp_path, path, "--size", "64m")
    assert "st1-trim" not in jobs and "st1-rest" in jobs
    assert f"replay: step 1: {DISCARDS} captured discards not replayed: the target is not a block device (fio " \
           "trims only block devices)" in conformance.of_run(run).deviations


@needs_fio
def test_rwsw_wsat_flushes_as_its_write_streams_did_and_names_the_discards(loopdev, tmp_path):
    path = _capture(str(tmp_path))
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--no-report", "--purge", "none", "--tests", "rwsw-wsat", "--workload", path,
               "--rwsw-wsat-time", "2", "--rwsw-wsat-interval", "1"])
    assert rc in (0, 1), rc
    run = store.load(str(out / "r.xml"))
    (test,) = run.tests
    # 600 applied writes (the log writer's 300 and the random writer's 300), 300 flushes after the log writer's
    assert (test.params["flushes"], test.params["flushed_writes"]) == ("300", "600")
    fio = []
    for name in glob.glob(str(out / "r.fio-json" / "*.json.gz")):
        with gzip.open(name, "rt") as fh:
            text = fh.read()
        *_, (last, _) = json_objects(text)  # status reports, then the final one
        fio += [j for j in last["jobs"] if j["jobname"] == "rwsw-applied"]
    writes = sum(j["write"]["total_ios"] for j in fio)
    syncs = sum(j["sync"]["total_ios"] for j in fio)
    assert writes > 100 and 0.75 <= syncs / (writes / 2) <= 1.25, (writes, syncs)  # fio's own counts
    assert f"rwsw-wsat: the capture's {DISCARDS} discards (31.5 MB) are not applied: the applied workload is one " \
           "fio job, and fio mixes no trims into a job's reads and writes" in conformance.of_run(run).deviations


def test_rwsw_dirth_flushes_in_its_sweep_and_its_pre_writes(loopdev, tmp_path, capsys):
    path = _capture(str(tmp_path))
    assert main(["ssd", "run", loopdev, "--tests", "rwsw-dirth", "--workload", path, "--dry-run", "--quick",
                 "--jobs"]) == 0
    out = capsys.readouterr().out
    sections = out.split("\n[")
    mixed = [s for s in sections if s.startswith("rwsw-tc")]
    writes = [s for s in sections if s.startswith(("pre-rwsw-w", "wdpc-rwsw-w"))]
    assert mixed and all("fsync=5\n" in s for s in mixed)   # 2 writes a flush over a 37% write share
    assert writes and all("fsync=2\n" in s for s in writes)  # the pre-writes: 2 writes a flush


# --- a real capture: a log writer that flushes, a random writer that does not, and discards ------------------

def _fio_flushes_and_discards(dev: str, seconds: int, out) -> subprocess.Popen:
    """fio: 4 KiB sequential log writes with fdatasync after each (100 a second), random 8 KiB writes
    without a flush (100 a second, at random times: another process's) and 1 MiB random discards (10 a
    second), at once."""
    return subprocess.Popen(
        ["fio", f"--filename={dev}", "--direct=1", "--ioengine=libaio", f"--runtime={seconds}", "--time_based",
         "--output-format=json", f"--output={out}",
         "--name=log", "--rw=write", "--bs=4k", "--fdatasync=1", "--rate_iops=100",
         "--name=rnd", "--rw=randwrite", "--bs=8k", "--rate_iops=100", "--rate_process=poisson", "--norandommap",
         "--name=trim", "--rw=randtrim", "--bs=1m", "--rate_iops=10"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@needs_fio
@pytest.mark.skipif(os.geteuid() != 0, reason="tkperf capture needs root")
def test_a_captures_discards_and_flushes_are_replayed_where_they_were_issued(loopdev, tmp_path, capsys):
    fio = _fio_flushes_and_discards(loopdev, 300, tmp_path / "fio.json")
    try:
        deadline = time.monotonic() + 60
        while _discards(loopdev) < 5 and time.monotonic() < deadline and fio.poll() is None:
            time.sleep(0.05)
        rc = main(["capture", loopdev, "--duration", "4", "--name", "cap", "--outdir", str(tmp_path),
                   "--step", "2s", "-q"])
    finally:
        fio.send_signal(signal.SIGINT)
        fio.wait(timeout=60)
    assert rc == 0, capsys.readouterr().err
    cap = model.load(str(tmp_path / "cap.xml"))
    for st in cap.steps:
        assert st.seen is not None and st.seen.discards >= 10 and st.seen.flushes >= 100, st.seen
        flushes = {s.key: s.flushes or 0 for s in st.streams if s.rw == "write"}
        # the flushes follow the log writes (the first of a step's log writes may not be told sequential yet);
        # a random write that completes between a log write and its flush takes that flush
        log = flushes.get("SEQ 4KiB write", 0) + flushes.get("RND 4KiB write", 0)
        # (0-7% of them at a load of 9-12 on 2 cores, 20% once)
        assert log >= 0.7 * st.seen.flushes and flushes.get("RND 8KiB write", 0) <= log / 3, flushes
    run, jobs = _run(loopdev, tmp_path, str(tmp_path / "cap.xml"))
    (test,) = run.tests
    asked = cap.steps[0].seen
    assert asked is not None
    # fio's own counts in step 1: the captured discards as trims, the flushes on the log writer alone
    trims = jobs["st1-trim"]["trim"]["total_ios"]
    assert 0.5 * asked.discards <= trims <= asked.discards + 1, (trims, asked.discards)
    by_key = {test.params[f"stream.{name}"]: job for name, job in jobs.items() if f"stream.{name}" in test.params}
    log, rnd = by_key["SEQ 4KiB write"], by_key["RND 8KiB write"]
    assert log["sync"]["total_ios"] >= 0.7 * log["write"]["total_ios"] > 0, log["sync"]
    assert rnd.get("sync", {}).get("total_ios", 0) <= 0.4 * log["sync"]["total_ios"], rnd.get("sync")
    assert rnd["write"]["total_ios"] > 0
