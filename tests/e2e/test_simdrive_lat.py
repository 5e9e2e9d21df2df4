"""LAT's figures against the emulated SSD's own service (issue 56): the
model counts, for every read, what it took from the read's arrival to its
completion on its clock, and the idle time between a completion and the
next command (the host's path: fio, the block layer, the loop device and
FUSE, both ways).  At QD 1 nothing stands in a read's way on the drive, so
every read takes the same time, and fio's latency is that service plus the
host's path: not less than the drive's service and above it by no more
than the path the drive saw the host take between commands (and the
first read's way there and the last one's way back, which no gap holds),
both within the server's timing."""
from __future__ import annotations

import pytest

from conftest import needs_fio
from simtruth import Counters, Watch, note, run_tkperf, unique_name

pytestmark = needs_fio


def test_lat_mean_and_max_are_the_models_service_and_the_hosts_path(simdrive, tmp_path, monkeypatch):
    # 20 ms a die read: the host's path (about 1 ms a read on a loaded machine) stays a small part of each
    drive = simdrive(name=unique_name(), capacity="16M", op=7, read_us=20000)
    c = Counters(drive)
    watch = Watch(c, monkeypatch)
    run = run_tkperf(drive, tmp_path, "lat", "--tests", "lat", "--lat-bs", "4k", "--lat-mix", "100/0",
                     "--runtime", "1", "--max-rounds", "5", "--wipc-loops", "1", "--purge", "discard",
                     "--lat-capture", "0", watch=watch)
    (t,) = run.tests
    one = (c.param("cmd_us") + 4096 / c.param("link_mbs") + c.param("read_us")) / 1e6  # a read alone
    assert t.rounds
    for r in t.rounds:
        m = watch.one("run", f"{t.key} round {r.index}")
        w = r.workload("rnd-4k-100-0").read
        reads = m.delta("host_read_ios")
        assert w.ios <= reads and reads > 10
        service = m.delta("read_service_s") / reads
        assert service == pytest.approx(one, rel=1e-3)  # QD 1: no read waits for another on its die
        assert m.after["max_read_service_s"] == pytest.approx(one, rel=1e-3)
        path = m.delta("host_wait_s") / (reads - 1)  # the host's path between two reads, on average
        note("lat", round=r.index, mean_us=w.lat_mean_us, max_us=w.lat_max_us, service_us=service * 1e6,
             path_us=path * 1e6)
        # tkperf's mean: the drive's service and a path each way.  The gaps the drive saw between a
        # completion and the next read (a path back, fio's own time, a path there) hold every path but
        # two: the first read's way there and the last one's way back, each at most the slowest read's
        # time beyond the service.  Both ways within the server's timing: a reply goes out up to 20 us
        # early (EARLY_S), and a read that arrives after a late reply is dated back by its lateness (the
        # clock is work-conserving: docs/simdrive.rst, The clock), never more than the server's worst
        # lateness.
        err = m.after["max_late_s"] + 20e-6
        ends = 2 * max(0.0, w.lat_max_us / 1e6 - service)
        assert service - err <= w.lat_mean_us / 1e6 <= service + (path * (reads - 1) + ends) / w.ios + err
        # (no bound on each read: a reply late by less than a counted lateness still dates the next read
        # back by it, so fio's fastest read may be a little under the drive's service)
        assert w.lat_max_us / 1e6 >= one - err
