"""02 · The model: one SimPy process per owner's hot-key thread, all taking turns on one row lock,
then :func:`simulate_lock`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import simpy

from .. import sim
from ..validate import check_int, check_number
from .closed_form import turn_taking_tps
from .scenario import (
    SEED_OWNERS,
    Owner,
)


@dataclass(frozen=True)
class LockSummary(sim.Summary):
    """The key numbers of a :class:`LockRun`. No samples: ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    commits: int
    """merged commits finished by the horizon, all owners (count)"""
    tps: float
    """merged commits per second, all owners (1/s)"""
    tps_closed_form: float
    """:func:`turn_taking_tps` for the same owners (1/s)"""
    lock_busy_share: float | None
    """share of the horizon the row lock was held (0-1; None without ``keep_intervals``)"""


@dataclass
class LockRun(sim.Run):
    """Result of :func:`simulate_lock`: merged commits per owner, lock intervals, run status;
    summary :class:`LockSummary`. The ledger is a closed loop's: each owner's thread always has one
    merged commit open, so ``in_system`` is the number of owners."""

    owners: tuple
    horizon_ms: float
    commits: dict
    intervals: list = field(repr=False)
    status: sim.RunStatus

    Summary = LockSummary

    @property
    def ledger(self) -> sim.Ledger:
        n, k = sum(self.commits.values()), len(self.owners)
        return sim.Ledger(arrived=n + k, served=n, in_system=k)

    def summarise(self) -> LockSummary:
        busy = self.lock_busy_share() if self.intervals is not None else None
        return LockSummary(sum(self.commits.values()), self.tps(), self.closed_form_tps(), busy)

    def tps(self, name: str | None = None) -> float:
        """Merged commits per second of one owner (or all of them, ``name=None``)."""
        n = sum(self.commits.values()) if name is None else self.commits[name]
        return 1000.0 * n / self.horizon_ms

    def closed_form_tps(self) -> float:
        """:func:`turn_taking_tps` for the same owners."""
        return turn_taking_tps(self.owners)

    def lock_busy_share(self) -> float:
        """Fraction of the horizon the row lock was held (needs ``keep_intervals=True``)."""
        return sum(min(e, self.horizon_ms) - s for _, s, e in self.intervals if s < self.horizon_ms) / self.horizon_ms


def _rtt_sampler(rng, rtt_ms: float, rtt_cv: float):
    if rtt_cv < 1e-6 or rtt_ms == 0:  # practically constant (and 1 / cv² would overflow)
        return lambda: rtt_ms
    shape = 1.0 / rtt_cv**2
    scale = rtt_ms / shape
    return lambda: float(rng.gamma(shape, scale))


def hot_key_thread(env, owner: Owner, row_lock, next_rtt, run: LockRun):
    """One owner's single hot-key thread: always busy, one merged commit after another
    ("一直忙碌提交运转").

    Outside the lock: the COMMIT reply's way back, the begin round trip and the SELECT's way in
    (``outside_round_trips``). The SELECT executes and takes the row lock (waiting in the lock's
    queue if the other owner holds it); the remaining round trips and all the RTT-independent work
    happen holding it; the COMMIT executes and releases it.
    """
    txn = owner.txn
    n_out = int(txn.outside_round_trips)
    n_in = int(txn.under_lock_round_trips)
    while True:
        for _ in range(n_out):
            yield env.timeout(next_rtt())
        with row_lock.request() as req:
            yield req
            start = env.now
            for _ in range(n_in):
                yield env.timeout(next_rtt())
            if txn.fixed_ms:
                yield env.timeout(txn.fixed_ms)
            end = env.now
        if end <= run.horizon_ms:
            run.commits[owner.name] += 1
            if run.intervals is not None:
                run.intervals.append((owner.name, start, end))


def simulate_lock(
    owners: Sequence[Owner] = SEED_OWNERS,
    *,
    horizon_ms: float = 10_000.0,
    seed: int = 0,
    rtt_cv: float = 0.0,
    max_events: int = 2_000_000,
    keep_intervals: bool = True,
) -> LockRun:
    """Owners' hot-key threads taking turns on one row lock (FIFO, like InnoDB's lock queue).

    Each round trip lasts ``rtt_ms`` (constant, or gamma-distributed with coefficient of variation
    ``rtt_cv`` and the same mean); the RTT-independent work takes ``fixed_ms``. Counts merged
    commits finished by ``horizon_ms``. Ends in bounded time (``max_events``).
    """
    owners = tuple(owners)
    if not owners:
        raise ValueError("owners must list at least one Owner, got ()")
    names = [o.name for o in owners]
    if len(set(names)) != len(names):
        raise ValueError(f"owners must have distinct names, got {names}")
    for i, o in enumerate(owners):
        check_int(f"owners[{i}].txn.round_trips", o.txn.round_trips, low=0)
        check_int(f"owners[{i}].txn.outside_round_trips", o.txn.outside_round_trips, low=0)
        if o.cycle_ms() <= 0:
            raise ValueError(f"owners[{i}] ({o.name!r}): the cycle must last > 0 ms, got {o.cycle_ms():g}")
    horizon = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True)
    cv = check_number("rtt_cv", rtt_cv, low=0.0, high=5.0)
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    run = LockRun(owners=owners, horizon_ms=horizon, commits={n: 0 for n in names},
                  intervals=[] if keep_intervals else None, status=None)
    for o in owners:
        env.process(hot_key_thread(env, o, row_lock, _rtt_sampler(rng, o.rtt_ms, cv), run))
    run.status = sim.run_bounded(env, horizon, max_events)
    return run
