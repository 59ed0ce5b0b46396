"""Every model of the course in one table, for the contract suite (tests/test_contract.py).

Each :class:`Entry` names a model's ``simulate`` function, its seed preset and a *quick* variant
(a shorter horizon, so a contract check runs in well under a second), plus the field that sets the
load. The contract every entry keeps (GUIDE §3): same seed, same result; the ledger balances for
any valid parameters; bad input raises ValueError naming the parameter; every run ends within its
event cap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Entry", "entries"]


@dataclass(frozen=True)
class Entry:
    name: str  # "<lesson>.<model>"
    simulate: Callable  # simulate(scenario, seed) -> run with .ledger
    preset: Any  # the seed preset (a frozen dataclass)
    quick: dict = field(default_factory=dict)  # replace() arguments for a fast run
    load: str | None = None  # the field that sets the offered load, if any

    def scenario(self, **changes):
        return replace(self.preset, **{**self.quick, **changes})

    def run(self, seed: int = 0, **changes):
        return self.simulate(self.scenario(**changes), seed=seed)


def entries() -> list[Entry]:
    """All models (imported here, lazily, so importing the registry is cheap)."""
    from . import (
        fault_tolerance as ft,
    )
    from . import (
        gateway_cascade,
        hot_row,
        lock_timer,
        lost_timeouts,
        metastable,
        pending_records,
        routing,
    )

    return [
        Entry("01.hot_row.threads", hot_row.simulate_threads, hot_row.SEED_ROW, {}, None),
        Entry("01.hot_row.group_commit", hot_row.simulate_group_commit, hot_row.SEED_GROUP_COMMIT,
              {"horizon_ms": 5_000.0}, "rate_per_s"),
        Entry("01.hot_row.open_loop", hot_row.simulate_open_loop, hot_row.SEED_LOCK,
              {"horizon_ms": 10_000.0}, "rate_per_s"),
        Entry("03.routing.transient", routing.simulate_transient, routing.SEED_TRANSIENT, {}, None),
        Entry("03.routing.lock", routing.simulate_lock, routing.SEED_INCIDENT,
              {"horizon_ms": 20_000.0}, "rate_per_s"),
        Entry("04.metastable", metastable.simulate, metastable.SEED_INCIDENT, {}, "user_rate_per_s"),
        Entry("05.lock_timer", lock_timer.simulate, lock_timer.SEED_INCIDENT,
              {"horizon_ms": 2_000.0}, "offered_per_s"),
        Entry("06.pending_records", pending_records.simulate, pending_records.SEED_INCIDENT,
              {"horizon_ms": 600_000.0}, "orders_per_s"),
        Entry("07.gateway_cascade", gateway_cascade.simulate, gateway_cascade.SEED_INCIDENT, {}, None),
        Entry("08.lost_timeouts", lost_timeouts.simulate, lost_timeouts.SEED_INCIDENT,
              {"horizon_ms": 120_000.0}, "rate_per_s"),
        Entry("09.retry", ft.simulate_retry, ft.SEED_RETRY, {}, "users_per_s"),
        Entry("09.failover", ft.simulate_failover, ft.SEED_FAILOVER, {}, "rate_per_s"),
        Entry("09.ejection", ft.simulate_ejection, ft.SEED_EJECTION, {}, "rate_per_s"),
        Entry("09.pool", ft.simulate_pool, ft.SEED_POOL, {}, "rate_per_s"),
        Entry("09.delivery", ft.simulate_delivery, ft.SEED_DELIVERY, {}, "users_per_s"),
        Entry("09.report", ft.simulate_report, ft.SEED_REPORT, {}, "rate_per_s"),
        Entry("09.isolation", ft.simulate_isolation, ft.SEED_ISOLATION, {}, "query_per_s"),
        Entry("09.gift_config", ft.simulate_gift_config, ft.SEED_GIFT_CONFIG, {}, "claims_per_s"),
    ]
