"""05 · What one run returns: per-request arrays, windows, the ledger, the access log."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import sim
from ..sim import Ledger, RunStatus
from .scenario import (
    ADMITTED,
    CLIENT_GONE,
    LOG_TEXT,
    REJECTED,
    TIMED_OUT,
    Scenario,
)

__all__ = ["Run", "RunSummary"]


@dataclass(frozen=True)
class RunSummary(sim.Summary):
    """The key numbers of a :class:`Run`: rates per second over the run, times in ms."""

    design: str
    """the gate's design ("seed" or "fix")"""
    offered_per_s: float
    """requests offered (1/s)"""
    admitted_per_s: float
    """requests forwarded to the business layer while their client waited (1/s)"""
    business_share: float
    """admitted_per_s / offered_per_s (0-1; 0 when nothing was offered)"""
    client_gone_per_s: float
    """requests that passed the gate after their client had left: dropped (1/s)"""
    timed_out_per_s: float
    """requests whose Taken timer fired (1/s)"""
    rejected_per_s: float
    """requests refused at once (1/s)"""
    p50_ms: float
    """median time in the gate, blocked requests by their age (ms; 0 with no request)"""
    p99_ms: float
    """99th-percentile time in the gate (ms; 0 with no request)"""
    blocked_end: int
    """requests still blocked at the end (count)"""
    peak_blocked: int
    """most requests blocked at once (count)"""
    mean_blocked: float
    """time-average blocked requests (count)"""
    oldest_blocked_ms: float
    """age of the oldest request still blocked at the end (ms; 0 if none)"""
    late_share: float
    """share of requests longer in the gate than the client's timeout (0-1; 0 with no request)"""
    tokens_wasted: int
    """tokens received by requests whose timer then fired (count)"""
    truncated: bool
    """the run stopped before the horizon (event cap or blocked cap)"""


@dataclass(frozen=True)
class Run(sim.Run):
    """What one simulation returns. Times in ms unless the name says otherwise.

    ``windows``: equal-length arrays - ``t`` (window start, s), ``offered``, ``admitted``
    (forwarded to the business layer while the client waited), ``client_gone`` (passed the gate
    after the client had left: dropped), ``timeouts`` (Taken's timer fired), ``rejected``
    (refused at once), all per second; ``blocked`` and ``lock_queue`` (time-averaged counts);
    ``mean_ms``/``p50_ms``/``p99_ms`` (time in the gate of the requests that finished in the
    window; NaN where none did). Per-request arrays: ``arrive_ms``, ``key``, ``lock_ms``,
    ``unlock_ms``, ``done_ms`` (NaN if still blocked), ``outcome`` (0 blocked, 1 admitted,
    2 timer fired, 3 refused at once, 4 client gone). The access layer's log: ``log_ms``,
    ``log_req``, ``log_code`` (one entry per line, in the order written; text by
    :meth:`log_lines`).
    """

    scenario: Scenario
    seed: int
    status: RunStatus
    crashed: bool  # stopped because the blocked requests reached max_blocked ("OOM")
    crashed_at_ms: float  # when they did (NaN if never); the run ends with that window
    t_end_ms: float
    ledger: Ledger
    windows: dict
    arrive_ms: np.ndarray
    key: np.ndarray
    lock_ms: np.ndarray
    unlock_ms: np.ndarray
    done_ms: np.ndarray
    outcome: np.ndarray
    peak_blocked: int
    tokens_handed_out: int
    tokens_wasted: int
    log_ms: np.ndarray
    log_req: np.ndarray
    log_code: np.ndarray

    Summary = RunSummary

    @property
    def truncated(self) -> bool:
        """The run stopped before the horizon (event cap or blocked cap)."""
        return self.status.truncated or self.crashed

    @property
    def time_in_gate_ms(self) -> np.ndarray:
        """Time in the gate per request; for requests still blocked, their age at the end
        (a lower bound)."""
        end = np.where(np.isnan(self.done_ms), self.t_end_ms, self.done_ms)
        return end - self.arrive_ms

    def percentile_ms(self, q: float) -> float:
        """``q``-th percentile of :attr:`time_in_gate_ms` (blocked requests count with their age)."""
        v = self.time_in_gate_ms
        return float(np.percentile(v, q)) if len(v) else 0.0

    @property
    def blocked_end(self) -> int:
        """Requests still blocked when the run ended (goroutines alive, memory held)."""
        return int(self.ledger.in_system)

    @property
    def oldest_blocked_ms(self) -> float:
        """Age of the oldest request still blocked at the end (0 if none)."""
        m = np.isnan(self.done_ms)
        return float(self.t_end_ms - self.arrive_ms[m].min()) if m.any() else 0.0

    def rate_per_s(self, outcome, key: int | None = None, from_ms: float = 0.0) -> float:
        """Requests/s that finished with ``outcome`` (a code or a tuple of codes) at or after
        ``from_ms`` (all keys or one)."""
        m = np.isin(self.outcome, np.atleast_1d(outcome)) & (self.done_ms >= from_ms)
        if key is not None:
            m &= self.key == key
        span = self.t_end_ms - from_ms
        return float(m.sum() * 1000.0 / span) if span > 0 else 0.0

    @property
    def mean_blocked(self) -> float:
        """Time-average number of blocked requests over the run."""
        return float(self.time_in_gate_ms.sum() / self.t_end_ms) if self.t_end_ms > 0 else 0.0

    @property
    def late_share(self) -> float:
        """Share of requests that spent longer than the client's timeout in the gate (the client
        gave up; blocked requests count by their age)."""
        v = self.time_in_gate_ms
        return float((v > self.scenario.client_timeout_ms).mean()) if len(v) else 0.0

    def lock_waits_ms(self, from_ms: float = 0.0) -> np.ndarray:
        """Waits for the mutex of the key2 requests that got it and arrived after ``from_ms``."""
        m = ~np.isnan(self.lock_ms) & (self.arrive_ms >= from_ms)
        return self.lock_ms[m] - self.arrive_ms[m]

    def lock_holds_ms(self, from_ms: float = 0.0) -> np.ndarray:
        """Mutex hold times of the key2 requests that released it (arrived after ``from_ms``)."""
        m = ~np.isnan(self.unlock_ms) & (self.arrive_ms >= from_ms)
        return self.unlock_ms[m] - self.lock_ms[m]

    def log_lines(self, from_ms: float = 0.0, to_ms: float = math.inf) -> list[str]:
        """The access layer's log between ``from_ms`` and ``to_ms``, one string per line, in the
        order written: ``HH:MM:SS.ffffff req=NNNNNN keyK message`` (clock from the run's start)."""
        m = (self.log_ms >= from_ms) & (self.log_ms < to_ms)
        out = []
        for t, i, c in zip(
            self.log_ms[m].tolist(), self.log_req[m].tolist(), self.log_code[m].tolist(),
            strict=True,
        ):
            us = int(round(t * 1000.0))
            h, rest = divmod(us, 3_600_000_000)
            mi, rest = divmod(rest, 60_000_000)
            out.append(
                f"{h:02d}:{mi:02d}:{rest / 1e6:09.6f} req={i:06d} key{self.key[i]} {LOG_TEXT[c]}"
            )
        return out

    def summarise(self) -> RunSummary:
        """Key numbers of the run (:class:`RunSummary`: rates per second, times in ms)."""
        span = self.t_end_ms
        offered = self.ledger.arrived * 1000.0 / span if span else 0.0
        admitted = self.rate_per_s(ADMITTED)
        return RunSummary(
            design=self.scenario.design,
            offered_per_s=offered,
            admitted_per_s=admitted,
            business_share=admitted / offered if offered else 0.0,
            client_gone_per_s=self.rate_per_s(CLIENT_GONE),
            timed_out_per_s=self.rate_per_s(TIMED_OUT),
            rejected_per_s=self.rate_per_s(REJECTED),
            p50_ms=self.percentile_ms(50),
            p99_ms=self.percentile_ms(99),
            blocked_end=self.blocked_end,
            peak_blocked=self.peak_blocked,
            mean_blocked=self.mean_blocked,
            oldest_blocked_ms=self.oldest_blocked_ms,
            late_share=self.late_share,
            tokens_wasted=self.tokens_wasted,
            truncated=self.truncated,
        )
