"""An original TKperf file as a whole tkperf run: the device from its
``devinfo``, the host from ``kernel``/``lsb``/``fioversion``, options only
as far as the file holds them, the tests (:mod:`tkperf.store.legacy.tkperf2_tests`),
and the record of the import: an ``import`` event, notes on what was
derived, ``facts["imported"]`` with the source, what was not recorded and
how TKperf's own steady-state verdicts compare with tkperf's 20/10 check.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Tuple

from tkperf import __version__
from tkperf.errors import ResultFileError
from tkperf.model.results import DeviceInfo, Event, HostInfo, RunResult, now_iso
from tkperf.model.steadystate import DATA_EXCURSION, SLOPE_EXCURSION, WINDOW, least_squares
from tkperf.store.legacy.tkperf2 import OldFile, cmdline_words, parse
from tkperf.store.legacy.tkperf2_device import _GIVEN, capacity, device_facts, given_capacity  # noqa: F401
from tkperf.store.legacy.tkperf2_hdd import hdd_iops_test, hdd_tp_tests
from tkperf.store.legacy.tkperf2_tests import (
    NOT_RECORDED,
    Check,
    Imported,
    Settings,
    iops_test,
    lat_test,
    settings,
    tp_tests,
    wsat_test,
)

#: What no original TKperf file holds (the report shows it as not recorded).
NEVER_RECORDED = (
    "host name, CPU and memory", "PTS revision and device class", "active range",
    "purge method and outcome", "WIPC amount and duration",
    "I/O counts and bytes per workload, MB/s of random and IOPS of sequential workloads",
    "latency percentiles and histograms", "start and end times of tests and rounds", "physical sector size")
def command_line(words: List[str]) -> Dict[str, object]:
    """What the recorded command line says: device, TC, QD, runtime, refill_buffers, interface."""
    out: Dict[str, object] = {}
    if len(words) > 3:
        out["device"] = words[3]
    flags = {"-nj": "numjobs", "--numjobs": "numjobs", "-iod": "iodepth", "--iodepth": "iodepth",
             "-rt": "runtime", "--runtime": "runtime"}
    for a, b in zip(words, words[1:] + [""]):
        if a in flags and b.isdigit() and int(b) > 0:
            out[flags[a]] = int(b)
        elif a in ("-i", "--interface") and b:
            out["interface"] = b
    if "-rfb" in words or "--refill_buffers" in words:
        out["refill_buffers"] = True
    return out


def _os_name(lsb: str) -> str:
    return re.sub(r"^Description:\s*", "", lsb.strip())


def _features(text: str) -> List[Tuple[str, str]]:
    """``name: value`` or ``name,value`` lines of the feature matrix as (feature, value)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith((".. ", ":")) or set(line) <= set("=-+| "):
            continue
        m = re.fullmatch(r"([^:,;]+)[:,;]\s*(.+)", line)
        if m:
            out.append((m.group(1).strip(), m.group(2).strip().strip('"')))
    return out


def _share(a: float, avg: float) -> str:
    return f"{a / avg:.1%}" if avg else "n/a"


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), abs(scale), 1e-12)


def steady_record(imp: Imported) -> Tuple[Dict[str, object], List[str]]:
    """tkperf's verdict beside the file's own, and the differences in words."""
    t, s, fs = imp.test, imp.test.steady, imp.steady
    if s is None:
        raise ValueError(f"{t.key}: imported without tkperf's steady-state check")
    mine = {"steady": s.steady, "rounds": list(s.rounds), "values": list(s.values), "average": s.average,
            "slope": s.slope, "intercept": s.intercept}
    if fs is None:
        return {"tkperf": mine, "file": None, "agree": None}, []
    k = imp.scale
    their_rounds = [r + 1 for r in fs.rounds]
    their_values = [v * k for v in fs.values]
    theirs: Dict[str, object] = {"steady": fs.reached, "rounds": their_rounds, "values": their_values,
                                 "average": None if fs.average is None else fs.average * k}
    if fs.slope is not None:  # TKperf counted rounds from 0: the intercept moves by one slope
        theirs.update(slope=fs.slope[0] * k, intercept=(fs.slope[1] - fs.slope[0]) * k)
    diffs = _verdict_diffs(imp, their_rounds) + _file_diffs(imp, their_rounds, their_values)
    return {"tkperf": mine, "file": theirs, "agree": not diffs}, diffs


def _verdict_diffs(imp: Imported, their_rounds: List[int]) -> List[str]:
    """Where the file's steady-state verdict, window or tracked workload differ from tkperf's."""
    t, s, fs = imp.test, imp.test.steady, imp.steady
    assert s is not None and fs is not None
    diffs: List[str] = []
    if fs.reached is not None and fs.reached != s.steady:
        diffs.append(f"TKperf's own check says steady state was {'reached' if fs.reached else 'NOT reached'}, "
                     f"tkperf's 20/10 check says {'reached' if s.steady else 'NOT reached'} (range "
                     f"{_share(s.range, s.average)} of the average, limit {DATA_EXCURSION:.0%}; slope excursion "
                     f"{_share(s.slope_excursion, s.average)}, limit {SLOPE_EXCURSION:.0%})")
    if their_rounds and their_rounds != list(s.rounds):
        diffs.append(f"the file's window is rounds {_span(their_rounds)}, tkperf judged rounds {_span(s.rounds)}")
    if imp.tracked != t.tracking_workload:
        diffs.append(f"TKperf tracked {imp.tracked} (the next-to-last block size at 0/100: 8k once it had "
                     f"dropped 512 for a 4K-native drive), tkperf tracks {t.tracking_workload}")
    return diffs


def _file_diffs(imp: Imported, their_rounds: List[int], their_values: List[float]) -> List[str]:
    """Where the file's steady-state record disagrees with itself: its window's values with its
    matrix, its average with its values, its line with theirs."""
    t, s, fs, k = imp.test, imp.test.steady, imp.steady, imp.scale
    assert s is not None and fs is not None
    diffs: List[str] = []
    matrix = {r.index: w.metric(imp.metric) for r in t.rounds for w in r.workloads if w.name == imp.tracked}
    for r, v in zip(their_rounds, their_values):
        if r in matrix and not _close(v, matrix[r], s.average):
            diffs.append(f"the file's steady-state value of round {r} ({v / k:,.6g}) is not what its own "
                         f"matrix holds for {imp.tracked} ({matrix[r] / k:,.6g})")
            break
    if fs.values and fs.average is not None and not _close(fs.average, sum(fs.values) / len(fs.values), fs.average):
        diffs.append(f"the file's average ({fs.average:,.6g}) is not the mean of its window "
                     f"({sum(fs.values) / len(fs.values):,.6g})")
    if fs.slope is not None and len(fs.values) > 1:
        slope, icpt = least_squares([float(r) for r in fs.rounds], list(fs.values))
        if not (_close(slope, fs.slope[0], sum(fs.values)) and _close(icpt, fs.slope[1], sum(fs.values))):
            diffs.append(f"the file's line (slope {fs.slope[0]:,.6g}, intercept {fs.slope[1]:,.6g}) is not the "
                         f"least-squares line of its window (slope {slope:,.6g}, intercept {icpt:,.6g})")
    return diffs


def _span(rounds) -> str:
    rounds = list(rounds)
    return f"{rounds[0]}-{rounds[-1]}" if rounds else "none"


def _tests(old: OldFile, source: str, cmd: Dict[str, object], size: int) -> Tuple[List[Imported], Dict[str, Settings]]:
    out: List[Imported] = []
    used: Dict[str, Settings] = {}
    for tag, t in old.tests.items():
        if t.values.get("roundmat") == []:
            old.ignored.append(f"<{tag}> (an empty roundmat: TKperf measured no round of it)")
            continue
        chk = Check(source, t)
        s = settings(chk, {k: v for k, v in cmd.items() if isinstance(v, int) and not isinstance(v, bool)})
        used[tag] = s
        if old.mode == "hdd":
            if tag not in ("iops", "tp"):
                raise ResultFileError(f"{source}: <{tag}> in a file of TKperf's HDD mode, which runs iops and tp")
            out += [hdd_iops_test(chk, s)] if tag == "iops" else hdd_tp_tests(chk, s, size)
        elif tag == "iops":
            out.append(iops_test(chk, s))
        elif tag == "lat":
            out.append(lat_test(chk, s))
        elif tag == "tp":
            out += tp_tests(chk, s)
        else:
            out.append(wsat_test(chk, s))
    if not out:
        raise ResultFileError(f"{source}: no test of this original TKperf file holds a measured round")
    order = {"iops": 0, "tp": 1, "lat": 2, "wsat": 3, "hdd-iops": 4, "hdd-zones": 5}
    out.sort(key=lambda i: order.get(i.test.type, 9))
    return out, used


def _options(imported: List[Imported], used: Dict[str, Settings], old: OldFile, cmd: Dict[str, object],
             ) -> Dict[str, str]:
    """Only what the file holds: the tests, their matrices, TC/QD, runtime, refill_buffers."""
    types = list(dict.fromkeys(i.test.type for i in imported))
    opts = {"tests": ",".join(types)}
    opts.update(_run_settings(used, cmd))
    refill = _refill_buffers(old, cmd)
    if refill:
        opts["refill_buffers"] = refill
    for i in imported:
        p = i.test.params
        if i.test.type in ("iops", "lat"):
            opts[f"{i.test.type}_bs"], opts[f"{i.test.type}_mixes"] = p["block_sizes"], p["mixes"]
    tp = [i.test.params["block_size"] for i in imported if i.test.type == "tp"]
    if tp:
        opts["tp_bs"] = ",".join(tp)
    return opts


def _run_settings(used: Dict[str, Settings], cmd: Dict[str, object]) -> Dict[str, str]:
    """TC, QD and the runtime, as the first test's but LAT's settings hold them."""
    opts: Dict[str, str] = {}
    main = next((s for tag, s in used.items() if tag != "lat"), None)
    if main is not None:
        for name in ("numjobs", "iodepth"):
            if getattr(main, name):
                opts[name] = str(getattr(main, name))
        if main.runtime_recorded or "runtime" in cmd:
            opts["runtime"] = str(main.runtime)
    return opts


def _refill_buffers(old: OldFile, cmd: Dict[str, object]) -> str:
    """'true' or 'false' as the command line or the tests' extra fio arguments say; '' when nothing does."""
    xargs = [x for x in (t.values.get("xargs") for t in old.tests.values()) if isinstance(x, list)]
    if cmd.get("refill_buffers") or any("refill_buffers" in x for x in xargs):
        return "true"
    if xargs or "cmdline" in old.run:
        return "false"
    return ""


def _notes(old: OldFile, imported: List[Imported], used: Dict[str, Settings], size_from: str) -> List[str]:
    out = [f"device capacity from {size_from}"]
    if any(i.test.type in ("iops", "hdd-iops") for i in imported):
        out.append("TKperf kept read + write IOPS per cell; the split into read and write of a mixed cell "
                   "follows the nominal R/W mix")
    if "writesat" in used:
        out.append("TKperf kept no bytes per WSAT round: data written is 4 KiB x IOPS x the round's seconds")
    if "lat" in used:
        lat = used["lat"]
        if (lat.numjobs, lat.iodepth) not in ((1, 1), (None, None)):
            out.append(f"<lat> says TC{lat.numjobs}/QD{lat.iodepth}; TKperf ran LAT at TC1/QD1 whatever it "
                       "stored, and so does this import")
        out.append("LAT 65/35 figures are TKperf's 0.65 x read + 0.35 x write, kept for both directions")
    if not any(s.runtime_recorded for s in used.values()):
        out.append(f"seconds per workload not recorded: TKperf {old.version or '1.x'} ran every workload "
                   f"{next(iter(used.values())).runtime} s unless told otherwise")
    if any(i.test.type == "hdd-zones" for i in imported):
        out.append("HDD zone positions are TKperf's: the capacity / zones, aligned down to 4 KiB")
    if old.ignored:
        out.append(f"left out: {', '.join(old.ignored)}")
    if old.replaced:
        out.append(f"control characters replaced by U+FFFD in {', '.join(old.replaced)}")
    return out


def build_run(old: OldFile, source: str, imported_at: str = "") -> RunResult:
    """The tkperf run an original TKperf file holds (see the module's docstring)."""
    when = imported_at or now_iso()
    devinfo = str(old.run.get("devinfo") or "")
    dev = device_facts(devinfo)
    size, size_from = capacity(dev, source, _GIVEN.get())
    cmd = command_line(cmdline_words(old.run))
    imported, used = _tests(old, source, cmd, size)
    four_k = _four_k_native(imported)
    device = _device(old, dev, cmd, size, four_k)
    fio = next((str(t.values["fioversion"]).strip() for t in old.tests.values()
                if isinstance(t.values.get("fioversion"), str)), "")
    host = HostInfo(kernel=str(old.run.get("kernel", "")).strip(), os=_os_name(str(old.run.get("lsb", ""))),
                    fio_version=fio)
    version = old.version or "1.x (no version recorded)"
    run = RunResult(name=old.name, started=str(old.run.get("testdate", "")), device=device, host=host,
                    options=_options(imported, used, old, cmd), profile="hdd" if old.mode == "hdd" else "ssd",
                    status="complete", description=devinfo.strip(), tests=[i.test for i in imported],
                    tkperf_version=f"TKperf {version}", features=_features(str(old.run.get("featmatrix", ""))))
    base = os.path.basename(source)
    run.events.append(Event(when, "import", f"imported from {base}, a result file of the original TKperf "
                                            f"{version} ({old.mode} mode), by tkperf {__version__}"))
    run.events += [Event(when, "note", n) for n in _notes(old, imported, used, size_from)]
    verdicts = _steady_verdicts(run, imported, when)
    imported_facts: Dict[str, object] = {
        "source": base, "tool": "TKperf", "version": old.version, "mode": old.mode, "testname": old.name,
        "testdate": old.run.get("testdate", ""), "cmdline": old.run.get("cmdline", ""),
        "kernel": old.run.get("kernel", ""), "lsb": old.run.get("lsb", ""), "featmatrix": old.run.get("featmatrix", ""),
        "capacity_from": size_from, "not_recorded": list(NEVER_RECORDED) + _missing(old, used, device, four_k),
        "steady_state": verdicts, "imported_at": when, "tkperf_version": __version__,
        "preconditioning": {i.test.key: _preconditioning(i.test.type, old.mode, _user_oio(old, used, cmd))
                            for i in imported},
        "tkperf_rules": TKPERF_RULES,
    }
    if old.replaced:
        imported_facts["control_characters_replaced"] = list(old.replaced)
    run.facts["imported"] = imported_facts
    return run


def _device(old: OldFile, dev: Dict[str, str], cmd: Dict[str, object], size: int,
            four_k: Optional[bool]) -> DeviceInfo:
    """The device as the file's ``devinfo`` and command line describe it."""
    path = str(cmd.get("device", NOT_RECORDED))
    return DeviceInfo(path=path, resolved=path, kind="block", size_bytes=size,
                      logical_sector=4096 if four_k else 512, physical_sector=4096 if four_k else 512,
                      vendor=dev.get("vendor", ""), model=dev.get("model", ""), serial=dev.get("serial", ""),
                      firmware=dev.get("firmware", ""), rotational=old.mode == "hdd",
                      transport=dev.get("transport", str(cmd.get("interface", ""))),
                      write_cache={"1": "WCE", "0": "WCD"}.get(dev.get("cache", ""), ""))


def _steady_verdicts(run: RunResult, imported: List[Imported], when: str) -> Dict[str, object]:
    """Each test's steady-state record (:func:`steady_record`), its agreement
    or its differences said in the run's events."""
    verdicts: Dict[str, object] = {}
    for i in imported:
        if i.test.steady is None and i.test.rounds and i.test.tracking_workload:
            i.test.steady = i.test.evaluate(WINDOW)
        if i.test.steady is None or i.test.type == "hdd-iops":
            continue
        record, diffs = steady_record(i)
        verdicts[i.test.key] = record
        if diffs:
            run.events.append(Event(when, "warning", "steady state: TKperf's record and tkperf's 20/10 check "
                                    "disagree: " + "; ".join(diffs) + "; tkperf's verdict is used", test=i.test.key))
        elif isinstance(record["file"], dict):
            run.events.append(Event(when, "note", f"steady state: TKperf's own verdict (rounds "
                                    f"{_span(record['file']['rounds'])}) agrees with tkperf's 20/10 check",
                                    test=i.test.key))
    return verdicts


#: TKperf's fixed rules (its source's constants), for a header that must say them.
TKPERF_RULES = {"max_rounds": 25, "window": 5, "steady_state": "20/10 over 5 rounds, slope x 4",
                "wsat_max_rounds": 1440, "wsat_stop": "4x the capacity written or 1440 rounds",
                "hdd_zones": 128}


def _user_oio(old: OldFile, used: Dict[str, Settings], cmd: Dict[str, object]) -> str:
    """The TC/QD the user gave (WIPC ran at it): any test's but LAT's (2.x stored 1/1
    there), 1.x's LAT, else the command line's."""
    s = next((v for k, v in used.items() if k != "lat"), used.get("lat") if old.major == 1 else None)
    nj, iod = (s.numjobs, s.iodepth) if s is not None else (cmd.get("numjobs"), cmd.get("iodepth"))
    return f"TC{nj}/QD{iod}" if nj and iod else "the run's TC/QD (not recorded)"


def _preconditioning(kind: str, mode: str, oio: str) -> str:
    """What TKperf's source did before a test (its file records no outcome of it)."""
    if mode == "hdd":
        return "none (TKperf's HDD mode erases and preconditions nothing)"
    if kind in ("iops", "lat"):
        return (f"secure erase, then WIPC: SEQ 128KiB W over the whole device twice at {oio} "
                "(amount and duration not recorded)")
    if kind == "tp":
        return "secure erase before each block size, no WIPC"
    return "secure erase, no WIPC"


def _four_k_native(imported: List[Imported]) -> Optional[bool]:
    """Whether the drive had 4096-byte logical sectors: TKperf dropped 512 from
    every SSD matrix then; None where no SSD matrix tells."""
    for i in imported:
        if i.test.type in ("iops", "lat"):
            return not i.test.params["block_sizes"].endswith("512")
        if i.test.type == "tp":
            return not any(j.test.key == "tp-512" for j in imported)
    return None


def _missing(old: OldFile, used: Dict[str, Settings], device: DeviceInfo,
             four_k: Optional[bool]) -> List[str]:
    out = []
    if four_k is None:
        out.append("logical sector size")
    if not device.write_cache:
        out.append("write cache state")
    for name, what in (("testdate", "test date"), ("kernel", "kernel"), ("lsb", "operating system"),
                       ("cmdline", "command line and tested device path"), ("devinfo", "device description")):
        if name not in old.run:
            out.append(what)
    if not any(isinstance(t.values.get("fioversion"), str) for t in old.tests.values()):
        out.append("fio version")
    if not any(s.runtime_recorded for s in used.values()):
        out.append("seconds per workload")
    if any(s.numjobs is None or s.iodepth is None for s in used.values()):
        out.append("thread count or queue depth")
    return out


def loads(data: bytes, source: str = "<data>", imported_at: str = "") -> RunResult:
    """An original TKperf file as a tkperf run, marked as imported (at
    ``imported_at``, default now); every failure is a one-line ResultFileError."""
    return build_run(parse(data, source), source, imported_at)
