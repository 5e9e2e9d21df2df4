"""Continuing an interrupted run from its result file.

A resumed run must measure the same device with the same settings, so
:func:`check` compares the device (kind, size, and what identifies it: its
serial number, world-wide names, a loop device's backing file, a file
target's inode; a path names whatever has that name now) and every option.
:func:`prepare` then decides, test by test, where to pick up:

* a complete test is kept and skipped;
* a test interrupted after it reached steady state is kept and marked complete
  (its window is whole, nothing is missing);
* any other interrupted test starts again from its PURGE: the PTS measures a
  device driven without pause from PURGE and WIPC into steady state, and the
  idle time of an interruption lets the drive recover, so its earlier rounds
  cannot be continued.  The event log says so.
"""
from __future__ import annotations

import glob
import os
from typing import List

from tkperf.errors import ResumeError
from tkperf.kit import options, registry
from tkperf.kit.rules import steps_of
from tkperf.model.results import DeviceInfo, Event, RunResult, now_iso

#: What identifies a target beyond its size, as the result file names them;
#: the first group alone makes it identifiable (a model or an NSID is shared
#: by many drives).
IDENTIFYING = (("serial", "serial number"), ("wwn", "WWN"), ("eui64", "EUI-64"), ("nguid", "NGUID"),
               ("inode", "backing file (device:inode)"))
ALSO_COMPARED = (("nsid", "namespace ID"), ("model", "model"), ("firmware", "firmware"))


def identity_problem(old: DeviceInfo, dev: DeviceInfo) -> str:
    """Why ``dev`` cannot be told to be the saved run's device ``old`` ('' when
    it is): a recorded identifier that differs, or none recorded beyond the size."""
    for name, label in IDENTIFYING + ALSO_COMPARED:
        was, now = getattr(old, name), getattr(dev, name)
        if name == "inode" and old.kind == "file":
            label = "file (device:inode)"
        if (was or (name == "serial" and now)) and was != now:
            return (f"{dev.path} has {label} {now or 'none'}, the saved run's device had "
                    f"{was or 'none'}: not the same device")
    if not any(getattr(old, name) for name, _ in IDENTIFYING):
        return (f"the saved run records nothing that identifies its device beyond its size "
                f"(no {', '.join(label for _, label in IDENTIFYING[:-1])} or backing file), so "
                f"{dev.path} cannot be matched to it")
    return ""


def check(saved: RunResult, dev: DeviceInfo, opts: options.RunOptions, force: bool = False) -> str:
    """ResumeError unless ``dev`` and ``opts`` are what the saved run used.
    The device must be the same one, not one of the same path and size
    (:func:`identity_problem`); with ``force`` an identity that cannot be
    matched is returned as the one line to say instead of refused."""
    old = saved.device
    if old.kind != dev.kind:
        raise ResumeError(f"the saved run tested a {old.kind} target, {dev.path} is a {dev.kind}")
    if old.size_bytes != dev.size_bytes:
        raise ResumeError(f"{dev.path} has {dev.size_bytes} bytes, the saved run's device had "
                          f"{old.size_bytes}: not the same device")
    # Only the options this run uses: a format-1 file also lists the options
    # of tests it did not run.
    now = opts.to_dict()
    if "range_rules" not in saved.options:  # an earlier tkperf's file: its rules are read as 1, and kept
        now.pop("range_rules", None)
    diffs = options.differences({k: v for k, v in saved.options.items() if k in now}, now)
    if diffs:
        key, (was, is_now) = next(iter(diffs.items()))
        more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
        raise ResumeError(f"option {key} was {was!r} in the saved run, now {is_now!r}{more}; "
                          "resume with the same options")
    problem = identity_problem(old, dev)
    if problem and not force:
        raise ResumeError(f"{problem}; refusing to resume (--force resumes on it all the same)")
    if problem:
        problem = f"resuming by --force although {problem}"
        saved.events.append(Event(time=now_iso(), kind="warning", message=problem))
    return problem


def prepare(saved: RunResult) -> List[str]:
    """Mark what the resumed run keeps and what it redoes; returns what it says."""
    said: List[str] = []
    for t in saved.tests:
        if t.status == "complete":
            continue
        kind = registry.get(t.type)
        if kind is None:
            raise ResumeError(f"test {t.key} is of type {t.type!r}, which is not installed; "
                              "install it to resume this run")
        steps = steps_of(kind, t)
        if steps.keeps_steady_on_resume and t.steady is not None and t.steady.steady:
            t.status = "complete"
            t.stop_reason = t.stop_reason if t.stop_reason == "steady state" else "steady state"
            t.finished = t.finished or now_iso()
            said.append(f"{t.key} had reached steady state in rounds {t.steady.first_round}-"
                        f"{t.steady.last_round} before the interruption; kept")
        else:
            done = steps.steps_done(t)
            where = f"after {done} {steps.unit}{'s' if done != 1 else ''}" if done else \
                f"before its first {steps.unit}"
            said.append(f"{t.key} was interrupted {where}, before steady state; the PTS needs an "
                        "unbroken run from PURGE, so it starts again with purge and preconditioning")
    saved.events.append(Event(time=now_iso(), kind="resume",
                              message="resumed: " + ("; ".join(said) if said else "no test was under way")))
    saved.status = "running"
    saved.finished = ""
    return said


def clean_leftovers(outdir: str, name: str) -> List[str]:
    """Temporary files a killed run left: fio job files and half-written XML."""
    gone = []
    for pattern in (".tkperf-*.fio", f".{name}.xml.*.tmp"):
        for path in glob.glob(os.path.join(outdir, pattern)):
            try:
                os.unlink(path)
                gone.append(path)
            except OSError:
                pass
    return gone
