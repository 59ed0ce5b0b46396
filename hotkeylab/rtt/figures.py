"""02 · Figures: the cycle as a budget of round trips, hold and TPS against the RTT.
"""

from __future__ import annotations

import math

import numpy as np

from .. import capacity
from ..plotting import COLORS, decorate, new_figure
from ..validate import check_number
from .scenario import (
    FITTED,
    MEASURED,
    RTT_B_MS,
    RTT_C_MS,
    SKETCH,
    Transaction,
)


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
