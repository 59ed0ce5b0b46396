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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import simpy

from . import capacity, sim
from .plotting import COLORS, decorate, new_figure
from .validate import check_int, check_number

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

# --------------------------------------------------------------------------- the seed's numbers
#: "机房B内应用和主库的rtt在0.5ms左右" — RTT between the app in datacentre B and the primary.
RTT_B_MS = 0.5
#: "机房C内应用和主库的rtt在1.5ms" — RTT from datacentre C to the primary (in B).
RTT_C_MS = 1.5
#: "在RTT为0.5ms的情况下平均耗时为16ms左右" — one merged commit, measured, same datacentre.
BATCH_B_MS = 16.0
#: "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右" — one merged commit, cross-datacentre.
BATCH_C_MS = 27.0
#: The two measurements as ``(rtt_ms, batch_ms)`` points for :func:`capacity.fit_round_trips`.
MEASURED = ((RTT_B_MS, BATCH_B_MS), (RTT_C_MS, BATCH_C_MS))
#: Round trips of every cycle spent outside the row lock: the begin round trip (1), the SELECT
#: request's way in before it executes and takes the lock (½), the COMMIT reply's way back after
#: the COMMIT executed and released it (½). The seed: "基本不存在时间交叠的空间(除了set autocommit
#: 和commit后的那仅有的RTT)". Our reading; the seed gives no count.
OUTSIDE_ROUND_TRIPS = 2


@dataclass(frozen=True)
class Transaction:
    """One cycle of an owner's serial hot-key thread: one merged commit, begin to COMMIT reply.

    ``cycle = round_trips × rtt + fixed`` with ``fixed = statements × statement_ms + other_ms``
    (the time that does not depend on the RTT). The lock is held for
    ``hold = (round_trips − outside_round_trips) × rtt + fixed``: all the RTT-independent time is
    taken to be under the lock (an assumption for ``other_ms``; the sketch's three statements are).
    The defaults are the seed's sketch.
    """

    #: "单次耗时为4次rtt" — network round trips per cycle (begin included).
    round_trips: float = 4
    #: "2条SQL耗时+1次commit耗时" — statements executed (SELECT, UPDATE, the commit).
    statements: float = 3
    #: "commit和SQL耗时为0.3ms" — server time per statement, ms.
    statement_ms: float = 0.3
    #: RTT-independent time beyond the sketch's statements (batchInsert, computation…), ms. Ours.
    other_ms: float = 0.0
    #: round trips of the cycle outside the lock (see :data:`OUTSIDE_ROUND_TRIPS`)
    outside_round_trips: float = OUTSIDE_ROUND_TRIPS

    def __post_init__(self):
        check_number("round_trips", self.round_trips, low=0.0)
        check_number("statements", self.statements, low=0.0)
        check_number("statement_ms", self.statement_ms, low=0.0)
        check_number("other_ms", self.other_ms, low=0.0)
        check_number("outside_round_trips", self.outside_round_trips, low=0.0, high=float(self.round_trips))

    @property
    def fixed_ms(self) -> float:
        """The part of the cycle (and of the hold) that does not depend on the RTT, ms."""
        return self.statements * self.statement_ms + self.other_ms

    @property
    def under_lock_round_trips(self) -> float:
        """Round trips spent holding the lock: ``round_trips − outside_round_trips``."""
        return self.round_trips - self.outside_round_trips

    def cycle_ms(self, rtt_ms: float) -> float:
        """One merged commit, begin to COMMIT reply, at ``rtt_ms``: the seed's "单次耗时"."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0)
        return self.round_trips * rtt + self.fixed_ms

    def hold_ms(self, rtt_ms: float) -> float:
        """Time the row lock is held per merged commit at ``rtt_ms`` (SELECT executes → COMMIT executes)."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0)
        return self.under_lock_round_trips * rtt + self.fixed_ms

    def tps(self, rtt_ms: float) -> float:
        """Merged commits/s of one owner's serial thread: ``1000 / cycle`` (the seed's TPS)."""
        return capacity.tps_ceiling(self.cycle_ms(rtt_ms))

    def lock_ceiling(self, rtt_ms: float) -> float:
        """Most merged commits/s the row lock admits with this hold, ``1000 / hold``, reached only
        if other owners fill the time this owner spends outside the lock."""
        return capacity.tps_ceiling(self.hold_ms(rtt_ms))


#: The seed's sketch: 4 round trips + 2 SQL + 1 commit at 0.3 ms ("1000/(0.5*4+0.3*3)=345 TPS").
SKETCH = Transaction()


def fitted_transaction(points: Sequence[Sequence[float]] = MEASURED, sketch: Transaction = SKETCH) -> Transaction:
    """The cycle that reproduces measured ``(rtt_ms, batch_ms)`` points.

    The slope of :func:`capacity.fit_round_trips` is the number of round trips per cycle; of the
    intercept, ``sketch``'s statements keep their time and the rest is ``other_ms``. Rounded to 9
    decimals to drop the least-squares floating-point noise (11.000000000000002 → 11.0).
    """
    rt, fixed = capacity.fit_round_trips(points)
    if rt < sketch.outside_round_trips or fixed < sketch.fixed_ms:
        raise ValueError(
            f"points must fit a line with round_trips >= {sketch.outside_round_trips:g} and fixed_ms >= "
            f"{sketch.fixed_ms:g} (the sketch's statements), got {rt:g} and {fixed:g}"
        )
    return Transaction(round_trips=round(rt, 9), statements=sketch.statements, statement_ms=sketch.statement_ms,
                       other_ms=round(fixed - sketch.fixed_ms, 9), outside_round_trips=sketch.outside_round_trips)


#: Fitted to the two measured merged commits: 11 round trips per cycle + 10.5 ms (the sketch's
#: 3 × 0.3 ms and 9.6 ms more); 9 round trips + 10.5 ms under the lock.
FITTED = fitted_transaction()


# --------------------------------------------------------------------------- SimPy: owners and one row lock
@dataclass(frozen=True)
class Owner:
    """A server whose hot-key thread commits merged batches on the hot row, ``rtt_ms`` from the
    primary database."""

    name: str
    rtt_ms: float
    txn: Transaction = FITTED

    def __post_init__(self):
        check_number("rtt_ms", self.rtt_ms, low=0.0)

    def hold_ms(self) -> float:
        return self.txn.hold_ms(self.rtt_ms)

    def cycle_ms(self) -> float:
        return self.txn.cycle_ms(self.rtt_ms)


#: "同一个hotKey分布在两台机器这两台机器分属于机房B和机房C" — the two owners during the incident.
SEED_OWNERS = (Owner("B", RTT_B_MS), Owner("C", RTT_C_MS))


def turn_taking_tps(owners: Sequence[Owner]) -> float:
    """Closed form for owners' serial threads sharing one row lock, constant RTTs.

    One owner: ``1000 / cycle`` (the lock is idle while the owner is outside it). Several owners
    take strict turns when each owner's time outside the lock (``outside_round_trips × rtt``) is no
    longer than the other owners' holds together: its next SELECT then reaches the server while
    the lock is still held, the lock is never idle, and one round serves one batch of each in
    ``sum(hold)`` ms: ``n × 1000 / sum(hold)``. Outside that regime the owners do not alternate
    (the nearer one takes the lock twice in a row) and only :func:`simulate_lock` answers: a
    ``ValueError`` says so. With ``outside_round_trips=0`` this is the seed's ``1000 / mean(cycle)``
    (:func:`capacity.alternating_owners_tps`).
    """
    os_ = tuple(owners)
    if not os_:
        raise ValueError("owners must list at least one Owner, got ()")
    if len(os_) == 1:
        return capacity.tps_ceiling(os_[0].cycle_ms())
    holds = [o.hold_ms() for o in os_]
    for o, h in zip(os_, holds, strict=True):
        outside = o.cycle_ms() - h
        if outside > sum(holds) - h + 1e-9:
            raise ValueError(
                f"owners do not take strict turns: {o.name!r} is outside the lock {outside:g} ms, longer than "
                f"the other owners' holds ({sum(holds) - h:g} ms); use simulate_lock"
            )
    return capacity.tps_ceiling(sum(holds)) * len(os_)


@dataclass
class LockRun:
    """Result of :func:`simulate_lock`: merged commits per owner, lock intervals, run status."""

    owners: tuple
    horizon_ms: float
    commits: dict
    intervals: list = field(repr=False)
    status: sim.RunStatus

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


# --------------------------------------------------------------------------- 01b's measurements
@dataclass(frozen=True)
class LabRow:
    """01b's committed MariaDB runs at one RTT (the seed's transaction with one batchInsert)."""

    rtt_ms: float
    one_thread_tps: float  # one client thread: a serial owner
    one_thread_cycle_ms: float  # its BEGIN sent → COMMIT returned (the cycle)
    one_thread_hold_ms: float  # its lock granted → COMMIT returned
    plateau_tps: float  # mean over the runs with 2 … 32 threads on the same row
    round_trips_under_lock: int  # emulated RTTs the lab's transaction spends holding the lock


def lab_rows(rtts: Sequence[float] = (0.5, 1.5, 3.0)) -> tuple[dict, list[LabRow]]:
    """``(machine, rows)`` from 01b's committed ``hotkeylab/data/db_lab_runs.csv`` (no database)."""
    from . import db_lab

    machine, runs = db_lab.load_runs()
    rows = []
    for r in rtts:
        one = db_lab.hot_runs(runs, r)[1]
        rows.append(LabRow(r, one.tps, one.latency_ms, one.hold_ms, db_lab.plateau_tps(runs, r),
                           db_lab.Experiment(rtt_ms=r, inserts=one.inserts).round_trips_under_lock))
    return machine, rows


def lab_fit(rows: Sequence[LabRow]) -> dict:
    """:func:`capacity.fit_round_trips` through the lab's one-thread cycles and holds:
    ``{"cycle": (round_trips, fixed_ms), "hold": (round_trips, fixed_ms)}``."""
    return {"cycle": capacity.fit_round_trips([(r.rtt_ms, r.one_thread_cycle_ms) for r in rows]),
            "hold": capacity.fit_round_trips([(r.rtt_ms, r.one_thread_hold_ms) for r in rows])}


# --------------------------------------------------------------------------- figures
def _rtt_grid(rtt_max_ms: float) -> np.ndarray:
    return np.linspace(0.0, rtt_max_ms, 121)


def _tps_curve(txn: Transaction, x) -> np.ndarray:
    """One owner's ``1000 / cycle`` along ``x`` (NaN where the cycle would be 0)."""
    return np.array([txn.tps(r) if txn.round_trips * r + txn.fixed_ms > 0 else np.nan for r in x])


def _log_y(ax, ylim=None):
    """Log y axis with plain tick labels (10, 20, 50, 100, …) instead of powers of ten."""
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    ax.set_yscale("log")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.yaxis.set_major_locator(FixedLocator([10, 20, 50, 100, 200, 500, 1000, 2000, 5000]))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _mark_datacentres(ax):
    for name, rtt, key in (("B", RTT_B_MS, "owner_b"), ("C", RTT_C_MS, "owner_c")):
        ax.axvline(rtt, color=COLORS[key], lw=1, ls=":", alpha=0.8)
        ax.annotate(f"{name}: rtt {rtt:g} ms", xy=(rtt, 0.0), xycoords=("data", "axes fraction"),
                    xytext=(3, 4), textcoords="offset points", color=COLORS[key], fontsize=8)


def _measured(ax, as_tps: bool):
    for name, (rtt, batch), key in zip("BC", MEASURED, ("owner_b", "owner_c"), strict=True):
        y = capacity.tps_ceiling(batch) if as_tps else batch
        ax.plot([rtt], [y], "o", ms=8, color=COLORS[key], zorder=5,
                label=f"measured {name}: {batch:g} ms" if not as_tps else f"measured {name}: {y:.1f}/s")


def plot_cycle(ax=None, *, rtt_ms: float = RTT_B_MS, txn: Transaction = SKETCH):
    """One cycle of the seed's sketch (begin, SELECT … FOR UPDATE, UPDATE, COMMIT) as a timeline:
    each statement's request and reply (½ rtt each way) and its server time, with the interval
    the row lock is held drawn above."""
    if ax is None:
        _, ax = new_figure(height=2.3, layout="constrained")
    rtt = check_number("rtt_ms", rtt_ms, low=0.0, low_open=True)
    sm = txn.statement_ms
    light, dark, server = COLORS["owner_b"], COLORS["owner_b"], COLORS["capacity"]
    segs, t, lock = [], 0.0, [None, None]
    # (label, server time, lock event at the end of the server time)
    steps = [("begin", 0.0, None), ("SELECT … FOR UPDATE", sm, "take"), ("UPDATE", sm, None), ("COMMIT", sm, "release")]
    for label, st, event in steps:
        start = t
        held = lock[0] is not None and lock[1] is None
        segs.append((t, rtt / 2, "net_in" if held else "net_out"))
        t += rtt / 2
        if st:
            if event == "take":
                lock[0] = t
            segs.append((t, st, "server"))
            t += st
            if event == "release":
                lock[1] = t
        held = lock[0] is not None and lock[1] is None
        segs.append((t, rtt / 2, "net_in" if held else "net_out"))
        t += rtt / 2
        ax.text((start + t) / 2, -0.42, label, ha="center", va="bottom", fontsize=8)
    style = {"net_out": dict(facecolors=light, alpha=0.3, label="network, lock not held"),
             "net_in": dict(facecolors=dark, label="network, lock held"),
             "server": dict(facecolors=server, alpha=0.5, label=f"server: SQL or commit ({sm:g} ms)")}
    for kind, st in style.items():
        ax.broken_barh([(s, w) for s, w, k in segs if k == kind], (-0.35, 0.7), edgecolor="white", lw=0.8, **st)
    ax.broken_barh([(lock[0], lock[1] - lock[0])], (0.85, 0.5), facecolors=COLORS["timeouts"], alpha=0.7,
                   edgecolor="white", label=f"row lock held: {lock[1] - lock[0]:.1f} ms")
    ax.text((lock[0] + lock[1]) / 2, 1.1, "SELECT executes → … → COMMIT executes", ha="center", va="center",
            fontsize=8, color="white")
    ax.text(t, 0, f"  cycle {t:.1f} ms", va="center", fontsize=8)
    ax.set_yticks([0, 1.1], ["owner's thread", "hot row"])
    ax.set_ylim(-0.85, 1.5)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    decorate(ax, xlabel=f"time within one merged commit (ms), rtt {rtt:g} ms", legend=False, xlim=(0, t * 1.18))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.42), ncol=2, fontsize=8)
    return ax


def plot_tps_vs_rtt(ax=None, *, transactions=None, rtt_max_ms: float = 3.0, measured: bool = True):
    """One owner's merged commits/s (``1000 / cycle``) vs RTT (log scale), for the seed's sketch and
    the fitted cycle (or ``transactions``: a mapping label → :class:`Transaction`), with the two
    datacentres and the measured points marked."""
    if ax is None:
        _, ax = new_figure(layout="constrained")
    rtt_max = check_number("rtt_max_ms", rtt_max_ms, low=0.0, low_open=True)
    if transactions is None:
        transactions = {
            f"seed's sketch: {SKETCH.round_trips:g} round trips + {SKETCH.fixed_ms:.1f} ms": SKETCH,
            f"fitted: {FITTED.round_trips:g} round trips + {FITTED.fixed_ms:.1f} ms": FITTED,
        }
    x = _rtt_grid(rtt_max)
    styles = [":", "-", "--", "-."]
    for i, (label, txn) in enumerate(transactions.items()):
        ax.plot(x, _tps_curve(txn, x), color=COLORS["capacity"], ls=styles[i % len(styles)], lw=2, label=label)
    if measured:
        _measured(ax, as_tps=True)
    _log_y(ax)
    _mark_datacentres(ax)
    decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="one owner's merged commits/s (log)",
             xlim=(0, rtt_max))
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_hold_vs_rtt(ax=None, *, rtt_max_ms: float = 3.0):
    """Time per merged commit (the whole cycle) vs RTT: straight lines whose slope is the round
    trips per cycle, for the sketch and the fit, and the two measured points."""
    if ax is None:
        _, ax = new_figure(layout="constrained")
    rtt_max = check_number("rtt_max_ms", rtt_max_ms, low=0.0, low_open=True)
    x = _rtt_grid(rtt_max)
    for txn, ls, label in (
        (SKETCH, ":", f"seed's sketch: {SKETCH.round_trips:g} × rtt + {SKETCH.fixed_ms:.1f} ms"),
        (FITTED, "-", f"fitted: {FITTED.round_trips:g} × rtt + {FITTED.fixed_ms:.1f} ms"),
    ):
        ax.plot(x, txn.round_trips * x + txn.fixed_ms, color=COLORS["capacity"], ls=ls, lw=2, label=label)
    _measured(ax, as_tps=False)
    _mark_datacentres(ax)
    decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="one merged commit, whole cycle (ms)",
             xlim=(0, rtt_max), ylim=(0, None))
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_hold_budget(ax=None, *, txn: Transaction = FITTED, sketch: bool = True):
    """Horizontal stacked bars, one per datacentre and transaction: the round trips outside the lock
    (pale), the round trips under it (one block per rtt) and the RTT-independent time (grey); the
    text gives the cycle and the part under the lock."""
    if ax is None:
        _, ax = new_figure(height=2.8, layout="constrained")
    rows = []
    if sketch:
        rows += [(f"{n}, sketch", r, SKETCH, k) for n, r, k in (("B", RTT_B_MS, "owner_b"), ("C", RTT_C_MS, "owner_c"))]
    rows += [(f"{n}, fitted", r, txn, k) for n, r, k in (("B", RTT_B_MS, "owner_b"), ("C", RTT_C_MS, "owner_c"))]
    last = len(rows) - 1
    for y, (_label, rtt, t, key) in enumerate(rows):
        out = t.outside_round_trips * rtt
        ax.broken_barh([(0, out)], (y - 0.35, 0.7), facecolors=COLORS[key], alpha=0.3, edgecolor="white",
                       label="round trips outside the lock" if y == last else None)
        n_in = int(math.floor(t.under_lock_round_trips))
        ax.broken_barh([(out + i * rtt, rtt) for i in range(n_in)], (y - 0.35, 0.7), facecolors=COLORS[key],
                       edgecolor="white", lw=0.8, label="round trips under the lock (one block = one rtt)" if y == last else None)
        net = t.round_trips * rtt
        ax.broken_barh([(net, t.fixed_ms)], (y - 0.35, 0.7), facecolors=COLORS["capacity"], alpha=0.35,
                       edgecolor="white", label="rtt-independent time (under the lock)" if y == last else None)
        ax.text(net + t.fixed_ms + 0.3, y, f"cycle {t.cycle_ms(rtt):.1f} ms, lock {t.hold_ms(rtt):.1f} ms",
                va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    decorate(ax, xlabel="time per merged commit (ms)", legend=False)
    ax.set_xlim(0, max(t.cycle_ms(r) for _, r, t, _ in rows) * 1.4)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, fontsize=8)
    return ax


# --------------------------------------------------------------------------- the what-if
@dataclass
class WhatIf:
    """Numbers of one what-if: cycle, hold and commits/s at the chosen RTT, and in B and C."""

    rtt_ms: float
    round_trips: float
    fixed_ms: float
    under_lock_round_trips: float
    cycle_ms: float
    hold_ms: float
    tps: float  # one owner at rtt_ms: 1000 / cycle
    network_ms: float  # round trips × rtt, in the cycle
    tps_b: float
    tps_c: float
    pair_tps: float  # owners in B and C taking strict turns (turn_taking_tps); NaN if they would not
    ax: object = field(default=None, repr=False, compare=False)

    @property
    def network_share(self) -> float:
        """Fraction of the cycle spent waiting on the network."""
        return self.network_ms / self.cycle_ms

    @property
    def c_over_b(self) -> float:
        """Commits/s an owner in C keeps relative to one in B."""
        return self.tps_c / self.tps_b

    def _repr_markdown_(self) -> str:
        return (
            f"cycle = {self.round_trips:g} × {self.rtt_ms:.2f} ms + {self.fixed_ms:.2f} ms = **{self.cycle_ms:.1f} ms** "
            f"→ one owner **{self.tps:.1f} merged commits/s** ({100 * self.network_share:.0f}% of the cycle is "
            f"network); lock held {self.under_lock_round_trips:g} × {self.rtt_ms:.2f} + {self.fixed_ms:.2f} = "
            f"{self.hold_ms:.1f} ms. Same transaction in B: {self.tps_b:.1f}/s, in C: {self.tps_c:.1f}/s "
            f"(C keeps {100 * self.c_over_b:.1f}% of B); {self._pair_text()}."
        )

    def _pair_text(self) -> str:
        if math.isnan(self.pair_tps):
            return "B and C would not take strict turns (an owner is outside the lock longer than the other holds it)"
        return f"B and C taking turns: {self.pair_tps:.1f}/s"


def _pair_or_nan(txn: Transaction) -> float:
    """B and C taking strict turns with ``txn`` (NaN where they would not alternate)."""
    try:
        return turn_taking_tps((Owner("B", RTT_B_MS, txn), Owner("C", RTT_C_MS, txn)))
    except ValueError:
        return float("nan")


def rtt_whatif(
    rtt_ms: float = RTT_C_MS,
    round_trips: float = FITTED.round_trips,
    fixed_ms: float = FITTED.fixed_ms,
    ax=None,
    *,
    draw: bool = True,
) -> WhatIf:
    """What if the RTT, the round trips per cycle or the RTT-independent time were different?

    The cycle is ``round_trips × rtt_ms + fixed_ms``; :data:`OUTSIDE_ROUND_TRIPS` of its round trips
    are outside the lock. Returns a :class:`WhatIf`; with ``draw`` it plots one owner's commits/s vs
    RTT for this transaction beside the seed's sketch, with the measured points and the chosen RTT
    marked (on ``ax`` or a new figure; axis limits are fixed so slider moves are comparable).
    """
    txn = Transaction(round_trips=round_trips, statements=0, statement_ms=0.0, other_ms=fixed_ms)
    cycle = txn.cycle_ms(rtt_ms)
    result = WhatIf(
        rtt_ms=float(rtt_ms), round_trips=float(round_trips), fixed_ms=float(fixed_ms),
        under_lock_round_trips=txn.under_lock_round_trips, cycle_ms=cycle, hold_ms=txn.hold_ms(rtt_ms),
        tps=capacity.tps_ceiling(cycle), network_ms=float(round_trips) * float(rtt_ms),
        tps_b=txn.tps(RTT_B_MS), tps_c=txn.tps(RTT_C_MS),
        pair_tps=_pair_or_nan(txn),
    )
    if draw:
        if ax is None:
            _, ax = new_figure(layout="constrained")
        rtt_max = 3.0
        x = _rtt_grid(rtt_max)
        ax.plot(x, _tps_curve(SKETCH, x), color=COLORS["capacity"], ls=":", lw=2,
                label=f"seed's sketch: {SKETCH.round_trips:g} round trips + {SKETCH.fixed_ms:.1f} ms")
        ax.plot(x, _tps_curve(txn, x), color=COLORS["capacity"], ls="-", lw=2,
                label=f"what-if: {result.round_trips:g} round trips + {result.fixed_ms:.1f} ms")
        _measured(ax, as_tps=True)
        ax.plot([result.rtt_ms], [result.tps], "s", ms=11, mfc="none", mec=COLORS["capacity"], mew=2,
                zorder=6, label=f"what-if at rtt {result.rtt_ms:.2f} ms: {result.tps:.1f}/s")
        _log_y(ax, ylim=(10, 3000))
        _mark_datacentres(ax)
        decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="one owner's merged commits/s (log)",
                 xlim=(0, rtt_max))
        ax.legend(loc="upper right", fontsize=8)
        result.ax = ax
    return result


def whatif_controls() -> dict:
    """Sliders for ``ipywidgets.interactive(rtt_whatif, **whatif_controls())``.

    Children order of the resulting widget: ``rtt_ms``, ``round_trips``, ``fixed_ms``. The round
    trips start at :data:`OUTSIDE_ROUND_TRIPS` (a cycle has at least those).
    """
    import ipywidgets as widgets

    style = {"description_width": "170px"}
    layout = widgets.Layout(width="480px")
    return {
        "rtt_ms": widgets.FloatSlider(value=RTT_C_MS, min=0.1, max=3.0, step=0.1, description="rtt (ms)",
                                      style=style, layout=layout, continuous_update=False),
        "round_trips": widgets.IntSlider(value=int(round(FITTED.round_trips)), min=OUTSIDE_ROUND_TRIPS, max=20,
                                         step=1, description="round trips per cycle", style=style,
                                         layout=layout, continuous_update=False),
        "fixed_ms": widgets.FloatSlider(value=round(FITTED.fixed_ms, 2), min=0.5, max=20.0, step=0.1,
                                        description="rtt-independent time (ms)", style=style, layout=layout,
                                        continuous_update=False),
        "ax": widgets.fixed(None),
        "draw": widgets.fixed(True),
    }
