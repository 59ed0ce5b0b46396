"""01b · What a run measured, and how the notebook picks runs out of the committed measurements.

Start reading at :class:`RunResult` (one run's means, and its nothing-lost check) and
:class:`TxnTrace` (one committed transaction on the client clock). :func:`hot_runs`,
:func:`control_runs`, :func:`statements_series` and :func:`repeats` select runs by configuration;
where a configuration was repeated, :func:`median_run` stands for it.
:func:`early_release_fraction` and :func:`first_early_handoff` read the lock grants of a trace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import capacity

__all__ = [
    "TxnTrace",
    "RunResult",
    "early_release_fraction",
    "first_early_handoff",
    "repeats",
    "median_run",
    "hot_runs",
    "statements_series",
    "control_runs",
    "plateau_tps",
]


@dataclass(frozen=True)
class TxnTrace:
    """One committed transaction, client clock, ms since the run started."""

    worker: int
    t_begin: float  # BEGIN sent
    t_lock: float  # SELECT … FOR UPDATE returned: the row lock is held
    t_commit_sent: float
    t_commit_done: float  # COMMIT returned (after the log flush)


@dataclass(frozen=True)
class RunResult:
    """What one run measured (means over the transactions that committed in the measured window)."""

    threads: int
    rtt_ms: float
    inserts: int
    rows_per_insert: int
    shared_row: bool
    order: str  # where the lock is taken (see Experiment)
    rtt_outside_lock: bool  # statements outside the lock also paid one emulated RTT
    duration_s: float  # the measured window
    committed: int  # transactions committed in the window
    tps: float
    hold_ms: float  # lock granted (SELECT … FOR UPDATE returned) → COMMIT returned
    acquire_ms: float  # SELECT … FOR UPDATE sent → returned: the wait for the row lock
    statement_ms: float  # one INSERT or UPDATE on loopback (for "update_only" the UPDATE also waits for the lock)
    commit_ms: float  # COMMIT sent → returned (includes the redo-log flush)
    sleep_ms: float  # measured length of one emulated-RTT sleep (nominal: rtt_ms)
    latency_ms: float  # BEGIN sent → COMMIT returned
    early_release: float  # handoffs where the next lock grant came before the previous COMMIT returned
    # nothing lost (whole run, warm-up included)
    begun: int
    total_committed: int
    rolled_back: int
    rows_committed: int  # rows the clients saw committed
    counter_delta: int  # increase of t_account.count on the rows used
    trans_rows: int  # rows in t_trans for this run

    @property
    def predicted_tps(self) -> float:
        """``1000 / hold``: the model's ceiling for this run's own measured hold (NaN if nothing
        committed in the measured window)."""
        if not (self.committed and math.isfinite(self.hold_ms) and self.hold_ms > 0):
            return float("nan")
        return capacity.tps_ceiling(self.hold_ms)

    def check(self) -> None:
        """Raise ``AssertionError`` unless every transaction is accounted for and no row was lost."""
        assert self.begun == self.total_committed + self.rolled_back, (
            f"begun {self.begun} != committed {self.total_committed} + rolled back {self.rolled_back}")
        assert self.rows_committed == self.counter_delta == self.trans_rows, (
            f"rows committed {self.rows_committed}, counter +{self.counter_delta}, t_trans {self.trans_rows}")


def early_release_fraction(trace: list[TxnTrace]) -> float:
    """Fraction of lock handoffs where the next transaction held the lock before the previous
    transaction's COMMIT had returned to its client: InnoDB released the row lock before the
    COMMIT's log flush finished. NaN with fewer than two transactions."""
    tr = sorted(trace, key=lambda x: x.t_lock)
    pairs = [(a, b) for a, b in zip(tr, tr[1:], strict=False) if a.worker != b.worker]
    if not pairs:
        return float("nan")
    return sum(b.t_lock < a.t_commit_done for a, b in pairs) / len(pairs)


def first_early_handoff(trace, after_ms: float = -math.inf) -> tuple[TxnTrace, TxnTrace]:
    """The first pair (previous, next), with the previous lock granted at or after ``after_ms``, where
    the next lock grant came before the previous COMMIT returned."""
    tr = sorted(trace, key=lambda t: t.t_lock)
    for a, b in zip(tr, tr[1:], strict=False):
        if a.t_lock >= after_ms and a.worker != b.worker and b.t_lock < a.t_commit_done:
            return a, b
    raise ValueError("no early handoff in this trace")


def repeats(runs, rtt_ms: float, threads: int = 1, inserts: int = 1, shared_row: bool = True,
            order: str = "lock_first", rtt_outside_lock: bool = False) -> list[RunResult]:
    """Every run of one configuration (the one-thread hot-row run is measured several times)."""
    return [r for r in runs if r.shared_row == shared_row and r.rtt_ms == rtt_ms
            and r.inserts == inserts and r.threads == threads and r.order == order
            and r.rtt_outside_lock == rtt_outside_lock]


def median_run(group: list[RunResult]) -> RunResult:
    """The run with the median hold (the lower middle one for an even count) among the runs that
    measured one. A run commits nothing inside its measuring window (its hold is NaN) when a COMMIT's
    log flush or the client stalls longer than the window on a loaded machine; such a run is left
    out, because NaN sorts anywhere and could stand for the group. None measured: ValueError."""
    measured = [r for r in group if math.isfinite(r.hold_ms)]
    if not measured:
        raise ValueError(f"group must hold at least one run that measured a lock hold, got {len(group)} run(s) "
                         "with none committed inside the measuring window")
    return sorted(measured, key=lambda r: r.hold_ms)[(len(measured) - 1) // 2]


def hot_runs(runs, rtt_ms: float, inserts: int = 1, order: str = "lock_first",
             rtt_outside_lock: bool = False) -> dict[int, RunResult]:
    """The hot-row runs at one RTT, statement count and order, by thread count; where a
    configuration was repeated, the run with the median hold stands for it."""
    groups: dict[int, list[RunResult]] = {}
    for r in runs:
        if (r.shared_row and math.isclose(r.rtt_ms, rtt_ms) and r.inserts == inserts and r.order == order
                and r.rtt_outside_lock == rtt_outside_lock):
            groups.setdefault(r.threads, []).append(r)
    return {n: median_run(g) for n, g in sorted(groups.items())}


def statements_series(runs, threads: int = 8, rtt_ms: float = 1.5) -> list[RunResult]:
    """The seed-order hot-row runs at one thread count and RTT, one per batchInsert count
    (``make db-lab`` measures 0, 1, 2, 4 and 8 at 8 threads, RTT 1.5 ms), sorted by INSERTs."""
    return sorted((r for r in runs if r.shared_row and r.threads == threads and math.isclose(r.rtt_ms, rtt_ms)
                   and r.order == "lock_first" and not r.rtt_outside_lock), key=lambda r: r.inserts)


def control_runs(runs, rtt_ms: float) -> dict[int, RunResult]:
    """The control runs (one row per worker, the seed's order) at one RTT, by thread count."""
    return {r.threads: r for r in runs if not r.shared_row and r.rtt_ms == rtt_ms and r.order == "lock_first"
            and not r.rtt_outside_lock}


def plateau_tps(runs, rtt_ms: float, inserts: int = 1) -> float:
    """Mean TPS of the hot-row runs with two threads or more (the plateau)."""
    vals = [r.tps for n, r in hot_runs(runs, rtt_ms, inserts).items() if n >= 2]
    if not vals:
        raise ValueError(f"no hot-row runs with >= 2 threads at rtt_ms={rtt_ms}, inserts={inserts}")
    return sum(vals) / len(vals)
