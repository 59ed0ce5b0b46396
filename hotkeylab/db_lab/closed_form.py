"""01b · Notebook 01's model beside the measurements: the closed loop fed with measured times.

Start reading at :func:`predicted_tps` (``min(threads × 1000 / (hold + outside), 1000 / hold)``
with a one-thread run's measured hold and outside time) and :func:`hold_from_parts_ms` (the hold
rebuilt from measured round trips, statements and COMMIT). :class:`Parts` holds those parts, from
:func:`measured_parts`, and gives the model's hold and TPS for any statement order ("what if").
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import capacity
from ..validate import check_choice, check_int, check_number
from .results import RunResult
from .scenario import ORDERS, sleeps_under_lock, statements_under_lock

__all__ = [
    "outside_ms",
    "predicted_tps",
    "predicted_latency_ms",
    "hold_from_parts_ms",
    "Parts",
    "measured_parts",
]


def outside_ms(one: RunResult) -> float:
    """Time per transaction spent outside the lock (BEGIN and the SELECT's trip), from a one-thread run.
    Without ``rtt_outside_lock`` these carry no emulated RTT; on a real link they would add 2 RTT."""
    return one.latency_ms - one.hold_ms


def predicted_tps(one: RunResult, threads: int) -> float:
    """Notebook 01's closed loop fed with the one-thread run's measured times:
    ``min(threads × 1000 / (hold + outside), 1000 / hold)``."""
    n = check_int("threads", threads, low=1)
    return min(n * 1000.0 / (one.hold_ms + outside_ms(one)), capacity.tps_ceiling(one.hold_ms))


def predicted_latency_ms(one: RunResult, threads: int) -> float:
    """Little's law for the closed loop: ``threads × 1000 / TPS`` with the predicted TPS."""
    return threads * 1000.0 / predicted_tps(one, threads)


def hold_from_parts_ms(r: RunResult, *, nominal: bool = False) -> float:
    """The hold rebuilt from its parts: ``round trips under the lock × sleep + statements under the
    lock × statement + commit`` (for the seed's order ``(inserts + 2) × sleep + (inserts + 1) ×
    statement + commit``); ``nominal=True`` uses the nominal RTT instead of the measured sleep."""
    sleep = r.rtt_ms if nominal else r.sleep_ms
    return (sleeps_under_lock(r.order, r.inserts) * sleep
            + statements_under_lock(r.order, r.inserts) * r.statement_ms + r.commit_ms)


@dataclass(frozen=True)
class Parts:
    """What one round trip, one statement and one COMMIT cost on the lab's machine (ms)."""

    overshoot_ms: float  # a time.sleep(RTT) lasts RTT + this
    statement_ms: float
    commit_ms: float
    base_outside_ms: float = 0.0  # outside the lock with no emulated RTT: BEGIN, the locking statement

    def hold_ms(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """The model's hold for a transaction: round trips under the lock × (RTT + overshoot) +
        statements under the lock × statement + COMMIT."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0, high=100.0)
        k = check_int("inserts", inserts, low=0, high=100)
        return (sleeps_under_lock(order, k) * (rtt + self.overshoot_ms)
                + statements_under_lock(order, k) * self.statement_ms + self.commit_ms)

    def outside_ms(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """Time per transaction outside the lock when every statement pays the RTT: BEGIN and the
        statement that takes the lock, plus the INSERTs sent before it (``lock_last``, ``update_only``)."""
        k = check_int("inserts", inserts, low=0, high=100)
        before = 0 if check_choice("order", order, ORDERS) == "lock_first" else k
        return (2 + before) * (rtt_ms + self.overshoot_ms) + before * self.statement_ms + self.base_outside_ms

    def tps(self, rtt_ms: float, inserts: int, order: str = "lock_first", threads: int = 1) -> float:
        """Notebook 01's closed loop: ``min(threads × 1000 / (hold + outside), 1000 / hold)``."""
        n = check_int("threads", threads, low=1)
        hold = self.hold_ms(rtt_ms, inserts, order)
        return min(n * 1000.0 / (hold + self.outside_ms(rtt_ms, inserts, order)), capacity.tps_ceiling(hold))

    def knee_threads(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """Committer threads needed to keep the lock busy: ``(hold + outside) / hold``."""
        hold = self.hold_ms(rtt_ms, inserts, order)
        return (hold + self.outside_ms(rtt_ms, inserts, order)) / hold


def measured_parts(runs) -> Parts:
    """Mean overshoot, statement, COMMIT and outside-the-lock times of the one-thread hot-row runs
    with RTT > 0 (RTT emulated under the lock only)."""
    ones = [r for r in runs if r.shared_row and r.threads == 1 and r.order == "lock_first" and r.rtt_ms > 0
            and not r.rtt_outside_lock]
    if not ones:
        raise ValueError("no one-thread hot-row runs with rtt_ms > 0 in these runs")
    n = len(ones)
    return Parts(sum(r.sleep_ms - r.rtt_ms for r in ones) / n, sum(r.statement_ms for r in ones) / n,
                 sum(r.commit_ms for r in ones) / n, sum(outside_ms(r) for r in ones) / n)
