"""House style for every figure in hotkeylab.

Fixed colour meanings across all notebooks (:data:`COLORS`): user traffic, retries, goodput,
timeouts, rejected, queue, lock owners; trigger windows shaded grey. Lowercase axis labels with
units, ``lw=2``, no titles (the markdown above a figure says what it shows).

- :func:`use_style` applies the rcParams (called on import of this module).
- :func:`timeline` draws windowed series (offered, goodput, queue, …) against time in seconds.
- :func:`shade` marks trigger/intervention windows.
- :func:`lock_gantt` draws who holds a lock when.
- :func:`phase_diagram` draws a recovered/stuck grid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "COLORS",
    "LABELS",
    "use_style",
    "new_figure",
    "timeline",
    "shade",
    "lock_gantt",
    "phase_diagram",
    "decorate",
    "queue_axis",
    "merged_legend",
]

#: One meaning per colour, everywhere.
COLORS = {
    "offered": "#1f77b4",   # user traffic (blue)
    "user": "#1f77b4",
    "retries": "#ff7f0e",   # retries (orange)
    "goodput": "#2ca02c",   # answered in time (green)
    "served": "#2ca02c",
    "timeouts": "#d62728",  # timed out at the client (red)
    "rejected": "#8c564b",  # refused at the door (brown)
    "wasted": "#e377c2",    # processed after the client gave up (pink)
    "queue": "#9467bd",     # queue length (purple)
    "latency": "#17becf",   # latency (cyan)
    "capacity": "#444444",  # capacity lines, closed forms (dark grey, dashed)
    "formula": "#444444",
    "trigger": "#bbbbbb",   # shaded trigger window (light grey)
    "intervention": "#c6dbef",  # shaded intervention window (pale blue)
    "owner_b": "#1f77b4",
    "owner_c": "#ff7f0e",
    "recovered": "#2ca02c",
    "stuck": "#d62728",
}

LABELS = {
    "offered": "user requests/s",
    "retries": "retries/s",
    "goodput": "goodput (answered in time)/s",
    "timeouts": "timeouts/s",
    "rejected": "rejected/s",
    "wasted": "wasted work/s",
    "queue": "queue (batches)",
}

_RC = {
    "figure.figsize": (8.0, 3.6),
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2,
    "legend.frameon": False,
    "font.size": 10,
}


def use_style() -> None:
    """Apply the house rcParams (modest dpi keeps notebooks light)."""
    mpl.rcParams.update(_RC)


use_style()


def new_figure(nrows: int = 1, ncols: int = 1, *, height: float | None = None, **kw):
    """``plt.subplots`` with the house size; ``height`` in inches per row."""
    w, h = _RC["figure.figsize"]
    if height is not None:
        h = height
    return plt.subplots(nrows, ncols, figsize=(w, h * nrows), squeeze=kw.pop("squeeze", True), **kw)


def decorate(ax, *, xlabel: str | None = None, ylabel: str | None = None, legend: bool = True, **kw):
    """Set lowercase labels (with units), limits etc. in one call, ModSim style."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if kw:
        ax.set(**kw)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best")
    return ax


def queue_axis(ax, label: str | None = None):
    """A right-hand axis for a queue length, in the queue's colour (twin of ``ax``)."""
    qax = ax.twinx()
    qax.set_ylabel(label or LABELS["queue"], color=COLORS["queue"])
    qax.grid(False)
    qax.spines["right"].set_visible(True)
    return qax


def merged_legend(*axes, **kw):
    """One legend on the first axis for the lines of all ``axes`` (e.g. an axis and its twin)."""
    handles, labels = [], []
    for a in axes:
        h, lab = a.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    return axes[0].legend(handles, labels, **kw) if handles else None


def shade(ax, windows: Iterable, *, kind: str = "trigger", label: str | None = None):
    """Shade time windows ``[(start_s, end_s), ...]`` or ``[(start_s, end_s, label), ...]``."""
    first = True
    for w in windows:
        start, end = w[0], w[1]
        lab = w[2] if len(w) > 2 else (label if first else None)
        ax.axvspan(start, end, color=COLORS.get(kind, kind), alpha=0.35, lw=0, label=lab, zorder=0)
        first = False
    return ax


def _windows_of(run) -> Mapping[str, np.ndarray]:
    return run.windows if hasattr(run, "windows") else run


def timeline(
    run,
    series: Sequence[str] = ("offered", "retries", "goodput"),
    *,
    ax=None,
    queue: bool = False,
    shades: Iterable = (),
    hline: float | None = None,
    hline_label: str | None = None,
    labels: Mapping[str, str] | None = None,
    ylabel: str = "requests/s",
):
    """Plot windowed series of a run (an object with ``.windows`` or a mapping with ``t``).

    ``series`` are drawn on the left axis (per second); ``queue=True`` adds the ``queue`` series
    on a right-hand axis. ``shades`` are ``(start_s, end_s[, label])`` trigger windows; ``hline``
    a capacity line. Returns the axis (and the queue axis as ``ax.queue_ax`` when drawn).
    """
    w = _windows_of(run)
    if ax is None:
        _, ax = new_figure()
    labels = {**LABELS, **(labels or {})}
    t = np.asarray(w["t"])
    for name in series:
        ax.plot(t, w[name], color=COLORS.get(name), label=labels.get(name, name), lw=2)
    if hline is not None:
        ax.axhline(hline, color=COLORS["capacity"], ls="--", lw=1.5, label=hline_label)
    shade(ax, shades)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(t[0], t[-1] + (t[1] - t[0] if len(t) > 1 else 1))
    ax.set_ylim(bottom=0)
    axes = [ax]
    if queue:
        qax = queue_axis(ax, labels["queue"])
        qax.plot(t, w["queue"], color=COLORS["queue"], lw=2, label=labels["queue"])
        qax.set_ylim(bottom=0)
        ax.queue_ax = qax
        axes.append(qax)
    merged_legend(*axes, loc="upper left", fontsize=8)
    return ax


def lock_gantt(intervals: Iterable, *, ax=None, colors: Mapping | None = None, time_unit: str = "ms",
               owners: Sequence | None = None):
    """Who holds the lock when: ``intervals`` are ``(owner, start, end)`` tuples (or objects
    with those attributes). One row per owner, top to bottom in the order of ``owners`` when given
    (owners not in it follow), else in order of first appearance."""
    rows: dict = {o: i for i, o in enumerate(owners or ())}
    bars: dict = {}
    for iv in intervals:
        owner, start, end = (iv.owner, iv.start, iv.end) if hasattr(iv, "owner") else iv
        rows.setdefault(owner, len(rows))
        bars.setdefault(owner, []).append((start, end - start))
    if ax is None:
        _, ax = new_figure(height=0.5 + 0.45 * max(1, len(rows)))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for owner, y in rows.items():
        c = (colors or {}).get(owner, cycle[y % len(cycle)])
        ax.broken_barh(bars.get(owner, []), (y - 0.35, 0.7), facecolors=c, edgecolor="white", lw=0.5)
    ax.set_yticks(list(rows.values()), [str(o) for o in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({time_unit})")
    ax.grid(axis="y", visible=False)
    return ax


def phase_diagram(
    grid,
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    ax=None,
    xlabel: str = "",
    ylabel: str = "",
    labels: tuple[str, str] = ("stuck", "recovered"),
):
    """A grid of booleans (``grid[i, j]`` for ``ys[i]``, ``xs[j]``; True = recovered) drawn as
    green/red cells; fractions in [0, 1] (share of seeds recovered) are drawn as a red→green scale."""
    g = np.asarray(grid, dtype=float)
    if g.shape != (len(ys), len(xs)):
        raise ValueError(f"grid must have shape (len(ys), len(xs)) = {(len(ys), len(xs))}, got {g.shape}")
    if ax is None:
        _, ax = new_figure(height=3.6)
    cmap = mpl.colors.LinearSegmentedColormap.from_list("rg", [COLORS["stuck"], "#f7f7f7", COLORS["recovered"]])
    xs_a, ys_a = np.asarray(xs, float), np.asarray(ys, float)

    def edges(v):
        if len(v) == 1:
            return np.array([v[0] - 0.5, v[0] + 0.5])
        mid = (v[1:] + v[:-1]) / 2
        return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])

    mesh = ax.pcolormesh(edges(xs_a), edges(ys_a), g, cmap=cmap, vmin=0, vmax=1, shading="flat")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    from matplotlib.patches import Patch

    ax.legend(
        handles=[Patch(color=COLORS["recovered"], label=labels[1]), Patch(color=COLORS["stuck"], label=labels[0])],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax.mesh = mesh
    return ax
