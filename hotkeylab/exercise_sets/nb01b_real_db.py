"""Exercises of notebook 01b · The hot row on a real database. Expected values are computed from
the committed measurements (hotkeylab/data/db_lab_runs.csv), so they need no database."""

from __future__ import annotations

import numpy as np

from .. import capacity, db_lab
from ..exercises import numeric


def _runs():
    return db_lab.load_runs()[1]


@numeric("01b.plateau_rtt3", rel=0.02, unit="TPS",
         hint="16 threads keep the lock busy, so the row's ceiling decides: 1000 / hold of the "
         "one-thread run (db_lab.hot_runs(runs, 3.0)[1].hold_ms).")  # fmt: skip
def plateau_rtt3() -> float:
    """Predicted TPS of 16 threads on the hot row at RTT 3 ms, from the one-thread run's hold."""
    return capacity.tps_ceiling(db_lab.hot_runs(_runs(), 3.0)[1].hold_ms)


@numeric("01b.per_insert_ms", rel=0.05, unit="ms",
         hint="Fit a straight line through (inserts, hold_ms) of the 8-thread runs at RTT 1.5 ms; "
         "its slope is one round trip (the measured sleep) plus one INSERT.")  # fmt: skip
def per_insert_ms() -> float:
    """ms of lock hold each extra batchInsert statement adds at RTT 1.5 ms (slope of the series)."""
    series = db_lab.statements_series(_runs())
    k = np.array([r.inserts for r in series])
    hold = np.array([r.hold_ms for r in series])
    return float(np.polyfit(k, hold, 1)[0])


@numeric("01b.latency_32", rel=0.03, unit="ms",
         hint="Little's law for a closed loop: 32 transactions are always in flight, so each one "
         "takes 32 / TPS seconds.")  # fmt: skip
def latency_32() -> float:
    """Mean latency (ms) of 32 threads on the hot row at RTT 1.5 ms, from the measured TPS alone."""
    return 32 * 1000.0 / db_lab.hot_runs(_runs(), 1.5)[32].tps


@numeric("01b.second_committer_gain_rtt05", rel=0.03, unit="%",
         hint="Only the time outside the lock overlaps another committer's hold: gain = cycle / hold − 1 "
         "with hold = parts.hold_ms(0.5, 4) and cycle = hold + parts.outside_ms(0.5, 4).")  # fmt: skip
def second_committer_gain_rtt05() -> float:
    """Most a second committer adds (in %) to the seed's order with 4 INSERTs at RTT 0.5 ms, every
    statement paying the RTT, from the measured parts."""
    parts = db_lab.measured_parts(_runs())
    hold, outside = parts.hold_ms(0.5, 4), parts.outside_ms(0.5, 4)
    return 100 * capacity.extra_thread_gain(hold + outside, hold)
