"""The short plain-text summary (one line per test) and its machine-readable twin."""
from __future__ import annotations

from typing import Dict, List

from tkperf.results import RunResult, TestRun, gb, mb
from tkperf.tests_pts.iops import workload_name


def _verdict(t: TestRun) -> str:
    if t.status != "complete" and not t.rounds:
        return f"{t.status}, no rounds"
    s = t.steady
    if t.name == "wsat":
        return f"{len(t.rounds)} intervals, stopped by {t.stop_reason or t.status}"
    if s is not None and s.steady:
        return f"steady state in rounds {s.first_round}-{s.last_round}"
    n = len(t.rounds)
    return f"NO steady state in {n} round{'s' if n != 1 else ''}" + ("" if t.status == "complete" else f" ({t.status})")


def headline(t: TestRun) -> Dict[str, float]:
    """The figures a reader looks at first, averaged over the measurement window."""
    out: Dict[str, float] = {}
    if t.name == "iops":
        for bs in (4096,):
            for mix, key in ((0, "write"), (65, "mixed"), (100, "read")):
                v = t.window_average(workload_name(bs, mix), "iops")
                if v is not None:
                    out[f"rnd_4k_{key}_iops"] = v
        if not out and t.tracking_values():
            out["tracking"] = t.window_average(t.tracking_workload, t.tracking_metric) or 0.0
    elif t.name == "tp":
        bs = t.params.get("block_size", "")
        for side in ("w", "r"):
            v = t.window_average(f"seq-{bs}-{side}", "bw_bytes")
            if v is not None:
                out[f"seq_{'write' if side == 'w' else 'read'}_mb_s"] = mb(v)
    elif t.name == "lat":
        name = workload_name(4096, 0)
        v = t.window_average(name, "write.lat_mean_us")
        if v is not None:
            out["rnd_4k_write_lat_mean_us"] = v
            maxes = [w.write.lat_max_us for r in t.window_rounds() for w in r.workloads if w.name == name]
            out["rnd_4k_write_lat_max_us"] = max(maxes) if maxes else 0.0
        if not out and t.tracking_values():
            out["tracking"] = t.window_average(t.tracking_workload, t.tracking_metric) or 0.0
    elif t.name == "wsat" and t.rounds:
        iops = [r.workloads[0].write.iops for r in t.rounds]
        out["first_interval_iops"] = iops[0]
        tail = iops[-5:]
        out["last_5_intervals_iops"] = sum(tail) / len(tail)
        out["gb_written"] = gb(sum(r.workloads[0].write.io_bytes for r in t.rounds))
    return out


_LABELS = {
    "rnd_4k_write_iops": ("RND 4k W", "{:,.0f} IOPS"),
    "rnd_4k_mixed_iops": ("65:35", "{:,.0f} IOPS"),
    "rnd_4k_read_iops": ("R", "{:,.0f} IOPS"),
    "seq_write_mb_s": ("W", "{:,.1f} MB/s"),
    "seq_read_mb_s": ("R", "{:,.1f} MB/s"),
    "rnd_4k_write_lat_mean_us": ("4k W lat AVE", "{:,.1f} us"),
    "rnd_4k_write_lat_max_us": ("MAX", "{:,.1f} us"),
    "first_interval_iops": ("first", "{:,.0f} IOPS"),
    "last_5_intervals_iops": ("last 5", "{:,.0f} IOPS"),
    "gb_written": ("written", "{:,.2f} GB"),
    "tracking": ("tracking", "{:,.6g}"),
}


def test_title(t: TestRun) -> str:
    """Short name of a test: IOPS, TP 1024k, LAT, WSAT."""
    if t.name == "tp":
        return f"TP {t.params.get('block_size', '')}".strip()
    return {"iops": "IOPS", "lat": "LAT", "wsat": "WSAT"}.get(t.name, t.name.upper())


def lines(run: RunResult) -> List[str]:
    out = [f"{run.name}: {run.device.model or run.device.path} ({gb(run.device.size_bytes):.1f} GB, "
           f"{run.device.kind}) - run {run.status}" + (", resumed" if run.resumed else "")]
    if run.quick:
        out.append("  --quick smoke test: NOT a PTS-conformant measurement")
    for t in run.tests:
        figures = ", ".join(_LABELS[k][0] + " " + _LABELS[k][1].format(v) for k, v in headline(t).items())
        out.append(f"  {test_title(t):<9} {_verdict(t)}" + (f"; {figures}" if figures else ""))
    return out


def as_dict(run: RunResult) -> dict:
    return {
        "name": run.name,
        "status": run.status,
        "quick": run.quick,
        "resumed": run.resumed,
        "device": {"path": run.device.path, "model": run.device.model, "serial": run.device.serial,
                   "size_bytes": run.device.size_bytes, "kind": run.device.kind},
        "tests": [
            {"key": t.key, "status": t.status, "rounds": len(t.rounds), "stop_reason": t.stop_reason,
             "steady": bool(t.steady and t.steady.steady),
             "window": list(t.steady.rounds) if t.steady else [],
             "headline": headline(t)}
            for t in run.tests
        ],
    }


