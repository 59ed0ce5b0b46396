"""04b · Figures: each measured timeline with the model beside it (results in, axes out).

Start reading at :func:`turn_panels`: for one turn, user requests, attempts (users + retries: the
storm) and goodput per second above, the queue in batches below; the measured run is a solid line,
the model's median over its seeds a dashed line with the band its seeds span (gold, so it is not
mistaken for the grey "C is a second owner" shading). :func:`four_turns` puts the four turns side by
side, each column as wide as its turn is long. A turn with a bounded queue gets its own queue scale,
with the per-server bound and M/N drawn. :func:`ledger_bars` draws the nothing-lost ledger of each run.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

from .. import capacity, plotting
from ..metastable.figures import log_queue_axis
from ..plotting import COLORS
from .scenario import TURN_LABELS

__all__ = ["turn_panels", "bounded_scale", "four_turns", "ledger_bars", "legend_entries", "TURN_NAMES", "turn_name"]

#: the names the notebook shows: the data key "stuck" (files, code) is shown as "isolated", what was
#: done to it, so the name does not answer the notebook's prediction 2 before it is asked
TURN_NAMES = {"healthy": "healthy", "stuck": "isolated", "degrade": "degrade", "bounded": "bounded"}


def turn_name(turn: str) -> str:
    """The name shown for a turn's data key (the key itself when it has no other name)."""
    return TURN_NAMES.get(turn, turn)


def _panel_label(turn: str) -> str:
    name, label = turn_name(turn), TURN_LABELS[turn]
    text = label if label.startswith(name) else f"{name}: {label}"
    return "\n".join(textwrap.wrap(text, 36))


#: the model's band (range over its seeds): a colour no shading or measured line uses
MODEL_BAND = "#e6ab02"


def _shade(ax, sc, horizon_s):
    if sc.second_owner is not None:
        plotting.shade(ax, [(sc.second_owner.start_ms / 1e3, min(sc.second_owner.end_ms / 1e3, horizon_s))],
                       kind="trigger", label="C is a second owner")
    if sc.degrade is not None:
        plotting.shade(ax, [(sc.degrade.start_ms / 1e3, min(sc.degrade.end_ms / 1e3, horizon_s))],
                       kind="intervention", label="upstream degraded")


def _model_stack(models, key):
    return np.vstack([np.asarray(m.windows[key], dtype=float) for m in models])


def _band(ax, t, models, key, label=None, color="black"):
    """The range the model's seeds span for ``key`` (gold, edged so that a narrow range still shows as
    a gold line) and, with a ``label``, their median (dashed)."""
    v = _model_stack(models, key)
    lo, hi = v.min(axis=0), v.max(axis=0)
    ax.fill_between(t, lo, hi, color=MODEL_BAND, alpha=0.45, lw=0, label=f"model: range of {len(models)} random seeds")
    for edge in (lo, hi):
        ax.plot(t, edge, color=MODEL_BAND, lw=1.0, zorder=2)
    if label is not None:
        ax.plot(t, np.median(v, axis=0), color=color, ls="--", lw=1.2, zorder=3, label=label)


def bounded_scale(run) -> bool:
    """True for a turn whose queue bound lies below M/N: its queue panel gets its own linear scale."""
    sc = run.scenario
    return sc.queue_limit is not None and sc.queue_limit < capacity.critical_queue_length(sc.timeout_ms, run.batch_ms_b)


def turn_panels(run, models, axes, *, legend: bool = False):
    """Draw one turn on ``axes = (top, bottom)``. M/N is drawn from the measured N_B (the model's N)."""
    top, bot = axes
    sc = run.scenario
    w = run.windows
    t = np.asarray(w["t"]) + sc.window_ms / 2000.0
    horizon_s = sc.horizon_ms / 1e3
    mt = np.asarray(models[0].windows["t"]) + sc.window_ms / 2000.0
    _shade(top, sc, horizon_s)
    _shade(bot, sc, horizon_s)
    # measured lines are drawn above the model's (zorder), so a measured line the model matches stays visible
    top.plot(t, w["attempts"], color=COLORS["retries"], lw=1.5, zorder=4, label="attempts/s = users + retries (measured)")
    top.plot(t, w["offered"], color=COLORS["offered"], lw=2, zorder=4, label="user requests/s (measured)")
    top.plot(t, w["goodput"], color=COLORS["goodput"], lw=2.2, zorder=6, label="goodput/s (measured)")
    _band(top, mt, models, "goodput", "goodput/s, model median")
    _band(top, mt, models, "attempts", "attempts/s, model median", color=COLORS["retries"])
    bot.plot(t, w["queue"], color=COLORS["queue"], lw=2, zorder=4, label="queue, B + C (measured)")
    _band(bot, mt, models, "queue", "queue, model median")
    crit = capacity.critical_queue_length(sc.timeout_ms, run.batch_ms_b)
    bot.axhline(crit, color=COLORS["capacity"], ls=":", lw=1.5, label="M/N = M / N_B (the run's measured N_B)")
    if not bounded_scale(run):   # the log queue axis (four_turns) leaves room above the line, left of the trigger
        bot.text(0.02, crit * 1.15, f"M/N = {crit:.1f}", transform=bot.get_yaxis_transform(), ha="left", va="bottom",
                 fontsize=7, color=COLORS["capacity"], bbox={"facecolor": "white", "alpha": 0.8, "lw": 0, "pad": 0.5})
    if bounded_scale(run):
        lim = sc.queue_limit
        bot.plot(t, w["queue_b"], color=COLORS["queue"], lw=1, ls="-.", zorder=4, label="queue of B alone (measured)")
        bot.axhline(lim, color=COLORS["rejected"], ls="--", lw=1.2, label=f"QueueMaxSize = {lim} per server")
        bot.axhline(2 * lim, color=COLORS["rejected"], ls=(0, (1, 3)), lw=1.2, label=f"both servers full = {2 * lim}")
        bot.set_ylim(0, 1.45 * max(crit, 2 * lim))
        # labels on the lines themselves: M/N above its line, the two-server bound below its own, so
        # two lines a fraction of a batch apart are still told apart
        lab = {"transform": bot.get_yaxis_transform(), "ha": "right", "fontsize": 7,
               "bbox": {"facecolor": "white", "alpha": 0.8, "lw": 0, "pad": 0.5}}
        hi_first = crit >= 2 * lim
        bot.text(0.99, crit, f"M/N = {crit:.2f}", va="bottom" if hi_first else "top", color=COLORS["capacity"], **lab)
        bot.text(0.99, 2 * lim, f"both full = {2 * lim}", va="top" if hi_first else "bottom",
                 color=COLORS["rejected"], **lab)
        bot.text(0.99, lim, f"QueueMaxSize = {lim}", va="bottom", color=COLORS["rejected"], **lab)
        bot.text(0.02, 0.95, "own queue scale", transform=bot.transAxes, ha="left", va="top", fontsize=8)
    if bounded_scale(run) and sc.second_owner is not None:
        # the measured goodput while C is an owner lies on the floor of the panel: say what it is there
        so = sc.second_owner
        t0, t1 = so.start_ms / 1e3, min(so.end_ms / 1e3, horizon_s)
        inside = (np.asarray(w["t"]) >= t0) & (np.asarray(w["t"]) < t1)
        off = float(np.sum(np.asarray(w["offered"])[inside]))
        share = float(np.sum(np.asarray(w["goodput"])[inside])) / off if off > 0 else float("nan")
        # the text sits right of the trigger, where the panel is empty after the isolation
        top.annotate(f"measured goodput\nwhile C owns: {share:.1%}\nof user requests", xy=((t0 + t1) / 2, 0.0),
                     xytext=(t1 + 0.35 * (horizon_s - t1), 0.5), textcoords=("data", "axes fraction"), ha="center",
                     fontsize=7, color=COLORS["goodput"], zorder=7,
                     arrowprops={"arrowstyle": "->", "color": COLORS["goodput"], "lw": 1},
                     bbox={"facecolor": "white", "alpha": 0.85, "lw": 0, "pad": 0.5})
    top.text(0.02, 0.95, _panel_label(run.turn), transform=top.transAxes, va="top", fontsize=8,
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
    """The four turns in columns, each as wide as its turn is long (one time scale for all). The
    top row shares its y axis; the queue row too, except a turn with a bounded queue (own scale)."""
    import matplotlib.pyplot as plt

    n = len(runs)
    widths = [r.scenario.horizon_ms for r in runs]
    fig, axes = plt.subplots(2, n, figsize=(3.4 * n + 3.4, 6.2), width_ratios=widths, layout="constrained")
    axes = np.asarray(axes).reshape(2, n)
    shared = [k for k, r in enumerate(runs) if not bounded_scale(r)]
    for k in range(1, n):  # share before drawing, so the shared limits cover every column's data
        axes[0, k].sharey(axes[0, 0])
        if k in shared and k != shared[0]:
            axes[1, k].sharey(axes[1, shared[0]])
    for k, (run, cmp) in enumerate(zip(runs, comparisons, strict=True)):
        turn_panels(run, cmp["models"], (axes[0, k], axes[1, k]))
    # headroom above the highest line of the top row (it shares one y axis), so no line touches the top
    ymax = max(float(np.nanmax(ln.get_ydata())) for ax in axes[0] for ln in ax.get_lines() if len(ln.get_ydata()))
    # and a little room below zero, so a line at zero (goodput in a storm) is drawn above the axis, not on it
    axes[0, 0].set_ylim(-0.03 * ymax, 1.12 * ymax)
    if shared:  # the shared queue axes on a log scale above one batch, so M/N (about 12) shows beside 500
        qmax = max(float(np.nanmax(ln.get_ydata())) for k in shared for ln in axes[1, k].get_lines()
                   if len(ln.get_ydata()))
        log_queue_axis(axes[1, shared[0]], 10.0 ** math.ceil(math.log10(max(qmax, 10.0)) + 0.05))
    for row in axes:  # one legend per row, with every entry of every column (the last turn has no degrade)
        handles, labels = legend_entries(row)
        row[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    axes[0, 0].set_ylabel("requests per second\n(users, attempts, goodput)")
    axes[1, 0].set_ylabel("batches waiting, B + C\n(log above 1, linear below;\nfloor = 0, empty)")
    return fig, axes


def ledger_bars(runs, ax=None):
    """For each run, side by side: rows in t_trans (database), rows the servers committed, answers +
    wasted (load generator; equal to both when nothing is lost) and the attempts rejected at the door.
    Each run is labelled with its length (and, for a turn measured more than once, its repeat number): runs of different lengths are compared within a run, not across."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.6), layout="constrained")
    # each run's length beside its name: the runs are not equally long, so bars compare within a run only
    # a turn measured more than once (repeats) names each run's repeat, so its bars are told apart
    several = {t for t in {r.turn for r in runs} if sum(r.turn == t for r in runs) > 1}
    names = [f"{turn_name(r.turn)}{f' #{r.repeat}' if r.turn in several else ''}\n"
             f"({r.scenario.horizon_ms / 1e3:.0f}-s run)" for r in runs]
    y = np.arange(len(runs))
    h = 0.2
    db = np.array([r.ledger.db_rows for r in runs], dtype=float)
    srv = np.array([r.ledger.server_committed for r in runs], dtype=float)
    ans = np.array([r.ledger.answered for r in runs], dtype=float)
    wst = np.array([r.ledger.wasted for r in runs], dtype=float)
    rej = np.array([r.ledger.rejected for r in runs], dtype=float)
    ax.barh(y - 1.5 * h, db, height=h, color=COLORS["capacity"], label="rows in t_trans (database)")
    ax.barh(y - 0.5 * h, srv, height=h, color=COLORS["capacity"], alpha=0.5, label="rows the servers committed")
    ax.barh(y + 0.5 * h, ans, height=h, color=COLORS["goodput"], label="answers (load generator)")
    ax.barh(y + 0.5 * h, wst, left=ans, height=h, color=COLORS["wasted"],
            label="wasted (committed, client saw no answer)")
    # not rows: attempts that never reached the database, drawn hatched so they do not read as a fourth row count
    ax.barh(y + 1.5 * h, rej, height=h, facecolor="white", edgecolor=COLORS["rejected"], hatch="////", lw=1,
            label="attempts rejected by a full queue (not rows)")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    plotting.decorate(ax, xlabel="rows (or attempts) in the run", legend=False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8, frameon=False)
    return ax
