"""06 · Closed forms: rows a scan reads, scan and batch times, consumption against the backlog, the
thresholds where the business starves and where the primary collapses, the drain.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .. import capacity
from ..validate import check_int, check_number
from .scenario import (
    INF,
    SEED_INCIDENT,
    Scenario,
)

__all__ = [
    "rows_read",
    "scan_time_ms",
    "batch_time_ms",
    "rows_per_run",
    "consumption_per_s",
    "backlog_growth_per_s",
    "max_backlog_per_run",
    "scan_timeout_backlog",
    "overlapping_runs",
    "detection_ms",
    "starve_scans",
    "starve_backlog",
    "steady_scan",
    "collapse_backlog",
    "largest_safe_row_limit",
    "drain_time_s",
    "drain_ages_ms",
    "drain_cancelled",
    "failover_cycle_ms",
    "closed_forms",
]


# The formulas' default batch costs are the seed preset's: a scan's fixed cost ``a``, its cost per
# row read ``s`` and the retry cost per row ``p`` (ms).
_A = SEED_INCIDENT.scan_fixed_ms
_S = SEED_INCIDENT.scan_ms_per_row
_P = SEED_INCIDENT.process_ms_per_row


# --------------------------------------------------------------------------- closed forms
def rows_read(backlog: float, row_limit: int = 0) -> float:
    """Rows one scan reads: the whole backlog in its time range (``row_limit = 0``, the seed's
    query), or at most ``row_limit`` (``ORDER BY created LIMIT k`` on an index)."""
    b = check_number("backlog", backlog, low=0.0)
    k = check_int("row_limit", row_limit, low=0)
    return b if k == 0 else min(b, float(k))


def scan_time_ms(
    backlog: float, row_limit: int = 0, scan_fixed_ms: float = _A, scan_ms_per_row: float = _S
) -> float:
    """Time the scan takes on an idle primary: ``a + s × rows_read``, ms."""
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    return a + s * rows_read(backlog, row_limit)


def batch_time_ms(
    backlog: float,
    row_limit: int = 0,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
    process_ms_per_row: float = _P,
) -> float:
    """Time one run needs on an idle primary: scan, then retry every row read,
    ``a + (s + p) × rows_read``, ms. Grows without bound with the backlog when ``row_limit = 0``;
    at most ``a + (s + p) × k`` with a row limit ``k``."""
    p = check_number("process_ms_per_row", process_ms_per_row, low=0.0)
    return scan_time_ms(backlog, row_limit, scan_fixed_ms, scan_ms_per_row) + p * rows_read(
        backlog, row_limit
    )


def rows_per_run(
    backlog: float,
    row_limit: int,
    batch_timeout_ms: float,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
    process_ms_per_row: float = _P,
    chunk_rows: int = 200,
) -> float:
    """Rows one run retries before its timeout, on an idle primary.

    Zero when the scan alone takes longer than the timeout (the run gives up before it has a
    single row). Otherwise the run retries chunks of ``chunk_rows`` until the rows read are done;
    a chunk started before the timeout still commits: ``min(read, chunk × ⌈(T − scan) / (chunk ×
    p)⌉)``.
    """
    t = check_number("batch_timeout_ms", batch_timeout_ms, low=0.0, low_open=True, allow_inf=True)
    c = check_int("chunk_rows", chunk_rows, low=1)
    p = check_number("process_ms_per_row", process_ms_per_row, low=0.0)
    read = rows_read(backlog, row_limit)
    scan = scan_time_ms(backlog, row_limit, scan_fixed_ms, scan_ms_per_row)
    if scan >= t:
        return 0.0
    if math.isinf(t) or p == 0:
        return read
    chunks = math.ceil((t - scan) / (c * p))
    return min(read, float(c * chunks))


def consumption_per_s(backlog: float, sc: Scenario, row_limit: int | None = None) -> float:
    """Pending records the batch removes per second at a given backlog (in stock, idle primary):
    ``rows_per_run / period``. With no row limit it *falls* as the backlog grows and is zero once
    the scan outlasts the timeout: the seed's "存量累积后造成消费速率骤降"."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    k = sc.row_limit if row_limit is None else row_limit
    n = rows_per_run(
        backlog,
        k,
        sc.batch_timeout_ms,
        sc.scan_fixed_ms,
        sc.scan_ms_per_row,
        sc.process_ms_per_row,
        sc.chunk_rows,
    )
    return 1000.0 * n / sc.batch_period_ms


def backlog_growth_per_s(production_per_s: float, consumption_per_s: float) -> float:
    """The seed's first line: queue change rate = production − consumption (rows/s)."""
    return capacity.queue_growth_rate(production_per_s, 0.0, consumption_per_s)


def max_backlog_per_run(
    batch_timeout_ms: float,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
    process_ms_per_row: float = _P,
) -> float:
    """The largest backlog one time-range-only run clears within its timeout:
    ``(T − a) / (s + p)``. Past it, batch time > timeout."""
    t = check_number("batch_timeout_ms", batch_timeout_ms, low=0.0, low_open=True)
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    p = check_number("process_ms_per_row", process_ms_per_row, low=0.0)
    if s + p == 0:
        return INF
    return max(0.0, (t - a) / (s + p))


def scan_timeout_backlog(
    batch_timeout_ms: float, scan_fixed_ms: float = _A, scan_ms_per_row: float = _S
) -> float:
    """The backlog at which the time-range scan alone outlasts the timeout, ``(T − a) / s``:
    from there on no run retries a single row and consumption is zero."""
    t = check_number("batch_timeout_ms", batch_timeout_ms, low=0.0, low_open=True)
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    return INF if s == 0 else max(0.0, (t - a) / s)


def overlapping_runs(scan_ms: float, batch_period_ms: float) -> float:
    """Slow scans on the primary at once when a timed-out run's SQL keeps running: one starts every
    period and each stays ``scan_ms``, so on average ``scan / period`` (Little's law); at some
    instants ``⌈scan / period⌉``."""
    s = check_number("scan_ms", scan_ms, low=0.0)
    p = check_number("batch_period_ms", batch_period_ms, low=0.0, low_open=True)
    return capacity.littles_law(rate_per_s=1000.0 / p, time_in_system_ms=s)


def detection_ms(sc: Scenario) -> float:
    """How long the primary must stay full before the health checker gives up on it:
    ``(failures − 1) × interval + probe timeout`` (the first failed probe's timeout, then one
    interval per further failure). The probes' phase can add up to one interval."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    return (sc.health_failures - 1) * sc.health_interval_ms + sc.health_timeout_ms


def starve_scans(db_slots: int, business_slots: float) -> int:
    """Slow scans at once from which the other business loses queries: ``c − ⌊ρ⌋``.

    The business offers a load of ρ slots (queries/s × mean work). A pool of ``m`` slots keeps
    its queue short only while ``m > ρ``; at ``m ≤ ρ`` it runs at 100 % or more and its queue
    grows until clients time out. With ``n`` scans holding slots the business has ``c − n``, so
    it loses queries once ``c − n ≤ ρ``, i.e. ``n ≥ c − ⌊ρ⌋``."""
    c = check_int("db_slots", db_slots, low=1)
    load = check_number("business_slots", business_slots, low=0.0)
    return max(0, c - math.floor(load + 1e-9))


def starve_backlog(
    db_slots: int,
    business_slots: float,
    batch_period_ms: float,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
) -> float:
    """The backlog from which the slow scans make the other business lose queries in part of
    every period, while the primary is still "up".

    One scan starts every period ``P`` and each lasts ``S``, so the count at once peaks at
    ``⌈S/P⌉``. The business loses queries once that peak reaches :func:`starve_scans`,
    ``n* = c − ⌊ρ⌋``: ``⌈S/P⌉ ≥ n*`` ⇔ ``S > (n* − 1) P``; with ``S = a + s B``,
    ``B > ((c − ⌊ρ⌋ − 1) P − a) / s``."""
    n = starve_scans(db_slots, business_slots)
    p = check_number("batch_period_ms", batch_period_ms, low=0.0, low_open=True)
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    return INF if s == 0 else max(0.0, ((n - 1) * p - a) / s)


def steady_scan(sc: Scenario, scan_ms: float, periods: int = 10) -> tuple[Scenario, float]:
    """A scenario whose backlog stays constant (no stockout, no run ever finishes its scan before
    its timeout, so nothing is consumed) and whose scan takes ``scan_ms``, with the start of its
    steady state: the pile of scans is complete after one period plus one scan, rounded up to
    whole periods; the horizon adds ``periods`` periods. Returns ``(scenario, steady_from_ms)``."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    s = check_number("scan_ms", scan_ms, low=sc.scan_fixed_ms + sc.scan_ms_per_row, high=1e8)
    n = check_int("periods", periods, low=1, high=10_000)
    p = sc.batch_period_ms
    start = math.ceil((p + s) / p) * p
    backlog = round((s - sc.scan_fixed_ms) / sc.scan_ms_per_row) if sc.scan_ms_per_row > 0 else 0
    out = replace(sc, stockout_ms=INF, replenish_ms=INF, initial_backlog=int(backlog), horizon_ms=start + n * p)
    return out, start


def collapse_backlog(
    db_slots: int,
    batch_period_ms: float,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
    detection_ms: float = 0.0,
) -> float:
    """The backlog at which the slow scans fill every slot long enough to get the primary declared
    dead. A scan starts every period; the ``slots``-th starts ``(slots − 1)`` periods after the
    first, and from then on every slot is taken until the first ends, for ``scan − (slots − 1) ×
    period``. When that exceeds ``detection_ms`` (see :func:`detection_ms`) the probes fail in a row:
    ``scan > (slots − 1) × period + detection``, i.e. ``((slots − 1) × period + detection − a) / s``.
    (The mean pile, ``scan / period``, is then close to ``slots``.)"""
    c = check_int("db_slots", db_slots, low=1)
    p = check_number("batch_period_ms", batch_period_ms, low=0.0, low_open=True)
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    d = check_number("detection_ms", detection_ms, low=0.0)
    return INF if s == 0 else max(0.0, ((c - 1) * p + d - a) / s)


def largest_safe_row_limit(
    batch_timeout_ms: float,
    scan_fixed_ms: float = _A,
    scan_ms_per_row: float = _S,
    process_ms_per_row: float = _P,
    safety: float = 1.0,
) -> int:
    """The largest row limit whose run fits its timeout whatever the backlog:
    ``⌊(T − a) / (s + p) × safety⌋`` (the seed's ``QueueMaxSize = M/N × 安全系数`` again)."""
    sf = check_number("safety", safety, low=0.0, high=1.0, low_open=True)
    return math.floor(max_backlog_per_run(batch_timeout_ms, scan_fixed_ms, scan_ms_per_row, process_ms_per_row) * sf)


def drain_time_s(backlog: float, row_limit: int, batch_period_ms: float, production_per_s: float = 0.0) -> float:
    """Seconds a row-limited batch needs to drain ``backlog``: ``B / (k / period − production)``
    (infinite when the limit does not outpace production)."""
    b = check_number("backlog", backlog, low=0.0)
    k = check_int("row_limit", row_limit, low=1)
    p = check_number("batch_period_ms", batch_period_ms, low=0.0, low_open=True)
    prod = check_number("production_per_s", production_per_s, low=0.0)
    net = -backlog_growth_per_s(prod, 1000.0 * k / p)
    return INF if net <= 0 else b / net


def drain_ages_ms(sc: Scenario, drain_from_ms: float, row_limit: int) -> tuple[float, float]:
    """Ages (ms) at which a row-limited drain reaches the first and the last record of the stockout.

    The stockout leaves records at ``λ`` = ``orders_per_s`` from ``t_s`` to ``t_r``; from
    ``t_0 = drain_from_ms`` the batch removes ``r = k / P`` rows/s, oldest first. The record made
    at ``t`` is reached when the ``λ (t − t_s)`` rows ahead of it are gone, at
    ``t_0 + λ (t − t_s) / r``: its age then is ``A(t) = t_0 − t + λ (t − t_s) / r``, linear in ``t``.
    (The few in-stock pending records made before ``t_s`` are ignored.)"""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    if not (math.isfinite(sc.stockout_ms) and math.isfinite(sc.replenish_ms)):
        raise ValueError(f"sc.stockout_ms and sc.replenish_ms must be finite, got {sc.stockout_ms!r}, {sc.replenish_ms!r}")
    t0 = check_number("drain_from_ms", drain_from_ms, low=sc.replenish_ms, high=1e10)
    k = check_int("row_limit", row_limit, low=1)
    r = k / sc.batch_period_ms  # rows/ms
    lam = sc.orders_per_s / 1000.0
    ts, tr = sc.stockout_ms, sc.replenish_ms
    return t0 - ts, t0 - tr + lam * (tr - ts) / r


def drain_cancelled(sc: Scenario, drain_from_ms: float, row_limit: int) -> float:
    """Records of the stockout cancelled rather than completed by the drain: those whose age when
    reached, :func:`drain_ages_ms`, exceeds ``order_expiry_ms`` (an assumption of ours). ``A`` is
    linear between its first and last value, so the cancelled share of the ``λ (t_r − t_s)``
    records is the share of that line above the expiry."""
    first, last = drain_ages_ms(sc, drain_from_ms, row_limit)
    e = sc.order_expiry_ms
    n = sc.orders_per_s * (sc.replenish_ms - sc.stockout_ms) / 1000.0
    if math.isinf(e):
        return 0.0
    if first == last:
        return n if first > e else 0.0
    x = (e - first) / (last - first)  # where A crosses the expiry, as a share of the stockout
    above = 1.0 - min(1.0, max(0.0, x)) if last > first else min(1.0, max(0.0, x))
    return n * above


def failover_cycle_ms(sc: Scenario) -> float:
    """About how long a fresh primary lives, plus its failover, when every scan outlasts
    ``slots × period``: the first run starts on average half a period after the promotion, the
    ``slots``-th ``(slots − 1)`` periods later; from then on probes wait for a slot and fail,
    ``health_failures`` in a row take about ``(failures − ½) × interval + probe timeout``; then the
    failover itself. Approximate (± one period)."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    detect = (sc.health_failures - 0.5) * sc.health_interval_ms + sc.health_timeout_ms
    return 0.5 * sc.batch_period_ms + (sc.db_slots - 1) * sc.batch_period_ms + detect + sc.failover_ms


def closed_forms(sc: Scenario = SEED_INCIDENT) -> dict:
    """The incident's numbers from the formulas alone (rows, rows/s, ms, runs)."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    a, s, p = sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row
    out_ms = max(0.0, min(sc.replenish_ms, sc.horizon_ms) - sc.stockout_ms) if math.isfinite(sc.stockout_ms) else 0.0
    backlog_at_replenish = sc.initial_backlog + sc.stockout_pending_per_s * out_ms / 1000.0
    scan_r = scan_time_ms(backlog_at_replenish, 0, a, s)
    k = sc.fix_row_limit
    return {
        "normal_pending_per_s": sc.normal_pending_per_s,
        "stockout_growth_per_s": backlog_growth_per_s(sc.stockout_pending_per_s, 0.0),
        "normal_batch_ms": batch_time_ms(sc.normal_pending_per_s * sc.batch_period_ms / 1000, 0, a, s, p),
        "max_backlog_per_run": max_backlog_per_run(sc.batch_timeout_ms, a, s, p),
        "scan_timeout_backlog": scan_timeout_backlog(sc.batch_timeout_ms, a, s),
        "starve_scans": starve_scans(sc.db_slots, sc.business_slots),
        "starve_backlog": starve_backlog(sc.db_slots, sc.business_slots, sc.batch_period_ms, a, s),
        "detection_ms": detection_ms(sc),
        "collapse_backlog": collapse_backlog(sc.db_slots, sc.batch_period_ms, a, s, detection_ms(sc)),
        "backlog_at_replenish": backlog_at_replenish,
        "scan_at_replenish_ms": scan_r,
        "overlap_at_replenish": overlapping_runs(scan_r, sc.batch_period_ms),
        "business_slots": sc.business_slots,
        "failover_cycle_ms": failover_cycle_ms(sc),
        "fix_batch_ms": batch_time_ms(k, k, a, s, p),
        "largest_safe_row_limit": largest_safe_row_limit(sc.batch_timeout_ms, a, s, p),
        "fix_drain_per_s": -backlog_growth_per_s(sc.normal_pending_per_s, 1000.0 * k / sc.batch_period_ms),
    }
