"""Exercises of notebook 06 · Pending-record collapse. Expected answers come from
hotkeylab.pending_records. Each asks for a case the notebook does not print."""

from __future__ import annotations

import math
from dataclasses import replace

from .. import pending_records as pr
from ..exercises import numeric

_SC = pr.SEED_INCIDENT

#: the cases the exercises ask about (none of them is printed in the notebook)
TIMEOUT_MS = 60_000.0  # exercise 1: the batch's timeout doubled
REPLENISH_MS = 300_000.0  # exercise 2: the stock back at 5 min
SLOTS = 12  # exercise 3: a bigger primary
SAFETY = 0.8  # exercise 4: the seed's safety factor on the count
SCAN_MS_PER_ROW = 0.5  # exercise 4: a scan at half our cost per row (the notebook prints the limit at ours)
DRAIN_LIMIT = 3000  # exercise 5: a smaller row limit
DRAIN_TARGET_MS = 1_800_000.0  # exercise 5 (b): drain the backlog within half an hour instead
EXPIRY_MS = 2_400_000.0  # exercise 6: a 40-minute expiry (45 min gave the number the notebook prints for "row limit from the start")


@numeric("06.scan_timeout_backlog", rel=0.01, unit="rows",
         hint="The scan costs a + s × backlog; set it equal to the new timeout and solve for the backlog.")
def scan_timeout_backlog() -> float:
    """The batch's timeout doubled to 60 s: the backlog (rows) from which the time-range scan alone
    outlasts it, so that no run retries a single row."""
    return pr.scan_timeout_backlog(TIMEOUT_MS, _SC.scan_fixed_ms, _SC.scan_ms_per_row)


@numeric("06.consuming_replenish", rel=0.005, unit="s",
         hint="The stockout adds every order to the backlog from its start: the batch gets stuck for good once "
         "the backlog at replenishment passes the scan-timeout backlog of part (a). Solve "
         "orders/s × (t_r − stockout start) = that backlog for t_r.")  # fmt: skip
def consuming_replenish_s() -> float:
    """Exercise 1 (b), the timeout at 60 s: the latest replenish time (s) at which the stockout leaves
    no more than the scan-timeout backlog, so that the batch still consumes once the stock is back."""
    backlog = scan_timeout_backlog()
    return (_SC.stockout_ms + 1000 * backlog / _SC.stockout_pending_per_s) / 1000


@numeric("06.overlap_at_replenish", rel=0.02, unit="scans",
         hint="Backlog = orders/s × minutes out of stock; scan = a + s × backlog; Little's law: scan / period.")
def overlap_at_replenish() -> float:
    """The stock back at 5 min instead of 10: slow scans on the primary at once, on average, once
    the backlog stops growing (no failover)."""
    return pr.closed_forms(replace(_SC, replenish_ms=REPLENISH_MS))["overlap_at_replenish"]


@numeric("06.starve_backlog", rel=0.01, unit="rows",
         hint="The business loses queries once c − ⌊ρ⌋ scans run at once; the count peaks at ⌈S/P⌉, "
         "so S > (c − ⌊ρ⌋ − 1) P; then S = a + s × backlog.")  # fmt: skip
def starve_backlog() -> float:
    """A primary with 12 slots, the same business load: the backlog (rows) from which the business
    starts losing queries."""
    return pr.starve_backlog(SLOTS, _SC.business_slots, _SC.batch_period_ms, _SC.scan_fixed_ms, _SC.scan_ms_per_row)


@numeric("06.failover_margin", rel=0.01, unit="s",
         hint="With c slots the primary is failed over once a scan outlasts (c − 1) × period + the detection "
         "time; turn that into a backlog, subtract the backlog our stockout leaves, and divide by the orders/s "
         "that the stockout adds.")  # fmt: skip
def failover_margin_s() -> float:
    """Exercise 3 (b), 12 slots: how many seconds later than ours the stock could have come back
    before the primary is failed over (the in-stock trickle after the replenishment ignored)."""
    cf = pr.closed_forms(_SC)
    fill = pr.collapse_backlog(SLOTS, _SC.batch_period_ms, _SC.scan_fixed_ms, _SC.scan_ms_per_row, cf["detection_ms"])
    return (fill - cf["backlog_at_replenish"]) / _SC.stockout_pending_per_s


@numeric("06.safe_row_limit", rel=0.001, unit="rows",
         hint=f"A run with row limit k costs a + (s + p) × k, so at most (T − a) / (s + p) rows fit in T, "
         f"here with s = {SCAN_MS_PER_ROW} ms a row; the seed's safety factor multiplies that count: "
         f"{SAFETY} × it, rounded down.")  # fmt: skip
def safe_row_limit() -> int:
    """SEED_INCIDENT with a scan of 0.5 ms a row: the largest row limit k ≤ 0.8 × (T − a) / (s + p),
    whatever the backlog (the seed's form QueueMaxSize < M/N × 安全系数: the safety factor on the
    count)."""
    sc = replace(_SC, scan_ms_per_row=SCAN_MS_PER_ROW)
    return pr.largest_safe_row_limit(
        sc.batch_timeout_ms, sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row, SAFETY
    )


@numeric("06.drain_minutes", rel=0.02, unit="min",
         hint=f"Net drain rate = {DRAIN_LIMIT} rows / {_SC.batch_period_ms / 1000:.0f} s − the in-stock pending "
         "rate; time = backlog / rate.")  # fmt: skip
def drain_minutes() -> float:
    """A row limit of 3000 per 30 s run, in stock (the occasional pending still arrives): minutes
    to drain the backlog the stockout left at replenishment."""
    backlog = pr.closed_forms(_SC)["backlog_at_replenish"]
    return pr.drain_time_s(backlog, DRAIN_LIMIT, _SC.batch_period_ms, _SC.normal_pending_per_s) / 60


@numeric("06.drain_row_limit", rel=0.002, unit="rows",
         hint=f"Invert part (a): the net rate must be backlog / {DRAIN_TARGET_MS / 60000:.0f} min; add back the "
         "in-stock pending rate and multiply by the period; round up.")  # fmt: skip
def drain_row_limit() -> int:
    """Exercise 5 (b): the smallest row limit that drains the backlog the stockout left within half an
    hour, in stock: ``k = ⌈P × (B / target + in-stock pending rate)⌉``."""
    backlog = pr.closed_forms(_SC)["backlog_at_replenish"]
    per_s = backlog / (DRAIN_TARGET_MS / 1000) + _SC.normal_pending_per_s
    k = math.ceil(per_s * _SC.batch_period_ms / 1000 - 1e-9)
    assert pr.drain_time_s(backlog, k, _SC.batch_period_ms, _SC.normal_pending_per_s) <= DRAIN_TARGET_MS / 1000
    return k


@numeric("06.cancelled_expiry", rel=0.03, unit="records",
         hint="The drain reaches the record made at t when the rows ahead of it are gone: its age is "
         "linear in t, from the first record's age to the last's (the notebook prints both). Find the share "
         "of that line above the new expiry and multiply by the stockout's records.")  # fmt: skip
def cancelled_with_expiry() -> float:
    """The seed's fixes (row limit 5000 from 25 min), with a 40-minute expiry instead of 30: how
    many of the stockout's records are cancelled rather than completed?"""
    sc = replace(pr.fix_scenarios(_SC)["1 + 2 + 3. row limit, drain"], order_expiry_ms=EXPIRY_MS)
    return pr.drain_cancelled(sc, pr.FIXES["limit_from_ms"], pr.FIXES["fix_row_limit"])
