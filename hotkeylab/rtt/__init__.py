"""02 · RTT arithmetic: a merged commit's cycle and the hot row's lock hold as budgets of round trips.

Seed 000 (a hot row under MySQL strict two-phase locking, S2PL). One owner's hot-key thread runs
one merged commit (合并提交) after another. Its *cycle* is the seed's "单次耗时": 4 round trips
(``set autocommit``/begin, ``SELECT … FOR UPDATE``, ``UPDATE``, ``COMMIT``) + 2 SQL + 1 commit.
The row lock is taken when the SELECT executes and released when the COMMIT executes, so of each
cycle :data:`OUTSIDE_ROUND_TRIPS` = 2 round trips are spent outside the lock (the begin round trip,
the SELECT request's way in, the COMMIT reply's way back: the seed's "除了set autocommit和commit后的
那仅有的RTT") and the rest under it. The measured merged commits (16 ms in datacentre B at RTT
0.5 ms, 27 ms in C at RTT 1.5 ms) are whole cycles: a line through them gives 11 round trips per
cycle and 10.5 ms that do not depend on the RTT.

- :class:`Transaction`: one cycle (round trips, statements, other RTT-independent time) and the
  part of it under the lock; :data:`SKETCH` (the seed's sketch), :data:`FITTED` (fitted to the two
  measurements with :func:`hotkeylab.capacity.fit_round_trips`).
- :func:`simulate_lock`: a small SimPy model, one process per owner's hot-key thread, all taking
  turns on one row lock; :func:`turn_taking_tps` is its closed form (one or two owners).
- :func:`lab_rows`: notebook 01b's committed MariaDB measurements, read with :mod:`hotkeylab.db_lab`.
- :func:`rtt_whatif`, :func:`whatif_controls`: the notebook's what-if and its sliders.
- :func:`plot_cycle`, :func:`plot_hold_budget`, :func:`plot_hold_vs_rtt`, :func:`plot_tps_vs_rtt`.

Units: ms for times (``*_ms``), merged commits per second for rates.

Where to start reading: :mod:`.scenario` (the seed's numbers and :class:`Transaction`, the cycle
as a budget of round trips), then :mod:`.model` (one process per owner's hot-key thread) beside
:mod:`.closed_form`. :mod:`.figures` and :mod:`.lesson` serve the notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    turn_taking_tps,
)
from .model import (  # noqa: F401
    LockRun,
    hot_key_thread,
    simulate_lock,
)
from .scenario import (  # noqa: F401
    BATCH_B_MS,
    BATCH_C_MS,
    FITTED,
    MEASURED,
    OUTSIDE_ROUND_TRIPS,
    RTT_B_MS,
    RTT_C_MS,
    SEED_OWNERS,
    SKETCH,
    Owner,
    Transaction,
    fitted_transaction,
)

_LAZY = {
    "plot_cycle": "figures",
    "plot_tps_vs_rtt": "figures",
    "plot_hold_vs_rtt": "figures",
    "plot_hold_budget": "figures",
    "LabRow": "lesson",
    "lab_rows": "lesson",
    "lab_fit": "lesson",
    "WhatIf": "lesson",
    "rtt_whatif": "lesson",
    "whatif_controls": "lesson",
}

__all__ = [
    "RTT_B_MS",
    "RTT_C_MS",
    "BATCH_B_MS",
    "BATCH_C_MS",
    "MEASURED",
    "OUTSIDE_ROUND_TRIPS",
    "Transaction",
    "SKETCH",
    "FITTED",
    "fitted_transaction",
    "Owner",
    "SEED_OWNERS",
    "LockRun",
    "simulate_lock",
    "turn_taking_tps",
    "LabRow",
    "lab_rows",
    "lab_fit",
    "WhatIf",
    "rtt_whatif",
    "whatif_controls",
    "plot_cycle",
    "plot_tps_vs_rtt",
    "plot_hold_vs_rtt",
    "plot_hold_budget",
]


# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
