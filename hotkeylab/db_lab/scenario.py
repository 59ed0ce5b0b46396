"""01b · The experiment's parameters: one run of the seed's transaction, the statement orders, and
``make db-lab``'s grid.

Start reading here. :class:`Experiment` is one run (threads, emulated RTT, batchInsert statements,
the measured window, the hot row or the control, where the lock is taken); each field declares its
range once (:func:`hotkeylab.validate.param`). :data:`ORDERS` are the three places the transaction
can take the hot row's lock, :func:`sleeps_under_lock` and :func:`statements_under_lock` what each
order does while holding it. :func:`standard_grid` is the grid ``make db-lab`` measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..validate import check_choice, check_fields, param

__all__ = [
    "HOT_ACCOUNT",
    "ORDERS",
    "ORDER_LABELS",
    "sleeps_under_lock",
    "statements_under_lock",
    "Experiment",
    "ONE_THREAD_REPEATS",
    "standard_grid",
    "TRACE_RUN",
]


HOT_ACCOUNT = 123  # the seed's "where account_id=123"

#: where the transaction takes the hot row's lock (see :class:`Experiment`)
ORDERS = ("lock_first", "lock_last", "update_only")


def sleeps_under_lock(order: str, inserts: int) -> int:
    """Round trips (emulated RTTs) spent holding the lock, by statement order."""
    return {"lock_first": inserts + 2, "lock_last": 2, "update_only": 1}[check_choice("order", order, ORDERS)]


def statements_under_lock(order: str, inserts: int) -> int:
    """INSERT/UPDATE statements executed while holding the lock, by statement order."""
    return {"lock_first": inserts + 1, "lock_last": 1, "update_only": 0}[check_choice("order", order, ORDERS)]


@dataclass(frozen=True)
class Experiment:
    """One run of the seed's transaction on the hot row (or, as a control, on one row per worker)."""

    # client threads, one connection each ("多线程无法突破MySQL锁等待导致的TPS上限")
    threads: int = param(8, kind="int", low=1, high=256)
    # emulated network RTT: a client sleep before each statement sent under the lock
    rtt_ms: float = param(1.5, low=0.0, high=100.0)
    # batchInsert statements per transaction ("分块1, 分块2 ……")
    inserts: int = param(1, kind="int", low=0, high=100)
    # rows per batchInsert: the seed's group commit of up to 20 rows
    rows_per_insert: int = param(20, kind="int", low=1, high=1000)
    # measured window, after the warm-up
    duration_s: float = param(3.0, low=0.1, high=600.0)
    # transactions that commit before this are not counted
    warmup_s: float = param(0.3, low=0.0, high=60.0)
    # False: the control experiment, each worker its own row
    shared_row: bool = param(True, kind="bool")
    # where the lock is taken: "lock_first" is the seed's transaction; "lock_last" sends the
    # INSERTs before SELECT … FOR UPDATE; "update_only" drops the SELECT and lets the UPDATE lock
    order: str = param("lock_first", kind="choice", choices=ORDERS)
    # also sleep one RTT before each statement sent *outside* the lock (BEGIN, the statement that
    # takes the lock, INSERTs sent before it): a fair network for comparing statement orders
    rtt_outside_lock: bool = param(False, kind="bool")

    def __post_init__(self):
        check_fields(self)

    @property
    def round_trips_under_lock(self) -> int:
        """Statements sent while the lock is held, each costing one emulated RTT: every INSERT, the
        UPDATE and the COMMIT for "lock_first"; the UPDATE and the COMMIT for "lock_last"; the COMMIT
        for "update_only"."""
        return sleeps_under_lock(self.order, self.inserts)

    @property
    def statements_under_lock(self) -> int:
        """INSERT/UPDATE statements executed while the lock is held."""
        return statements_under_lock(self.order, self.inserts)

    @property
    def rows_per_txn(self) -> int:
        return self.inserts * self.rows_per_insert


ORDER_LABELS = {
    "lock_first": "the seed: SELECT … FOR UPDATE first",
    "lock_last": "INSERTs first, then lock",
    "update_only": "INSERTs first, UPDATE takes the lock",
}


ONE_THREAD_REPEATS = 3  # the model's input (the one-thread hold) is measured this many times per RTT


def standard_grid(duration_s: float = 3.0) -> list[Experiment]:
    """``make db-lab``'s grid: the hot row at threads × RTT (the one-thread run repeated
    :data:`ONE_THREAD_REPEATS` times, spread over the grid, since it is the model's input), a
    statements series, and the control."""
    exps = []
    for rtt in (0.0, 0.5, 1.5, 3.0):
        for n in (1, 2, 4, 8, 16, 32):
            exps.append(Experiment(threads=n, rtt_ms=rtt, inserts=1, duration_s=duration_s))
    for k in (0, 2, 4, 8):
        exps.append(Experiment(threads=8, rtt_ms=1.5, inserts=k, duration_s=duration_s))
    for k in (1, 4):  # the fixes (take the lock later, or let the UPDATE take it), every statement paying the RTT
        for order in ORDERS:
            for n in (1, 8):
                exps.append(Experiment(threads=n, rtt_ms=1.5, inserts=k, order=order, rtt_outside_lock=True,
                                       duration_s=duration_s))
    for _ in range(ONE_THREAD_REPEATS - 1):
        for rtt in (0.0, 0.5, 1.5, 3.0):
            exps.append(Experiment(threads=1, rtt_ms=rtt, inserts=1, duration_s=duration_s))
    for rtt in (0.0, 0.5, 1.5, 3.0):
        for n in (1, 2, 4, 8, 16, 32):
            exps.append(Experiment(threads=n, rtt_ms=rtt, inserts=1, duration_s=duration_s, shared_row=False))
    return exps


TRACE_RUN = Experiment(threads=4, rtt_ms=1.5, inserts=1)  # the run whose lock grants are kept
