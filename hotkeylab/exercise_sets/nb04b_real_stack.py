"""Exercises of notebook 04b · The retry storm on a real stack. Expected values are computed from
the committed measurements (hotkeylab/data/stack_lab_*.csv), so they need no database."""

from __future__ import annotations

import numpy as np

from .. import capacity
from ..exercises import numeric

#: The milder peak of Exercise 1 (a parameter of the question, not a result): +10% instead of the seed's +20%.
PEAK_FACTOR = 1.1


def _run(turn: str):
    from ..stack_lab import compare

    return next(r for r in compare.load_runs()[1] if r.turn == turn and r.repeat == 0)


@numeric("04b.drain_in_turns", rel=0.03, unit="s",
         hint="Both servers commit on the one hot row, one batch at a time: each of B's batches holds the lock "
         "N_B, each of C's N_C, and nothing joins once the upstream is cut: Q_B × N_B + Q_C × N_C.")  # fmt: skip
def drain_in_turns() -> float:
    """Seconds until B and C have committed everything queued once the upstream is cut, from the
    queues measured in the window where the degrade starts: B's at N_B each, and C's backlog at N_C
    each. One hot row's lock serialises every commit, so the order in which B and C take it does not
    change the total: it is the sum of the commit times."""
    run = _run("degrade")
    sc = run.scenario
    t = np.asarray(run.windows["t"])
    k = int(np.searchsorted(t, sc.degrade.start_ms / 1000.0))
    qb, qc = float(run.windows["queue_b"][k]), float(run.windows["queue_c"][k])
    return (qb * run.batch_ms_b + qc * run.batch_ms_c) / 1000.0


@numeric("04b.cross_one_batcher_peak10", rel=0.03, unit="s",
         hint=f"M/N with the measured N_B, divided by the growth with one shared batcher at a "
         f"+{PEAK_FACTOR - 1:.0%} peak: capacity.batcher_batch_rate(λ × {PEAK_FACTOR:g}, K, T) minus "
         "1000 / mean(N_B, N_C).")  # fmt: skip
def cross_one_batcher_peak10() -> float:
    """Seconds after C becomes an owner until the queue passes M/N in the stuck turn if B and C
    shared ONE batcher (04's model) and the peak were +10% instead of +20%, growing at the
    closed-form rate from the start, before any retry."""
    from ..stack_lab import compare

    run = _run("stuck")
    sc = compare.model_scenario(run)
    crit = capacity.critical_queue_length(sc.timeout_ms, sc.batch_ms)
    mu = capacity.alternating_owners_tps([sc.batch_ms, sc.cross_batch_ms])
    return crit / (compare.batch_demand(sc, sc.user_rate_per_s * PEAK_FACTOR) - mu)


@numeric("04b.c_backlog_gone", rel=0.03, unit="s",
         hint="One hot row: while both servers have batches waiting they take its lock in turns, so each of C's "
         "batches waits for one of B's: it costs N_B + N_C, not N_C alone.")  # fmt: skip
def c_backlog_gone() -> float:
    """Seconds after the upstream is cut until C has committed its backlog, from the queues measured in
    the window where the degrade starts. While both servers have batches waiting they take the hot
    row's lock in turns, one of B's (N_B) and one of C's (N_C); C's queue is the shorter, so it is
    gone after Q_C pairs of commits. (Were B's the shorter, C would go on alone at N_C each.)"""
    run = _run("degrade")
    sc = run.scenario
    t = np.asarray(run.windows["t"])
    k = int(np.searchsorted(t, sc.degrade.start_ms / 1000.0))
    qb, qc = float(run.windows["queue_b"][k]), float(run.windows["queue_c"][k])
    pairs = min(qb, qc)
    return (pairs * (run.batch_ms_b + run.batch_ms_c) + (qc - pairs) * run.batch_ms_c) / 1000.0
