"""02 · Helpers the notebook uses: notebook 01b's measurements, the what-if and its sliders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .. import capacity
from ..plotting import COLORS, decorate, new_figure
from .closed_form import turn_taking_tps
from .figures import (
    _log_y,
    _mark_datacentres,
    _measured,
    _rtt_grid,
    _tps_curve,
)
from .scenario import (
    FITTED,
    OUTSIDE_ROUND_TRIPS,
    RTT_B_MS,
    RTT_C_MS,
    SKETCH,
    Owner,
    Transaction,
)


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
    from .. import db_lab

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
