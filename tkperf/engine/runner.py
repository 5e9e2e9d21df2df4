"""A whole run: for every test instance the test types plan, purge, WIPC
and the instance's loop shape, saved as it goes.

The runner owns the :class:`~tkperf.model.results.RunResult` while it grows.
It rewrites the result file (atomically) after every change worth keeping:
the purge, the WIPC, each round, the start and end of each test; intervals
of a stream are appended instead (:class:`tkperf.store.ResultWriter`),
so keeping one costs the same however long the run.  It never names a test
type: :func:`tkperf.kit.registry.plan_all` asks the registry.
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from typing import Dict, Iterator, List, Optional, Tuple

from tkperf import store
from tkperf.engine import writerate as target_rate
from tkperf.errors import FioError, Interrupted
from tkperf.fio.backend import FioBackend
from tkperf.fio.jobs import FioSettings
from tkperf.kit import precondition, registry, writerate
from tkperf.kit.base import Plan
from tkperf.kit.options import RunOptions
from tkperf.kit.progress import PlannedTest, Progress
from tkperf.model.results import DeviceInfo, Event, RunResult, TestRun, format_bs, now_iso
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import hostlimit
from tkperf.target import facts, health
from tkperf.target.side import LocalSide, TargetSide

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")
#: Detail for ``--debug``: logged at DEBUG, kept only when the CLI lowers this logger's level.
debug = logging.getLogger("tkperf.debug")


@dataclass
class Runner:
    run: RunResult
    opts: RunOptions
    device: DeviceInfo
    fio: FioBackend
    xml_path: str
    #: Where the target is: purge and health go through it.
    side: TargetSide = field(default_factory=LocalSide)
    writer: store.ResultWriter = field(init=False)
    _types: Dict[str, str] = field(default_factory=dict, init=False)
    current: Optional[TestRun] = field(default=None, init=False)
    phase: str = field(default="start", init=False)
    progress: Progress = field(default_factory=Progress, init=False)
    heat: Optional[health.HeatWatch] = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.writer = store.ResultWriter(self.xml_path)
        self.progress.window = self.opts.window
        self.progress.max_rounds = self.opts.max_rounds

    # --- persistence -------------------------------------------------------
    def save(self) -> None:
        """Rewrite the whole result file (atomically): after a purge, a WIPC,
        a round, at the start and end of a test.  Intervals of a stream are
        appended through ``writer`` instead."""
        self.writer.save(self.run)

    def type_of(self, plan: Plan) -> str:
        return self._types[plan.key]

    def event(self, kind: str, message: str, test: str = "", rnd: int = 0) -> None:
        self.run.events.append(Event(time=now_iso(), kind=kind, message=message, test=test, round=rnd))
        (log.warning if kind == "warning" else log.info)("%s: %s", kind, message)

    # --- the run -----------------------------------------------------------
    def execute(self) -> None:
        """Run every test not yet complete; on any exception, record where and
        why the run stopped, save, and let the exception go on to the CLI.
        Estimates assume the target's write rate, as its dry run did."""
        with writerate.assumed(target_rate.of_device(self.device, self.run.facts)):
            self._execute()

    def _execute(self) -> None:
        self.run.status = "running"
        try:
            plans = registry.plan_all(self.opts, self.device.size_bytes)
            if not any(s.when == "before" for s in self.run.health):
                snap = self.side.health(self.device, "before")
                if snap is not None:
                    self.run.health.append(snap)
            self.heat = health.HeatWatch(self.run.health, read=self.side.heat)
            self.progress.run_started(self._planned(plans))
            self.save()
            for type_name, plan in plans:
                self._types[plan.key] = type_name
                existing = self.run.test(plan.key)
                if existing is not None and existing.status == "complete":
                    progress.info("[%s] already complete, skipped", plan.key)
                    continue
                self.run_test(plan)
            self.phase = "end"
            self.progress.run_finished()
            self._health_after()
            self._emulated_host_share()
            self.run.status = "complete"
            self.run.finished = now_iso()
            self.save()
            self.writer.close()
        except BaseException as exc:
            self._stopped(exc)
            raise

    def _emulated_host_share(self) -> None:
        """On an emulated SSD: how much the host limited the run (facts
        ``simdrive_host``), and a warning when that is material."""
        if self.device.transport != EMULATED or not isinstance(self.side, LocalSide):
            return
        try:
            now = facts.simdrive_facts(self.device)
        except Exception as exc:  # noqa: BLE001 - the run is done; say why the share is missing
            log.warning("emulated SSD: counters at the end not read (%s)", exc)
            return
        said = hostlimit.record(self.run.facts, now)
        if said:
            self.event("warning", said)

    def _stopped(self, exc: BaseException) -> None:
        interrupted = isinstance(exc, (Interrupted, KeyboardInterrupt))
        status = "interrupted" if interrupted else "failed"
        where = self.phase + (f" of {self.current.key}" if self.current is not None and
                              self.current.status == "running" else "")
        what = str(exc) or type(exc).__name__
        message = f"{what} during {where}"
        if isinstance(exc, FioError) and exc.stderr.strip():
            debug.debug("fio stderr in full:\n%s", exc.stderr.rstrip())
            message += "; fio said: " + " | ".join(exc.stderr.strip().splitlines()[-3:])
        if self.current is not None and self.current.status == "running":
            self.current.status = status
            self.current.stop_reason = what
        self.run.status = status
        self.run.finished = now_iso()
        self.run.events.append(Event(time=now_iso(), kind=status, message=message,
                                     test=self.current.key if self.current else "",
                                     round=self.current.done if self.current else 0))
        log.error("run %s: %s", status, message)
        if isinstance(exc, Interrupted):
            exc.args = (f"{what} during {where}; completed rounds are saved in {self.xml_path}",)
        try:
            self._health_after()
        except Exception as health_exc:  # noqa: BLE001 - the first error is the one to report
            log.error("could not read the drive's health after the run: %s", health_exc)
        try:
            self.save()
        except BaseException as save_exc:  # noqa: BLE001 - the first error is the one to report
            log.error("could not save the stopped run: %s", save_exc)
        finally:
            self.writer.close()

    def health_check(self) -> None:
        """Sample the drive's temperature (rate-limited); warn once per finding."""
        if self.heat is not None:
            message = self.heat.sample(self.device)
            if message:
                self.event("warning", message, self.current.key if self.current else "")

    def _health_after(self) -> None:
        snap = self.side.health(self.device, "after")
        if snap is not None:
            self.run.health.append(snap)

    def run_test(self, plan: Plan) -> TestRun:
        tr = plan.tracking
        t = TestRun(type=self.type_of(plan), key=plan.key, tracking_workload=tr.workload if tr else "",
                    tracking_metric=tr.metric if tr else "", tracking_label=tr.label if tr else "",
                    started=now_iso(), params=dict(plan.params))
        old = self.run.test(plan.key)
        if old is not None:
            self.run.tests[self.run.tests.index(old)] = t
        else:
            self.run.tests.append(t)
        self.current = t
        self.phase = "purge"
        self.save()
        self.progress.test_started(plan.key)
        self.progress.phase_started("purge")
        progress.info("[%s] purge (%s)", plan.key, self.opts.purge)
        t.purge = self.side.purge(self.opts.purge, self.device)
        if t.purge.note:
            self.event("warning", f"purge: {t.purge.note}", plan.key)
        self.save()
        with self._range_of(plan) as opts:
            if plan.wipc and opts.wipc_loops > 0:
                self.phase = "WIPC"
                bs = plan.wipc_bs or precondition.WIPC_BS
                self.progress.phase_started(f"WIPC {opts.wipc_loops}x")
                progress.info("[%s] WIPC: %dx the active range of SEQ %s writes", plan.key,
                              opts.wipc_loops, format_bs(bs))
                t.wipc = precondition.wipc(self.fio, self.device, opts.wipc_loops, opts.iodepth,
                                           plan.key, bs, opts.wipc_size(self.device.size_bytes),
                                           self.device.resolved if opts.segmented else "")
                self.progress.wipc_finished(t.wipc.bytes_written, t.wipc.seconds)
                progress.info("[%s] WIPC wrote %.1f GB in %.1f s (%.1f MB/s)", plan.key,
                              t.wipc.bytes_written / 1e9, t.wipc.seconds, t.wipc.bw_bytes / 1e6)
                self.save()
            plan.shape.run(self, plan, t)
        t.status = "complete"
        t.finished = now_iso()
        self.save()
        self.progress.test_finished(plan.key, t.stop_reason)
        return t

    @contextlib.contextmanager
    def _range_of(self, plan: Plan) -> Iterator[RunOptions]:
        """The options ``plan``'s test runs with (:meth:`RunOptions.for_test`),
        and fio's [global] section for it while it runs: a test that does not
        use the run's test range runs on the device over the active range."""
        opts = self.opts.for_test(registry.get(self.type_of(plan)))
        if opts is self.opts:  # the run's own range: the back end's settings as they are
            yield opts
            return
        base = self.fio.settings
        self.fio.settings = settings_for(base, self.device, self.opts, opts)
        try:
            yield opts
        finally:
            self.fio.settings = base

    def _planned(self, plans: List[Tuple[str, Plan]]) -> List[PlannedTest]:
        """Every test's estimate, for the ETA; complete ones count as done."""
        out = []
        capacity = self.device.size_bytes
        for name, plan in plans:
            est = plan.shape.estimate(self.opts.for_test(registry.get(name)), capacity)
            wipc = self.opts.wipc_loops * self.opts.active_bytes(capacity) \
                if plan.wipc and self.opts.wipc_loops > 0 else 0
            old = self.run.test(plan.key)
            out.append(PlannedTest(plan.key, est.low_s, est.high_s, wipc,
                                   done=old is not None and old.status == "complete",
                                   rounds=bool(est.rounds[1])))
        return out


def settings_for(base: FioSettings, dev: DeviceInfo, run_opts: RunOptions, test_opts: RunOptions) -> FioSettings:
    """The [global] section of one test's jobs: the run's own (``base``,
    :func:`tkperf.engine.session.fio_settings`) for a test over the run's
    range; for a test that does not use the run's test range
    (``test_opts``, :meth:`RunOptions.for_test`), the device itself with the
    active range as its ``size=`` (none at 100%)."""
    if test_opts is run_opts:
        return base
    active = test_opts.test_bytes(dev.size_bytes)
    return replace(base, filename=dev.resolved, size=active if active < dev.size_bytes else 0)
