"""07 · The state the actors share: the jimdb shards, the gateway hosts, the running full scans,
and :class:`World`, which holds them with the access queue, the counters and the ledger."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..sim import Ledger


@dataclass
class _Shard:
    """A jimdb shard: capacity, and the failover state machine."""

    capacity_per_s: float
    down_until_ms: float = -1.0
    overloaded_ms: float = 0.0
    failovers: list = field(default_factory=list)

    def up(self, t_ms: float) -> bool:
        return t_ms >= self.down_until_ms


@dataclass
class _Hosts:
    """The gateway hosts (vectors, one entry per host)."""

    weight: np.ndarray
    up: np.ndarray
    down_until_ms: np.ndarray
    pending: np.ndarray  # log messages waiting in the heap for a JMQ connection
    gc_share: np.ndarray  # CPU share lost to young GC last step
    thread_share: np.ndarray  # CPU share lost to sender-thread switching last step
    young_gc_per_s: np.ndarray
    threads: np.ndarray
    crashes: list = field(default_factory=list)


@dataclass
class _Scans:
    """The full-table scans MySQL is running, in cohorts ``[progress at start, count per host]``.

    All running scans share MySQL alike (processor sharing), so each advances by the same amount a
    step and they finish in the order they started: ``progress`` counts scans' worth of work done
    per running scan since the run began; a cohort is done when it has advanced by 1. While a scan
    runs, its rows stream into the issuing host's heap (the JDBC driver buffers a whole result
    set), so a host holds ``result_mb × (progress − start)`` per running scan. A stream that keeps
    delivering rows never trips a read timeout: the caller gave up long ago, the thread and the rows
    stay until the scan ends or its host dies (MySQL then aborts it)."""

    n_hosts: int
    progress: float = 0.0
    cohorts: deque = field(default_factory=deque)
    count: np.ndarray = None  # running scans per host
    start_sum: np.ndarray = None  # Σ start progress of the running scans, per host

    def __post_init__(self):
        self.count = np.zeros(self.n_hosts)
        self.start_sum = np.zeros(self.n_hosts)

    def start(self, per_host: np.ndarray):
        if per_host.any():
            self.cohorts.append([self.progress, per_host.copy()])
            self.count += per_host
            self.start_sum += per_host * self.progress

    def advance(self, by: float) -> float:
        """Advance every running scan by ``by`` scans' worth; returns the scans that finished."""
        self.progress += by
        done = 0.0
        while self.cohorts and self.progress >= self.cohorts[0][0] + 1.0:
            p0, c = self.cohorts.popleft()
            done += float(c.sum())
            self.count -= c
            self.start_sum -= c * p0
        if not self.cohorts:
            self.count[:] = 0.0
            self.start_sum[:] = 0.0
        return done

    def held_mb(self, result_mb: float) -> np.ndarray:
        """Rows each host holds for its running scans (MB)."""
        return np.maximum(0.0, result_mb * (self.count * self.progress - self.start_sum))

    def abort(self, dead: np.ndarray) -> float:
        """The hosts in ``dead`` are gone: their scans stop. Returns how many."""
        gone = float(self.count[dead].sum())
        if gone:
            for c in self.cohorts:
                c[1][dead] = 0.0
            self.count[dead] = 0.0
            self.start_sum[dead] = 0.0
        return gone


@dataclass
class _Alarms:
    """Raise each alarm once: when its condition has held for its hold time."""

    since: dict = field(default_factory=dict)
    fired: dict = field(default_factory=dict)

    def update(self, name: str, condition: bool, t_end_ms: float, step_ms: float, hold_ms: float):
        if name in self.fired:
            return
        if condition:
            start = self.since.setdefault(name, t_end_ms - step_ms)
            if t_end_ms - start >= hold_ms:
                self.fired[name] = t_end_ms
        else:
            self.since.pop(name, None)


@dataclass
class World:
    """Everything that carries over from one step to the next (one run's mutable state)."""

    hosts: _Hosts
    shard: _Shard  # the hot shard: the defence checks' keys (and monitoring, unless split)
    mon: _Shard  # the monitoring cluster (used once the clusters are split)
    scans: _Scans  # the full scans MySQL is running, per issuing host
    tokens: float  # the token bucket's tokens
    eff: np.ndarray  # calls/s each host can process (after GC and thread losses)
    eff_sum: float
    share: np.ndarray  # each host's share of the calls (load-balancer weights of the hosts up)
    n_up: int  # hosts up
    n_down: int = 0
    queue: deque = field(default_factory=deque)  # the access layer's FIFO queue, [step, count] cohorts
    q_len: int = 0
    db_util: float = 0.0  # MySQL utilisation in the last step
    jmq_backlog: float = 0.0  # messages in JMQ, not yet in ES
    alarms: _Alarms = field(default_factory=_Alarms)
    ledger: Ledger = field(default_factory=Ledger)
    events: dict = field(default_factory=lambda: {"dba_scaleup_ms": None, "block_at_ms": None, "stopped_at_ms": None})

    @classmethod
    def start(cls, sc, weight: np.ndarray) -> World:
        """All hosts up with load-balancer weights ``weight``, every queue empty."""
        n = sc.hosts
        hosts = _Hosts(
            weight=weight,
            up=np.ones(n, dtype=bool),
            down_until_ms=np.zeros(n),
            pending=np.zeros(n),
            gc_share=np.zeros(n),
            thread_share=np.zeros(n),
            young_gc_per_s=np.zeros(n),
            threads=np.zeros(n),
        )
        eff = np.full(n, sc.host_capacity_per_s)
        return cls(
            hosts=hosts, shard=_Shard(sc.shard_ops_per_s), mon=_Shard(sc.shard_ops_per_s), scans=_Scans(n),
            tokens=sc.token_bucket_per_s * (sc.step_ms / 1000.0) + sc.token_burst, eff=eff,
            eff_sum=float(eff.sum()), share=hosts.weight.copy(), n_up=n,
        )  # fmt: skip
