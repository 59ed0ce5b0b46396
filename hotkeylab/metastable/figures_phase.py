"""Phase diagrams and the hysteresis ramp of notebook 04a, taking the swept grids and goodputs as
data, with the closed forms (:mod:`.closed_form`) drawn over them: the phase boundary, the
bistable band's edges and the load at which a full queue dies out in time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import plotting
from ..plotting import COLORS
from ..validate import check_choice
from .analysis import BLOCK_S, closed_forms
from .closed_form import band_user_rates, drain_edge_rate, trigger_boundary_grid, trigger_boundary_s
from .experiments import HYST_HIGH_PER_S, HYST_OVERLOAD_MS, PHASE_AFTER_MS
from .scenario import SEED_INCIDENT, Scenario

__all__ = ["phase_figure", "plot_phase_load", "plot_hysteresis"]


def phase_figure(grids: dict, xs: Sequence[float], ys: Sequence[float], *, kind: str = "duration",
                 duration_s: float = 20.0):
    """Recovered/stuck grids side by side (``{label: grid}``), with the closed forms drawn over them.

    ``kind="duration"``: x = C's batch time (ms), y = trigger duration (s); the curve is
    :func:`trigger_boundary_s`, the duration after which the queue reaches the two-owner timeout
    threshold (stuck above it, when the load is in the bistable band). ``kind="load"``: x = C's batch
    time, y = base user rate (requests/s, the +20% peak on top); the lines are the bistable band's
    edges in base-rate units and the contour where a ``duration_s`` trigger just reaches the
    threshold."""
    check_choice("kind", kind, ("duration", "load"))
    n = len(grids)
    fig, axes = plotting.new_figure(1, n, height=3.3, squeeze=False, layout="constrained")
    fig.set_size_inches(max(8.0, 4.6 * n), 3.3)
    xs_f = np.linspace(min(xs) - 1.0, max(xs) + 2.0, 200)
    sc = SEED_INCIDENT
    peak = sc.peak.factor
    for k, (ax, (label, g)) in enumerate(zip(axes.flat, grids.items(), strict=True)):
        plotting.phase_diagram(g, xs, ys, ax=ax, xlabel="C's batch time (ms)",
                               ylabel="trigger duration (s)" if kind == "duration" else "base load (user requests/s)",
                               labels=("stuck", "recovered"))
        if k < n - 1 and ax.get_legend() is not None:
            ax.get_legend().remove()
        if kind == "duration":
            b = trigger_boundary_s(xs_f)
            ax.plot(xs_f, np.where(np.isfinite(b), b, np.nan), color="black", lw=2, ls="--",
                    label="queue reaches the threshold (closed form)")
            ax.set_ylim(min(ys) - 0.5 * (ys[1] - ys[0]), max(ys) + 0.5 * (ys[-1] - ys[-2]))
        else:
            lo, hi = band_user_rates(sc)
            for edge, ls, what in ((lo, ":", "lower"), (hi, "-.", "upper")):
                if min(ys) <= edge / peak <= max(ys):
                    ax.axhline(edge / peak, color="black", lw=1.5, ls=ls, label=f"band's {what} edge (closed form)")
            yy = np.linspace(min(ys), max(ys), 120)
            zz = trigger_boundary_grid(xs_f, yy, sc)
            ax.contour(xs_f, yy, np.where(np.isfinite(zz), zz, 1e9), levels=[duration_s], colors="black",
                       linestyles="--", linewidths=2)
            ax.plot([], [], color="black", ls="--", lw=2, label=f"a {duration_s:g}-s trigger reaches the threshold")
            ax.set_ylim(min(ys) - 0.5 * (ys[1] - ys[0]), max(ys) + 0.5 * (ys[-1] - ys[-2]))
        ax.set_xlim(min(xs) - 0.5 * (xs[1] - xs[0]), max(xs) + 0.5 * (xs[-1] - xs[-2]))
        ax.text(0.02, 0.98, label, transform=ax.transAxes, va="top", fontsize=9,
                bbox=dict(facecolor="white", alpha=0.85, lw=0))
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["recovered"]), Patch(color=COLORS["stuck"])]
    labels = [f"recovered within {PHASE_AFTER_MS / 1e3:g} s of the trigger's end", "stuck"]
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8)
    for ax in axes.flat:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    return fig, axes




def plot_hysteresis(h: dict, band: tuple[float, float] | None = None, ax=None):
    """Goodput vs offered load, ramping up (healthy start) and down (after overload)."""
    if ax is None:
        _, ax = plotting.new_figure(layout="constrained")
    x = h["offered"]
    ax.plot(x, x, color=COLORS["offered"], lw=1, ls=":", label="goodput = offered")
    ax.plot(x, h["up"], "o-", color=COLORS["goodput"], label="ramping up (starts healthy)")
    ax.plot(x, h["down"], "s--", color=COLORS["stuck"],
            label=f"ramping down (after {HYST_OVERLOAD_MS / 1e3:g} s at {HYST_HIGH_PER_S:g}/s)")
    for xi, yu, yd in zip(x, h["up"], h["down"], strict=True):
        if abs(yu - yd) > 0.2 * xi:
            ax.annotate("", xy=(xi, yd), xytext=(xi, yu),
                        arrowprops=dict(arrowstyle="->", color=COLORS["capacity"], lw=0.8, alpha=0.6))
    if band is not None:
        ax.axvspan(band[0], band[1], color=COLORS["trigger"], alpha=0.35, lw=0,
                   label=f"bistable band {band[0]:.0f}–{band[1]:.0f} requests/s (closed form)")
    plotting.decorate(ax, xlabel="offered load (user requests/s)", ylabel="goodput (requests/s)", legend=False)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_phase_load(grid, xs: Sequence[float], loads: Sequence[float], *, duration_s: float, after_s: float,
                    queue_batches: float, sc: Scenario = SEED_INCIDENT, ax=None):
    """Recovered/stuck cells (one run each) over C's batch time × base user rate, with the closed
    forms in base-rate units: the bistable band's lower and upper edges, the load below which a
    storm with ``queue_batches`` waiting is back under the threshold early enough for a passing 5-s
    block within ``after_s`` (:func:`drain_edge_rate` with ``after_s − BLOCK_S``), and
    the contour where a ``duration_s`` trigger just takes the queue to the two-owner threshold."""
    peak = sc.peak.factor if sc.peak is not None else 1.0
    ax = plotting.phase_diagram(grid, xs, loads, ax=ax, xlabel="C's batch time (ms)",
                                ylabel="base load (user requests/s, +20% at the peak)")
    ax.get_legend().remove()
    lo, hi = band_user_rates(sc)
    attempts = closed_forms(sc)["attempts_per_request_stuck"]
    drain = drain_edge_rate(sc, queue_batches, after_s - BLOCK_S, attempts)
    x_f = np.linspace(min(xs) - 2.0, max(xs) + 3.0, 200)
    dy = np.diff(loads)
    y_lo, y_hi = min(loads) - 0.5 * dy[0], max(loads) + 0.5 * dy[-1]
    for y, ls, lab in ((hi, "-.", "band's upper edge: the users alone fill the thread"),
                       (lo, ":", "band's lower edge: below it a storm dies out"),
                       (drain, "-", f"below: a full queue ({queue_batches:g} batches) dies out in time")):
        if y_lo <= y / peak <= y_hi:  # only lines that are drawn go into the legend
            ax.axhline(y / peak, color="black", lw=1.5 if ls != "-" else 1.0, ls=ls, label=lab)
    yy = np.linspace(min(loads), max(loads), 120)
    zz = np.array([trigger_boundary_s(x_f, sc, user_rate_per_s=lam) for lam in yy])
    ax.contour(x_f, yy, np.where(np.isfinite(zz), zz, 1e9), levels=[duration_s], colors="black",
               linestyles="--", linewidths=2)
    ax.plot([], [], color="black", ls="--", lw=2, label=f"right of it a {duration_s:g}-s trigger reaches the threshold")
    ax.set_ylim(y_lo, y_hi)
    dx = np.diff(xs)
    ax.set_xlim(min(xs) - 0.5 * dx[0], max(xs) + 0.5 * dx[-1])
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["recovered"], label=f"recovered within {after_s:g} s of the trigger's end (one seed)"),
               Patch(color=COLORS["stuck"], label="not recovered by then (one seed)")]
    h, lab = ax.get_legend_handles_labels()
    ax.legend(handles + h, [x.get_label() for x in handles] + lab, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              fontsize=8)
    return ax
