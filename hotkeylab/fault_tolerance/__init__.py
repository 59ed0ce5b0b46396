"""09 · Fault tolerance: retries, failover, ejection, timeouts, idempotency, degradation and
isolation, from an 800-million-request web system (seed 003).

The seed (*亿级Web系统的高容错性实践*) is an engineer's account of QQ's activity platform (AMS),
grown from a million to 800 million requests a day. It lists the practices that let the system
"put out its own fires". Each one gets a small SimPy model in its own module, a closed form and a
test that they agree, in the seed's order:

1. :mod:`.retry` - simple retry, and a success-rate gate that retries only while the backend is healthy.
2. :mod:`.failover` - the primary/backup switch: a connect timeout in latency; both fall to a surge.
3. :mod:`.ejection` - the router L5 ejects a machine below 50% success; under overload ejection
   concentrates the load, and Envoy's panic threshold stops the cascade.
4. :mod:`.pool` - timeouts and worker pools: ``capacity = workers / holding``.
5. :mod:`.delivery` - timeout-success and duplicate gifts under four protections.
6. :mod:`.report` - a non-core reporting step bypassed after 20 ms, against a blocking call.
7. :mod:`.isolation` - a query surge in a pool shared with deliveries, against separate clusters;
   a split store and its failure days.
8. :mod:`.gift_config` - a configuration check and an enforced verification.

Every simulation takes a ``seed`` (same seed, same run), ends at its horizon or an event cap and
returns a :class:`~.common.Run` whose ledger (:meth:`hotkeylab.sim.Ledger.from_outcomes`, one
:class:`hotkeylab.sim.Outcome` per request) balances: ``arrived = served + timed_out + rejected +
in_system``. Practice-specific answers are named where they are made (:class:`.ejection.Answer`,
:class:`.gift_config.Claim`).

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``); ``Run.windows`` holds
equal-length arrays over time windows with ``t`` (window start) in seconds.

Where to start reading: :mod:`.scenario` (every practice's scenario and presets) and :mod:`.model`
(every practice's ``simulate_*``) point into the practice modules; open one practice module and read
it top to bottom: its scenario, its actors, then its ``simulate_*``. :mod:`.common` holds what they
share, :mod:`.closed_form` and :mod:`.holding` the formulas the tests check them against,
:mod:`.verdicts` the counts over seeds; :mod:`.figures` and :mod:`.lesson` serve the notebook and
load on first use (they import matplotlib).
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    MAX_CLICKS,
    MAX_SERVERS,
    attempts_per_user,
    backend_capacity_per_s,
    backup_mean_utilisation,
    backup_utilisation,
    cascade_successes,
    check_gift_config,
    datacentre_loss_max_rate,
    datacentre_loss_success,
    ejection_delay_ms,
    erlang_b,
    failover_latency_ms,
    gift_distribution,
    mean_latency_ms,
    pool_success,
    retry_load_per_s,
    separated_success,
    server_success,
    shared_pool_success,
    storage_split,
    storm_sustains,
    unverified_launches,
    user_success,
)
from .common import (  # noqa: F401
    MAX_EVENTS,
    MAX_HORIZON_MS,
    MAX_RATE_PER_S,
    MAX_WORKERS,
    Run,
)
from .delivery import (  # noqa: F401
    OUTCOMES,
    PROTECTION_LABELS,
    PROTECTIONS,
    SEED_DELIVERY,
    SEED_SEQUENCE,
    DeliveryScenario,
    expected_duplicates,
    simulate_delivery,
)
from .ejection import (  # noqa: F401
    SEED_DATACENTRES,
    SEED_EJECTION,
    SEED_EJECTION_OVERLOAD,
    SERVER_NAMES,
    Answer,
    EjectionScenario,
    simulate_ejection,
)
from .failover import (  # noqa: F401
    DOWN_KINDS,
    SEED_FAILOVER,
    SEED_FAILOVER_SURGE,
    FailoverScenario,
    simulate_failover,
    surge_both_fall_factor,
    surge_fill_ms,
)
from .gift_config import (  # noqa: F401
    SEED_GIFT_CONFIG,
    Claim,
    GiftConfigScenario,
    config_errors_fluid,
    simulate_gift_config,
    simulate_verification,
)
from .holding import (  # noqa: F401
    async_capacity_per_s,
    core_latency_ms,
    holding_ms,
    mean_capped_ms,
    pool_capacity_per_s,
    report_capacity_per_s,
    separated_mix_capacity_per_s,
    service_percentile_ms,
    share_within,
    shared_mix_capacity_per_s,
)
from .isolation import (  # noqa: F401
    SEED_ISOLATION,
    IsolationScenario,
    simulate_isolation,
    simulate_storage_days,
)
from .pool import (  # noqa: F401
    IO_MODES,
    SEED_POOL,
    SEED_POOL_INCIDENT,
    PoolScenario,
    measure_capacity,
    pool_conclusion_holds,
    pool_designs,
    simulate_pool,
)
from .report import (  # noqa: F401
    REPORT_MODES,
    SEED_REPORT,
    ReportScenario,
    simulate_report,
)
from .retry import (  # noqa: F401
    RETRY_LABELS,
    RETRY_POLICIES,
    SEED_BLIP,
    SEED_RETRY,
    RetryScenario,
    retry_storm_error_share,
    retry_stuck_count,
    simulate_retry,
)
from .verdicts import (  # noqa: F401
    COUNT_SEEDS,
    DATACENTRE_VERDICTS,
    EJECTION_VERDICTS,
    FAILOVER_VERDICTS,
    ISOLATION_VERDICTS,
    OVERLOAD_VERDICTS,
    count_runs,
    count_text,
    datacentre_counts,
    ejection_counts,
    failover_counts,
    isolation_counts,
    near,
    overload_counts,
)

_LAZY = {
    "plot_retry": "figures",
    "plot_failover": "figures",
    "plot_ejection": "figures",
    "explore_ejection": "lesson",
    "plot_capacity_curve": "figures",
    "plot_pool_runs": "figures",
    "explore_pool": "lesson",
    "plot_sequence": "figures",
    "plot_duplicates": "figures",
    "plot_report": "figures",
    "plot_isolation": "figures",
}

__all__ = [
    "Run",
    "RETRY_POLICIES",
    "RetryScenario",
    "SEED_RETRY",
    "SEED_BLIP",
    "backend_capacity_per_s",
    "attempts_per_user",
    "user_success",
    "retry_load_per_s",
    "storm_sustains",
    "retry_stuck_count",
    "retry_storm_error_share",
    "simulate_retry",
    "plot_retry",
    "DOWN_KINDS",
    "FailoverScenario",
    "SEED_FAILOVER",
    "SEED_FAILOVER_SURGE",
    "surge_fill_ms",
    "surge_both_fall_factor",
    "failover_latency_ms",
    "mean_latency_ms",
    "backup_utilisation",
    "backup_mean_utilisation",
    "simulate_failover",
    "plot_failover",
    "EjectionScenario",
    "SEED_EJECTION",
    "SEED_EJECTION_OVERLOAD",
    "SEED_DATACENTRES",
    "datacentre_loss_success",
    "datacentre_loss_max_rate",
    "erlang_b",
    "server_success",
    "pool_success",
    "ejection_delay_ms",
    "cascade_successes",
    "simulate_ejection",
    "plot_ejection",
    "explore_ejection",
    "IO_MODES",
    "PoolScenario",
    "SEED_POOL",
    "SEED_POOL_INCIDENT",
    "mean_capped_ms",
    "share_within",
    "service_percentile_ms",
    "holding_ms",
    "pool_capacity_per_s",
    "async_capacity_per_s",
    "shared_mix_capacity_per_s",
    "separated_mix_capacity_per_s",
    "measure_capacity",
    "simulate_pool",
    "plot_capacity_curve",
    "plot_pool_runs",
    "explore_pool",
    "PROTECTIONS",
    "OUTCOMES",
    "DeliveryScenario",
    "SEED_DELIVERY",
    "SEED_SEQUENCE",
    "gift_distribution",
    "expected_duplicates",
    "simulate_delivery",
    "plot_sequence",
    "plot_duplicates",
    "REPORT_MODES",
    "ReportScenario",
    "SEED_REPORT",
    "core_latency_ms",
    "report_capacity_per_s",
    "simulate_report",
    "plot_report",
    "IsolationScenario",
    "SEED_ISOLATION",
    "shared_pool_success",
    "separated_success",
    "simulate_isolation",
    "plot_isolation",
    "storage_split",
    "simulate_storage_days",
    "GiftConfigScenario",
    "SEED_GIFT_CONFIG",
    "check_gift_config",
    "config_errors_fluid",
    "simulate_gift_config",
    "unverified_launches",
    "simulate_verification",
    "COUNT_SEEDS",
    "count_runs",
    "near",
    "count_text",
    "EJECTION_VERDICTS",
    "OVERLOAD_VERDICTS",
    "DATACENTRE_VERDICTS",
    "FAILOVER_VERDICTS",
    "ISOLATION_VERDICTS",
    "ejection_counts",
    "overload_counts",
    "datacentre_counts",
    "failover_counts",
    "isolation_counts",
    "pool_designs",
    "pool_conclusion_holds",
    "MAX_RATE_PER_S",
    "MAX_HORIZON_MS",
    "MAX_WORKERS",
    "MAX_EVENTS",
    "RETRY_LABELS",
    "Answer",
    "SERVER_NAMES",
    "Claim",
    "PROTECTION_LABELS",
    "MAX_SERVERS",
    "MAX_CLICKS",
]

# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
