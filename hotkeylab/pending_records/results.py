"""06 · What one run returns: windows, the record ledger, every :class:`BatchRun`, the failovers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import sim
from ..sim import Ledger, RunStatus
from .records import RecordLedger
from .scenario import (
    INF,
    KILLED,
    Scenario,
)

__all__ = [
    "BatchRun",
    "Run",
    "RunSummary",
]


# --------------------------------------------------------------------------- a run
@dataclass
class BatchRun:
    """One run of the batch job: when, its row limit, the backlog its scan saw, rows read, when
    the scan returned (nan if it never did for this run), rows retried and how it ended
    (``"done"``, ``"timeout"``, ``"killed"``, ``"rejected"``)."""

    start_ms: float
    row_limit: int
    backlog: int
    rows_read: int
    scan_ms: float
    scan_end_ms: float = math.nan
    end_ms: float = math.nan
    rows_retried: int = 0
    outcome: str = "running"


@dataclass(frozen=True)
class RunSummary(sim.Summary):
    """The key numbers of a :class:`Run`. No samples: ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    failovers: int
    """times the primary was declared dead (count)"""
    first_failover_s: float | None
    """when the first failover came (s; None if none)"""
    peak_backlog: int
    """most pending records at once (records)"""
    backlog_end: int
    """pending records at the end (records)"""
    peak_slow_sql: int
    """most slow scans running at once (count)"""
    runs: int
    """batch runs started (count)"""
    runs_done: int
    """batch runs that finished (count)"""
    runs_timed_out: int
    """batch runs that timed out (count)"""
    runs_killed: int
    """batch runs killed with their primary (count)"""
    slow_sql_killed: int
    """slow scans killed with their primary (count)"""
    max_done_run_ms: float | None
    """longest batch run that finished (ms; None if none finished)"""
    completed_by_batch: int
    """records the batch completed (records)"""
    cancelled: int
    """records cancelled (records)"""
    availability: float | None
    """business queries answered in time / arrived (0-1; None if none arrived)"""
    truncated: bool
    """the event cap stopped the run before the horizon"""


@dataclass
class Run(sim.Run):
    """The result of :func:`simulate`: windowed arrays, both ledgers, the failovers, every batch
    run and every slow scan; summary :class:`RunSummary`."""

    Summary = RunSummary

    scenario: Scenario
    seed: int
    status: RunStatus
    windows: dict
    ledger: Ledger
    records: RecordLedger
    failovers_ms: np.ndarray  # when the primary was declared dead
    promoted_ms: np.ndarray  # when the new primary took over
    runs: list
    slow_sql: list  # (submitted, started, ended, outcome, run start) per scan
    peak_backlog: int
    peak_slow_sql: int
    probes: int
    probe_failures: int

    @property
    def t_end_ms(self) -> float:
        return self.status.t_end_ms

    @property
    def truncated(self) -> bool:
        return self.status.truncated

    def availability(self, from_ms: float = 0.0, to_ms: float = INF) -> float:
        """Share of the business windows' queries answered in time between ``from_ms`` and
        ``to_ms`` (nan if none arrived)."""
        w = self.windows
        t = w["t"] * 1000.0
        sel = (t >= from_ms) & (t < to_ms)
        offered = w["offered"][sel].sum()
        return float(w["served"][sel].sum() / offered) if offered > 0 else math.nan

    def lost_share(self, from_ms: float = 0.0, to_ms: float = INF) -> float:
        """Share of the business windows' queries that timed out or were refused between
        ``from_ms`` and ``to_ms`` (nan if none arrived)."""
        w = self.windows
        t = w["t"] * 1000.0
        sel = (t >= from_ms) & (t < to_ms)
        offered = w["offered"][sel].sum()
        lost = w["timeouts"][sel].sum() + w["rejected"][sel].sum()
        return float(lost / offered) if offered > 0 else math.nan

    def summarise(self) -> RunSummary:
        outcomes = [r.outcome for r in self.runs]
        done = [r for r in self.runs if r.outcome == "done"]
        led = self.ledger
        return RunSummary(
            failovers=len(self.failovers_ms),
            first_failover_s=float(self.failovers_ms[0] / 1000) if len(self.failovers_ms) else sim.NO_DATA,
            peak_backlog=self.peak_backlog,
            backlog_end=self.records.pending,
            peak_slow_sql=self.peak_slow_sql,
            runs=len(self.runs),
            runs_done=outcomes.count("done"),
            runs_timed_out=outcomes.count("timeout"),
            runs_killed=outcomes.count(KILLED),
            slow_sql_killed=sum(1 for s in self.slow_sql if s[3] == KILLED),
            max_done_run_ms=max((r.end_ms - r.start_ms for r in done), default=sim.NO_DATA),
            completed_by_batch=self.records.extra["completed_by_batch"],
            cancelled=self.records.cancelled,
            availability=led.served / led.arrived if led.arrived else sim.NO_DATA,
            truncated=self.truncated,
        )
