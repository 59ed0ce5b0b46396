"""02 · RTT arithmetic: the hot row's lock hold as a budget of network round trips.

Seed 000 (a hot row under MySQL strict two-phase locking, S2PL): the row lock taken at
``SELECT … FOR UPDATE`` is released only at ``COMMIT``, so every round trip between the
application and the primary database in between is spent holding the lock. The seed's sketch
counts 4 round trips and 3 statements of 0.3 ms; the measured merged commits (16 ms in
datacentre B at RTT 0.5 ms, 27 ms in C at RTT 1.5 ms) fit 11 round trips and 10.5 ms of work
that does not depend on the RTT.

- :class:`Transaction`: what one merged commit does under the lock (round trips, statements,
  statement time); :data:`SKETCH` (the seed's sketch) and :data:`FITTED` (fitted to the two
  measurements with :func:`hotkeylab.capacity.fit_round_trips`).
- :func:`simulate_lock`: a small SimPy model, one process per hot-key thread (one owner per
  datacentre), all taking turns on one row lock. Its commits/s agree with
  :func:`hotkeylab.capacity.tps_ceiling` and :func:`hotkeylab.capacity.alternating_owners_tps`.
- :func:`rtt_whatif`: the notebook's what-if (RTT, round trips, statement time → hold, commits/s
  and a figure); :func:`whatif_controls` builds its sliders.
- :func:`plot_tps_vs_rtt`, :func:`plot_hold_vs_rtt`, :func:`plot_hold_budget`: the figures.

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
    "Transaction",
    "SKETCH",
    "FITTED",
    "fitted_transaction",
    "Owner",
    "SEED_OWNERS",
    "LockRun",
    "simulate_lock",
    "WhatIf",
    "rtt_whatif",
    "whatif_controls",
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


@dataclass(frozen=True)
class Transaction:
    """What one merged commit does while it holds the hot row's lock.

    ``hold = round_trips × rtt_ms + statements × statement_ms`` (:func:`capacity.lock_hold_ms`).
    The defaults are the seed's sketch.
    """

    #: "单次耗时为4次rtt" — network round trips while the lock is held.
    round_trips: float = 4
    #: "2条SQL耗时+1次commit耗时" — statements executed (2 SQL + the commit).
    statements: float = 3
    #: "commit和SQL耗时为0.3ms" — server time per statement, ms.
    statement_ms: float = 0.3

    def __post_init__(self):
        check_number("round_trips", self.round_trips, low=0.0)
        check_number("statements", self.statements, low=0.0)
        check_number("statement_ms", self.statement_ms, low=0.0)

    @property
    def fixed_ms(self) -> float:
        """The part of the hold that does not depend on the RTT: ``statements × statement_ms``."""
        return self.statements * self.statement_ms

    def hold_ms(self, rtt_ms: float) -> float:
        """Lock hold at ``rtt_ms`` (ms)."""
        return capacity.lock_hold_ms(rtt_ms, self.round_trips, self.statements, self.statement_ms)

    def tps(self, rtt_ms: float) -> float:
        """Merged commits per second one row lock admits at ``rtt_ms``: ``1000 / hold``."""
        return capacity.tps_ceiling(self.hold_ms(rtt_ms))


#: The seed's sketch: 4 round trips + 2 SQL + 1 commit at 0.3 ms ("1000/(0.5*4+0.3*3)=345 TPS").
SKETCH = Transaction()


def fitted_transaction(points: Sequence[Sequence[float]] = MEASURED, statements: float = 3) -> Transaction:
    """The transaction shape that reproduces measured ``(rtt_ms, batch_ms)`` points.

    The slope of :func:`capacity.fit_round_trips` is the number of round trips; the intercept (the
    RTT-independent time) is spread over ``statements`` statements. Rounded to 9 decimals to drop
    the least-squares floating-point noise (11.000000000000002 → 11.0).
    """
    rt, fixed = capacity.fit_round_trips(points)
    st = check_number("statements", statements, low=0.0, low_open=True)
    if rt < 0 or fixed < 0:
        raise ValueError(
            f"points must fit a line with round_trips >= 0 and fixed_ms >= 0, got {rt:g} and {fixed:g}"
        )
    return Transaction(round_trips=round(rt, 9), statements=st, statement_ms=round(fixed / st, 9))


#: Fitted to the two measured merged commits: 11 round trips, 3 statements × 3.5 ms = 10.5 ms.
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


#: "同一个hotKey分布在两台机器这两台机器分属于机房B和机房C" — the two owners during the incident.
SEED_OWNERS = (Owner("B", RTT_B_MS), Owner("C", RTT_C_MS))


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
        """The formula for the same owners: ``1000 / hold`` for one, ``1000 / mean(hold)`` for
        several taking turns (:func:`capacity.alternating_owners_tps`)."""
        return capacity.alternating_owners_tps([o.hold_ms() for o in self.owners])


def _rtt_sampler(rng, rtt_ms: float, rtt_cv: float):
    if rtt_cv < 1e-6 or rtt_ms == 0:  # practically constant (and 1 / cv² would overflow)
        return lambda: rtt_ms
    shape = 1.0 / rtt_cv**2
    scale = rtt_ms / shape
    return lambda: float(rng.gamma(shape, scale))


def hot_key_thread(env, owner: Owner, row_lock, next_rtt, run: LockRun):
    """One owner's single hot-key thread: always busy, one merged commit after another.

    Takes the row lock at ``SELECT … FOR UPDATE``, spends its round trips and statements holding
    it, releases it at ``COMMIT`` and starts the next batch at once ("一直忙碌提交运转").
    """
    txn = owner.txn
    n_rt = int(txn.round_trips)
    n_st = int(txn.statements)
    while True:
        with row_lock.request() as req:
            yield req
            start = env.now
            for _ in range(n_rt):
                yield env.timeout(next_rtt())
            if n_st and txn.statement_ms:
                yield env.timeout(n_st * txn.statement_ms)
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
    ``rtt_cv`` and the same mean); statements take ``statements × statement_ms``. Counts merged
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
        check_int(f"owners[{i}].txn.statements", o.txn.statements, low=0)
        try:
            o.hold_ms()
        except ValueError as e:
            raise ValueError(f"owners[{i}] ({o.name!r}): {e}") from None
    horizon = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True)
    cv = check_number("rtt_cv", rtt_cv, low=0.0, high=5.0)
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    run = LockRun(
        owners=owners,
        horizon_ms=horizon,
        commits={n: 0 for n in names},
        intervals=[] if keep_intervals else None,
        status=None,
    )
    for o in owners:
        env.process(hot_key_thread(env, o, row_lock, _rtt_sampler(rng, o.rtt_ms, cv), run))
    run.status = sim.run_bounded(env, horizon, max_events)
    return run


# --------------------------------------------------------------------------- figures
def _rtt_grid(rtt_max_ms: float) -> np.ndarray:
    return np.linspace(0.0, rtt_max_ms, 121)


def _tps_curve(txn: Transaction, x) -> np.ndarray:
    """``1000 / hold`` along ``x`` (NaN where the hold would be 0)."""
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
        ax.annotate(
            f"{name}: rtt {rtt:g} ms",
            xy=(rtt, 0.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, 4),
            textcoords="offset points",
            color=COLORS[key],
            fontsize=8,
        )


def _measured(ax, as_tps: bool):
    for name, (rtt, batch), key in zip("BC", MEASURED, ("owner_b", "owner_c"), strict=True):
        y = capacity.tps_ceiling(batch) if as_tps else batch
        ax.plot([rtt], [y], "o", ms=8, color=COLORS[key], zorder=5,
                label=f"measured {name}: {batch:g} ms" if not as_tps else f"measured {name}: {y:.1f}/s")


def plot_tps_vs_rtt(ax=None, *, transactions=None, rtt_max_ms: float = 3.0, measured: bool = True):
    """Merged commits/s one row lock admits vs RTT (log scale), for the seed's sketch and the
    fitted transaction (or ``transactions``: a mapping label → :class:`Transaction`), with the
    two datacentres and the measured points marked."""
    if ax is None:
        _, ax = new_figure(layout="constrained")
    rtt_max = check_number("rtt_max_ms", rtt_max_ms, low=0.0, low_open=True)
    if transactions is None:
        transactions = {
            f"seed's sketch: {SKETCH.round_trips:g} round trips": SKETCH,
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
    decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="merged commits/s (log scale)",
             xlim=(0, rtt_max))
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_hold_vs_rtt(ax=None, *, rtt_max_ms: float = 3.0):
    """Lock hold per merged commit vs RTT: straight lines (slope = round trips) for the sketch and
    the fit, and the two measured points."""
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
    decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="lock hold per merged commit (ms)",
             xlim=(0, rtt_max), ylim=(0, None))
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_hold_budget(ax=None, *, txn: Transaction = FITTED, sketch: bool = True):
    """Horizontal stacked bars: what the lock is held for in B and C — round trips (one segment
    per round trip) and RTT-independent work — for ``txn`` and, if ``sketch``, the seed's sketch."""
    if ax is None:
        _, ax = new_figure(height=2.8, layout="constrained")
    rows = []
    if sketch:
        rows += [(f"{n}, sketch", r, SKETCH, k) for n, r, k in (("B", RTT_B_MS, "owner_b"), ("C", RTT_C_MS, "owner_c"))]
    rows += [(f"{n}, fitted", r, txn, k) for n, r, k in (("B", RTT_B_MS, "owner_b"), ("C", RTT_C_MS, "owner_c"))]
    for y, (_label, rtt, t, key) in enumerate(rows):
        n_rt = int(math.floor(t.round_trips))
        segs = [(i * rtt, rtt) for i in range(n_rt)]
        ax.broken_barh(segs, (y - 0.35, 0.7), facecolors=COLORS[key], edgecolor="white", lw=0.8,
                       label="round trips (one block = one rtt)" if y == len(rows) - 1 else None)
        net = t.round_trips * rtt
        ax.broken_barh([(net, t.fixed_ms)], (y - 0.35, 0.7), facecolors=COLORS["capacity"], alpha=0.35,
                       edgecolor="white", label="statements and work (no rtt)" if y == len(rows) - 1 else None)
        ax.text(net + t.fixed_ms + 0.3, y, f"{t.hold_ms(rtt):.1f} ms", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    decorate(ax, xlabel="time the hot row stays locked per merged commit (ms)", legend=False)
    ax.set_xlim(0, max(t.hold_ms(r) for _, r, t, _ in rows) * 1.12)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, fontsize=8)
    return ax


# --------------------------------------------------------------------------- the what-if
@dataclass
class WhatIf:
    """Numbers of one what-if: hold and commits/s at the chosen RTT, and at B and C."""

    rtt_ms: float
    round_trips: float
    statement_ms: float
    statements: float
    hold_ms: float
    tps: float
    network_ms: float
    tps_b: float
    tps_c: float
    ax: object = field(default=None, repr=False, compare=False)

    @property
    def network_share(self) -> float:
        """Fraction of the hold spent waiting on the network."""
        return self.network_ms / self.hold_ms

    @property
    def c_over_b(self) -> float:
        """Commits/s an owner in C keeps relative to one in B."""
        return self.tps_c / self.tps_b

    def _repr_markdown_(self) -> str:
        return (
            f"hold = {self.round_trips:g} × {self.rtt_ms:.2f} ms + {self.statements:g} × "
            f"{self.statement_ms:.2f} ms = **{self.hold_ms:.1f} ms** → **{self.tps:.1f} merged commits/s** "
            f"({100 * self.network_share:.0f}% of the hold is network). "
            f"Same transaction in B: {self.tps_b:.1f}/s, in C: {self.tps_c:.1f}/s "
            f"(C keeps {100 * self.c_over_b:.1f}% of B)."
        )


def rtt_whatif(
    rtt_ms: float = RTT_C_MS,
    round_trips: float = FITTED.round_trips,
    statement_ms: float = FITTED.statement_ms,
    statements: float = FITTED.statements,
    ax=None,
    *,
    draw: bool = True,
) -> WhatIf:
    """What if the RTT, the round trips under the lock or the statement time were different?

    Returns a :class:`WhatIf` with the hold (``round_trips × rtt_ms + statements × statement_ms``),
    the commits/s ceiling ``1000 / hold``, and the same transaction's ceiling in B and C. With
    ``draw`` it plots the ceiling vs RTT for this transaction beside the seed's sketch, with the
    measured points and the chosen RTT marked (on ``ax`` or a new figure; axis limits are fixed so
    slider moves are comparable).
    """
    hold = capacity.lock_hold_ms(rtt_ms, round_trips, statements, statement_ms)
    txn = Transaction(round_trips=round_trips, statements=statements, statement_ms=statement_ms)

    result = WhatIf(
        rtt_ms=float(rtt_ms),
        round_trips=float(round_trips),
        statement_ms=float(statement_ms),
        statements=float(statements),
        hold_ms=hold,
        tps=capacity.tps_ceiling(hold),
        network_ms=float(round_trips) * float(rtt_ms),
        tps_b=txn.tps(RTT_B_MS),
        tps_c=txn.tps(RTT_C_MS),
    )
    if draw:
        if ax is None:
            _, ax = new_figure(layout="constrained")
        rtt_max = 3.0
        x = _rtt_grid(rtt_max)
        ax.plot(x, _tps_curve(SKETCH, x), color=COLORS["capacity"], ls=":", lw=2,
                label=f"seed's sketch: {SKETCH.round_trips:g} round trips, {SKETCH.statements:g} × "
                      f"{SKETCH.statement_ms:g} ms")
        ax.plot(x, _tps_curve(txn, x), color=COLORS["capacity"], ls="-", lw=2,
                label=f"what-if: {result.round_trips:g} round trips, {result.statements:g} × "
                      f"{result.statement_ms:.2f} ms")
        _measured(ax, as_tps=True)
        ax.plot([result.rtt_ms], [result.tps], "s", ms=9, mfc="white", mec=COLORS["capacity"], mew=2,
                zorder=6, label=f"what-if at rtt {result.rtt_ms:.2f} ms: {result.tps:.1f}/s")
        _log_y(ax, ylim=(10, 3000))
        _mark_datacentres(ax)
        decorate(ax, xlabel="rtt to the primary database (ms)", ylabel="merged commits/s (log scale)",
                 xlim=(0, rtt_max))
        ax.legend(loc="upper right", fontsize=8)
        result.ax = ax
    return result


def whatif_controls() -> dict:
    """Sliders for ``ipywidgets.interactive(rtt_whatif, **whatif_controls())``.

    Children order of the resulting widget: ``rtt_ms``, ``round_trips``, ``statement_ms`` (the
    number of statements and ``ax`` are fixed).
    """
    import ipywidgets as widgets

    style = {"description_width": "150px"}
    layout = widgets.Layout(width="460px")
    return {
        "rtt_ms": widgets.FloatSlider(value=RTT_C_MS, min=0.1, max=3.0, step=0.1, description="rtt (ms)",
                                      style=style, layout=layout, continuous_update=False),
        "round_trips": widgets.IntSlider(value=int(round(FITTED.round_trips)), min=0, max=20, step=1,
                                         description="round trips under lock", style=style, layout=layout,
                                         continuous_update=False),
        "statement_ms": widgets.FloatSlider(value=round(FITTED.statement_ms, 2), min=0.1, max=5.0, step=0.1,
                                            description="time per statement (ms)", style=style, layout=layout,
                                            continuous_update=False),
        "statements": widgets.fixed(FITTED.statements),
        "ax": widgets.fixed(None),
        "draw": widgets.fixed(True),
    }
