"""Exercises of notebook 04b · The retry storm on a real stack. Expected values are computed from
the committed measurements (hotkeylab/data/stack_lab_*.csv), so they need no database."""

from __future__ import annotations

import numpy as np

from .. import capacity
from ..exercises import numeric


def _run(turn: str):
    from ..stack_lab import compare

    return next(r for r in compare.load_runs()[1] if r.turn == turn and r.repeat == 0)


@numeric("04b.drain_after_degrade", rel=0.03, unit="s",
         hint="With no new users and retries dying out within one patience, B commits 1000 / N_B batches "
         "per second and nothing joins: Q / (1000 / N_B).")  # fmt: skip
def drain_after_degrade() -> float:
    """Seconds for server B to empty its queue once the upstream is cut, from the queue measured in
    the window where the degrade starts and B's measured merged-commit time."""
    run = _run("degrade")
    sc = run.scenario
    t = np.asarray(run.windows["t"])
    k = int(np.searchsorted(t, sc.degrade.start_ms / 1000.0))
    q = float(run.windows["queue"][k])
    return q / capacity.tps_ceiling(run.batch_ms_b)


@numeric("04b.cross_one_batcher", rel=0.03, unit="s",
         hint="M/N with the measured N_B, divided by the growth with one shared batcher: the users' batches "
         "at the peak, capacity.batcher_batch_rate(λ × 1.2, K, T), minus 1000 / mean(N_B, N_C).")  # fmt: skip
def cross_one_batcher() -> float:
    """Seconds after C becomes an owner until the queue passes M/N in the stuck turn if B and C
    shared ONE batcher (04's model), growing at the closed-form rate from the start, before any retry."""
    from ..stack_lab import compare

    run = _run("stuck")
    crit = capacity.critical_queue_length(run.scenario.timeout_ms, run.batch_ms_b)
    return crit / compare.growth_closed_form(run, servers=1)
