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



@dataclass(frozen=True)
class ClosedLoopSummary(sim.Summary):
    """The key numbers of a closed-loop run (:class:`ClosedLoopRun`); rates and latencies count
    the transactions after warm-up. No samples: ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    threads: int
    """worker threads (count)"""
    cycle_ms: float
    """one transaction's cycle, hold + outside (ms)"""
    hold_ms: float
    """the row lock's hold per transaction (ms)"""
    outside_ms: float
    """time per transaction outside the lock (ms)"""
    tps: float
    """committed transactions per second after warm-up (1/s)"""
    lock_busy_share: float
    """share of the time after warm-up the row lock is held (0-1)"""
    lock_busy_share_closed_form: float
    """the same, closed form (0-1)"""
    tps_closed_form: float
    """closed-form throughput (1/s)"""
    tps_ceiling: float
    """the lock's ceiling, 1000 / hold (1/s)"""
    latency_closed_form_ms: float
    """closed-form latency, begin to COMMIT reply (ms)"""
    mean_wait_ms: float | None
    """mean wait for the lock (ms; None if no transaction waited)"""
    mean_latency_ms: float | None
    """mean latency, begin to COMMIT reply (ms; None if none finished after warm-up)"""
    p50_latency_ms: float | None
    """median latency (ms; None if none finished)"""
    p99_latency_ms: float | None
    """99th-percentile latency (ms; None if none finished)"""


@dataclass
class ClosedLoopRun(sim.Run):
    """One closed-loop run: per-transaction arrays, lock intervals, ledger and summary
    (:class:`ClosedLoopSummary`)."""

    Summary = ClosedLoopSummary

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
    summary: ClosedLoopSummary | dict = field(default_factory=dict)

    @property
    def tps(self) -> float:
        return self.summary.tps

    @property
    def mean_latency_ms(self) -> float | None:
        return self.summary.mean_latency_ms



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


@dataclass(frozen=True)
class GroupCommitSummary(sim.Summary):
    """The key numbers of a group-commit run (:class:`GroupCommitRun`), after warm-up. No samples:
    ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    batch_rate_per_s: float
    """batches closed per second (1/s)"""
    batch_rate_closed_form: float
    """the same, closed form (1/s)"""
    timer_share: float | None
    """share of the batches closed by the max_wait_ms timer (0-1; None if no batch closed)"""
    mean_batch_rows: float | None
    """mean rows per batch (rows; None if no batch closed)"""
    rows_per_s: float | None
    """rows committed per second (1/s; None if no window after warm-up)"""
    lock_utilisation: float
    """share of the time the hot row's lock is held (0-1)"""
    rho: float
    """offered load of the busier stage, closed form (the larger of rho_thread, rho_lock)"""
    rho_thread: float
    """offered load of the batch threads, closed form"""
    rho_lock: float
    """offered load of the row lock, closed form"""
    mean_n_ms: float | None
    """mean work of one batch, N (ms; None if no batch closed)"""
    mean_n_closed_form_ms: float
    """the same, closed form (ms)"""
    mean_queue_batches: float | None
    """time-averaged batches waiting (batches; None if no window after warm-up)"""
    mean_lock_waiters: float | None
    """time-averaged hot-key threads waiting for the row lock (threads; None if no window)"""
    mean_batch_wait_ms: float | None
    """mean wait of a batch from its close to holding the lock: queue + lock wait (ms; None if none)"""
    mean_latency_ms: float | None
    """mean client latency, arrival to commit (ms; None if no request finished after warm-up)"""
    p50_latency_ms: float | None
    """median client latency (ms; None if none finished)"""
    p99_latency_ms: float | None
    """99th-percentile client latency (ms; None if none finished)"""


@dataclass
class GroupCommitRun(sim.Run):
    """One group-commit run: windowed series, per-batch and per-request arrays, ledger, summary
    (:class:`GroupCommitSummary`).

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
    summary: GroupCommitSummary | dict = field(default_factory=dict)

    Summary = GroupCommitSummary


@dataclass(frozen=True)
class OpenLoopSummary(sim.Summary):
    """The key numbers of an open-loop run (:class:`OpenLoopRun`): waits of the transactions that
    arrived after warm-up and got the lock. No samples: ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    rho: float
    """the lock's utilisation, rate × mean hold"""
    samples: int
    """transactions counted (count)"""
    mean_wait_ms: float | None
    """mean wait for the lock (ms; None if no sample)"""
    closed_form_wait_ms: float
    """Pollaczek-Khinchine mean wait (ms; inf at rho >= 1)"""
    p99_wait_ms: float | None
    """99th-percentile wait (ms; None if no sample)"""


@dataclass
class OpenLoopRun(sim.Run):
    """Poisson transactions on the lock: arrival and wait of every transaction that got the lock;
    summary :class:`OpenLoopSummary`."""

    Summary = OpenLoopSummary

    scenario: OpenLoop
    seed: int
    engine: str
    status: sim.RunStatus
    ledger: sim.Ledger
    arrival_ms: np.ndarray  # transactions that got the lock before the horizon
    wait_ms: np.ndarray  # their wait for the lock
    summary: OpenLoopSummary | dict = field(default_factory=dict)

    @property
    def mean_wait_ms(self) -> float | None:
        return self.summary.mean_wait_ms

