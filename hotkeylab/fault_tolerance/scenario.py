"""09 · The learner's entry to the scenarios: every practice's frozen scenario dataclass and its
SEED_* presets (each preset line quotes its seed sentence or says the value is assumed), defined in
the practice's own module (:mod:`.retry`, :mod:`.failover`, … :mod:`.gift_config`)."""

from __future__ import annotations

from .delivery import (  # noqa: F401
    OUTCOMES,
    PROTECTIONS,
    SEED_DELIVERY,
    SEED_SEQUENCE,
    DeliveryScenario,
)
from .ejection import (  # noqa: F401
    SEED_DATACENTRES,
    SEED_EJECTION,
    SEED_EJECTION_OVERLOAD,
    EjectionScenario,
)
from .failover import (  # noqa: F401
    DOWN_KINDS,
    SEED_FAILOVER,
    SEED_FAILOVER_SURGE,
    FailoverScenario,
)
from .gift_config import (  # noqa: F401
    SEED_GIFT_CONFIG,
    GiftConfigScenario,
)
from .isolation import (  # noqa: F401
    SEED_ISOLATION,
    IsolationScenario,
)
from .pool import (  # noqa: F401
    IO_MODES,
    SEED_POOL,
    SEED_POOL_INCIDENT,
    PoolScenario,
)
from .report import (  # noqa: F401
    REPORT_MODES,
    SEED_REPORT,
    ReportScenario,
)
from .retry import (  # noqa: F401
    RETRY_POLICIES,
    SEED_BLIP,
    SEED_RETRY,
    RetryScenario,
)

__all__ = [
    "RETRY_POLICIES",
    "RetryScenario",
    "SEED_RETRY",
    "SEED_BLIP",
    "DOWN_KINDS",
    "FailoverScenario",
    "SEED_FAILOVER",
    "SEED_FAILOVER_SURGE",
    "EjectionScenario",
    "SEED_EJECTION",
    "SEED_EJECTION_OVERLOAD",
    "SEED_DATACENTRES",
    "IO_MODES",
    "PoolScenario",
    "SEED_POOL",
    "SEED_POOL_INCIDENT",
    "PROTECTIONS",
    "OUTCOMES",
    "DeliveryScenario",
    "SEED_DELIVERY",
    "SEED_SEQUENCE",
    "REPORT_MODES",
    "ReportScenario",
    "SEED_REPORT",
    "IsolationScenario",
    "SEED_ISOLATION",
    "GiftConfigScenario",
    "SEED_GIFT_CONFIG",
]
