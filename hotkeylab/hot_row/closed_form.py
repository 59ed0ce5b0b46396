"""01 · The closed forms beside the simulations: the closed loop's TPS and latency, the group
commit's batch rate and load, and where the seed's second server overloads the row.

The shared formulas (``lock_hold_ms``, ``tps_ceiling``, ``closed_loop_tps``, ``batcher_batch_rate``,
Pollaczek–Khinchine) live in :mod:`hotkeylab.capacity`; these apply them to this lesson's scenarios.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .. import capacity
from ..validate import check_int
from .scenario import GroupCommit, HotRow


def closed_loop_tps(scenario: HotRow, threads: int | None = None) -> float:
    """Closed form: ``min(threads × 1000 / cycle, 1000 / hold)`` transactions/s
    (:func:`hotkeylab.capacity.closed_loop_tps`).

    With few threads each one's own cycle limits it (one thread: ``1000 / cycle``, the seed's
    345 TPS); once the lock is never idle, the row's ceiling ``1000 / hold`` does, however many
    threads wait. Only the ``cycle − hold`` outside the lock can overlap with another thread's hold.
    """
    n = scenario.threads if threads is None else check_int("threads", threads, low=1)
    return capacity.closed_loop_tps(n, scenario.cycle_ms, scenario.hold_ms)


def closed_loop_latency_ms(scenario: HotRow, threads: int | None = None) -> float:
    """Little's law for the closed loop: latency ``W = threads / TPS`` (ms); at the plateau
    that is ``threads × hold``."""
    n = scenario.threads if threads is None else check_int("threads", threads, low=1)
    return n * 1000.0 / closed_loop_tps(scenario, n)


def group_commit_batch_rate(scenario: GroupCommit) -> float:
    """Closed form: batches/s reaching the row lock, ``servers × batcher_batch_rate(λ / servers)``
    (each server's batcher sees its share of the Poisson requests)."""
    s = scenario.servers
    return float(s * capacity.batcher_batch_rate(scenario.rate_per_s / s, scenario.max_rows, scenario.max_wait_ms))


def group_commit_rho(scenario: GroupCommit) -> dict:
    """Closed form: how busy the hot-key threads and the row lock are, per unit time.

    With batch rate ``B`` (:func:`group_commit_batch_rate`) and every request landing in one batch,
    the rows cost ``λ × per_row_ms`` and the batches ``B × per_batch_ms`` per second, so

    - ``rho_thread = (B/s × per_batch_ms + λ/s × per_row_ms) / (1000 × k)`` for the k hot-key
      threads of each of the s servers (their cycles are the whole N);
    - ``rho_lock = (B × (per_batch_ms − outside_ms) + λ × per_row_ms) / 1000`` for the row lock
      (held for N − outside);
    - ``rho = max(rho_thread, rho_lock)``: the queue grows without bound once it reaches 1.

    Also ``mean_n_ms``, the mean N of a batch at this load.
    """
    sc = scenario
    b = group_commit_batch_rate(sc)
    lam = sc.rate_per_s
    thread = (b * sc.per_batch_ms + lam * sc.per_row_ms) / (1000.0 * sc.servers * sc.threads_per_server)
    lock = (b * (sc.per_batch_ms - sc.outside_ms) + lam * sc.per_row_ms) / 1000.0
    mean_n = sc.per_batch_ms + sc.per_row_ms * (lam / b) if b > 0 else sc.per_batch_ms
    return {"rho": max(thread, lock), "rho_thread": thread, "rho_lock": lock, "mean_n_ms": mean_n}


def overload_share(scenario: GroupCommit) -> float:
    """Closed form: the share of the calibrated N paid per batch above which this scenario's
    ``rho`` (:func:`group_commit_rho`) reaches 1. ``rho`` is linear in ``per_batch_ms`` within each
    of its two terms, so this solves both lines and keeps the smaller root; ``inf`` if no share
    in (0, 1] overloads it, 0 if every share does."""
    sc = scenario
    lo, hi = sc.outside_ms + 1e-6, sc.commit_ms
    roots = []
    for key in ("rho_thread", "rho_lock"):
        a = group_commit_rho(replace(sc, per_batch_ms=lo))[key]
        b = group_commit_rho(replace(sc, per_batch_ms=hi))[key]
        if a >= 1:
            roots.append(0.0)
        elif b > a:
            roots.append((lo + (1.0 - a) / (b - a) * (hi - lo)) / sc.commit_ms)
    inside = [r for r in roots if r <= 1.0]
    return min(inside) if inside else math.inf
