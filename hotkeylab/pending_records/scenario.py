"""06 · The scenario: the pending-records table, the batch job and the primary of seed 000's second incident
(each preset line quotes its seed sentence or says the value is assumed), and the fixes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .. import capacity
from ..validate import check_int, check_number

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
