"""The SNIA report header that opens every test section: test platform,
device under test, set-up parameters and test parameters.

The common fields are here; a test type adds its own parts (its stimulus,
its pre-conditioning lines, the middle of its test parameters) through the
arguments of :func:`snia_header`.
"""
from __future__ import annotations

import re
from typing import Callable, List, Mapping, Optional, Sequence, Set, Tuple

from tkperf.durations import ANY_TEXT, duration, unit_word
from tkperf.kit import options, registry
from tkperf.kit.composite import capture_round, steady_rounds
from tkperf.kit.sections import ReportContext
from tkperf.model import pts, segments
from tkperf.model.results import RunResult, TestRun, format_bs, gb, mb
from tkperf.render import blocks as b
from tkperf.report import steady
from tkperf.report.words import (
    NA,
    capacity_text,
    oio,
    plural,
    seeks_steady_state,
    steps_done,
    test_title,
    tracking_labels,
    unit_of,
    verdict,
)
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import hostlimit
from tkperf.verdict import conformance

Pairs = Tuple[Tuple[str, str], ...]
#: Height of the SNIA header tables on an A4 PDF page, with some margin.
HEADER_ROOM_CM = 17.0


def _desc(run: RunResult, *keys: str) -> str:
    for k in keys:
        v = run.description_fields.get(k, "").strip()
        if v:
            return v
    return ""


def imported_from(run: RunResult) -> str:
    """'the original TKperf 2.2' for a run imported from an older tool's file; ''."""
    info = run.facts.get("imported") if isinstance(run.facts, dict) else None
    if not isinstance(info, dict):
        return ""
    return f"{info.get('tool') or 'the original TKperf'} {info.get('version') or ''}".strip()


def _absent(run: RunResult) -> str:
    """How a value the run does not hold is shown: an imported file did not record it."""
    return "not recorded" if imported_from(run) else "not reported"


def device_or_desc(run: RunResult, device_value: str, *keys: str) -> str:
    """The device's own value, else the description file's (marked so), else
    'not reported' ('not recorded' for a run imported from an older tool)."""
    if device_value.strip():
        return device_value.strip()
    v = _desc(run, *keys)
    if v:
        return f"{v} (description file)"
    return _absent(run)


def platform_fields(run: RunResult) -> Pairs:
    h = run.host
    na = _absent(run)
    mem = f"{h.memory_bytes / 2 ** 30:.1f} GiB" if h.memory_bytes else na
    imported = imported_from(run)
    if run.profile == conformance.HDD:
        revision = "none: the HDD profile is not a SNIA PTS run"
    else:
        revision = f"not recorded ({imported})" if imported else pts.of_options(run.options).title
    return (
        ("PTS revision", revision),
        ("Test sponsor", _desc(run, "sponsor", "test_sponsor") or "not given"),
        ("Host", h.hostname or na),
        ("CPU", f"{h.cpu or na}" + (f", {h.cores} cores" if h.cores else "")),
        ("Memory", mem),
        ("OS", h.os or na),
        ("Kernel", h.kernel or na),
        ("fio", h.fio_version or na),
        ("tkperf", run.tkperf_version or h.tkperf_version or na),
        ("Python", h.python or na),
    ) + _remote(run) + _sharing(run)


def _remote(run: RunResult) -> Pairs:
    """How a run on a test host reached it (``facts["remote"]``)."""
    got = run.facts.get("remote") if isinstance(run.facts, dict) else None
    if not isinstance(got, dict) or not got.get("host"):
        return ()
    return (("Remote test host", f"{got['host']}: fio's client on the controlling host, its server on "
                                 f"{got.get('fio_host', got['host'])} port {got.get('fio_port', '?')}; "
                                 "everything else by tkperf's agent over SSH"),)


#: The most names of the runs that shared the host the header lists.
SHOWN_TARGETS = 16


def _sharing(run: RunResult) -> Pairs:
    """'Runs sharing the host' when the run was one of several at once."""
    share = run.facts.get("host_sharing") if isinstance(run.facts, dict) else None
    if not isinstance(share, dict) or int(share.get("runs") or 0) < 2:
        return ()  # alone on its host
    named = [str(t.get("name", "")) for t in share.get("targets", []) if isinstance(t, dict)]
    names = ", ".join(named[:SHOWN_TARGETS]) + (f" and {len(named) - SHOWN_TARGETS:,} more"
                                                 if len(named) > SHOWN_TARGETS else "")
    cpus = f" on {share['host_cpus']} CPUs" if share.get("host_cpus") else ""
    return (("Runs sharing the host", f"{share['runs']}{cpus}" + (f" ({names})" if names else "")),)


def device_fields(run: RunResult, test: Optional[TestRun] = None) -> Pairs:
    d = run.device
    target = _target(run)
    out = [
        ("Vendor", device_or_desc(run, d.vendor, "vendor", "manufacturer", "mfgr")),
        ("Model", device_or_desc(run, d.model, "model", "model_no", "product")),
        ("Serial", device_or_desc(run, d.serial, "serial", "serial_number", "s/n")),
        ("Firmware", device_or_desc(run, d.firmware, "firmware", "firmware_ver", "firmware_version")),
        ("Capacity", capacity_text(d.size_bytes, exact=True)),
        ("Interface", device_or_desc(run, d.transport, "interface", "transport")),
        ("Write cache", d.write_cache or (_desc(run, "write_cache", "cache") + " (description file)"
                                          if _desc(run, "write_cache", "cache") else
                                          "unknown: tkperf could not read it on this target")),
        ("Sectors", f"{d.logical_sector} B logical, {d.physical_sector} B physical"
                    + (", rotational" if d.rotational else "")),
        ("Target", target),
    ]
    model = emulated_model(run)
    if model:
        out.append(("Emulated SSD model", model))
        host = hostlimit.summary(run.facts.get(hostlimit.FACT) if isinstance(run.facts, dict) else None)
        if host:
            out.append(("Emulated SSD host limit", host))
    for label, keys in (("Form factor", ("form_factor",)), ("NAND type", ("nand_type", "nand"))):
        value = _desc(run, *keys)
        if value:  # only a description file tells these
            out.append((label, value + " (description file)"))
    if test is not None:
        out += _purge_fields(test)
    return tuple(out)


def _target(run: RunResult) -> str:
    """The target's path (and what it resolves to), and what kind of target it is where that matters."""
    d = run.device
    target = d.path if d.path == d.resolved or not d.resolved else f"{d.path} ({d.resolved})"
    if d.kind == "file":
        return target + ": a FILE target, not a raw block device"
    target_facts = run.facts.get("target")
    kind = target_facts.get("target_kind") if isinstance(target_facts, dict) else None
    if isinstance(kind, dict) and kind.get("detail") and (kind.get("kind") not in ("disk", "loop")
                                                          or d.transport == EMULATED):
        target += f": {kind['detail']}"
    return target


def _purge_fields(test: TestRun) -> List[Tuple[str, str]]:
    """How the test's purge went, and whether it was a PTS PURGE."""
    p = test.purge
    if p is None:
        return [("Purge method", "none recorded"), ("PTS PURGE", "no")]
    method = p.method + (f" ({p.command})" if p.command else "")
    out = [("Purge method", f"{method}, requested {p.requested}, {p.seconds:.1f} s"),
           ("PTS PURGE", "yes" if p.pts_purge else f"NO: {p.note or 'not a PTS PURGE'}")]
    if p.verification:
        out.append(("Purge check", p.verification))
    return out


def emulated_model(run: RunResult) -> str:
    """An emulated SSD's model parameters as the run recorded them (facts
    ``simdrive``); '' for any other target."""
    got = run.facts.get("simdrive") if isinstance(run.facts, dict) else None
    params = got.get("params") if isinstance(got, dict) else None
    if not isinstance(params, dict):
        return ""
    parts = [f"{k} {v.get('value')} {unit_word(str(v.get('unit', '')), ANY_TEXT)}".strip()
             for k, v in params.items() if isinstance(v, dict)]
    blocks = got.get("physical_blocks") if isinstance(got, dict) else None
    return "page-mapped FTL (tkperf simdrive)" + (f", {blocks} blocks" if blocks else "") + ": " + ", ".join(parts)


def data_pattern_words(o: Mapping[str, str]) -> str:
    """The data written, as the header discloses it."""
    pattern = o.get("data_pattern", "random")
    if pattern == "zero":
        return "zeros (fio zero_buffers): compresses and deduplicates completely; NOT the PTS's random data"
    if pattern.startswith("compressible:"):
        pct = pattern.split(":", 1)[1]
        return (f"compressible to about {pct}% (fio buffer_compress_percentage={pct}, refill_buffers); "
                "NOT the PTS's random data")
    if o.get("refill_buffers") == "true":
        return "random, refill_buffers (new incompressible data for every write)"
    return ("random (fio's random buffers, scrambled on reuse but not refilled: mostly, not wholly "
            "incompressible, so not the PTS's random data; refill_buffers, tkperf's default now, is)")


def narrowed(run: RunResult, test: Optional[TestRun] = None) -> bool:
    """Whether ``test`` ran over the run's test range (in its segments), not
    the whole active range: a type that uses one (IOPS, TP, LAT, the HDD
    profile's), or any test of an earlier tkperf's run (no ``range_rules``:
    it narrowed every test); no test without a test range."""
    o = run.options
    asked, rules = o.get("test_range", "0"), o.get("range_rules", "")
    if not asked.isdigit() or asked == "0":
        return False
    return test is None or options.narrows(int(asked), int(rules) if rules.isdigit() else 1,
                                           registry.get(test.type))


def _no_preconditioning(test: TestRun, without_wipc: str, wdpc: Optional[str]) -> bool:
    """A test that has neither a WIPC nor a workload-dependent one (WSAT, XSR ...)."""
    return test.wipc is None and without_wipc.startswith("none:") and (wdpc or "").startswith("none")


def active_range_words(run: RunResult, test: TestRun, without_wipc: str = "", wdpc: Optional[str] = None) -> str:
    """The header's "Active range": the range ``test`` covered, and whether
    it was preconditioned (never "preconditioning" for a test that has none)."""
    o = run.options
    pct = o.get("active_range", "100")
    bare = _no_preconditioning(test, without_wipc, wdpc)
    asked = o.get("test_range", "0")
    if asked in ("", "0") or not asked.isdigit():
        return f"{pct}%" if asked not in ("", "0") else \
            f"{pct}% (no preconditioning)" if bare else f"{pct}% (preconditioning and test)"
    if not narrowed(run, test):
        return (f"{pct}% ({'no preconditioning' if bare else 'preconditioning and test'}; the whole active "
                f"range: the run's --test-range {pts.range_text(int(asked))} is for IOPS, TP and LAT, the "
                "tests SNIA defines it for)")
    where = (f"{pts.range_text(segments.segment_size(_tested(run), _segments(o)) * _segments(o))} in "
             "ActiveRange segments" if _segments(o) > 1 else f"the first {pts.range_text(_tested(run))}")
    told = " (--test-range" + (f" {pts.range_text(int(asked))}, more than the active range holds)"
                               if _tested(run) < int(asked) else ")")
    if bare:  # an earlier tkperf narrowed it too
        return f"{pct}%, no preconditioning; this test over {where}{told}"
    return f"{pct}% preconditioning; tests over {where}{told}"


def ar_segments(run: RunResult, test: Optional[TestRun] = None) -> str:
    """The SNIA header's "AR Segments" field: how the test range lies in the
    active range (SNIA SSSI, "PTS Test Terminology", "ActiveRange Segments"),
    for ``test`` (one that does not use the test range: N/A)."""
    o = run.options
    if o.get("test_range", "0") in ("", "0"):
        return "N/A (the tests use the whole active range)"
    if not narrowed(run, test):
        return "N/A (this test uses the whole active range)"
    count = _segments(o)
    if count <= 1:
        return ("1: one contiguous span at the start of the LBA range (not split into the PTS's ActiveRange "
                "segments spread across the active range)")
    size = segments.segment_size(_tested(run), count)
    seed = o.get("ar_segment_seed", "")
    rules = o.get("range_rules", "")
    apart = ("none touching" if rules.isdigit() and int(rules) >= 2
             else "segments may touch (layout of an earlier tkperf)")
    return (f"{count:,} of {segments.size_text(size)} spread randomly across the active range "
            f"(seed {seed if seed.isdigit() else NA}; {apart}; one device-mapper linear map)")


def _segments(o) -> int:
    text = o.get("ar_segments", "1")
    return int(text) if text.isdigit() else 1


def setup_fields(run: RunResult, test: TestRun, without_wipc: str = "",
                 wdpc: Optional[str] = None) -> Pairs:
    """Data pattern, active range, device class and the pre-conditioning.

    ``without_wipc`` says why there is no WIPC when the test type never
    runs one; ``wdpc`` replaces the usual workload-dependent line (the
    test loop itself at the test's OIO).
    """
    o = run.options
    out = [
        ("Data pattern", data_pattern_words(o)),
        ("Active range", active_range_words(run, test, without_wipc, wdpc)),
        ("AR Segments", ar_segments(run, test)),
        ("Latency histograms", "kept for every workload (--latency-histograms)"
         if o.get("latency_histograms") == "true" else "LAT and tests that ask for them"),
        ("Device class", f"{o.get('device_class', NA)} ({run.profile or 'ssd'} profile)"),
        ("Write cache asked", {"on": "on (WCE) for the run where the drive allows, restored after",
                               "off": "off (WCD) for the run where the drive allows, restored after",
                               "keep": "kept as found"}.get(o.get("write_cache", ""), "not set (older tkperf)")),
    ]
    w = test.wipc
    if w is not None:
        out += [
            ("Pre-condition 1", f"WIPC: SEQ {format_bs(w.bs)} W, {w.loops} x the active range"),
            ("WIPC OIO", oio(str(w.numjobs), str(w.iodepth))),
            ("WIPC amount", f"{gb(w.bytes_written):,.2f} GB"),
            ("WIPC duration", f"{duration(w.seconds)} at {mb(w.bw_bytes):,.1f} MB/s"),
        ]
    elif without_wipc:
        out.append(("Pre-condition 1", without_wipc))
    elif o.get("wipc_loops") == "0":
        out.append(("Pre-condition 1", "none (--wipc-loops 0)"))
    else:
        out.append(("Pre-condition 1", "not run (test stopped before WIPC)"))
    if wdpc is None:
        wdpc = "WDPC: the test loop itself, " + oio(test.params.get("numjobs", ""), test.params.get("iodepth", ""))
    out.append(("Pre-condition 2", wdpc))
    return tuple(out)


def _tested(run: RunResult) -> int:
    """The bytes the tests used of a run with ``--test-range`` (its device's size known), else the range asked."""
    o = run.options
    asked = int(o.get("test_range", "0") or 0)
    if not run.device.size_bytes:
        return asked
    pct = o.get("active_range", "100")
    return pts.tested_bytes(run.device.size_bytes, int(pct) if pct.isdigit() else 100, asked)


def round_fields(run: RunResult, test: TestRun) -> Pairs:
    """The middle of the test parameters of a round-based test: runtime,
    rounds run, the tracking figure and the steady-state verdict."""
    p = test.params
    s = steady.steady_state(test, steady.run_window(run))
    cap = capture_round(test)  # LAT's response-time capture after its rounds
    return (
        ("Runtime", f"{p.get('runtime', NA)} s per workload"),
        ("Rounds run", f"{len(steady_rounds(test))} of at most {run.options.get('max_rounds', NA)}"
                       + (f", then the capture (round {cap.index})" if cap is not None else "")),
        ("Tracking", tracking_labels(test) if test.tracking_workload else "none"),
        ("Steady state", f"20/10 over {s.window if s else run.options.get('window', 5)} rounds: "
                         + verdict(test, s) if seeks_steady_state(test) else
                         "not sought: the test tracks no figure (a sweep or a single pass)"),
    )


def stream_fields(test: TestRun) -> Pairs:
    """The middle of the test parameters of a stream: its intervals and the steady state."""
    s = steady.steady_state(test)
    state = "not reached"
    if s is not None and s.steady:
        state = f"reached in {unit_of(test)}s {s.first_round}-{s.last_round}"
    return (
        ("Interval", f"{test.params.get('interval', NA)} s"),
        (f"{unit_of(test).capitalize()}s run", plural(steps_done(test), unit_of(test))),
        ("Steady state", f"20/10 over the last {s.window if s else 5} {unit_of(test)}s: {state}"),
    )


#: The anchor of the deviation list on the first page, which every test header links to.
DEVIATIONS_ANCHOR = "deviations"


def list_anchor(judged: conformance.Conformance) -> str:
    """The anchor of the verdict's list, named for its lines: 'deviations',
    or 'disclosures' for a run of no PTS revision (the HDD profile)."""
    return DEVIATIONS_ANCHOR if judged.pts_run else f"{judged.line_word}s"


def _names(t: TestRun) -> Set[str]:
    """The words a deviation names a test by: its key (``tp-1024k``) and its
    title's first word (``TP``, ``IOPS``)."""
    title = test_title(t).split()
    return {t.key} | ({title[0]} if title else set())


def applies_to(deviation: str, test: TestRun, run: RunResult) -> bool:
    """Whether ``deviation`` concerns ``test``: it names the test, or it names
    no test of the run (a setting of the whole run, the target, the cache)."""
    words = set(re.findall(r"[\w-]+", deviation))
    mine = _names(test)
    others = set().union(*(_names(t) for t in run.tests if t is not test)) - mine
    return bool(words & mine) or not words & others


def conformance_of_test(judged: conformance.Conformance, test: TestRun, run: RunResult) -> str:
    """'NOT PTS-conformant (SNIA PTS 2.0.2, enterprise): 9 of the run's 14
    deviations apply to this test' (or the plain verdict when it is
    conformant; for the HDD profile 'HDD profile: not a SNIA PTS run: 4 of
    the run's 5 disclosures apply to this test')."""
    if judged.conformant or not judged.deviations:
        return judged.sentence()
    n = sum(1 for d in judged.deviations if applies_to(d, test, run))
    total = len(judged.deviations)
    word = judged.line_word
    if n == total:
        return f"{judged.heading()}: every one of the run's {plural(total, word)} applies to this test"
    return f"{judged.heading()}: {n} of the run's {total} {word}{'s' if total != 1 else ''} apply to this test"


def test_fields(test: TestRun, stimulus: str, middle: Sequence[Tuple[str, str]],
                judged: Optional[conformance.Conformance] = None, run: Optional[RunResult] = None) -> Pairs:
    """Stimulus and OIO, the test type's own ``middle``, then stop reason,
    status and times."""
    p = test.params
    out: List[Tuple[str, str]] = [("Stimulus", stimulus),
                                  ("OIO", oio(p.get("numjobs", ""), p.get("iodepth", "")))]
    out += list(middle)
    out += [
        ("Stopped by", test.stop_reason or NA),
        ("Status", test.status or NA),
        ("Started", test.started or NA),
        ("Finished", test.finished or NA),
    ]
    if judged is not None:
        out.append(("Conformance", (conformance_of_test(judged, test, run) if run is not None else judged.sentence())
                    + ("; listed on the first page" if judged.deviations else "")))
    return tuple(out)


def snia_header(run: RunResult, test: TestRun, stimulus: str, middle: Sequence[Tuple[str, str]],
                without_wipc: str = "", wdpc: Optional[str] = None) -> b.Header:
    c = conformance.of_run(run)
    return b.Header(platform=platform_fields(run), device=device_fields(run, test),
                    setup=setup_fields(run, test, without_wipc, wdpc),
                    test=test_fields(test, stimulus, middle, c, run),
                    notes_title=f"See the run's {len(c.deviations)}" if c.deviations else "",
                    link=list_anchor(c) if c.deviations else "",
                    link_text=(f"from {c.revision}, listed once on the first page" if c.pts_run
                               else "listed once on the first page"))


def test_sections(ctx: ReportContext, tests: Sequence[TestRun], title: str,
                  header: Callable[[ReportContext, TestRun], b.Header],
                  measured: Callable[[ReportContext, TestRun], List[b.Block]]) -> List[b.Block]:
    """Each test's opening (:func:`open_test`: its heading and the SNIA
    header ``header(ctx, test)``, or a sentence that nothing was measured),
    then ``measured(ctx, test)`` for a test that measured something."""
    out: List[b.Block] = []
    for test in tests:
        opening, done = open_test(test, title, header(ctx, test))
        out += opening + (measured(ctx, test) if done else [])
    return out


def open_test(test: TestRun, title: str, header: b.Header, level: int = 1) -> Tuple[list, bool]:
    """A test's heading and SNIA header, and whether it has anything measured
    (if not, a sentence says so)."""
    # A sub-section starts on a new page unless the whole header fits below
    # (a header split across pages repeats its heading row).
    out: list = [b.Heading(title, level, room_cm=HEADER_ROOM_CM), header]
    if test.done:
        return out, True
    out.append(b.Paragraph(f"No {unit_of(test)} of this test completed "
                           f"(status: {test.status or 'unknown'}); there are no figures to show."))
    return out, False
