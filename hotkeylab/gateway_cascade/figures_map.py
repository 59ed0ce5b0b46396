"""07 · The alarm-order map: over a grid of heap sizes and DBA reaction times, how many random
seeds raise the seed's alarms in the seed's order (:class:`~.experiments.OrderMap` as data)."""

from __future__ import annotations

import numpy as np

from ..plotting import new_figure
from .experiments import OrderMap
from .scenario import MIN_MS


def plot_order_map(m: OrderMap, mark=None, ax=None):
    """The :class:`OrderMap` as a grid: each cell the count of runs (random seeds) in the seed's
    order (green = all, red = none), and where run 0 departs, its first alarm out of place;
    ``mark`` = (heap_mb, dba_reaction_ms) of the preset, outlined."""
    import matplotlib as mpl

    if ax is None:
        _, ax = new_figure(height=3.2)
    share = m.counts / m.n_seeds
    im = ax.imshow(share, cmap="RdYlGn", norm=mpl.colors.Normalize(0, 1), aspect="auto", origin="lower")
    cb = ax.figure.colorbar(im, ax=ax, fraction=0.05, pad=0.02)
    cb.set_label(f"share of the {m.n_seeds} runs\nin the seed's order", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    short = {"jimdb_recovered": "recovered", "gateway_cpu": "cpu", "host_down": "host down",
             "jimdb_connection_lost": "conn. lost", "jimdb_failover": "failover"}  # fmt: skip
    for i in range(share.shape[0]):
        for j in range(share.shape[1]):
            txt = f"{m.counts[i, j]}/{m.n_seeds}"
            if m.first_wrong[i, j]:
                txt += f"\n(run 0: {short.get(m.first_wrong[i, j], m.first_wrong[i, j])}\nnot in its place)"
            ax.text(j, i, txt, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(m.dba_reaction_ms)), [f"{d / MIN_MS:.0f}" for d in m.dba_reaction_ms])
    ax.set_yticks(range(len(m.heap_mb)), [f"{h / 1024:.1f}" for h in m.heap_mb])
    ax.set_xlabel("dba reaction after 'connection lost' (min)")
    ax.set_ylabel("jvm heap per host (GB)")
    ax.grid(False)
    if mark is not None:
        i = int(np.argmin([abs(h - mark[0]) for h in m.heap_mb]))
        j = int(np.argmin([abs(d - mark[1]) for d in m.dba_reaction_ms]))
        ax.add_patch(mpl.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="black", lw=2))
    return ax
