"""01 · The hot row: one row lock under strict two-phase locking, and the seed's group commit.

Seed 000 (first half). System A keeps its hot keys in MySQL. Every transaction on a hot key starts
with ``SELECT … FOR UPDATE`` on the key's row and, under strict two-phase locking (S2PL), keeps
that row lock until ``COMMIT``. So the row admits one transaction at a time. The seed's
"单次耗时为4次rtt+2条SQL耗时+1次commit耗时" is the whole cycle of one serial thread
(:func:`hotkeylab.capacity.lock_hold_ms`, 2.9 ms at RTT 0.5 ms: 345 TPS); of its 4 round trips, 2
lie outside the lock (begin; the SELECT's way in and the COMMIT reply's way back), so the lock is
held ``2 × RTT + statements × SQL time`` and only the outside part can overlap with another
thread's hold (:func:`hotkeylab.capacity.closed_loop_tps`).

Three SimPy models, one process function per actor the seed names (times in ms throughout):

- :func:`simulate_threads` (closed loop): ``threads`` worker threads hammer the row
  (:func:`worker_thread`); the row lock is a ``simpy.Resource(capacity=1)``. One thread runs at
  ``1000 / cycle``; TPS plateaus at ``1000 / hold`` (:func:`hotkeylab.capacity.tps_ceiling`) while latency grows as
  ``threads × hold`` (Little's law). Lock-hold intervals are recorded for
  :func:`hotkeylab.plotting.lock_gantt`.
- :func:`simulate_group_commit`: the seed's business-level group commit. Poisson user requests
  (:func:`user_requests`, :func:`client`) go to a batcher (the kernel's
  :func:`hotkeylab.batcher.batcher`, also :func:`batcher` here) that closes a batch at ``max_rows``
  rows or ``max_wait_ms`` after its first row and hands it over (:func:`hand_over`); a single
  hot-key thread per server (:func:`hot_key_thread`) commits the merged batches, one cycle of N(rows) ms each
  (:meth:`GroupCommit.n_ms`), of which the row lock is held all but the 2 round trips outside it.
  The batch rate agrees with :func:`hotkeylab.capacity.batcher_batch_rate`, the load with
  :func:`group_commit_rho`.
- :func:`simulate_open_loop`: Poisson transactions on the lock (M/D/1, or M/G/1 with
  ``hold_cv > 0``): the mean wait for the lock agrees with Pollaczek–Khinchine
  (:func:`hotkeylab.capacity.md1_mean_wait_ms`, :func:`hotkeylab.capacity.pk_mean_wait_ms`).
  Two engines: ``"simpy"`` (the reference) and ``"fast"`` (numpy Lindley recursion), identical
  waits from the same random stream.

Every run takes a ``seed``, ends in bounded time (horizon + event cap via
:func:`hotkeylab.sim.run_bounded`) and returns a result object with arrays, a balanced
:class:`hotkeylab.sim.Ledger` and a typed ``summary`` (:class:`hotkeylab.sim.Summary`; no samples: None).

Where to start reading: :mod:`.scenario` (the three scenarios, each field with its seed sentence),
then :mod:`.model` (the actors, one process function each, then ``simulate_threads``,
``simulate_group_commit``, ``simulate_open_loop``); the group commit's batcher is the kernel's
:mod:`hotkeylab.batcher` (one screen), the Poisson arrivals :class:`hotkeylab.sim.PoissonSource`.
:mod:`.closed_form` holds the formulas the tests check the simulations against, :mod:`.results`
what a run returns, :mod:`.fast` the open loop's numpy engine; :mod:`.figures` and :mod:`.lesson` serve the notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    closed_loop_latency_ms,
    closed_loop_tps,
    group_commit_batch_rate,
    group_commit_rho,
    overload_share,
)
from .fast import (  # noqa: F401
    hold_times,
    open_loop_fast,
    poisson_arrivals_ms,
)
from .model import (  # noqa: F401
    batcher,
    client,
    hand_over,
    hot_key_thread,
    simulate_group_commit,
    simulate_open_loop,
    simulate_threads,
    sweep_threads,
    thread_start,
    transaction,
    transaction_source,
    user_requests,
    worker_thread,
)
from .results import (  # noqa: F401
    ClosedLoopRun,
    GroupCommitRun,
    LockInterval,
    OpenLoopRun,
    ThreadsSweep,
)
from .scenario import (  # noqa: F401
    CALIBRATION_ROWS,
    SEED_GROUP_COMMIT,
    SEED_GROUP_COMMIT_FIXED_N,
    SEED_LOCK,
    SEED_MERGED,
    SEED_ROW,
    SEED_ROW_CROSS_DC,
    GroupCommit,
    HotRow,
    OpenLoop,
)

_LAZY = {
    "plot_gantt": "figures",
    "plot_threads": "figures",
    "plot_batching": "figures",
    "what_if_threads": "lesson",
    "what_if_batching": "lesson",
    "widget_threads": "lesson",
    "widget_batching": "lesson",
}

__all__ = [
    "HotRow",
    "SEED_MERGED",
    "GroupCommit",
    "OpenLoop",
    "SEED_ROW",
    "SEED_ROW_CROSS_DC",
    "SEED_GROUP_COMMIT",
    "SEED_GROUP_COMMIT_FIXED_N",
    "CALIBRATION_ROWS",
    "group_commit_rho",
    "overload_share",
    "SEED_LOCK",
    "LockInterval",
    "ClosedLoopRun",
    "ThreadsSweep",
    "GroupCommitRun",
    "OpenLoopRun",
    "worker_thread",
    "user_requests",
    "client",
    "batcher",
    "hand_over",
    "hot_key_thread",
    "transaction",
    "simulate_threads",
    "sweep_threads",
    "closed_loop_tps",
    "closed_loop_latency_ms",
    "simulate_group_commit",
    "group_commit_batch_rate",
    "simulate_open_loop",
    "poisson_arrivals_ms",
    "plot_gantt",
    "plot_threads",
    "what_if_threads",
    "what_if_batching",
    "widget_threads",
    "widget_batching",
    "hold_times",
    "open_loop_fast",
    "plot_batching",
    "thread_start",
    "transaction_source",
]

# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
