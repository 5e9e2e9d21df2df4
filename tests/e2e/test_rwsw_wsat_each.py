"""rwsw-wsat with ``--rwsw-wsat-streams each`` (issue 57 item 7): every
dominant stream of a capture runs as a WSAT segment of its own, stored as a
test of its own and shown with its own plot and table.  Real fio on a loop
device; what each segment did is checked against fio's own counts per
interval (the stored series), not against the clock."""
from __future__ import annotations

import gzip
import json
import os

import rwsw_captures
from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.rwsw import model

#: Two write streams and a read stream (all three dominant at --streams-share 100%).
STEPS = ((2.0, (("random", "write", 4096, 5000), ("sequential", "write", 65536, 3000),
                ("random", "read", 8192, 2000))),)


def _last(text: str) -> dict:
    """The last of fio's JSON reports (one per --status-interval, then the final one; fio's own lines
    between them, "fio: terminating on signal 15" when tkperf stops it at the written limit, skipped)."""
    dec, at, last = json.JSONDecoder(), 0, {}
    while at < len(text):
        if text[at] == "{":
            last, at = dec.raw_decode(text, at)
        else:
            nl = text.find("\n", at)
            at = len(text) if nl < 0 else nl + 1
    return last


@needs_fio
def test_each_dominant_stream_runs_on_its_own_and_is_stored_and_shown_apart(loopdev, tmp_path):
    path = os.path.join(str(tmp_path), "cap.xml")
    model.save(rwsw_captures.capture(step_s=4.0, steps=STEPS), path)
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", "r", "--outdir", str(out), "--yes", "--quiet", "--quick",
               "--write-cache", "keep", "--purge", "none", "--tests", "rwsw-wsat", "--workload", path,
               "--streams-share", "100%", "--rwsw-wsat-streams", "each", "--rwsw-wsat-time", "2",
               "--rwsw-wsat-interval", "1", "--no-report"])
    assert rc in (0, 1), rc
    run = store.load(str(out / "r.xml"))
    # the write streams, each on its own; the read stream has nothing to saturate (named below)
    assert [t.key for t in run.tests] == ["rwsw-wsat-s1-rnd-4kib-write", "rwsw-wsat-s2-seq-64kib-write"]
    sizes = {"s1": 4096, "s2": 65536}
    for n, test in enumerate(run.tests, 1):
        with gzip.open(out / "r.fio-json" / f"{n:04d}-{test.key}.json.gz", "rt") as fh:
            (job,) = _last(fh.read())["jobs"]  # fio's own counts of the segment, at its end
        rd, wr = job["read"], job["write"]
        size = sizes[test.key.split("-")[2]]
        assert wr["total_ios"] > 0 and rd["total_ios"] == 0, test.key  # the stream's direction only
        assert wr["io_bytes"] == wr["total_ios"] * size, test.key  # and its transfer size only
        s = test.series["intervals"]
        assert int(s.column("ios").sum()) == wr["total_ios"], test.key  # stored: what fio wrote
        assert int(s.column("io_bytes").sum()) == wr["io_bytes"], test.key
        assert test.params["segment"] == f"{test.key.split('-')[2][1]} of 2"
        assert test.params["rwmixread"] == "0"
        assert test.params["percentage_random"].split(",")[1] == ("0" if "-seq-" in test.key else "100")
    written = run.tests[0].params["captured_share"]
    assert float(written) == 0.5  # 5,000 of the capture's 10,000 I/Os
    assert main(["report", str(out / "r.xml"), "--format", "rst", "--outdir", str(tmp_path / "rep"), "-q"]) == 0
    text = next((tmp_path / "rep").glob("*.rst")).read_text()
    assert "Each dominant stream on its own" in text
    for k, key in enumerate(("RND 4KiB write", "SEQ 64KiB write"), 1):
        assert f"Segment {k} of 2: {key} on its own" in text
    for test in run.tests:  # each with its own plot of IOPS per interval, and its own headline table
        assert f".. figure:: r-plots/{test.key}-intervals-iops.svg" in text
    for key in ("RND 4KiB write", "SEQ 64KiB write"):
        assert f"RWSW-WSAT of fixture: {key}: headline figures" in text
    assert "runs as a WSAT segment of its own" in text and "RND 8KiB read runs in no segment" in text
