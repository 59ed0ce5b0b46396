"""06 · The primary: its connection slots, the jobs on them, and the slow SQL that outlives its caller.
"""

from __future__ import annotations

import math
from collections import deque

import simpy

from ..sim import Recorder
from .scenario import (
    INF,
    KILLED,
    OK,
    REJECTED,
    SCAN,
)

__all__ = [
    "Database",
    "Job",
]


# --------------------------------------------------------------------------- the primary
class Job:
    """One query on the primary: ``kind``, ``work_ms``; ``done`` fires with ``"ok"``,
    ``"killed"`` (by a failover) or ``"rejected"`` (the database was failing over)."""

    __slots__ = ("kind", "work_ms", "done", "state", "submitted_ms", "started_ms")

    def __init__(self, env, kind: str, work_ms: float):
        self.kind = kind
        self.work_ms = work_ms
        self.done = env.event()
        self.state = "new"
        self.submitted_ms = env.now
        self.started_ms = math.nan


class Database:
    """The primary as ``slots`` CPU slots: a query holds a slot until it finishes, the others wait
    in FIFO order. :meth:`withdraw` takes a waiting query out of the queue (its client gave up);
    a running query runs on. :meth:`fail_over` kills every query on the old primary and refuses
    new ones for ``failover_ms``; then a new primary with empty slots takes over."""

    def __init__(self, env: simpy.Environment, slots: int, failover_ms: float, rec: Recorder):
        self.env = env
        self.slots = slots
        self.failover_ms = failover_ms
        self.rec = rec
        self.running: set = set()
        self.queue: deque = deque()
        self.generation = 0  # which primary (0: the first)
        self.down_until = -INF
        self.slow = 0  # scans on the primary (running or waiting)
        self.peak_slow = 0
        self.failovers: list[tuple[float, float]] = []  # (declared dead, new primary up)

    @property
    def up(self) -> bool:
        return self.env.now >= self.down_until

    def _levels(self) -> None:
        t = self.env.now
        self.rec.level("slow_sql", t, self.slow)
        self.rec.level("busy", t, len(self.running))
        self.rec.level("db_queue", t, len(self.queue))

    def submit(self, kind: str, work_ms: float) -> Job:
        job = Job(self.env, kind, work_ms)
        if not self.up:
            job.state = REJECTED
            job.done.succeed(REJECTED)
            return job
        if kind == SCAN:
            self.slow += 1
            self.peak_slow = max(self.peak_slow, self.slow)
        if len(self.running) < self.slots:
            self._start(job)
        else:
            job.state = "queued"
            self.queue.append(job)
        self._levels()
        return job

    def _start(self, job: Job) -> None:
        job.state = "running"
        job.started_ms = self.env.now
        self.running.add(job)
        gen = self.generation
        self.env.timeout(job.work_ms).callbacks.append(lambda _ev: self._finish(job, gen))

    def _finish(self, job: Job, gen: int) -> None:
        if gen != self.generation or job.state != "running":
            return  # killed with its primary
        self.running.discard(job)
        job.state = OK
        if job.kind == SCAN:
            self.slow -= 1
        job.done.succeed(OK)
        while self.queue and len(self.running) < self.slots:
            self._start(self.queue.popleft())
        self._levels()

    def withdraw(self, job: Job) -> None:
        """The client of a waiting query gave up: the query leaves the queue (a running one runs
        on, its answer unread)."""
        if job.state == "queued":
            self.queue.remove(job)
            job.state = "withdrawn"
            if job.kind == SCAN:
                self.slow -= 1
            self._levels()

    def fail_over(self) -> None:
        """Declare the primary dead: kill every query on it, refuse new ones for ``failover_ms``."""
        now = self.env.now
        self.generation += 1
        for job in [*self.running, *self.queue]:
            job.state = KILLED
            job.done.succeed(KILLED)
        self.running.clear()
        self.queue.clear()
        self.slow = 0
        self.down_until = now + self.failover_ms
        self.failovers.append((now, self.down_until))
        self._levels()
