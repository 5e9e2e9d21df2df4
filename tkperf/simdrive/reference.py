"""Published analysis to hold the emulated SSD's model against.

P. Desnoyers, "Analytic Modeling of SSD Write Performance", SYSTOR 2012
(ACM; extended in ACM Transactions on Storage, 2014): the write
amplification of a page-mapped FTL under uniform random writes, Eq. 4 for
LRW (FIFO) cleaning, A = alpha / (alpha + W0(-alpha e^-alpha)), and Eq. 12
for greedy cleaning with Np pages per block, A = LRW(k alpha) / k with
k = 1 + 1 / (2 Np); alpha is physical over logical space, 1 + OP for
tkperf's ``op_pct`` (spare over logical).
"""
from __future__ import annotations

import math


def lambert_w0(x: float) -> float:
    """The principal branch of Lambert's W on [-1/e, 0) (Newton's method)."""
    w = -0.5
    for _ in range(100):
        e = math.exp(w)
        step = (w * e - x) / (e * (w + 1))
        w -= step
        if abs(step) < 1e-15:
            break
    return w


def lrw_waf(alpha: float) -> float:
    """Desnoyers' Eq. 4: LRW (FIFO) cleaning."""
    return alpha / (alpha + lambert_w0(-alpha * math.exp(-alpha)))


def greedy_waf(op_pct: float, block_pages: int = 64) -> float:
    """Desnoyers' Eq. 12: greedy cleaning, ``block_pages`` pages per block."""
    k = 1 + 1 / (2 * block_pages)
    return lrw_waf(k * (1 + op_pct / 100)) / k
