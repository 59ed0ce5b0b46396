"""Timelines of notebook 04 that take runs as data: the story of one run (:func:`story`), the
story over the closed forms (:func:`story_panels`), the onset of timeouts (:func:`onset`) and one
small timeline per mitigation (:func:`small_multiples`). House style from :mod:`hotkeylab.plotting`;
no simulation happens here.

>>> from hotkeylab.metastable import SHORT_INCIDENT, simulate, figures_story
>>> figures_story.story(simulate(SHORT_INCIDENT))                    # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import plotting
from ..plotting import COLORS
from ..validate import check_int
from .analysis import closed_forms
from .mitigations import MITIGATIONS
from .readings import window_mask, windows_of
from .scenario import Scenario

__all__ = ["STORY_SERIES", "story", "story_panels", "onset", "small_multiples"]


def _shades(sc: Scenario, horizon_s: float) -> tuple[list, list]:
    """(trigger windows, intervention windows) as ``(start_s, end_s, label)`` within the horizon."""
    trig, inter = [], []
    if sc.second_owner is not None:
        trig.append((sc.second_owner.start_ms / 1e3, min(sc.second_owner.end_ms / 1e3, horizon_s),
                     "second owner (trigger)"))
    if sc.slow_db is not None:
        trig.append((sc.slow_db.start_ms / 1e3, min(sc.slow_db.end_ms / 1e3, horizon_s), "slow database (trigger)"))
    if sc.degrade is not None:
        inter.append((sc.degrade.start_ms / 1e3, min(sc.degrade.end_ms / 1e3, horizon_s), "degraded upstream"))
    if sc.suppress_retries is not None:
        inter.append((sc.suppress_retries.start_ms / 1e3, min(sc.suppress_retries.end_ms / 1e3, horizon_s),
                      "retries suppressed"))
    return trig, inter


def _mark_events(ax, sc: Scenario, horizon_s: float, *, text: bool = True) -> None:
    if sc.second_owner is not None and sc.second_owner.end_ms / 1e3 < horizon_s:
        x = sc.second_owner.end_ms / 1e3
        ax.axvline(x, color=COLORS["capacity"], lw=1, ls=":", label="isolation")
        if text:
            ax.annotate("isolation", (x, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -10),
                        textcoords="offset points", fontsize=8, color=COLORS["capacity"])
    if sc.restart_at_ms is not None and sc.restart_at_ms / 1e3 < horizon_s:
        x = sc.restart_at_ms / 1e3
        ax.axvline(x, color=COLORS["intervention"], lw=4, ls="-", label="restart")
        if text:
            ax.annotate("restart", (x, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -20),
                        textcoords="offset points", fontsize=8, color="#3a6ea5")
    if sc.peak is not None and 0 < sc.peak.start_ms / 1e3 < horizon_s and text:
        x = sc.peak.start_ms / 1e3
        ax.annotate(f"peak ×{sc.peak.factor:g} →", (x, 0.0), xycoords=("data", "axes fraction"), xytext=(2, 4),
                    textcoords="offset points", fontsize=8, color=COLORS["offered"])


STORY_SERIES = ("offered", "retries", "goodput", "timeouts")


def story(run, *, ax=None, series: Sequence[str] = STORY_SERIES, queue: bool = True, legend=True,
          text: bool = True, ylim: float | None = None):
    """A run's timeline: user requests, retries, goodput and timeouts per second, the queue on a
    right axis, the trigger shaded grey, interventions shaded blue, isolation and restart marked.
    ``legend``: True (everything, outside right), ``"extra"`` (only what the story adds: shaded
    interventions) or False."""
    sc = run.scenario
    w = windows_of(run)
    horizon_s = float(w["t"][-1] + sc.window_ms / 1e3)
    trig, inter = _shades(sc, horizon_s)
    ax = plotting.timeline(run, series, ax=ax, queue=queue)
    plotting.shade(ax, trig, kind="trigger")
    plotting.shade(ax, inter, kind="intervention")
    _mark_events(ax, sc, horizon_s, text=text)
    if ylim is not None:
        ax.set_ylim(0, ylim)
    if legend:
        handles, labels = ax.get_legend_handles_labels()
        if queue:
            h2, l2 = ax.queue_ax.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
        if legend == "extra":
            keep = {w[2] for w in inter} | ({"restart"} if sc.restart_at_ms is not None else set())
            pairs = [(h, lab) for h, lab in zip(handles, labels, strict=True) if lab in keep]
            handles, labels = [p[0] for p in pairs], [p[1] for p in pairs]
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
    elif ax.get_legend() is not None:
        ax.get_legend().remove()
    return ax


def story_panels(run, *, height: float = 2.6):
    """Two panels sharing time: the story (:func:`story`) above; below, merged commits per second
    against the closed forms: capacity with one owner (1000 / N), with two owners taking turns,
    and the batch demand of the users at the peak and of the storm (every request sent R + 1
    times). Returns ``(fig, (top, bottom))``."""
    sc = run.scenario
    cf = closed_forms(sc)
    fig, (top, bot) = plotting.new_figure(2, 1, height=height, sharex=True, layout="constrained")
    story(run, ax=top)
    top.set_xlabel("")
    w = windows_of(run)
    bot.plot(w["t"], w["batches"], color=COLORS["goodput"], alpha=0.6, lw=2, label="merged commits/s (simulated)")
    lines = [
        (cf["capacity_one_owner"], "-", f"capacity, one owner: 1000/{sc.batch_ms:g} = {cf['capacity_one_owner']:.1f}"),
        (cf["capacity_two_owners"], "--",
         f"capacity, two owners ({sc.batch_ms:g}/{sc.cross_batch_ms:g} ms): {cf['capacity_two_owners']:.1f}"),
    ]
    for y, ls, lab in lines:
        bot.axhline(y, color=COLORS["capacity"], ls=ls, lw=1.5, label=lab)
    bot.axhline(cf["demand_peak"], color=COLORS["offered"], ls=":", lw=1.5,
                label=f"user batches at the peak: {cf['demand_peak']:.1f}")
    bot.axhline(cf["demand_stuck"], color=COLORS["retries"], ls=":", lw=1.5,
                label=f"user + retry batches in the storm: {cf['demand_stuck']:.1f}")
    horizon_s = float(w["t"][-1] + sc.window_ms / 1e3)
    trig, inter = _shades(sc, horizon_s)
    plotting.shade(bot, trig, kind="trigger")
    plotting.shade(bot, inter, kind="intervention")
    _mark_events(bot, sc, horizon_s, text=False)
    bot.set_ylim(0, 1.25 * max(cf["demand_stuck"], cf["capacity_one_owner"]))
    plotting.decorate(bot, xlabel="time (s)", ylabel="batches/s", legend=False)
    bot.legend(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
    return fig, (top, bot)


def onset(run, t0_s: float, t1_s: float, *, ax=None):
    """Zoom on the moment the queue passes the timeout threshold: the queue (batches, left) with
    M/N and the effective thresholds ``(M − T − N)/N`` for one and two owners, and goodput and
    timeouts per second (right)."""
    sc = run.scenario
    w = windows_of(run)
    m = window_mask(w, t0_s, t1_s)
    t = np.asarray(w["t"])[m] + sc.window_ms / 2e3  # window centres
    if ax is None:
        _, ax = plotting.new_figure(layout="constrained")
    ax.plot(t, np.asarray(w["queue"])[m], "o-", color=COLORS["queue"], label="queue (batches, mean per s)")
    cf = closed_forms(sc)
    for y, ls, lab in (
        (cf["critical_queue"], "-", f"M/N = {sc.timeout_ms:g}/{sc.batch_ms:g} = {cf['critical_queue']:.1f}"),
        (cf["effective_queue_one_owner"], "--", f"(M − T − N)/N, one owner = {cf['effective_queue_one_owner']:.2f}"),
        (cf["effective_queue_two_owners"], ":",
         f"(M − T − N̄)/N̄, two owners = {cf['effective_queue_two_owners']:.2f}"),
    ):
        ax.axhline(y, color=COLORS["capacity"], ls=ls, lw=1.5, label=lab)
    qmax = 3.0 * cf["critical_queue"]
    ax.set_ylim(0, qmax)
    rax = ax.twinx()
    for s in ("goodput", "timeouts"):
        rax.plot(t, np.asarray(w[s])[m], color=COLORS[s], lw=2, label=plotting.LABELS[s])
    rax.set_ylim(bottom=0)
    rax.set_ylabel("requests/s")
    rax.grid(False)
    rax.spines["right"].set_visible(True)
    plotting.decorate(ax, xlabel="time (s)", ylabel="queue (batches)", legend=False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = rax.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", bbox_to_anchor=(1.1, 1.0), fontsize=8)
    ax.rate_ax = rax
    return ax




def small_multiples(runs: dict, *, ncols: int = 3, labels: dict | None = None, height: float = 1.9,
                    series: Sequence[str] = ("offered", "retries", "goodput", "timeouts", "rejected")):
    """One small timeline per run, requests/s on a shared scale (left), the queue on each panel's
    own scale (right). The label in each panel says what was run and whether it recovered."""
    n = len(runs)
    ncols = check_int("ncols", ncols, low=1)
    nrows = math.ceil(n / ncols)
    fig, axes = plotting.new_figure(nrows, ncols, height=height, squeeze=False, sharex=True,
                                    layout="constrained")
    fig.set_size_inches(max(8.0, 3.3 * ncols), height * nrows + 0.5)
    ymax = 1.0
    for run in runs.values():
        w = windows_of(run)
        ymax = max(ymax, *(float(np.max(w[s])) for s in series))
    flat = list(axes.flat)
    for k, (ax, (name, run)) in enumerate(zip(flat, runs.items(), strict=False)):
        story(run, ax=ax, series=series, legend=False, text=False, ylim=1.45 * ymax)
        ax.queue_ax.set_ylim(0, 1.45 * max(1.0, float(np.max(windows_of(run)["queue"]))))
        mit = MITIGATIONS.get(name)
        lab = (labels or {}).get(name, mit.label if mit else name)
        ok = "recovered" if run.recovered else "stuck"
        ax.text(0.02, 0.97, f"{lab} → {ok}", transform=ax.transAxes, va="top", fontsize=7.5,
                color=COLORS["recovered" if run.recovered else "stuck"])
        ax.tick_params(labelsize=7)
        ax.set_ylabel("requests/s" if k % ncols == 0 else "", fontsize=8)
        ax.queue_ax.set_ylabel("queue" if k % ncols == ncols - 1 or k == n - 1 else "", fontsize=8)
        ax.queue_ax.tick_params(labelsize=7)
        last_in_column = k + ncols >= n
        ax.set_xlabel("time (s)" if last_in_column else "", fontsize=8)
        if last_in_column:
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in flat[n:]:
        ax.set_visible(False)
    handles, labs = [], []
    for ax in flat[:n]:
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax.queue_ax.get_legend_handles_labels()
        for h, lab in zip(h1 + h2, l1 + l2, strict=True):
            if lab not in labs:
                handles.append(h)
                labs.append(lab)
    fig.legend(handles, labs, loc="outside lower center", ncols=4, fontsize=8)
    return fig, axes
