"""Exercises of notebook 06 · Pending-record collapse. Expected answers come from
hotkeylab.pending_records."""

from __future__ import annotations

from .. import pending_records as pr
from ..exercises import close_to, exercise

_SC = pr.SEED_INCIDENT


@exercise("06.scan_timeout_backlog")
def _scan_timeout_backlog(answer):
    """SEED_INCIDENT: the backlog (rows) at which the time-range scan alone outlasts the run's
    timeout, so that no run retries a single row any more."""
    return close_to(
        answer,
        pr.scan_timeout_backlog(_SC.batch_timeout_ms, _SC.scan_fixed_ms, _SC.scan_ms_per_row),
        rel=0.01,
        unit="rows",
        hint="The scan costs a + s × backlog; set it equal to the timeout T and solve for the backlog.",
    )


@exercise("06.overlap_at_replenish")
def _overlap(answer):
    """SEED_INCIDENT: slow scans on the primary at once, on average, once the backlog stops
    growing at replenishment (no failover)."""
    cf = pr.closed_forms(_SC)
    return close_to(
        answer,
        cf["overlap_at_replenish"],
        rel=0.02,
        unit="scans",
        hint="Little's law: one scan starts every period and each stays scan_ms = a + s × backlog.",
    )


@exercise("06.safe_row_limit")
def _safe_row_limit(answer):
    """SEED_INCIDENT: the largest row limit whose run fits its timeout with a safety factor of
    0.8, whatever the backlog."""
    return close_to(
        answer,
        pr.largest_safe_row_limit(
            _SC.batch_timeout_ms, _SC.scan_fixed_ms, _SC.scan_ms_per_row, _SC.process_ms_per_row, 0.8
        ),
        rel=0.001,
        unit="rows",
        hint="A run with row limit k costs a + (s + p) × k; the largest k that fits T is "
        "(T − a) / (s + p); multiply by 0.8 and round down.",
    )


@exercise("06.drain_minutes")
def _drain_minutes(answer):
    """A row limit of 5000 per 30 s run, in stock (the occasional pending still arrives): minutes
    to drain the backlog the seed's stockout left at replenishment."""
    cf = pr.closed_forms(_SC)
    minutes = pr.drain_time_s(cf["backlog_at_replenish"], 5000, _SC.batch_period_ms, _SC.normal_pending_per_s) / 60
    return close_to(
        answer,
        minutes,
        rel=0.02,
        unit="min",
        hint="Net drain rate = 5000 rows / 30 s − the in-stock pending rate; time = backlog / rate.",
    )
