"""rwsw-wsat --rwsw-wsat-streams each (issue 57 item 7): which dominant
streams get a WSAT segment of their own, and what the verdict says of those
that do not."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "lab"))

import rwsw_captures  # noqa: E402
from tkperf.kit import registry  # noqa: E402
from tkperf.model.pts import REVISIONS  # noqa: E402
from tkperf.rwsw import model  # noqa: E402
from tkperf.testtypes.realworld import wsat  # noqa: E402

#: Ten random write streams of 4 to 40 KiB and one read stream, all dominant at 100%.
STEPS = ((4.0, tuple(("random", "write", 4096 * (k + 1), 1000 - 10 * k) for k in range(10))
          + (("random", "read", 8192, 5000),)),)


def test_each_write_stream_gets_a_segment_up_to_the_cap(tmp_path):
    cap = rwsw_captures.capture(steps=STEPS)
    streams = model.dominant(cap.streams, 1.0)
    each = wsat.segment_streams(streams)
    assert len(each) == wsat.MAX_EACH and all(s.rw == "write" for s in each)
    assert [s.bs for s in each] == [4096 * (k + 1) for k in range(wsat.MAX_EACH)]  # the largest first
    assert wsat.segment_key(0, each[0]) == "rwsw-wsat-s1-rnd-4kib-write"
    assert wsat.segment_key(7, each[7]) == "rwsw-wsat-s8-rnd-32kib-write"


def test_the_verdict_names_the_streams_without_a_segment(tmp_path):
    path = os.path.join(str(tmp_path), "cap.xml")
    model.save(rwsw_captures.capture(steps=STEPS), path)
    kind = registry.get("rwsw-wsat")
    rev = next(iter(REVISIONS.values()))
    words = kind.pts.deviations(kind, {"rwsw_workload": path, "rwsw_streams_share": "100%",
                                       "rwsw_wsat_streams": "each"}, rev)
    text = " | ".join(words)
    assert "every dominant write stream (the 8 largest at most) runs as a WSAT segment of its own" in text
    assert "2 dominant write streams beyond the 8 largest" in text
    assert "the dominant read stream RND 8KiB read runs in no segment of its own" in text
    assert "one fio job" not in text  # each segment is one stream's own job: nothing is mixed
    # the default, and a result stored before the option, run the streams together as before
    mixed = " | ".join(kind.pts.deviations(kind, {"rwsw_workload": path, "rwsw_streams_share": "100%"}, rev))
    assert "segment" not in mixed and "runs as one fio job" in mixed
