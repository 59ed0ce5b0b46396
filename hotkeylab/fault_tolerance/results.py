"""09 · The typed summary of each practice's run (what :attr:`.common.Run.summary` holds).

Shares are of the requests that arrived in the named span and finished; a span with no such request
gives ``None`` (:data:`hotkeylab.sim.NO_DATA`), never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import sim

__all__ = [
    "RetrySummary", "FailoverSummary", "EjectionSummary", "PoolSummary", "DeliverySummary",
    "ReportSummary", "IsolationSummary", "GiftConfigSummary",
]


@dataclass(frozen=True)
class RetrySummary(sim.Summary):
    """:func:`~.retry.simulate_retry`: users retrying through a fault."""

    policy: str
    """the retry policy ("none", "always", "gated")"""
    success_before: float | None
    """share answered, users who arrived before the fault (0-1)"""
    success_fault: float | None
    """share answered, users who arrived during the fault (0-1)"""
    success_end: float | None
    """share answered, users who arrived in the last 5 s that could settle (0-1)"""
    calls_per_user_fault: float | None
    """calls per user during the fault (calls)"""
    calls_per_user_end: float | None
    """calls per user at the end (calls)"""
    goodput_end_per_s: float | None
    """answers within the timeout over the last 5 s (1/s)"""
    recovered: bool
    """goodput_end_per_s >= 90% of the healthy goodput"""
    peak_queue: float
    """largest window mean of the calls queued (calls)"""
    wasted: int
    """answers that came after the caller had given up (count)"""


@dataclass(frozen=True)
class FailoverSummary(sim.Summary):
    """:func:`~.failover.simulate_failover`: a primary/backup pair through a crash and a surge."""

    mean_latency_normal_ms: float | None
    """mean latency before the first event (ms)"""
    mean_latency_down_ms: float | None
    """mean latency while the primary is down (ms)"""
    failover_share_down: float | None
    """share of the requests while down that failed over to the backup (0-1)"""
    success_down: float | None
    """share answered while down (0-1)"""
    util_b_down: float | None
    """the backup's mean utilisation while down (0-1)"""
    success_surge: float | None
    """share answered during the surge (0-1)"""
    success_surge_settled: float | None
    """share answered after the surge's first surge_fill_ms (0-1)"""
    surge_fill_ms: float
    """time the surge takes to fill the queues, closed form (ms)"""
    util_a_surge: float | None
    """the primary's mean utilisation in the settled surge (0-1)"""
    util_b_surge: float | None
    """the backup's mean utilisation in the settled surge (0-1)"""
    success_all: float | None
    """share answered over the run (0-1)"""


@dataclass(frozen=True)
class EjectionSummary(sim.Summary):
    """:func:`~.ejection.simulate_ejection`: L5's health check ejecting a bad machine."""

    success_bad: float | None
    """share answered while the bad machine is bad (0-1)"""
    success_bad_late: float | None
    """the same, after the first two health checks (0-1)"""
    success_after: float | None
    """share answered after the bad spell, two checks on (0-1)"""
    success_all: float | None
    """share answered over the run (0-1)"""
    lost_to_bad: int
    """requests that got an error from the bad machine (count)"""
    ejections: int
    """machines ejected (count)"""
    first_ejection_delay_ms: float | None
    """from the start of the bad spell to the first ejection (ms; None if none)"""
    min_in_rotation: float
    """fewest machines in rotation in a window (machines)"""
    probes: int
    """probes sent to ejected machines (count)"""


@dataclass(frozen=True)
class PoolSummary(sim.Summary):
    """:func:`~.pool.simulate_pool`: a worker pool through a hanging dependency."""

    success_all: float | None
    """share answered over the run (0-1)"""
    success_hang: float | None
    """share answered, requests that arrived while calls hang (0-1)"""
    success_fast: float | None
    """share answered, fast requests (0-1)"""
    success_slow: float | None
    """share answered, slow requests (0-1)"""
    mean_wait_ms: float | None
    """mean time to the answer, finished requests (ms)"""
    mean_wait_hang_ms: float | None
    """the same while calls hang (ms)"""
    peak_queue: float
    """largest window mean of the requests queued (requests)"""
    gave_up: int
    """requests whose caller gave up (count)"""


@dataclass(frozen=True)
class DeliverySummary(sim.Summary):
    """:func:`~.delivery.simulate_delivery`: gift claims with re-clicks."""

    protection: str
    """the protection against duplicates"""
    users: int
    """users who claimed (count)"""
    gifts: int
    """gifts delivered (count)"""
    duplicates: int
    """gifts beyond the first per user (count)"""
    duplicates_per_1000: float
    """duplicates per 1000 users"""
    no_gift_per_1000: float
    """users without a gift per 1000 users"""
    max_gifts: int
    """most gifts one user got (count)"""
    clicks_per_user: float
    """clicks per user (clicks)"""
    async_mean_delay_s: float | None
    """mean delay to the gift through the asynchronous queue (s; None without it)"""
    async_p99_delay_s: float | None
    """99th-percentile of that delay (s; None without it)"""


@dataclass(frozen=True)
class ReportSummary(sim.Summary):
    """:func:`~.report.simulate_report`: a non-core report step on the core path."""

    mode: str
    """how the report is sent"""
    mean_latency_normal_ms: float | None
    """mean latency before the report service slows (ms)"""
    mean_latency_slow_ms: float | None
    """mean latency while it is slow (ms)"""
    p99_latency_slow_ms: float | None
    """99th-percentile latency while it is slow (ms)"""
    peak_queue: float
    """largest window mean of the requests queued (requests)"""
    bypassed: int
    """reports skipped (count)"""
    unfinished: int
    """requests not finished at the end (count)"""


@dataclass(frozen=True)
class IsolationSummary(sim.Summary):
    """:func:`~.isolation.simulate_isolation`: deliveries and queries on shared or separated pools."""

    separated: bool
    """the two kinds run on separate pools"""
    delivery_success_surge: float | None
    """share of deliveries answered in the surge, after its first 2 s (0-1)"""
    query_success_surge: float | None
    """share of queries answered in the surge (0-1)"""
    delivery_success_normal: float | None
    """share of deliveries answered before the surge (0-1)"""
    query_success_normal: float | None
    """share of queries answered before the surge (0-1)"""


@dataclass(frozen=True)
class GiftConfigSummary(sim.Summary):
    """:func:`~.gift_config.simulate_gift_config`: one day of a mis-configured gift."""

    gifts: int
    """claims that got a gift (count)"""
    refused: int
    """claims refused by the daily limit (count)"""
    errors: int
    """claims that failed: the pool ran out (count)"""
    first_error_claim: int
    """the claim number of the first error (1-based; 0 if none)"""
    alarm_ms: float
    """when the error alarm fired (ms; inf if never)"""
    fixed_ms: float
    """when the configuration was fixed (ms; inf if never)"""
    published_limit: int
    """the daily limit in force (gifts)"""
    violations: list
    """what the configuration check found (empty if nothing)"""
