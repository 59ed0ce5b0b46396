"""Figures of notebook 04a · the mitigations surveyed, taking the committed verdicts
(:func:`.verdicts.load`) and runs as data: every seed of every mitigation (:func:`plot_survey`),
the backoff sweep against the storm's closed-form work (:func:`plot_backoff`), and the seconds
around a restart (:func:`plot_restart_zoom`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import capacity, plotting
from ..plotting import COLORS
from .analysis import BLOCK_S, RECOVERY_SHARE, effective_timeout_queue
from .closed_form import attempts_ceiling, storm_demand
from .mitigations import GROUPS, MITIGATIONS
from .presets import SHORT_INCIDENT
from .scenario import Scenario

__all__ = ["plot_survey", "plot_backoff", "plot_restart_zoom", "restart_zoom_top", "restart_zoom_clipped"]


def plot_survey(V: dict, names: Sequence[str] | None = None):
    """Two panels sharing the mitigations (rows) and the 0–100% scale, one dot per seed. Left: the
    share of offered user requests answered in time over the run's last 10 s, against the 90%
    criterion (dashed). Right: the share answered in time over the whole run (what the fix cost on
    the way). Green where that seed recovered (``run.recovered``), red where not; ``k/n`` at the right."""
    from matplotlib.lines import Line2D

    names = list(names) if names is not None else ["none", *[n for g in GROUPS.values() for n in g]]
    fig, axes = plotting.new_figure(1, 2, height=0.3 * len(names) + 1.2, sharey=True, layout="constrained")
    fig.set_size_inches(9.5, 0.3 * len(names) + 1.2)
    for ax, field, xlabel in ((axes[0], "end_share", "answered in time / offered, last 10 s (%)"),
                              (axes[1], "served_share", "answered in time / offered, whole run (%)")):
        for i, name in enumerate(names):
            c = V[f"mit_{name}"]
            off = np.linspace(-0.28, 0.28, c.n)
            x = 100 * getattr(c, field)
            ok = c.recovered
            ax.scatter(x[ok], i + off[ok], s=12, color=COLORS["recovered"], lw=0, zorder=3)
            ax.scatter(x[~ok], i + off[~ok], s=12, color=COLORS["stuck"], lw=0, zorder=3)
        ax.set_xlim(-3, 103)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(xlabel)
    axes[0].axvline(100 * RECOVERY_SHARE, color=COLORS["capacity"], ls="--", lw=1.5)
    for i, name in enumerate(names):
        c = V[f"mit_{name}"]
        axes[1].annotate(f"{c.k}/{c.n}", (1.0, i), xycoords=("axes fraction", "data"), xytext=(4, 0),
                         textcoords="offset points", va="center", fontsize=8,
                         color=COLORS["stuck"] if c.k == 0 else COLORS["recovered"] if c.k == c.n else "black")
    axes[0].set_yticks(range(len(names)), [MITIGATIONS[n].label for n in names], fontsize=8)
    axes[0].invert_yaxis()
    handles = [Line2D([], [], marker="o", ls="", color=COLORS["recovered"], label="a seed that recovered"),
               Line2D([], [], marker="o", ls="", color=COLORS["stuck"], label="a seed that stayed stuck"),
               Line2D([], [], color=COLORS["capacity"], ls="--", lw=1.5,
                      label=f"{100 * RECOVERY_SHARE:.0f}%: the recovery criterion (per {BLOCK_S:g}-s block)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    return fig, axes


# --------------------------------------------------------------------------- the backoff sweep
def plot_backoff(bg: dict, sc: Scenario = SHORT_INCIDENT):
    """Left: seeds recovered per cell of the sweep; middle: attempts per user request (simulated,
    whole run; closed form below it); right: the storm's batch demand against the attempts per
    request with the thread's capacity, each cell of the sweep at its closed-form attempts."""
    import matplotlib as mpl

    fig, (a1, a2, a3) = plotting.new_figure(1, 3, height=3.4, layout="constrained",
                                           gridspec_kw={"width_ratios": [1, 1, 1.5]})
    fig.set_size_inches(11.0, 3.4)
    ylabels = [f"{a} attempts, {k}" for a, k in bg["rows"]]
    xlabels = [("∞" if c == "inf" else c) for c in bg["cols"]]
    cmap = mpl.colors.LinearSegmentedColormap.from_list("rg", [COLORS["stuck"], "#f7f7f7", COLORS["recovered"]])
    a1.imshow(bg["k"] / bg["n"], cmap=cmap, vmin=0, vmax=1, aspect="auto")
    a2.imshow(bg["sim"], cmap="Oranges", vmin=1, vmax=max(2.0, float(bg["sim"].max())) * 1.15, aspect="auto")
    for i in range(len(ylabels)):
        for j in range(len(xlabels)):
            a1.text(j, i, f"{bg['k'][i, j]:.0f}/{bg['n'][i, j]:.0f}", ha="center", va="center", fontsize=9)
            a2.text(j, i, f"{bg['sim'][i, j]:.2f}\n({bg['closed'][i, j]:.2f})", ha="center", va="center", fontsize=8)
    for ax, lab in ((a1, "seeds recovered"), (a2, "attempts per user request: simulated (closed form)")):
        ax.set_xticks(range(len(xlabels)), xlabels)
        ax.set_xlabel("user patience (ms)")
        ax.grid(False)
        ax.text(0.5, 1.02, lab, transform=ax.transAxes, ha="center", va="bottom", fontsize=9)
    a1.set_yticks(range(len(ylabels)), ylabels, fontsize=8)
    a2.set_yticks(range(len(ylabels)), [])
    a_max = max(6.3, float(np.nanmax(bg["closed"][np.isfinite(bg["closed"])])) + 1.3)
    xs = np.linspace(1.0, a_max, 120)
    a3.plot(xs, [storm_demand(sc, x) for x in xs], color=COLORS["retries"], lw=2,
            label="batcher_batch_rate(λ_peak × attempts)")
    mu = capacity.tps_ceiling(sc.batch_ms)
    a3.axhline(mu, color=COLORS["capacity"], ls="--", lw=1.5, label=f"capacity 1000/N = {mu:.1f}")
    ceil = attempts_ceiling(sc)
    a3.axvline(ceil, color=COLORS["capacity"], ls=":", lw=1.5, label=f"ceiling {ceil:.2f} attempts")
    cells: dict[float, list] = {}
    for i, row in enumerate(bg["rows"]):
        for j, col in enumerate(bg["cols"]):
            cells.setdefault(round(float(bg["closed"][i, j]), 3), []).append((row, col, bg["k"][i, j], bg["n"][i, j]))
    for q, (x, cs) in enumerate(sorted(cells.items())):
        k, n = sum(c[2] for c in cs), sum(c[3] for c in cs)
        color = COLORS["recovered"] if k == n else COLORS["stuck"] if k == 0 else "black"
        a3.plot([x], [storm_demand(sc, x)], "o", ms=7, color=color)
        # the first point sits just above the capacity line: label it above-left, the others below-right
        a3.annotate(f"{len(cs)} cell{'s' if len(cs) > 1 else ''}, {k:.0f}/{n:.0f} runs", (x, storm_demand(sc, x)),
                    xytext=(-8, 8) if q == 0 else (8, -12), textcoords="offset points",
                    ha="right" if q == 0 else "left", fontsize=7.5, color=color)
    a3.set_ylim(0, 1.1 * storm_demand(sc, a_max))
    plotting.decorate(a3, xlabel="attempts per user request in the storm", ylabel="merged batches/s", legend=False)
    a3.legend(loc="upper left", fontsize=7.5, bbox_to_anchor=(0.0, 1.0))
    return fig, (a1, a2, a3)

# --------------------------------------------------------------------------- restart zoom
def plot_restart_zoom(runs: dict, t0_s: float, t1_s: float, texts: dict | None = None, wave_s: float = 1.0):
    """The seconds around a restart, one column per run of ``runs`` (``{label: run}``, fine
    windows), all panels sharing the time axis and each row its y axis. Top: user requests,
    retries and goodput per second; the scale is set by the wave, the largest rate in the first
    ``wave_s`` after the restart, so a later storm may run off the top (:func:`restart_zoom_clipped`
    says whether it does). Bottom: the queue on a symmetric-log scale (linear below 1 batch) with
    the timeout threshold dashed. ``texts`` adds a line per column (e.g. the count over seeds)."""
    n = len(runs)
    fig, axes = plotting.new_figure(2, n, height=2.2, sharex=True, sharey="row", squeeze=False,
                                    layout="constrained", gridspec_kw={"height_ratios": [1.4, 1]})
    fig.set_size_inches(max(8.0, 4.6 * n), 4.8)
    top = restart_zoom_top(runs, wave_s)
    for k, (label, run) in enumerate(runs.items()):
        ax, qax = axes[0, k], axes[1, k]
        w = run.windows
        m = (w["t"] >= t0_s) & (w["t"] < t1_s)
        t = w["t"][m] + run.scenario.window_ms / 2e3
        for s in ("offered", "retries", "goodput"):
            ax.plot(t, w[s][m], color=COLORS[s], lw=2, label=plotting.LABELS[s])
        qax.plot(t, w["queue"][m], color=COLORS["queue"], lw=2, label=plotting.LABELS["queue"])
        qax.axhline(effective_timeout_queue(run.scenario), color=COLORS["queue"], ls="--", lw=1,
                    label="timeouts start: (M − T − N)/N")
        for a in (ax, qax):
            a.axvline(run.scenario.restart_at_ms / 1e3, color=COLORS["intervention"], lw=4, zorder=0,
                      label="restart" if a is ax else None)
        ax.set_ylim(0, top)
        qax.set_yscale("symlog", linthresh=1.0)
        qax.set_ylim(0, 1.5 * max(float(np.max(r.windows["queue"])) for r in runs.values()))
        qax.set_xlim(t0_s, t1_s)
        qax.set_xlabel("time (s)")
        ax.text(0.98, 0.97, label + ("\n" + texts[label] if texts and label in texts else ""), ha="right",
                transform=ax.transAxes, va="top", fontsize=8, bbox=dict(facecolor="white", alpha=0.85, lw=0))
    axes[0, 0].set_ylabel("per second")
    axes[1, 0].set_ylabel("queue (batches)")
    h1, l1 = axes[0, 0].get_legend_handles_labels()
    h2, l2 = axes[1, 0].get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncols=6, fontsize=8)
    return fig, axes


def restart_zoom_top(runs: dict, wave_s: float = 1.0) -> float:
    """The top of :func:`plot_restart_zoom`'s rate panels: 1.3 × the largest rate of any run in
    the first ``wave_s`` seconds after its restart."""
    top = 1.0
    for run in runs.values():
        w = run.windows
        r0 = run.scenario.restart_at_ms / 1e3
        m = (w["t"] >= r0) & (w["t"] < r0 + wave_s)
        top = max(top, *(float(np.max(w[s][m])) for s in ("offered", "retries", "goodput")))
    return 1.3 * top


def restart_zoom_clipped(runs: dict, t0_s: float, t1_s: float, wave_s: float = 1.0) -> dict:
    """Per run label: the first time (s) in [t0_s, t1_s) after the restart at which a rate of
    :func:`plot_restart_zoom` runs off the top of its panel, or None."""
    top = restart_zoom_top(runs, wave_s)
    out = {}
    for label, run in runs.items():
        w = run.windows
        r0 = run.scenario.restart_at_ms / 1e3
        m = (w["t"] >= max(t0_s, r0)) & (w["t"] < t1_s)
        over = np.zeros(int(m.sum()), dtype=bool)
        for s in ("offered", "retries", "goodput"):
            over |= w[s][m] > top
        out[label] = float(w["t"][m][over][0]) if over.any() else None
    return out
