"""Capture files for the real-world workload tests, made with tkperf.rwsw.model
from streams written down here (test inputs: what a capture asks a drive
to do, not measurements)."""
from __future__ import annotations

import dataclasses
import os
import random
from typing import Sequence, Tuple

from tkperf.rwsw import model

#: (access, rw, bs, ios) of each stream of a step.
Spec = Sequence[Tuple[str, str, int, int]]

#: Step 1: 70% RND 4K reads + 30% SEQ 64K writes at QD 4; step 2: three streams at QD 6.
STEPS: Tuple[Tuple[float, Spec], ...] = (
    (4.0, (("random", "read", 4096, 7000), ("sequential", "write", 65536, 3000))),
    (6.0, (("random", "write", 8192, 5000), ("random", "read", 4096, 3000), ("sequential", "read", 131072, 2000))),
)


def _streams(spec: Spec) -> Tuple[model.Stream, ...]:
    ios = sum(x[3] for x in spec)
    moved = sum(x[2] * x[3] for x in spec)
    out = [model.Stream(a, rw, bs, n, n / ios, bs * n / moved) for a, rw, bs, n in spec]
    return tuple(sorted(out, key=lambda s: -s.share))


def capture(step_s: float = 3.0, steps=STEPS, iolog=None, size: int = 1 << 30) -> model.Capture:
    made = []
    total = {}
    for i, (qd, spec) in enumerate(steps):
        streams = _streams(spec)
        ios = sum(x[3] for x in spec)
        made.append(model.Step(i, i * step_s, step_s, streams, qd, ios / step_s,
                               sum(x[2] * x[3] for x in spec) / step_s / 1e6))
        for a, rw, bs, n in spec:
            total[(a, rw, bs)] = total.get((a, rw, bs), 0) + n
    whole = _streams([(a, rw, bs, n) for (a, rw, bs), n in total.items()])
    ios = sum(total.values())
    duration = step_s * len(steps)
    return model.Capture("fixture", "/dev/captured", size, "import", "2026-11-27T00:00:00+00:00", duration, step_s,
                         tuple(made), whole, sum(q for q, _ in steps) / len(steps), ios / duration,
                         sum(bs * n for (_, _, bs), n in total.items()) / duration / 1e6, iolog)


def write(folder: str, name: str = "cap", **kw) -> str:
    path = os.path.join(folder, f"{name}.xml")
    model.save(capture(**kw), path)
    return path


def write_with_iolog(folder: str, n: int = 3000, gap_us: int = 200, size: int = 1 << 30) -> str:
    """A capture whose iolog holds ``n`` I/Os over a ``size`` byte device
    (70% RND 4K reads anywhere on it, 30% SEQ 64K writes from its start),
    ``gap_us`` apart."""
    rnd = random.Random(38)
    log = os.path.join(folder, "cap.iolog")
    with open(log, "w", encoding="ascii") as fh:
        fh.write("fio version 3 iolog\n0 /dev/captured add\n0 /dev/captured open\n")
        seq = 0
        for i in range(n):
            t = 1000 + i * gap_us
            if i % 10 < 7:
                fh.write(f"{t} /dev/captured read {rnd.randrange(size // 4096) * 4096} 4096\n")
            else:
                fh.write(f"{t} /dev/captured write {seq} 65536\n")
                seq += 65536
        fh.write(f"{1000 + n * gap_us} /dev/captured close\n")
    path = os.path.join(folder, "cap.xml")
    model.save(dataclasses.replace(capture(size=size), iolog="cap.iolog"), path)
    return path
