"""Exercises of notebook 04b · The retry storm on a real stack. Expected values are computed from
the committed measurements (hotkeylab/data/stack_lab_*.csv), so they need no database."""

from __future__ import annotations

import numpy as np

from .. import capacity
from ..exercises import close_to, exercise


def _run(turn: str):
    from ..stack_lab import compare

    return next(r for r in compare.load_runs()[1] if r.turn == turn and r.repeat == 0)


@exercise("04b.growth_one_batcher")
def growth_one_batcher(answer):
    """Queue growth (batches/s) at the start of the stuck turn's trigger if B and C shared ONE
    batcher (04's model), from the measured N_B, N_C and the peak's user rate."""
    from ..stack_lab import compare

    return close_to(
        answer, compare.growth_closed_form(_run("stuck"), servers=1), rel=0.03, unit="batches/s",
        hint="Users' batches at the peak, capacity.batcher_batch_rate(λ × 1.2, K, T) on the stack's clock, "
        "minus what two owners taking turns commit, 1000 / mean(N_B, N_C).",
    )  # fmt: skip


@exercise("04b.drain_after_degrade")
def drain_after_degrade(answer):
    """Seconds for server B to empty its queue once the upstream is cut, from the queue measured in
    the window where the degrade starts and B's measured merged-commit time."""
    run = _run("degrade")
    sc = run.scenario
    t = np.asarray(run.windows["t"])
    k = int(np.searchsorted(t, sc.degrade.start_ms / 1000.0))
    q = float(run.windows["queue"][k])
    return close_to(
        answer, q / capacity.tps_ceiling(run.batch_ms_b), rel=0.03, unit="s",
        hint="With no new users and retries dying out within one patience, B commits 1000 / N_B batches "
        "per second and nothing joins: Q / (1000 / N_B).",
    )  # fmt: skip
