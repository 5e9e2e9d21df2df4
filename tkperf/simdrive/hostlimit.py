"""How much the host, not the model, limited a run on an emulated SSD.

The server answers every request when the model says it completes; when
the machine gives it no CPU in time, the reply goes out late, and the
drive's figures then follow the host's load, not the model.  The server
counts the replies more than ``LATE_S`` (1 ms) late (``late_replies``,
``max_late_s`` in ``tkperf simdrive stats``).  A run reads the counters at
its start (facts ``simdrive``) and at its end, and keeps the difference as
facts ``simdrive_host``, with the share of the run's model time the
drive had no command outstanding (``idle_share``: the host's pauses, a
test's own idle periods and the host path at low queue depth, not a
verdict by itself); when more than :data:`THRESHOLD` of the replies
were late, the run carries a warning and the report a caveat.

What the drive saw of the host is kept beside it (issue 56): the share of
the drive's active time (busy, or idle for less than its background GC's
delay between a completion and the next command) in which it waited for
the host's path (``host_wait_share``), and the model's own mean service
per read and per write, arrival to completion on its clock
(``read_service_s``, ``write_service_s``), against which fio's latency
shows what the host added.  Both are in the report's header line.  A
starved host leaves the drive waiting between commands: above
:data:`WAIT_THRESHOLD` of its active time the run is called host-limited
too (at queue depth 1 the drive's pace is then that much below what the
model allows), the late replies or not.  The time between two fio
processes, which tkperf tells the drive is its own (``held_s``,
``tkperf.simdrive.model.Drive.hold``), is no part of any figure and of
neither share.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from tkperf.simdrive.server import LATE_S

#: The share of late replies from which a run's figures are called host-limited.
THRESHOLD = 0.05
#: The share of the drive's active time spent waiting for the host's path
#: from which a run's figures are called host-limited (measured in
#: ``benchmarks/simdrive.py``: 0.03-0.08 at QD 1 on an idle host, 0.10-0.14
#: beside 12 busy loops on two cores).
WAIT_THRESHOLD = 0.15
FACT = "simdrive_host"
_IOS = ("host_write_ios", "host_read_ios", "host_trim_ios")


def _num(doc: Mapping[str, Any], key: str) -> float:
    value = doc.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def share(before: Mapping[str, Any], after: Mapping[str, Any]) -> Dict[str, Any]:
    """The replies between two readings of the counters and how many were late."""
    replies = sum(_num(after, k) - _num(before, k) for k in _IOS)
    late = _num(after, "late_replies") - _num(before, "late_replies")
    if replies < 0 or late < 0:  # another server (the drive was made again): nothing to compare
        replies = late = 0.0
    span = _num(after, "model_time_s") - _num(before, "model_time_s")
    idle = _num(after, "idle_time_s") - _num(before, "idle_time_s")
    out = {"replies": int(replies), "late_replies": int(late),
           "late_share": late / replies if replies else 0.0,
           "idle_share": idle / span if span > 0 and 0 <= idle <= span else 0.0,
           "max_late_s": _num(after, "max_late_s"), "late_s": LATE_S, "threshold": THRESHOLD}
    if "host_wait_s" in after and "host_wait_s" in before:  # a server that counts them (issue 56)
        held = _num(after, "host_held_s") - _num(before, "host_held_s")  # between fio processes: no figure's
        wait = _num(after, "host_wait_s") - _num(before, "host_wait_s") - max(held, 0.0)
        active = span - idle + wait
        out["host_wait_share"] = wait / active if active > 0 and 0 <= wait <= active else 0.0
        out["held_s"] = held if held > 0 else 0.0
        out["wait_threshold"] = WAIT_THRESHOLD
        for kind in ("read", "write"):
            ios = _num(after, f"host_{kind}_ios") - _num(before, f"host_{kind}_ios")
            took = _num(after, f"{kind}_service_s") - _num(before, f"{kind}_service_s")
            out[f"{kind}_service_s"] = took / ios if ios > 0 and took >= 0 else 0.0
    return out


def caveat(doc: Any) -> str:
    """The caveat a run's ``simdrive_host`` fact calls for; '' below both thresholds."""
    if not isinstance(doc, dict):
        return ""
    got, limit = _num(doc, "late_share"), _num(doc, "threshold") or THRESHOLD
    if got > limit:
        return (f"emulated SSD host-limited: {int(_num(doc, 'late_replies')):,} of {int(_num(doc, 'replies')):,} "
                f"replies ({got:.1%}) went out more than {_num(doc, 'late_s') * 1e3:g} ms after the model's time "
                f"(worst {_num(doc, 'max_late_s') * 1e3:.1f} ms): the machine's load, not the model, set part of "
                f"these figures (caveat above {limit:.0%})")
    wait, wait_limit = _num(doc, "host_wait_share"), _num(doc, "wait_threshold") or WAIT_THRESHOLD
    if "host_wait_share" in doc and wait > wait_limit:
        return (f"emulated SSD host-limited: the drive waited for the host's path between commands "
                f"{wait:.0%} of its active time: at low queue depth the machine, not the model, set that much "
                f"of these figures (caveat above {wait_limit:.0%})")
    return ""


def summary(doc: Any) -> str:
    """One line for a report header ('' when the run did not record it)."""
    if not isinstance(doc, dict) or not doc.get("replies"):
        return ""
    saw = ""
    if "host_wait_share" in doc:
        served = ", ".join(f"{kind} {_num(doc, kind + '_service_s') * 1e6:,.0f} us" for kind in ("read", "write")
                           if _num(doc, kind + "_service_s") > 0)
        saw = (f", waiting for the host's path {_num(doc, 'host_wait_share'):.0%} of its active time"
               + (f" (its mean service: {served})" if served else ""))
    return (f"{int(_num(doc, 'late_replies')):,} of {int(_num(doc, 'replies')):,} replies "
            f"({_num(doc, 'late_share'):.1%}) more than {_num(doc, 'late_s') * 1e3:g} ms late "
            f"(worst {_num(doc, 'max_late_s') * 1e3:.1f} ms), the model idle {_num(doc, 'idle_share'):.0%} of "
            f"the run's time{saw}; " + ("host-limited" if caveat(doc) else _below(doc)))


def _below(doc: Mapping[str, Any]) -> str:
    late = f"{_num(doc, 'threshold') or THRESHOLD:.0%}"
    if "host_wait_share" not in doc:
        return f"below the {late} caveat"
    return f"below the caveats ({late} late, {_num(doc, 'wait_threshold') or WAIT_THRESHOLD:.0%} waiting)"


def record(facts: Dict[str, Any], now: Optional[Mapping[str, Any]]) -> str:
    """Keep the run's share in ``facts`` from the counters at its start
    (facts ``simdrive``) and ``now``; the caveat, or ''."""
    start = facts.get("simdrive")
    if not isinstance(start, dict) or not isinstance(now, Mapping):
        return ""
    facts[FACT] = share(start, now)
    return caveat(facts[FACT])
