"""A whole run: purge, WIPC and the round loop of every test, saved after each round.

The runner owns the :class:`~tkperf.results.RunResult` while it grows and
rewrites the XML (atomically) after every change worth keeping: the purge,
the WIPC, each round or WSAT interval, the end of each test.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from tkperf import precondition, purge, store
from tkperf.errors import FioError, Interrupted
from tkperf.fio import FioRunner
from tkperf.fio_json import cumulative_write
from tkperf.options import RunOptions
from tkperf.results import (
    DeviceInfo,
    Event,
    IoStats,
    Round,
    RunResult,
    TestRun,
    Workload,
    now_iso,
)
from tkperf.tests_pts import TestSpec, all_specs

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")


@dataclass
class Runner:
    run: RunResult
    opts: RunOptions
    device: DeviceInfo
    fio: FioRunner
    xml_path: str
    _last_save_cost: float = field(default=0.0, init=False)
    _last_save_at: float = field(default=0.0, init=False)
    current: Optional[TestRun] = field(default=None, init=False)
    phase: str = field(default="start", init=False)

    # --- persistence -------------------------------------------------------
    def save(self) -> None:
        t0 = time.monotonic()
        store.save(self.run, self.xml_path)
        self._last_save_at = time.monotonic()
        self._last_save_cost = self._last_save_at - t0

    def save_throttled(self, interval_s: float) -> None:
        """Save after a short WSAT interval unless saving would eat more than
        a tenth of the time (a 1 s interval over a day makes a large file)."""
        if time.monotonic() - self._last_save_at >= min(60.0, max(interval_s, self._last_save_cost * 10)):
            self.save()

    def event(self, kind: str, message: str, test: str = "", rnd: int = 0) -> None:
        self.run.events.append(Event(time=now_iso(), kind=kind, message=message, test=test, round=rnd))
        (log.warning if kind == "warning" else log.info)("%s: %s", kind, message)

    # --- the run -----------------------------------------------------------
    def execute(self) -> None:
        """Run every test not yet complete; on any exception, record where and
        why the run stopped, save, and let the exception go on to the CLI."""
        specs = all_specs(self.opts)
        self.run.status = "running"
        try:
            self.save()
            for spec in specs:
                existing = self.run.test(spec.key)
                if existing is not None and existing.status == "complete":
                    progress.info("[%s] already complete, skipped", spec.key)
                    continue
                self.run_test(spec)
            self.phase = "end"
            self.run.status = "complete"
            self.run.finished = now_iso()
            self.save()
        except BaseException as exc:
            self._stopped(exc)
            raise

    def _stopped(self, exc: BaseException) -> None:
        interrupted = isinstance(exc, (Interrupted, KeyboardInterrupt))
        status = "interrupted" if interrupted else "failed"
        where = self.phase + (f" of {self.current.key}" if self.current is not None and
                              self.current.status == "running" else "")
        what = str(exc) or type(exc).__name__
        message = f"{what} during {where}"
        if isinstance(exc, FioError) and exc.stderr.strip():
            message += "; fio said: " + " | ".join(exc.stderr.strip().splitlines()[-3:])
        if self.current is not None and self.current.status == "running":
            self.current.status = status
            self.current.stop_reason = what
        self.run.status = status
        self.run.finished = now_iso()
        self.run.events.append(Event(time=now_iso(), kind=status, message=message,
                                     test=self.current.key if self.current else "",
                                     round=len(self.current.rounds) if self.current else 0))
        log.error("run %s: %s", status, message)
        if isinstance(exc, Interrupted):
            exc.args = (f"{what} during {where}; completed rounds are saved in {self.xml_path}",)
        try:
            self.save()
        except BaseException as save_exc:  # noqa: BLE001 - the first error is the one to report
            log.error("could not save the stopped run: %s", save_exc)

    def run_test(self, spec: TestSpec) -> TestRun:
        t = TestRun(name=spec.name, key=spec.key, tracking_workload=spec.tracking_workload,
                    tracking_metric=spec.tracking_metric, tracking_label=spec.tracking_label,
                    started=now_iso(), params=dict(spec.params))
        old = self.run.test(spec.key)
        if old is not None:
            self.run.tests[self.run.tests.index(old)] = t
        else:
            self.run.tests.append(t)
        self.current = t
        self.phase = "purge"
        self.save()
        progress.info("[%s] purge (%s)", spec.key, self.opts.purge)
        t.purge = purge.purge(self.opts.purge, self.device)
        if t.purge.note:
            self.event("warning", f"purge: {t.purge.note}", spec.key)
        self.save()
        if spec.wipc and self.opts.wipc_loops > 0:
            self.phase = "WIPC"
            progress.info("[%s] WIPC: %dx capacity of SEQ 128KiB writes", spec.key, self.opts.wipc_loops)
            t.wipc = precondition.wipc(self.fio, self.device, self.opts.wipc_loops, self.opts.iodepth,
                                       spec.key)
            progress.info("[%s] WIPC wrote %.1f GB in %.1f s (%.1f MB/s)", spec.key,
                          t.wipc.bytes_written / 1e9, t.wipc.seconds, t.wipc.bw_bytes / 1e6)
            self.save()
        if spec.stream:
            self._wsat(spec, t)
        else:
            self._rounds(spec, t)
        t.status = "complete"
        t.finished = now_iso()
        self.save()
        return t

    def _rounds(self, spec: TestSpec, t: TestRun) -> None:
        start = len(t.rounds) + 1
        for index in range(start, self.opts.max_rounds + 1):
            self.phase = f"round {index}"
            started = now_iso()
            workloads, wall = self.fio.run(spec.jobs, what=f"{spec.key} round {index}")
            fio_s = sum(w.runtime_ms for w in workloads) / 1000.0
            t.rounds.append(Round(index=index, started=started, wall_s=wall, fio_s=fio_s,
                                  workloads=tuple(workloads)))
            t.steady = t.evaluate(self.opts.window)
            value = t.tracking_values()[-1][1]
            if spec.tracking_metric.endswith("bw_bytes"):
                value /= 1e6  # the label says MB/s
            progress.info("[%s] round %d: %s = %.6g (%s)", spec.key, index, spec.tracking_label,
                          value, "steady" if t.steady.steady else "not steady yet")
            self.save()
            if t.steady.steady:
                t.stop_reason = "steady state"
                return
        t.stop_reason = "max rounds"
        self.event("warning", f"no steady state within {self.opts.max_rounds} rounds; "
                              "the report uses the last 5 rounds", spec.key)

    def _wsat(self, spec: TestSpec, t: TestRun) -> None:
        job = spec.jobs[0]
        interval = self.opts.wsat_interval
        tgbw = self.opts.tgbw_bytes(self.device.size_bytes)
        cuts: List[Dict[str, float]] = [dict(runtime_ms=0.0, ios=0.0, io_bytes=0.0, lat_sum=0.0,
                                             at=time.monotonic(), started=now_iso())]
        state = {"reason": "time limit"}

        def on_report(report: dict) -> bool:
            jobs = [j for j in report.get("jobs", []) if j.get("jobname") == job.name]
            if not jobs:
                return False
            j = jobs[0]
            if int(j.get("error", 0)):
                raise FioError(f"fio reported I/O error {j['error']} in {spec.key}")
            cut = dict(cumulative_write(j), at=time.monotonic(), started=now_iso())
            # A short tail (fio's last report after the final full interval)
            # joins the interval before it instead of standing as a noisy point.
            merge = (t.rounds and cut["runtime_ms"] - cuts[-1]["runtime_ms"] < interval * 500.0)
            if merge:
                t.rounds.pop()
                cuts.pop()
            base = cuts[-1]
            d_ms = cut["runtime_ms"] - base["runtime_ms"]
            if d_ms <= 0:
                cuts.append(base)
                return False
            d_ios = cut["ios"] - base["ios"]
            d_bytes = cut["io_bytes"] - base["io_bytes"]
            w = Workload(
                name=job.name, rw=job.rw, bs=job.bs, rwmixread=0, numjobs=job.numjobs,
                iodepth=job.iodepth, runtime_ms=int(d_ms),
                write=IoStats(iops=d_ios * 1000.0 / d_ms, bw_bytes=d_bytes * 1000.0 / d_ms,
                              io_bytes=int(d_bytes), ios=int(d_ios),
                              lat_mean_us=(cut["lat_sum"] - base["lat_sum"]) / d_ios if d_ios else 0.0),
            )
            index = len(t.rounds) + 1
            self.phase = f"interval {index + 1}"
            t.rounds.append(Round(index=index, started=base["started"], wall_s=cut["at"] - base["at"],
                                  fio_s=d_ms / 1000.0, workloads=(w,)))
            cuts.append(cut)
            written = cut["io_bytes"]
            t.steady = t.evaluate(self.opts.window)
            progress.info("[%s] interval %d: %.0f IOPS, %.2f GB written", spec.key, index,
                          w.write.iops, written / 1e9)
            self.save_throttled(interval)
            if written >= tgbw:
                state["reason"] = f"TGBW reached ({written / 1e9:.2f} GB)"
                return True
            if self.opts.wsat_steady and written >= self.device.size_bytes and t.steady.steady:
                state["reason"] = "steady state"
                return True
            return False

        self.phase = "interval 1"
        self.fio.stream(job, interval, what=spec.key, on_report=on_report,
                        timeout=self.opts.wsat_time * 2.0 + 300.0)
        t.stop_reason = state["reason"]
