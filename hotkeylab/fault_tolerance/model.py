"""09 · The learner's entry to the models: every practice's ``simulate_*``, defined at the end of
its own module after the actors it wires up (read :mod:`.retry` top to bottom, then the others in
the seed's order). Imports no matplotlib."""

from __future__ import annotations

from .common import (  # noqa: F401
    Run,
)
from .delivery import (  # noqa: F401
    simulate_delivery,
)
from .ejection import (  # noqa: F401
    simulate_ejection,
)
from .failover import (  # noqa: F401
    simulate_failover,
)
from .gift_config import (  # noqa: F401
    simulate_gift_config,
    simulate_verification,
)
from .isolation import (  # noqa: F401
    simulate_isolation,
    simulate_storage_days,
)
from .pool import (  # noqa: F401
    measure_capacity,
    simulate_pool,
)
from .report import (  # noqa: F401
    simulate_report,
)
from .retry import (  # noqa: F401
    simulate_retry,
)

__all__ = [
    "Run",
    "simulate_retry",
    "simulate_failover",
    "simulate_ejection",
    "measure_capacity",
    "simulate_pool",
    "simulate_delivery",
    "simulate_report",
    "simulate_isolation",
    "simulate_storage_days",
    "simulate_gift_config",
    "simulate_verification",
]
