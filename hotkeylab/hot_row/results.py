"""01 · What a run returns: lock intervals, per-run result objects and the small mutable books
the processes of one run share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import sim
from .scenario import GroupCommit, HotRow, OpenLoop


@dataclass(frozen=True)
class LockInterval:
    """``owner`` holds (or waits for) the lock from ``start`` to ``end`` (ms)."""

    owner: str
    start: float
    end: float



def latency_stats(lat: np.ndarray) -> dict:
    if lat.size == 0:
        return {"mean_latency_ms": math.nan, "p50_latency_ms": math.nan, "p99_latency_ms": math.nan}
    return {
        "mean_latency_ms": float(lat.mean()),
        "p50_latency_ms": float(np.percentile(lat, 50)),
        "p99_latency_ms": float(np.percentile(lat, 99)),
    }


class Book:
    """Mutable counters shared by one run's processes."""

    def __init__(self, **kw):
        self.__dict__.update(kw)



class Request:
    __slots__ = ("t_arrive", "done")

    def __init__(self, t_arrive, done):
        self.t_arrive = t_arrive
        self.done = done


class Batch:
    __slots__ = ("rows", "t_open", "t_close", "reason")

    def __init__(self, rows, t_open, t_close, reason):
        self.rows, self.t_open, self.t_close, self.reason = rows, t_open, t_close, reason



@dataclass
class ClosedLoopRun:
    """One closed-loop run: per-transaction arrays, lock intervals, ledger and summary."""

    scenario: HotRow
    seed: int
    status: sim.RunStatus
    ledger: sim.Ledger
    holds: list  # LockInterval: who holds the row when
    waits: list  # LockInterval: who waits for the row when
    outside: list  # LockInterval: who is on the network outside the lock when
    commit_ms: np.ndarray  # time each COMMIT reply reached its thread
    latency_ms: np.ndarray  # begin → COMMIT reply, transactions begun after warm-up
    wait_ms: np.ndarray  # time spent waiting for the lock, same transactions
    summary: dict = field(default_factory=dict)

    @property
    def tps(self) -> float:
        return self.summary["tps"]

    @property
    def mean_latency_ms(self) -> float:
        return self.summary["mean_latency_ms"]



@dataclass
class ThreadsSweep:
    """TPS and latency against the number of worker threads, simulated and closed form."""

    scenario: HotRow
    threads: np.ndarray
    tps: np.ndarray
    latency_ms: np.ndarray
    tps_closed_form: np.ndarray
    latency_closed_form_ms: np.ndarray
    ceiling_tps: float
    runs: list = field(default_factory=list, repr=False)


@dataclass
class GroupCommitRun:
    """One group-commit run: windowed series, per-batch and per-request arrays, ledger, summary.

    ``windows`` (per second unless noted): ``t`` (s), ``offered`` (requests/s), ``served`` (rows
    committed/s), ``batches`` (batches closed/s), ``queue`` (batches waiting, mean),
    ``lock_waiters`` (hot-key threads waiting for the row lock, mean).
    """

    scenario: GroupCommit
    seed: int
    status: sim.RunStatus
    ledger: sim.Ledger
    windows: dict
    batch_rows: np.ndarray  # rows per batch closed after warm-up
    batch_by_timer: np.ndarray  # True if that batch closed on the max_wait_ms timer
    batch_close_ms: np.ndarray  # when each of those batches closed
    latency_ms: np.ndarray  # client latency (arrival → commit) of requests after warm-up
    summary: dict = field(default_factory=dict)


@dataclass
class OpenLoopRun:
    """Poisson transactions on the lock: arrival and wait of every transaction that got the lock."""

    scenario: OpenLoop
    seed: int
    engine: str
    status: sim.RunStatus
    ledger: sim.Ledger
    arrival_ms: np.ndarray  # transactions that got the lock before the horizon
    wait_ms: np.ndarray  # their wait for the lock
    summary: dict = field(default_factory=dict)

    @property
    def mean_wait_ms(self) -> float:
        return self.summary["mean_wait_ms"]

