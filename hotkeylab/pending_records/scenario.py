"""06 · The scenario: the pending-records table, the batch job and the primary of seed 000's second incident
(each preset line quotes its seed sentence or says the value is assumed), and the fixes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .. import capacity
from ..validate import check_fields, check_number, param

__all__ = [
    "Scenario",
    "SEED_INCIDENT",
    "HEALTHY",
    "FIXES",
    "fix_scenarios",
    "INF",
    "MAX_RATE_PER_S",
    "MAX_ROWS",
    "MAX_HORIZON_MS",
    "MAX_EVENTS",
    "SCAN",
    "PROCESS",
    "BUSINESS",
    "PROBE",
    "OK",
    "KILLED",
    "REJECTED",
    "IN_SYSTEM",
    "SERVED",
    "TIMED_OUT",
    "REFUSED",
]

INF = math.inf
MAX_RATE_PER_S = 1_000_000.0
MAX_ROWS = 100_000_000
MAX_HORIZON_MS = 1e9
#: The event cap's upper end: one run of this many SimPy events ends in about 6 s on this 2-core
#: machine when idle (9 to 13 us an event at the largest loads and horizons; about 2 x that when
#: the machine is loaded) and holds under 200 MB; the seed's hour takes about 500 000. (A run also
#: stops once the primary's queue passes ``model.MAX_ON_PRIMARY``: waiting queries, not events,
#: are what fill memory.)
MAX_EVENTS = 600_000

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
    orders_per_s: float = param(600.0, low=0.0, high=MAX_RATE_PER_S)  # orders/s on the hot key (Poisson)
    normal_pending_share: float = param(0.001, kind="probability")  # share of in-stock orders that still end pending
    stockout_ms: float = param(60_000.0, low=0.0, allow_inf=True)  # the inventory runs out (inf: never)
    replenish_ms: float = param(600_000.0, low=0.0, allow_inf=True)  # replenished (inf: never; >= stockout_ms)
    order_expiry_ms: float = param(1_800_000.0, low=0.0, low_open=True, allow_inf=True)  # older pending is cancelled
    initial_backlog: int = param(0, kind="int", low=0, high=MAX_ROWS)  # pending records at t = 0 (created at t = 0)
    order_tick_ms: float = param(1000.0, low=1.0, high=3_600_000.0)  # orders are drawn per tick (Poisson count)
    # the batch job that re-scans pending records
    batch_period_ms: float = param(30_000.0, low=100.0, high=1e8)  # a run starts every period
    batch_timeout_ms: float = param(30_000.0, low=0.0, low_open=True, allow_inf=True)  # a run gives up (inf: never)
    scan_range_ms: float = param(86_400_000.0, low=0.0, low_open=True, allow_inf=True)  # records of the last …
    row_limit: int = param(0, kind="int", low=0, high=MAX_ROWS)  # rows per run (0: none, the seed's query)
    scan_fixed_ms: float = param(100.0, low=0.0, high=1e8)  # a scan's fixed cost on the primary
    scan_ms_per_row: float = param(1.0, low=0.0, high=1e4)  # a scan's cost per pending row it reads
    process_ms_per_row: float = param(capacity.lock_hold_ms(0.5), low=0.0, high=1e4)  # retrying one record
    chunk_rows: int = param(200, kind="int", low=1, high=MAX_ROWS)  # rows retried per transaction (a chunk)
    # the fixes, in the seed's order (1. replenish is replenish_ms)
    stop_batch_ms: float = param(INF, low=0.0, allow_inf=True)  # 2. no runs start from then on …
    limit_from_ms: float = param(INF, low=0.0, allow_inf=True)  # 3. … until they resume with fix_row_limit
    fix_row_limit: int = param(5000, kind="int", low=1, high=MAX_ROWS)  # the row limit of fix 3
    # the primary
    db_slots: int = param(8, kind="int", low=1, high=10_000)  # queries the primary runs at once (CPU slots)
    business_per_s: float = param(20.0, low=0.0, high=MAX_RATE_PER_S)  # other business queries/s (Poisson)
    business_ms: float = param(100.0, low=0.0, low_open=True, high=1e7)  # mean work of one (exponential)
    business_timeout_ms: float = param(1000.0, low=0.0, low_open=True, allow_inf=True)  # its client gives up
    # the health checker and failover
    health_interval_ms: float = param(5000.0, low=10.0, high=1e8)  # a probe every …
    health_timeout_ms: float = param(2000.0, low=0.0, low_open=True, high=1e8)  # unanswered this long: failed
    probe_ms: float = param(1.0, low=0.0, low_open=True, high=1e6)  # the probe's work on the primary
    health_failures: int = param(3, kind="int", low=1, high=1000)  # failed probes in a row: primary dead
    failover_ms: float = param(30_000.0, low=0.0, high=1e8)  # the database is unavailable this long
    # the run: simulated time, width of the windows in Run.windows, and the event cap
    horizon_ms: float = param(3_600_000.0, low=0.0, low_open=True, high=MAX_HORIZON_MS)
    window_ms: float = param(10_000.0, low=0.0, low_open=True)  # <= horizon_ms
    max_events: int = param(MAX_EVENTS, kind="int", low=1, high=MAX_EVENTS)

    def __post_init__(self):
        check_fields(self)
        check_number("replenish_ms", self.replenish_ms, low=self.stockout_ms, allow_inf=True)
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
