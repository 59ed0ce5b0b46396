"""06 · Pending-record collapse: a backlog inside the database takes the primary down (seed 000).

The seed's second incident ("当前模型的另一次故障重现"), a chain the author draws as::

    库存hotKey没有及时补充                       the inventory hot key is not replenished in time
    |- hotKey无法处理成功留下pending记录          orders on it fail and leave pending records
    |- pending记录累积过多导致批处理在有效时间内无法完成处理   the batch can't finish in its window
    |- hotKey补充完毕后 … 批处理扫描数据库超时      replenished, but the batch's scan times out
    |- 批处理产生的慢SQL在反复批处理之后累积巨量的慢SQL  slow SQL piles up run after run
    |- 数据库整体被拖垮导致主从切换                 the database is dragged down: failover
    |- 新主库重复类似行为                          the new primary does the same

"The same queue, only this time it accumulates in the database's records, not in a server's
queue" - and the same trigger: processing time > timeout.

Model (SimPy, one process function per actor the seed names):

- :func:`order_source` - orders on the inventory hot key; each creates a record that completes at
  once, or stays *pending* (occasionally when in stock; always when out of stock).
- :func:`replenisher` - the inventory runs out at ``stockout_ms`` and is replenished at
  ``replenish_ms``.
- :func:`batch_job` - every ``batch_period_ms`` starts a :func:`batch_run`: one scan of the pending
  records in a time range (no row limit in the seed's version: its cost grows with the backlog),
  then the rows fetched are retried in chunks. The run gives up after ``batch_timeout_ms``.
- :func:`slow_query` - the scan's SQL on the primary. A client-side timeout does not cancel it:
  it runs until it is done or the primary dies, whether or not its batch run still waits.
- :func:`business_traffic` / :func:`business_query` - the other business's queries on the same
  primary, with a client timeout.
- :class:`Database` - the primary as ``db_slots`` CPU slots: a query holds one slot until it
  finishes; the others wait in FIFO order (business queries and probes leave the queue when their
  client gives up; slow SQL does not).
- :func:`health_checker` - probes the primary; after ``health_failures`` probes in a row go
  unanswered within ``health_timeout_ms`` it declares the primary dead and fails over: every query
  on it is killed, the database is unavailable for ``failover_ms``, then a new primary with the same
  data (the pending records are replicated) and the same workload takes over.

Fixes (the seed's order): replenish (``replenish_ms``), stop the batch (``stop_batch_ms``), a row
limit per run (``limit_from_ms`` with ``fix_row_limit``); ``row_limit`` puts a limit on every run
from the start.

Ledgers: records ``created = completed + pending + cancelled`` (:class:`RecordLedger`; a pending
record older than ``order_expiry_ms`` is cancelled when the batch reaches it - our assumption, the
seed names no expiry; until then it stays in the table and in every scan) and business queries
``arrived = served + timed_out + rejected + in_system`` (:class:`hotkeylab.sim.Ledger`; rejected =
refused during a failover or killed by one).

Units: milliseconds in the API (``*_ms``), per second for rates (``*_per_s``); windowed arrays are
per second with window starts ``t`` in seconds.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from . import capacity
from .plotting import COLORS, decorate, lock_gantt, new_figure, shade
from .sim import Ledger, LedgerError, Recorder, RunStatus, check_seed, make_rng, run_bounded
from .validate import check_int, check_number

__all__ = [
    "Scenario",
    "SEED_INCIDENT",
    "HEALTHY",
    "FIXES",
    "fix_scenarios",
    "RecordLedger",
    "PendingStore",
    "Database",
    "Job",
    "BatchRun",
    "Run",
    "order_source",
    "replenisher",
    "batch_job",
    "batch_run",
    "slow_query",
    "business_traffic",
    "business_query",
    "health_checker",
    "simulate",
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
    "drain_ages_ms",
    "drain_cancelled",
    "collapse_backlog",
    "largest_safe_row_limit",
    "drain_time_s",
    "failover_cycle_ms",
    "closed_forms",
    "measure_batch",
    "plot_timeline",
    "plot_slow_sql",
    "plot_fixes",
    "plot_scan_vs_backlog",
    "plot_consumption",
    "plot_business_loss",
    "explore",
    "explore_controls",
]

INF = math.inf
MAX_RATE_PER_S = 1_000_000.0
MAX_ROWS = 100_000_000

# job kinds and outcomes on the database
SCAN, PROCESS, BUSINESS, PROBE = "scan", "process", "business", "probe"
OK, KILLED, REJECTED = "ok", "killed", "rejected"
# outcome codes of a business query
IN_SYSTEM, SERVED, TIMED_OUT, REFUSED = 0, 1, 2, 3


# --------------------------------------------------------------------------- scenario
@dataclass(frozen=True)
class Scenario:
    """One hot key's orders, the pending-record batch job, and the primary they share.

    Times in ms, rates per second. The seed gives no numbers for this incident; every default is
    an assumption (see :data:`SEED_INCIDENT`) chosen so that the seed's chain plays out in an hour.
    """

    # orders on the inventory hot key
    orders_per_s: float = 600.0  # orders/s on the hot key (Poisson)
    normal_pending_share: float = 0.001  # share of in-stock orders that still end pending
    stockout_ms: float = 60_000.0  # the inventory runs out (inf: never)
    replenish_ms: float = 600_000.0  # the inventory is replenished (inf: never)
    order_expiry_ms: float = 1_800_000.0  # a record pending longer is cancelled, not completed
    initial_backlog: int = 0  # pending records already there at t = 0 (created at t = 0)
    order_tick_ms: float = 1000.0  # orders are drawn per tick (Poisson count per tick)
    # the batch job that re-scans pending records
    batch_period_ms: float = 30_000.0  # a run starts every period
    batch_timeout_ms: float = 30_000.0  # a run gives up after this long (inf: never)
    scan_range_ms: float = 86_400_000.0  # the scan's time range: records created in the last …
    row_limit: int = 0  # rows per run (0: none, the seed's time-range-only query)
    scan_fixed_ms: float = 100.0  # a scan's fixed cost on the primary
    scan_ms_per_row: float = 1.0  # a scan's cost per pending row it reads
    process_ms_per_row: float = capacity.lock_hold_ms(0.5)  # retrying one record on the hot key
    chunk_rows: int = 200  # rows retried per transaction (a chunk)
    # the fixes, in the seed's order (1. replenish is replenish_ms)
    stop_batch_ms: float = INF  # 2. no runs start from then on …
    limit_from_ms: float = INF  # 3. … until runs resume from then on with fix_row_limit
    fix_row_limit: int = 5000  # the row limit of fix 3
    # the primary
    db_slots: int = 8  # queries the primary runs at once (CPU slots)
    business_per_s: float = 20.0  # other business queries/s on the same primary (Poisson)
    business_ms: float = 100.0  # mean work of one business query (exponential)
    business_timeout_ms: float = 1000.0  # a business client gives up after this long
    # the health checker and failover
    health_interval_ms: float = 5000.0  # a probe every …
    health_timeout_ms: float = 2000.0  # a probe unanswered after this long failed
    probe_ms: float = 1.0  # the probe's work on the primary
    health_failures: int = 3  # failed probes in a row that declare the primary dead
    failover_ms: float = 30_000.0  # the database is unavailable this long at a failover
    # the run
    horizon_ms: float = 3_600_000.0  # simulated time
    window_ms: float = 10_000.0  # width of the windows in Run.windows

    def __post_init__(self):
        check_number("orders_per_s", self.orders_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_number("normal_pending_share", self.normal_pending_share, low=0.0, high=1.0)
        check_number("stockout_ms", self.stockout_ms, low=0.0, allow_inf=True)
        check_number("replenish_ms", self.replenish_ms, low=self.stockout_ms, allow_inf=True)
        check_number("order_expiry_ms", self.order_expiry_ms, low=0.0, low_open=True, allow_inf=True)
        check_int("initial_backlog", self.initial_backlog, low=0, high=MAX_ROWS)
        check_number("order_tick_ms", self.order_tick_ms, low=1.0, high=3_600_000.0)
        check_number("batch_period_ms", self.batch_period_ms, low=100.0, high=1e8)
        check_number("batch_timeout_ms", self.batch_timeout_ms, low=0.0, low_open=True, allow_inf=True)
        check_number("scan_range_ms", self.scan_range_ms, low=0.0, low_open=True, allow_inf=True)
        check_int("row_limit", self.row_limit, low=0, high=MAX_ROWS)
        check_number("scan_fixed_ms", self.scan_fixed_ms, low=0.0, high=1e8)
        check_number("scan_ms_per_row", self.scan_ms_per_row, low=0.0, high=1e4)
        check_number("process_ms_per_row", self.process_ms_per_row, low=0.0, high=1e4)
        check_int("chunk_rows", self.chunk_rows, low=1, high=MAX_ROWS)
        check_number("stop_batch_ms", self.stop_batch_ms, low=0.0, allow_inf=True)
        check_number("limit_from_ms", self.limit_from_ms, low=0.0, allow_inf=True)
        check_int("fix_row_limit", self.fix_row_limit, low=1, high=MAX_ROWS)
        check_int("db_slots", self.db_slots, low=1, high=10_000)
        check_number("business_per_s", self.business_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_number("business_ms", self.business_ms, low=0.0, low_open=True, high=1e7)
        check_number("business_timeout_ms", self.business_timeout_ms, low=0.0, low_open=True, allow_inf=True)
        check_number("health_interval_ms", self.health_interval_ms, low=10.0, high=1e8)
        check_number("health_timeout_ms", self.health_timeout_ms, low=0.0, low_open=True, high=1e8)
        check_number("probe_ms", self.probe_ms, low=0.0, low_open=True, high=1e6)
        check_int("health_failures", self.health_failures, low=1, high=1000)
        check_number("failover_ms", self.failover_ms, low=0.0, high=1e8)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True, high=1e9)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)

    @property
    def business_slots(self) -> float:
        """Slots the business load keeps busy on average: ``λ × work`` (an Erlang load)."""
        return capacity.utilisation(self.business_per_s, self.business_ms)

    @property
    def stockout_pending_per_s(self) -> float:
        """Pending records created per second while out of stock (every order)."""
        return self.orders_per_s

    @property
    def normal_pending_per_s(self) -> float:
        """Pending records created per second in stock: the occasional pending the batch was
        sized for."""
        return self.orders_per_s * self.normal_pending_share


SEED_INCIDENT = Scenario(
    orders_per_s=600.0,  # "库存hotKey" - an inventory hot key (600/s: notebook 04's assumed rate, reused)
    normal_pending_share=0.001,  # "批处理只考虑了处理正常偶发性pending的情况" (0.1 %, assumed)
    stockout_ms=60_000.0,  # "库存hotKey没有及时补充" (runs out at 1 min, assumed)
    replenish_ms=600_000.0,  # "hotKey补充完毕后" - replenished, but too late (10 min, assumed)
    order_expiry_ms=1_800_000.0,  # (ours: the seed names no expiry) a record pending 30 min is cancelled
    batch_period_ms=30_000.0,  # "反复批处理" - a run every period (30 s, assumed)
    batch_timeout_ms=30_000.0,  # "批处理在有效时间内无法完成处理" - its window (30 s, assumed)
    scan_range_ms=86_400_000.0,  # "之前只加了时间范围" - a time range, the last day (assumed)
    row_limit=0,  # "(之前只加了时间范围…)" - no row limit per run
    scan_fixed_ms=100.0,  # a scan's fixed cost (assumed)
    scan_ms_per_row=1.0,  # "批处理扫描数据库超时" - cost per row read (1 ms, assumed)
    process_ms_per_row=capacity.lock_hold_ms(0.5),  # one retry: the seed's first-incident transaction, 2.9 ms (ours)
    chunk_rows=200,  # rows retried per transaction (assumed)
    db_slots=8,  # "数据库整体被拖垮" - the primary runs 8 queries at once (assumed)
    business_per_s=20.0,  # "主库挂了导致其它业务也不可用" - other business (2 slots busy, assumed)
    business_ms=100.0,  # (assumed)
    business_timeout_ms=1000.0,  # (assumed)
    health_interval_ms=5000.0,  # "主从切换" - the HA checker's probe period (assumed)
    health_timeout_ms=2000.0,  # (assumed)
    health_failures=3,  # (assumed)
    failover_ms=30_000.0,  # "新主库重复类似行为" - a new primary after 30 s (assumed)
)

#: The same primary and batch job without the stockout: the batch handles occasional pending.
HEALTHY = replace(SEED_INCIDENT, stockout_ms=INF, replenish_ms=INF)

#: The seed's response, in its order: "1.补充hotKey … 2.停掉pending批处理 … 3.修改存量批处理条件
#: 给单次处理加上条数限制 … 然后慢慢消化存量" (times assumed: 20 and 25 min).
FIXES = {
    "stop_batch_ms": 1_200_000.0,
    "limit_from_ms": 1_500_000.0,
    "fix_row_limit": 5000,
}


def fix_scenarios(base: Scenario = SEED_INCIDENT) -> dict[str, Scenario]:
    """The fixes compared, cumulative, in the seed's order, plus a row limit from the start.

    Keys: ``"never replenished"``, ``"1. replenish"`` (the incident as it ran), ``"1 + 2. stop the
    batch"``, ``"1 + 2 + 3. row limit, drain"``, ``"row limit from the start"``.
    """
    if not isinstance(base, Scenario):
        raise ValueError(f"base must be a pending_records.Scenario, got {type(base).__name__}")
    k = FIXES["fix_row_limit"]
    return {
        "never replenished": replace(base, replenish_ms=INF),
        "1. replenish": base,
        "1 + 2. stop the batch": replace(base, stop_batch_ms=FIXES["stop_batch_ms"]),
        "1 + 2 + 3. row limit, drain": replace(
            base,
            stop_batch_ms=FIXES["stop_batch_ms"],
            limit_from_ms=FIXES["limit_from_ms"],
            fix_row_limit=k,
        ),
        "row limit from the start": replace(base, row_limit=k),
    }


# --------------------------------------------------------------------------- closed forms
def rows_read(backlog: float, row_limit: int = 0) -> float:
    """Rows one scan reads: the whole backlog in its time range (``row_limit = 0``, the seed's
    query), or at most ``row_limit`` (``ORDER BY created LIMIT k`` on an index)."""
    b = check_number("backlog", backlog, low=0.0)
    k = check_int("row_limit", row_limit, low=0)
    return b if k == 0 else min(b, float(k))


def scan_time_ms(
    backlog: float, row_limit: int = 0, scan_fixed_ms: float = 100.0, scan_ms_per_row: float = 1.0
) -> float:
    """Time the scan takes on an idle primary: ``a + s × rows_read``, ms."""
    a = check_number("scan_fixed_ms", scan_fixed_ms, low=0.0)
    s = check_number("scan_ms_per_row", scan_ms_per_row, low=0.0)
    return a + s * rows_read(backlog, row_limit)


def batch_time_ms(
    backlog: float,
    row_limit: int = 0,
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
    process_ms_per_row: float = 2.9,
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
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
    process_ms_per_row: float = 2.9,
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
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
    process_ms_per_row: float = 2.9,
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
    batch_timeout_ms: float, scan_fixed_ms: float = 100.0, scan_ms_per_row: float = 1.0
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
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
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
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
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
    scan_fixed_ms: float = 100.0,
    scan_ms_per_row: float = 1.0,
    process_ms_per_row: float = 2.9,
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


# --------------------------------------------------------------------------- records
@dataclass
class RecordLedger:
    """Where every order's record went: ``created = completed + pending + cancelled``."""

    created: int = 0
    completed: int = 0
    pending: int = 0
    cancelled: int = 0
    extra: dict = field(default_factory=dict)

    def balance(self) -> int:
        return self.created - (self.completed + self.pending + self.cancelled)

    def check(self) -> RecordLedger:
        terms = (self.created, self.completed, self.pending, self.cancelled)
        if any(x < 0 for x in terms):
            raise LedgerError(f"negative count in record ledger: {self}")
        if self.balance() != 0:
            raise LedgerError(
                f"record ledger does not balance: created {self.created} != completed "
                f"{self.completed} + pending {self.pending} + cancelled {self.cancelled} "
                f"(off by {self.balance()})"
            )
        return self

    def as_dict(self) -> dict:
        d = {
            "created": self.created,
            "completed": self.completed,
            "pending": self.pending,
            "cancelled": self.cancelled,
        }
        d.update(self.extra)
        return d


class PendingStore:
    """The pending records, oldest first, as runs of consecutive record ids created at the same
    instant (``[lo, hi)`` created at ``t``): one row per record in the real table, a few thousand
    intervals here."""

    def __init__(self):
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.t: list[float] = []
        self.total = 0
        self.next_id = 0

    def add(self, t_ms: float, n: int) -> None:
        if n <= 0:
            return
        self.lo.append(self.next_id)
        self.next_id += n
        self.hi.append(self.next_id)
        self.t.append(t_ms)
        self.total += n

    def _first(self, t_from_ms: float) -> int:
        return bisect.bisect_left(self.t, t_from_ms)

    def count(self, t_from_ms: float = -INF) -> int:
        """Pending records created at or after ``t_from_ms``."""
        if not self.t or self.t[0] >= t_from_ms:
            return self.total
        i = self._first(t_from_ms)
        return sum(h - lo for lo, h in zip(self.lo[i:], self.hi[i:], strict=True))

    def first_id(self, t_from_ms: float = -INF) -> int:
        """The id of the oldest pending record created at or after ``t_from_ms``."""
        i = self._first(t_from_ms)
        return self.lo[i] if i < len(self.lo) else self.next_id

    def take(self, cursor: int, k: int, bound: int) -> tuple[list, int]:
        """Up to ``k`` pending ids in ``[cursor, bound)``, oldest first, as ``(a, b, t)``
        segments; returns them and the cursor after the last."""
        segs = []
        i = bisect.bisect_right(self.hi, cursor)
        while k > 0 and i < len(self.lo):
            a = max(self.lo[i], cursor)
            if a >= bound:
                break
            b = min(self.hi[i], bound, a + k)
            segs.append((a, b, self.t[i]))
            k -= b - a
            cursor = b
            i += 1
        return segs, cursor

    def remove(self, a: int, b: int) -> int:
        """Remove the pending ids in ``[a, b)``; returns how many were still pending."""
        removed = 0
        lo, hi, ts = self.lo, self.hi, self.t
        i = bisect.bisect_right(hi, a)
        while i < len(lo) and lo[i] < b:
            x, y = max(lo[i], a), min(hi[i], b)
            removed += y - x
            if x == lo[i] and y == hi[i]:
                del lo[i], hi[i], ts[i]
                continue
            if x == lo[i]:
                lo[i] = y
            elif y == hi[i]:
                hi[i] = x
            else:  # a hole in the middle: split
                lo.insert(i + 1, y)
                hi.insert(i + 1, hi[i])
                ts.insert(i + 1, ts[i])
                hi[i] = x
                i += 1
            i += 1
        self.total -= removed
        return removed


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


# --------------------------------------------------------------------------- the actors
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


@dataclass
class _Model:
    """Shared state of one run: the store of pending records, the primary, the records."""

    env: simpy.Environment
    sc: Scenario
    store: PendingStore
    db: Database
    rec: Recorder
    in_stock: bool = True
    created: int = 0
    completed_direct: int = 0
    completed_batch: int = 0
    cancelled: int = 0
    retries_failed: int = 0
    peak_backlog: int = 0
    runs: list = field(default_factory=list)
    slow_log: list = field(default_factory=list)
    scans: list = field(default_factory=list)
    arrive: list = field(default_factory=list)
    outcome: list = field(default_factory=list)
    probes: int = 0
    probe_failures: int = 0

    def backlog_changed(self) -> None:
        self.peak_backlog = max(self.peak_backlog, self.store.total)
        self.rec.level("backlog", self.env.now, self.store.total)


def order_source(env: simpy.Environment, m: _Model, rng: np.random.Generator):
    """Orders on the inventory hot key, drawn per tick (a Poisson count). Each creates a record:
    in stock it completes, except a small share that stays pending; out of stock every order
    stays pending ("hotKey无法处理成功留下pending记录")."""
    sc = m.sc
    lam = sc.orders_per_s * sc.order_tick_ms / 1000.0
    while True:
        yield env.timeout(sc.order_tick_ms)
        n = int(rng.poisson(lam))
        k = int(rng.binomial(n, sc.normal_pending_share)) if m.in_stock else n
        m.created += n
        m.completed_direct += n - k
        if k:
            m.store.add(env.now, k)
            m.backlog_changed()
        m.rec.count("orders", env.now, n)
        m.rec.count("pending_created", env.now, k)


def replenisher(env: simpy.Environment, m: _Model):
    """The inventory runs out at ``stockout_ms`` and is replenished at ``replenish_ms``."""
    sc = m.sc
    if math.isinf(sc.stockout_ms):
        return
    yield env.timeout(sc.stockout_ms)
    m.in_stock = False
    if math.isinf(sc.replenish_ms):
        return
    yield env.timeout(sc.replenish_ms - sc.stockout_ms)
    m.in_stock = True


def slow_query(env: simpy.Environment, m: _Model, job: Job, run: BatchRun):
    """A scan's SQL on the primary: it lives until it is done or its primary dies, whether or not
    its batch run still waits ("批处理产生的慢SQL … 累积巨量的慢SQL")."""
    m.scans.append(job)
    outcome = yield job.done
    if outcome != REJECTED:  # refused during a failover: it never ran
        m.slow_log.append((job.submitted_ms, job.started_ms, env.now, outcome, run.start_ms))


def _retry_rows(m: _Model, segs: list) -> None:
    """A chunk committed on the primary: each row is retried on the hot key. Expired rows are
    cancelled; in stock the rest complete; out of stock they stay pending."""
    now = m.env.now
    sc = m.sc
    for a, b, t in segs:
        if now - t > sc.order_expiry_ms:
            m.cancelled += (n := m.store.remove(a, b))
            m.rec.count("cancelled", now, n)
        elif m.in_stock:
            m.completed_batch += (n := m.store.remove(a, b))
            m.rec.count("completed_batch", now, n)
        else:
            m.retries_failed += b - a
    m.backlog_changed()


def batch_run(env: simpy.Environment, m: _Model, row_limit: int):
    """One run of the batch job: scan the pending records in the time range (``LIMIT row_limit``
    if set), then retry the rows read, a chunk per transaction, until done or the run's timeout.

    At the timeout the run gives up - but its SQL does not stop: a scan still running (or waiting
    for a slot) runs on as a :func:`slow_query`; a chunk in flight still commits.
    """
    sc = m.sc
    store, db = m.store, m.db
    deadline = env.timeout(sc.batch_timeout_ms) if math.isfinite(sc.batch_timeout_ms) else env.event()
    give_up_ms = env.now + sc.batch_timeout_ms
    t_from = env.now - sc.scan_range_ms
    backlog = store.count(t_from)
    read = backlog if row_limit == 0 else min(backlog, row_limit)
    work = sc.scan_fixed_ms + sc.scan_ms_per_row * read
    run = BatchRun(start_ms=env.now, row_limit=row_limit, backlog=backlog, rows_read=read, scan_ms=work)
    m.runs.append(run)
    cursor, bound = store.first_id(t_from), store.next_id  # the scan's snapshot
    scan = db.submit(SCAN, work)
    env.process(slow_query(env, m, scan, run))
    yield scan.done | deadline
    if not scan.done.triggered:
        run.outcome, run.end_ms = "timeout", env.now
        return
    if scan.done.value != OK:
        run.outcome, run.end_ms = scan.done.value, env.now
        return
    run.scan_end_ms = env.now
    while run.rows_retried < read:
        if env.now >= give_up_ms:  # (a Timeout counts as triggered from its creation)
            run.outcome = "timeout"
            break
        segs, cursor = store.take(cursor, min(sc.chunk_rows, read - run.rows_retried), bound)
        n = sum(b - a for a, b, _ in segs)
        if n == 0:
            break
        chunk = db.submit(PROCESS, n * sc.process_ms_per_row)
        chunk.done.callbacks.append(lambda ev, segs=segs: ev.value == OK and _retry_rows(m, segs))
        yield chunk.done | deadline
        if not chunk.done.triggered:
            run.outcome = "timeout"
            break
        if chunk.done.value != OK:
            run.outcome = chunk.done.value
            break
        run.rows_retried += n
    if run.outcome == "running":
        run.outcome = "done"
    run.end_ms = env.now


def batch_job(env: simpy.Environment, m: _Model):
    """The scheduler: a :func:`batch_run` every ``batch_period_ms``, whether or not the last one
    finished. Fix 2 stops starting runs at ``stop_batch_ms``; fix 3 starts them again at
    ``limit_from_ms`` with ``fix_row_limit``."""
    sc = m.sc
    while True:
        yield env.timeout(sc.batch_period_ms)
        now = env.now
        if now >= sc.limit_from_ms:
            env.process(batch_run(env, m, sc.fix_row_limit))
        elif now < sc.stop_batch_ms:
            env.process(batch_run(env, m, sc.row_limit))


def business_query(env: simpy.Environment, m: _Model, work_ms: float):
    """One business query: waits for the answer or its client timeout, whichever comes first."""
    sc = m.sc
    i = len(m.arrive)
    t0 = env.now
    m.arrive.append(t0)
    m.outcome.append(IN_SYSTEM)
    m.rec.count("offered", t0)
    job = m.db.submit(BUSINESS, work_ms)
    timer = env.timeout(sc.business_timeout_ms) if math.isfinite(sc.business_timeout_ms) else env.event()
    yield job.done | timer
    if job.done.triggered:
        if job.done.value == OK:
            m.outcome[i] = SERVED
            m.rec.count("served", env.now)
            m.rec.count("latency_sum", env.now, env.now - t0)
        else:
            m.outcome[i] = REFUSED
            m.rec.count("rejected", env.now)
    else:
        m.db.withdraw(job)
        m.outcome[i] = TIMED_OUT
        m.rec.count("timeouts", env.now)


def business_traffic(env: simpy.Environment, m: _Model, rng: np.random.Generator):
    """The other business on the same primary: Poisson queries with exponential work."""
    sc = m.sc
    if sc.business_per_s <= 0:
        return
    gap = 1000.0 / sc.business_per_s
    while True:
        yield env.timeout(rng.exponential(gap))
        env.process(business_query(env, m, rng.exponential(sc.business_ms)))


def health_checker(env: simpy.Environment, m: _Model):
    """Probes the primary every ``health_interval_ms``; after ``health_failures`` probes in a row
    without an answer within ``health_timeout_ms`` it declares the primary dead and fails over
    ("数据库整体被拖垮导致主从切换"), then waits for the new primary."""
    sc, db = m.sc, m.db
    fails = 0
    while True:
        yield env.timeout(sc.health_interval_ms)
        m.probes += 1
        probe = db.submit(PROBE, sc.probe_ms)
        yield probe.done | env.timeout(sc.health_timeout_ms)
        if probe.done.triggered and probe.done.value == OK:
            fails = 0
            continue
        db.withdraw(probe)
        fails += 1
        m.probe_failures += 1
        if fails >= sc.health_failures:
            fails = 0
            db.fail_over()
            yield env.timeout(sc.failover_ms)


# --------------------------------------------------------------------------- a run
@dataclass
class Run:
    """The result of :func:`simulate`: windowed arrays, both ledgers, the failovers, every batch
    run and every slow scan."""

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

    def summary(self) -> dict:
        outcomes = [r.outcome for r in self.runs]
        done = [r for r in self.runs if r.outcome == "done"]
        led = self.ledger
        return {
            "failovers": len(self.failovers_ms),
            "first_failover_s": float(self.failovers_ms[0] / 1000) if len(self.failovers_ms) else math.nan,
            "peak_backlog": self.peak_backlog,
            "backlog_end": self.records.pending,
            "peak_slow_sql": self.peak_slow_sql,
            "runs": len(self.runs),
            "runs_done": outcomes.count("done"),
            "runs_timed_out": outcomes.count("timeout"),
            "runs_killed": outcomes.count(KILLED),
            "slow_sql_killed": sum(1 for s in self.slow_sql if s[3] == KILLED),
            "max_done_run_ms": max((r.end_ms - r.start_ms for r in done), default=math.nan),
            "completed_by_batch": self.records.extra["completed_by_batch"],
            "cancelled": self.records.cancelled,
            "availability": led.served / led.arrived if led.arrived else math.nan,
            "truncated": self.truncated,
        }


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, max_events: int = 3_000_000) -> Run:
    """Run the incident with SimPy for ``scenario.horizon_ms`` and return a :class:`Run`.

    Bounded for any parameters: at most ``max_events`` SimPy events (``run.truncated``). Same
    ``seed``, same result; each actor draws from its own stream, so variants of a scenario see
    the same orders and business queries.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a pending_records.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    max_events = check_int("max_events", max_events, low=1)
    sc = scenario
    rng_orders, rng_business = make_rng(seed).spawn(2)
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "served", "timeouts", "rejected"),
        weighted=("orders", "pending_created", "completed_batch", "cancelled", "latency_sum"),
        levels=("backlog", "slow_sql", "busy", "db_queue"),
    )
    m = _Model(env=env, sc=sc, store=PendingStore(), db=Database(env, sc.db_slots, sc.failover_ms, rec), rec=rec)
    if sc.initial_backlog:
        m.store.add(0.0, sc.initial_backlog)
        m.created += sc.initial_backlog
        m.backlog_changed()
    env.process(order_source(env, m, rng_orders))
    env.process(replenisher(env, m))
    env.process(batch_job(env, m))
    env.process(business_traffic(env, m, rng_business))
    env.process(health_checker(env, m))
    status = run_bounded(env, until_ms=sc.horizon_ms, max_events=max_events)
    t_end = status.t_end_ms if status.truncated else sc.horizon_ms
    status = RunStatus(t_end_ms=t_end, events=status.events, truncated=status.truncated)
    rec.close(t_end)

    w = rec.arrays(per_second=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w["latency_ms"] = np.where(w["served"] > 0, w["latency_sum"] / np.maximum(w["served"], 1e-300), np.nan)
    w["goodput"] = w["served"]
    outcome = np.asarray(m.outcome, dtype=np.int8)
    ledger = Ledger(
        arrived=len(outcome),
        served=int((outcome == SERVED).sum()),
        timed_out=int((outcome == TIMED_OUT).sum()),
        rejected=int((outcome == REFUSED).sum()),
        in_system=int((outcome == IN_SYSTEM).sum()),
        extra={"probes": m.probes, "probe_failures": m.probe_failures},
    )
    records = RecordLedger(
        created=m.created,
        completed=m.completed_direct + m.completed_batch,
        pending=m.store.total,
        cancelled=m.cancelled,
        extra={
            "completed_at_once": m.completed_direct,
            "completed_by_batch": m.completed_batch,
            "failed_retries": m.retries_failed,
        },
    )
    # scans still on the primary at the end: logged as running to the end
    slow = list(m.slow_log) + [
        (j.submitted_ms, j.started_ms, t_end, "running", math.nan) for j in m.scans if j.state in ("running", "queued")
    ]
    slow.sort(key=lambda x: x[0])
    fo = np.asarray(m.db.failovers, dtype=float).reshape(-1, 2)
    return Run(
        scenario=sc,
        seed=seed,
        status=status,
        windows=w,
        ledger=ledger,
        records=records,
        failovers_ms=fo[:, 0],
        promoted_ms=fo[:, 1],
        runs=m.runs,
        slow_sql=slow,
        peak_backlog=m.peak_backlog,
        peak_slow_sql=m.db.peak_slow,
        probes=m.probes,
        probe_failures=m.probe_failures,
    )


def measure_batch(sc: Scenario, backlog: int, row_limit: int = 0, seed: int = 0) -> BatchRun:
    """One batch run, measured: ``backlog`` pending records on an idle primary (no orders, no
    business, no timeout), one run. Returns its :class:`BatchRun` (``end_ms − start_ms`` is the
    batch time, ``scan_end_ms − start_ms`` the scan time)."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    b = check_int("backlog", backlog, low=0, high=MAX_ROWS)
    k = check_int("row_limit", row_limit, low=0, high=MAX_ROWS)
    need = batch_time_ms(b, k, sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row)
    period = need + 100.0
    probe = replace(
        sc,
        orders_per_s=0.0,
        business_per_s=0.0,
        initial_backlog=b,
        row_limit=k,
        stockout_ms=INF,
        replenish_ms=INF,
        order_expiry_ms=INF,
        batch_timeout_ms=INF,
        health_interval_ms=1e8,
        batch_period_ms=period,  # one run only: the second would start after the horizon
        horizon_ms=period + need + 0.5,
        window_ms=period + need + 0.5,
        order_tick_ms=3_600_000.0,
    )
    run = simulate(probe, seed)
    return run.runs[0]


# --------------------------------------------------------------------------- figures
def _failover_lines(ax, run: Run, label: bool = True) -> None:
    for j, t in enumerate(run.failovers_ms / 1000.0):
        ax.axvline(t, color=COLORS["timeouts"], ls="--", lw=1.2, label="failover" if (label and j == 0) else None)


def _windows_of(sc: Scenario, horizon_s: float) -> tuple[list, list]:
    trig = []
    if math.isfinite(sc.stockout_ms):
        trig.append((sc.stockout_ms / 1000, min(sc.replenish_ms / 1000, horizon_s), "out of stock"))
    inter = []
    if math.isfinite(sc.stop_batch_ms) and sc.stop_batch_ms < min(sc.limit_from_ms, sc.horizon_ms):
        inter.append((sc.stop_batch_ms / 1000, min(sc.limit_from_ms / 1000, horizon_s), "batch stopped"))
    return trig, inter


def plot_timeline(run: Run, axes=None, show_starve: bool = True):
    """The seed's chain against time (s), three panels: pending records; slow scans on the primary
    against its slots; business queries answered in time, timed out and refused per second.
    Shaded: out of stock (grey), batch stopped (blue); dashed red: failovers. ``show_starve``
    draws the scan count from which the business loses queries (:func:`starve_scans`; the
    notebook's first figure leaves it out, because a predict question asks for it)."""
    if axes is None:
        _, axes = new_figure(3, 1, height=2.1, sharex=True)
    sc = run.scenario
    w = run.windows
    t = w["t"] + sc.window_ms / 2000.0
    horizon_s = sc.horizon_ms / 1000
    trig, inter = _windows_of(sc, horizon_s)
    a0, a1, a2 = axes
    a0.plot(t, w["backlog"] / 1000, color=COLORS["queue"], label="pending records")
    decorate(a0, ylabel="pending (k rows)", legend=False, ylim=(0, None))
    a1.plot(t, w["slow_sql"], color=COLORS["queue"], label="slow scans on the primary")
    a1.axhline(sc.db_slots, color=COLORS["capacity"], ls="--", lw=1.5, label=f"slots ({sc.db_slots})")
    if show_starve:
        a1.axhline(
            starve_scans(sc.db_slots, sc.business_slots), color=COLORS["capacity"], ls=":", lw=1.5,
            label="from here the business loses queries",
        )
    decorate(a1, ylabel="slow scans", legend=False, ylim=(0, None))
    a2.plot(t, w["offered"], color=COLORS["offered"], lw=1.2, label="business queries")
    a2.plot(t, w["served"], color=COLORS["goodput"], label="answered in time")
    a2.plot(t, w["timeouts"], color=COLORS["timeouts"], label="timed out")
    a2.plot(t, w["rejected"], color=COLORS["rejected"], label="refused (failover)")
    decorate(a2, xlabel="time (s)", ylabel="queries/s", legend=False, ylim=(0, None))
    for ax in axes:
        shade(ax, trig, kind="trigger")
        shade(ax, inter, kind="intervention")
        _failover_lines(ax, run, label=ax is a0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.set_xlim(0, horizon_s)
    return axes


def plot_slow_sql(run: Run, t0_s: float, t1_s: float, ax=None, max_rows: int = 24):
    """Each scan submitted between ``t0_s`` and ``t1_s`` (one row per batch run): pale = waiting
    for a slot, solid = running (purple: finished or still running, red: killed by a failover);
    the black tick is where its batch run gave up while the scan ran on. Dashed red: failovers;
    dotted grey: a new primary takes over. Time in seconds."""
    rows = [s for s in run.slow_sql if t0_s * 1000 <= s[0] < t1_s * 1000][:max_rows]
    if not rows:
        raise ValueError(f"t0_s={t0_s!r}, t1_s={t1_s!r}: no scan was submitted in this window")
    sc = run.scenario
    bars, colors = [], {}
    for j, (_sub, start, stop, outcome, _) in enumerate(rows):
        name = f"run {j + 1}"
        if not math.isnan(start):
            bars.append((name, start / 1000, stop / 1000))
        colors[name] = COLORS["timeouts"] if outcome == KILLED else COLORS["queue"]
    if ax is None:
        _, ax = new_figure(height=0.8 + 0.22 * max(1, len(rows)))
    lock_gantt(bars, ax=ax, colors=colors, time_unit="s")
    ypos = {name: i for i, name in enumerate(dict.fromkeys(b[0] for b in bars))}
    waited = gave_up = False
    for j, (sub, start, stop, _outcome, _) in enumerate(rows):
        y = ypos.get(f"run {j + 1}", j)
        wait_end = start if not math.isnan(start) else stop
        if wait_end > sub:
            waited = True
            ax.broken_barh([(sub / 1000, (wait_end - sub) / 1000)], (y - 0.2, 0.4), facecolors=COLORS["queue"], alpha=0.3, lw=0)
        if sub + sc.batch_timeout_ms < stop:  # the run gave up, its scan ran on
            gave_up = True
            ax.plot([(sub + sc.batch_timeout_ms) / 1000] * 2, [y - 0.4, y + 0.4], color="black", lw=1.5)
    t_lo, t_hi = t0_s * 1000, max(r[2] for r in rows)
    for t in run.failovers_ms:
        if t_lo <= t <= t_hi:
            ax.axvline(t / 1000, color=COLORS["timeouts"], ls="--", lw=1.2)
    for t in run.promoted_ms:
        if t_lo <= t <= t_hi:
            ax.axvline(t / 1000, color=COLORS["capacity"], ls=":", lw=1.5)
    from matplotlib.patches import Patch

    outcomes = {r[3] for r in rows}
    handles = []
    if waited:
        handles.append(Patch(color=COLORS["queue"], alpha=0.3, label="waiting for a slot"))
    if outcomes - {KILLED}:
        handles.append(Patch(color=COLORS["queue"], label="running"))
    if KILLED in outcomes:
        handles.append(Patch(color=COLORS["timeouts"], label="killed by the failover"))
    if gave_up:
        handles.append(mpl_line("black", "its run gave up"))
    handles.append(mpl_line(COLORS["timeouts"], "failover", ls="--"))
    handles.append(mpl_line(COLORS["capacity"], "new primary", ls=":"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_xlim(t0_s - 5, t_hi / 1000 + 5)
    ax.set_ylabel("batch run")
    return ax


def mpl_line(color: str, label: str, ls: str = "-"):
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, ls=ls, lw=1.5, label=label)


def plot_fixes(runs: dict, axes=None):
    """Small multiples, one row per scenario (label → :class:`Run`): pending records (left, each
    row on its own scale) and business queries answered in time per second (right) against time
    (s); failovers dashed red; shaded grey: out of stock; shaded blue: no batch run starts (fix 2,
    from ``stop_batch_ms``); solid black: runs start again with the row limit (fix 3, from
    ``limit_from_ms``). A legend above the panels names each mark."""
    n = len(runs)
    if n == 0:
        raise ValueError("runs must hold at least one labelled run, got {}")
    if axes is None:
        fig, axes = new_figure(n, 2, height=1.35, sharex=True, squeeze=False)
        fig.set_size_inches(10.0, 1.35 * n)
    gmax = max(float(np.nanmax(r.windows["offered"])) for r in runs.values()) * 1.15 or 1.0
    for i, (label, run) in enumerate(runs.items()):
        sc = run.scenario
        w = run.windows
        t = w["t"] + sc.window_ms / 2000.0
        trig, inter = _windows_of(sc, sc.horizon_ms / 1000)
        a0, a1 = axes[i]
        a0.plot(t, w["backlog"] / 1000, color=COLORS["queue"])
        a1.plot(t, w["served"], color=COLORS["goodput"])
        for ax in (a0, a1):
            shade(ax, trig, kind="trigger")
            shade(ax, inter, kind="intervention")
            _failover_lines(ax, run, label=False)
            if math.isfinite(sc.limit_from_ms) and sc.limit_from_ms < sc.horizon_ms:
                ax.axvline(sc.limit_from_ms / 1000, color="black", lw=1.5)
        a0.set_ylim(0, max(1.0, float(np.nanmax(w["backlog"])) / 1000 * 1.15))
        a1.set_ylim(0, gmax)
        a1.text(1.04, 0.6, label, transform=a1.transAxes, va="center", fontsize=9)
        a1.text(1.04, 0.3, f"{len(run.failovers_ms)} failovers", transform=a1.transAxes, va="center",
                fontsize=8, color=COLORS["timeouts"] if len(run.failovers_ms) else COLORS["goodput"])
        a0.set_xlim(0, sc.horizon_ms / 1000)
    axes[n // 2, 0].set_ylabel("pending (k rows)")
    axes[n // 2, 1].set_ylabel("answered in time/s")
    axes[-1, 0].set_xlabel("time (s)")
    axes[-1, 1].set_xlabel("time (s)")
    from matplotlib.patches import Patch

    handles = [
        Patch(color=COLORS["trigger"], alpha=0.35, label="out of stock"),
        Patch(color=COLORS["intervention"], alpha=0.35, label="batch stopped: no run starts (fix 2)"),
        mpl_line("black", "runs restart with the row limit (fix 3)"),
        mpl_line(COLORS["timeouts"], "failover", ls="--"),
    ]
    axes[0, 0].figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=8,
                             frameon=False)
    return axes


def plot_scan_vs_backlog(sc: Scenario, backlogs, row_limit: int | None = None, measured: dict | None = None, ax=None):
    """Batch time on an idle primary against the backlog: the seed's time-range-only run (solid)
    and a row-limited run (dashed), closed forms; dots: measured runs (``measured`` maps
    ``row_limit → (backlogs, times_ms)``). Grey lines: the run's timeout and the scan time at which
    the pile of slow scans fills the primary long enough to get it failed over
    (:func:`collapse_backlog`). Backlog in thousands of rows,
    time in seconds."""
    k = sc.fix_row_limit if row_limit is None else check_int("row_limit", row_limit, low=1)
    b = np.asarray([check_number("backlogs", x, low=0.0) for x in backlogs], dtype=float)
    if ax is None:
        _, ax = new_figure(height=3.4)
    a, s, p = sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row
    full = np.array([batch_time_ms(x, 0, a, s, p) for x in b]) / 1000
    scan = np.array([scan_time_ms(x, 0, a, s) for x in b]) / 1000
    lim = np.array([batch_time_ms(x, k, a, s, p) for x in b]) / 1000
    ax.plot(b / 1000, full, color=COLORS["latency"], label="time range only: scan + retry")
    ax.plot(b / 1000, scan, color=COLORS["latency"], lw=1.2, ls=":", label="time range only: scan alone")
    ax.plot(b / 1000, lim, color=COLORS["latency"], ls="--", label=f"row limit {k}: scan + retry")
    for key, (bx, tm) in (measured or {}).items():
        ax.plot(np.asarray(bx) / 1000, np.asarray(tm) / 1000, "o", color=COLORS["latency"], ms=5,
                mfc="white" if key else COLORS["latency"], label="measured (simulation)" if key == 0 else None)
    if math.isfinite(sc.batch_timeout_ms):
        ax.axhline(sc.batch_timeout_ms / 1000, color=COLORS["capacity"], ls="--", lw=1.5, label="the run's timeout")
    fill_s = ((sc.db_slots - 1) * sc.batch_period_ms + detection_ms(sc)) / 1000
    ax.axhline(fill_s, color=COLORS["capacity"], ls="-.", lw=1.5, label="scan time: slots full long enough to fail over")
    ax.set_yscale("symlog", linthresh=10.0)
    decorate(ax, xlabel="pending records (k rows)", ylabel="batch time (s)", legend=False, ylim=(0, None), xlim=(0, b.max() / 1000))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return ax


def plot_consumption(sc: Scenario, backlogs, row_limit: int | None = None, ax=None):
    """Consumption (rows/s the batch removes, in stock, idle primary) against the backlog, closed
    form: the seed's time-range-only run (solid) rises, peaks where one run just fits its timeout,
    and falls to zero once the scan alone outlasts it; a row-limited run (dashed) stays flat.
    Grey: production while out of stock (every order) and in stock (the occasional pending).
    Log y-axis; backlog in thousands of rows."""
    k = sc.fix_row_limit if row_limit is None else check_int("row_limit", row_limit, low=1)
    b = np.asarray([check_number("backlogs", x, low=0.0) for x in backlogs], dtype=float)
    if ax is None:
        _, ax = new_figure(height=3.2)
    full = np.array([consumption_per_s(x, sc, 0) for x in b])
    lim = np.array([consumption_per_s(x, sc, k) for x in b])
    ax.plot(b / 1000, np.where(full > 0, full, np.nan), color=COLORS["goodput"], label="consumption, time range only")
    ax.plot(b / 1000, np.where(lim > 0, lim, np.nan), color=COLORS["goodput"], ls="--", label=f"consumption, row limit {k}")
    ax.axhline(sc.stockout_pending_per_s, color=COLORS["capacity"], ls="--", lw=1.5,
               label=f"production, out of stock: {sc.stockout_pending_per_s:.0f} rows/s (every order)")
    ax.axhline(sc.normal_pending_per_s, color=COLORS["capacity"], ls=":", lw=1.5,
               label=f"production, in stock: {sc.normal_pending_per_s:.1f} rows/s (the occasional pending)")
    zero = scan_timeout_backlog(sc.batch_timeout_ms, sc.scan_fixed_ms, sc.scan_ms_per_row)
    ax.axvline(zero / 1000, color=COLORS["timeouts"], lw=1.2, ls="-.", label="scan > timeout: consumption 0")
    ax.set_yscale("log")
    if b.max() > zero:
        # zero cannot be drawn on a log axis: say so where the solid line stops
        ax.text(zero / 1000 + 0.01 * b.max() / 1000, 10.0, "time range only:\nconsumption 0 from here\n(off the log axis)",
                color=COLORS["goodput"], fontsize=8, va="center")
    decorate(ax, xlabel="pending records (k rows)", ylabel="rows/s", legend=False, xlim=(0, b.max() / 1000))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return ax


def plot_business_loss(scan_ms, lost, sc: Scenario = SEED_INCIDENT, ax=None):
    """The other business's lost share (timed out or refused, in %) against the scan time (s) at a
    constant backlog: ``lost`` has one row per scan time and one column per seed (line: mean,
    band: min to max over the seeds). Dotted: the closed form's threshold ``(c − ⌊ρ⌋ − 1) P``;
    dashed: the next steps, where the peak count of scans reaches ``n* + 1``, … (one slot fewer each)."""
    x = np.asarray([check_number("scan_ms", v, low=0.0) for v in scan_ms], dtype=float) / 1000
    y = 100 * np.asarray(lost, dtype=float)
    if y.ndim != 2 or y.shape[0] != len(x):
        raise ValueError(f"lost must have one row per scan time ({len(x)}), got shape {y.shape}")
    if ax is None:
        _, ax = new_figure(height=3.0)
    ax.fill_between(x, y.min(axis=1), y.max(axis=1), color=COLORS["timeouts"], alpha=0.25, lw=0,
                    label=f"min to max over {y.shape[1]} seeds")
    ax.plot(x, y.mean(axis=1), color=COLORS["timeouts"], marker="o", ms=4, label="mean")
    n = starve_scans(sc.db_slots, sc.business_slots)
    ax.axvline((n - 1) * sc.batch_period_ms / 1000, color=COLORS["capacity"], ls=":", lw=1.5,
               label=f"closed form: (c − ⌊ρ⌋ − 1) P, {n} scans at the peak, {sc.db_slots - n} slots left")
    # past S = n P the peak count is n + 1: one slot fewer again, so the loss steps up
    for j in range(n + 1, sc.db_slots):
        x_j = (j - 1) * sc.batch_period_ms / 1000
        if x_j <= x.max():
            ax.axvline(x_j, color=COLORS["capacity"], ls="--", lw=1.0,
                       label=f"(c − ⌊ρ⌋) P: {j} scans at the peak, {sc.db_slots - j} slot{'s' if sc.db_slots - j != 1 else ''} left"
                       if j == n + 1 else None)
    decorate(ax, xlabel="scan time S (s)", ylabel="business queries lost (%)", legend=False, ylim=(0, None))
    ax.legend(loc="upper left", fontsize=8)
    return ax


# --------------------------------------------------------------------------- widget
def explore(
    replenish_s: float = SEED_INCIDENT.replenish_ms / 1000,
    row_limit: int = 0,
    batch_period_s: float = SEED_INCIDENT.batch_period_ms / 1000,
    batch_timeout_s: float = SEED_INCIDENT.batch_timeout_ms / 1000,
    db_slots: int = SEED_INCIDENT.db_slots,
    seed: int = 0,
    horizon_s: float = 2400.0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: the seed's incident with the inventory replenished at
    ``replenish_s``, a row limit (0: none), the batch's period and timeout and the primary's slots.
    Draws :func:`plot_timeline` and returns the run's summary with the closed forms beside it."""
    r = check_number("replenish_s", replenish_s, low=SEED_INCIDENT.stockout_ms / 1000, allow_inf=True)
    sc = replace(
        SEED_INCIDENT,
        replenish_ms=r * 1000.0,
        row_limit=check_int("row_limit", row_limit, low=0),
        batch_period_ms=check_number("batch_period_s", batch_period_s, low=0.1) * 1000.0,
        batch_timeout_ms=check_number("batch_timeout_s", batch_timeout_s, low=0.0, low_open=True) * 1000.0,
        db_slots=check_int("db_slots", db_slots, low=1),
        horizon_ms=check_number("horizon_s", horizon_s, low=1.0) * 1000.0,
    )
    run = simulate(sc, seed, max_events=1_500_000)
    out = run.summary()
    cf = closed_forms(sc)
    out.update({f"cf_{k}": v for k, v in cf.items()})
    if plot:
        import matplotlib.pyplot as plt

        axes = plot_timeline(run)
        axes[0].figure.tight_layout()
        plt.show()
    return out


def explore_controls() -> dict:
    """The widget's sliders (for ``ipywidgets.interactive(explore, **explore_controls())``), in
    the order: replenish time, row limit, batch period, batch timeout, database slots."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    lay = w.Layout(width="420px")
    return {
        "replenish_s": w.FloatSlider(value=600.0, min=60.0, max=1800.0, step=30.0, description="replenished at (s)", style=style, layout=lay),
        "row_limit": w.IntSlider(value=0, min=0, max=10_000, step=500, description="row limit (0: none)", style=style, layout=lay),
        "batch_period_s": w.FloatSlider(value=30.0, min=10.0, max=120.0, step=5.0, description="batch period (s)", style=style, layout=lay),
        "batch_timeout_s": w.FloatSlider(value=30.0, min=5.0, max=120.0, step=5.0, description="batch timeout (s)", style=style, layout=lay),
        "db_slots": w.IntSlider(value=8, min=2, max=32, step=1, description="database slots", style=style, layout=lay),
        "seed": w.fixed(0),
        "horizon_s": w.fixed(2400.0),
        "plot": w.fixed(True),
    }
