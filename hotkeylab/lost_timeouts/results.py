"""08 · The typed summary of one run (:class:`RunSummary`), what :attr:`.model.Run.summary` holds."""

from __future__ import annotations

from dataclasses import dataclass

from .. import sim

__all__ = ["RunSummary"]


@dataclass(frozen=True)
class RunSummary(sim.Summary):
    """The key numbers of one simulated machine. A time of an event that never happened is
    ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    t_end_s: float
    """when the run ended (s)"""
    truncated: bool
    """the event cap stopped the run before the horizon"""
    calls: int
    """calls the consumer made (count)"""
    call_rate_per_s: float
    """calls / run length (1/s)"""
    mean_in_flight: float
    """time-average pending futures (count)"""
    little_in_flight: float
    """Little's law: call rate × mean sojourn, open calls by their age (count)"""
    max_sojourn_ms: float
    """longest time a finished call was pending (ms)"""
    in_flight_end: int
    """futures pending at the end (count)"""
    stuck_end: int
    """pending futures whose timeout task was rejected: nothing will time them out (count)"""
    stuck_on_hung: int
    """of those, calls to the hung provider (count)"""
    leaks: bool
    """stuck_end > 0"""
    lost_timeouts: int
    """timeout tasks the executor rejected (count)"""
    first_lost_s: float | None
    """when the first timeout task was rejected (s; None if never)"""
    executor_shutdown_s: float | None
    """when the shared executor shut down (s; None if never)"""
    heap_end_mb: float
    """live heap at the end (MB)"""
    heap_end_pct: float
    """heap_end_mb / the heap size (%)"""
    gc_max: float
    """largest sampled share of time in full GC (0-1; 0 with no sample)"""
    dead_s: float | None
    """when the machine was dead by the model's rule, DEAD_GC_SHARE (s; None if never)"""
    jvm_oom_s: float | None
    """when the heap ran out (s; None if never)"""
    served: int
    """calls answered (count)"""
    timed_out: int
    """calls timed out (count)"""
    rejected: int
    """calls refused (count)"""
    refused_by_cap: int
    """calls refused by the pending-futures cap (count)"""
    failed_on_disconnect: int
    """pending calls failed when their channel closed (count)"""
    no_provider: int
    """calls with no provider to go to (count)"""
