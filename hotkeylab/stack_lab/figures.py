"""04b · Figures: each measured timeline with the model beside it (results in, axes out).

Start reading at :func:`turn_panels`: for one turn, goodput and user requests per second above, the
queue in batches below; the measured run is a solid line, the model's median over its seeds a dashed
line with the band its seeds span. :func:`four_turns` puts the four turns side by side with shared
axes per row. :func:`ledger_bars` draws the nothing-lost ledger of each run.
"""

from __future__ import annotations

import numpy as np

from .. import capacity, plotting
from ..plotting import COLORS
from .scenario import TURN_LABELS

__all__ = ["turn_panels", "four_turns", "ledger_bars", "legend_entries"]


def _shade(ax, sc, horizon_s):
    if sc.second_owner is not None:
        plotting.shade(ax, [(sc.second_owner.start_ms / 1e3, min(sc.second_owner.end_ms / 1e3, horizon_s))],
                       kind="trigger", label="C is a second owner")
    if sc.degrade is not None:
        plotting.shade(ax, [(sc.degrade.start_ms / 1e3, min(sc.degrade.end_ms / 1e3, horizon_s))],
                       kind="intervention", label="upstream degraded")


def _model_stack(models, key):
    return np.vstack([np.asarray(m.windows[key], dtype=float) for m in models])


def turn_panels(run, models, axes, *, legend: bool = False):
    """Draw one turn on ``axes = (top, bottom)``."""
    top, bot = axes
    sc = run.scenario
    w = run.windows
    t = np.asarray(w["t"]) + sc.window_ms / 2000.0
    horizon_s = sc.horizon_ms / 1e3
    mt = np.asarray(models[0].windows["t"]) + sc.window_ms / 2000.0
    _shade(top, sc, horizon_s)
    _shade(bot, sc, horizon_s)
    top.plot(t, w["offered"], color=COLORS["offered"], lw=2, label="user requests/s (measured)")
    top.plot(t, w["goodput"], color=COLORS["goodput"], lw=2, label="goodput/s (measured)")
    g = _model_stack(models, "goodput")
    top.fill_between(mt, g.min(axis=0), g.max(axis=0), color=COLORS["goodput"], alpha=0.15, lw=0,
                     label=f"goodput/s, model: range of {len(models)} seeds")
    top.plot(mt, np.median(g, axis=0), color="black", ls="--", lw=1.5, label="goodput/s, model median")
    q = _model_stack(models, "queue")
    bot.plot(t, w["queue"], color=COLORS["queue"], lw=2, label="queue, B + C (measured)")
    bot.fill_between(mt, q.min(axis=0), q.max(axis=0), color=COLORS["queue"], alpha=0.15, lw=0,
                     label=f"queue, model: range of {len(models)} seeds")
    bot.plot(mt, np.median(q, axis=0), color="black", ls="--", lw=1.5, label="queue, model median")
    crit = capacity.critical_queue_length(sc.timeout_ms, sc.batch_ms)
    bot.axhline(crit, color=COLORS["capacity"], ls=":", lw=1.5, label=f"M/N = {crit:.1f} batches")
    top.text(0.02, 0.95, TURN_LABELS[run.turn], transform=top.transAxes, va="top", fontsize=8,
             bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
    top.set_xlim(0, horizon_s)
    bot.set_xlim(0, horizon_s)
    plotting.decorate(bot, xlabel="time on the stack's clock (s)", legend=False)
    if legend:
        top.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
        bot.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    return top, bot


def legend_entries(axes):
    """``(handles, labels)`` of every labelled artist on ``axes``, each label once, in drawing order."""
    seen: dict = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    return list(seen.values()), list(seen)


def four_turns(runs, comparisons):
    """The four turns in columns; rows share their y axis (requests/s above, batches below); the
    turns have different lengths, so the x axes are not shared."""
    import matplotlib.pyplot as plt

    n = len(runs)
    fig, axes = plt.subplots(2, n, figsize=(3.4 * n + 2.6, 5.6), sharey="row", layout="constrained")
    axes = np.asarray(axes).reshape(2, n)
    for k, (run, cmp) in enumerate(zip(runs, comparisons, strict=True)):
        turn_panels(run, cmp["models"], (axes[0, k], axes[1, k]))
    for row in axes:  # one legend per row, with every entry of every column (the last turn has no degrade)
        handles, labels = legend_entries(row)
        row[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    axes[0, 0].set_ylabel("per second")
    axes[1, 0].set_ylabel("queue (batches)")
    return fig, axes


def ledger_bars(runs, ax=None):
    """For each run: rows in t_trans, split into answers and wasted, beside the servers' count."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 2.8), layout="constrained")
    names = [r.turn for r in runs]
    y = np.arange(len(runs))
    ans = np.array([r.ledger.answered for r in runs], dtype=float)
    wst = np.array([r.ledger.wasted for r in runs], dtype=float)
    srv = np.array([r.ledger.server_committed for r in runs], dtype=float)
    ax.barh(y + 0.18, ans, height=0.34, color=COLORS["goodput"], label="answers (load generator)")
    ax.barh(y + 0.18, wst, left=ans, height=0.34, color=COLORS["wasted"], label="wasted (in t_trans, no answer)")
    ax.barh(y - 0.18, srv, height=0.34, color=COLORS["capacity"], alpha=0.6, label="rows the servers committed")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    plotting.decorate(ax, xlabel="rows committed in the run", legend=False)
    ax.legend(loc="lower right", fontsize=8)
    return ax
