"""08 · Figures: plot_* functions taking runs as data.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import simpy

from ..plotting import COLORS, decorate, new_figure
from ..sim import run_bounded
from ..validate import check_int
from .closed_form import (
    healthy_bound,
    healthy_in_flight,
    leaked_calls,
)
from .experiments import (
    cluster_view,
)
from .model import Run, start_machine
from .scenario import (
    Scenario,
)
from .timer import HashedWheelTimer


def _event_lines(ax, sc: Scenario):
    if sc.exit_at_ms is not None:
        ax.axvline(sc.exit_at_ms / 1000.0, color=COLORS["capacity"], ls=":", lw=1.5,
                   label=f"provider 0 exits ({sc.exit_kind})")
    if sc.hang_at_ms is not None:
        ax.axvline(sc.hang_at_ms / 1000.0, color=COLORS["stuck"], ls=":", lw=1.5, label="provider 1 hangs")


def plot_wheel(wheel: HashedWheelTimer, ax=None):
    """The wheel as a clock: one bar per slot, its height the timeouts filed there; purple: due
    in this turn, grey: waiting one or more turns (rounds); the hand: the current tick."""
    if ax is None:
        _, ax = new_figure(height=4.6, subplot_kw={"projection": "polar"})
        ax.figure.set_size_inches(5.0, 4.6)
    now_, later = wheel.occupancy()
    n = wheel.slots
    theta = 2 * np.pi * np.arange(n) / n
    width = 2 * np.pi / n
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.bar(theta, now_, width=width, color=COLORS["queue"], edgecolor=COLORS["queue"], lw=1.0,
           label="due this turn", align="edge")
    ax.bar(theta, later, width=width, bottom=now_, color=COLORS["capacity"], edgecolor=COLORS["capacity"],
           lw=1.0, label="≥ 1 round to go", align="edge")
    hand = 2 * np.pi * (wheel.tick % n) / n
    top = max(1, int((now_ + later).max()))
    ax.plot([hand, hand], [0, top * 1.1], color=COLORS["timeouts"], lw=2, label="current tick")
    ax.set_xticks(2 * np.pi * np.arange(0, n, n // 8) / n, [str(i) for i in range(0, n, n // 8)])
    ax.set_rlabel_position(250)
    ax.tick_params(labelsize=8)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=3, fontsize=8)
    return ax


def plot_t0_timeline(exp: dict, ax=None, seed_index: int = 0, legend: bool = True, label: str | None = None):
    """The t0 picture: one seed of :func:`t0_experiment`. Each call to the hung provider issued
    near the boundary is a bar from its issue time (dot) to the tick that fires its timeout
    (bar end); green ones fired before the shutdown (timed out), red ones after it (rejected:
    stuck). The dashed line is the closed form's t0 on the issue-time axis."""
    sc = exp["scenario"]
    k = check_int("seed_index", seed_index, low=0, high=exp["seeds"] - 1)
    if ax is None:
        _, ax = new_figure(height=3.6)
    sd = exp["shutdown_ms"]
    t0 = exp["t0_ms"]
    lo, hi = t0 - 400.0, sd + 300.0
    horizon = hi + sc.timeout_ms + 3 * sc.tick_ms
    env = simpy.Environment()
    short = replace(sc, horizon_ms=horizon, window_ms=min(sc.window_ms, horizon),
                    gc_sample_ms=min(sc.gc_sample_ms, horizon))
    m = start_machine(env, short, k)
    calls = []
    orig = m.send_request

    def send(now, _orig=orig):
        before = m.cid
        _orig(now)
        c = m.futures.get(m.cid) if m.cid != before else None
        if c is not None and c.provider.index == 1 and lo <= now <= hi:
            calls.append(c)

    m.send_request = send
    run_bounded(env, horizon, short.max_events)
    for i, c in enumerate(calls):
        fire = c.timeout.fired_at_ms
        color = COLORS["stuck"] if c.lost else COLORS["recovered"]
        x = (np.array([c.t0, fire]) - sd) / 1000.0
        ax.plot(x, [i, i], color=color, lw=2, solid_capstyle="butt")
        ax.plot(x[0], i, marker="o", color=color, ms=3)
    ax.axvline(0.0, color=COLORS["capacity"], ls=":", lw=1.5, label="shutdown (provider 0 dropped)")
    ax.axvline((t0 - sd) / 1000.0, color=COLORS["formula"], ls="--", lw=1.5,
               label="t0 = t_shutdown − T − tick/2")
    ax.plot([], [], color=COLORS["recovered"], lw=2, marker="o", ms=3,
            label="call (dot) → its timeout fires before the shutdown: timed out")
    ax.plot([], [], color=COLORS["stuck"], lw=2, marker="o", ms=3,
            label="call (dot) → its timeout fires after it: rejected, stuck")
    decorate(ax, xlabel="time relative to the shutdown (s)", ylabel="calls to the hung provider\n(in issue order)",
             legend=False)
    ax.set_yticks([])
    if label is not None:
        ax.text(0.01, 0.97, label, transform=ax.transAxes, ha="left", va="top", fontsize=8)
    if legend:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=7)
    return ax


def plot_t0_timelines(exp: dict, axes=None):
    """:func:`plot_t0_timeline` for two seeds of :func:`t0_experiment`, on shared axes: the
    typical one (stuck count nearest the median) on top, the one farthest from the closed form
    below, each labelled with its count and its largest burst in one tick."""
    if axes is None:
        _, axes = new_figure(2, 1, height=2.9, sharex=True)
    seeds = list(exp["seed_list"])
    picks = (("typical", exp["typical_seed"]), ("farthest from\nthe closed form", exp["outlier_seed"]))
    for i, (ax, (what, seed)) in enumerate(zip(axes, picks, strict=True)):
        j = seeds.index(seed)
        lab = (f"seed {seed}, {what}:\n{exp['stuck_before_shutdown'][j]:.0f} stuck calls issued before\n"
               f"the shutdown (closed form {exp['expected_before_shutdown']:.1f});\n"
               f"at most {exp['max_stuck_in_one_tick'][j]} of them fired at one tick")
        plot_t0_timeline(exp, ax=ax, seed_index=seed, legend=i == len(axes) - 1, label=lab)
        if i < len(axes) - 1:
            ax.set_xlabel("")
    return axes


def plot_monitors(run: Run, axes=None):
    """The seed's monitors on one B machine: calls in flight, heap used, time in full GC and CPU."""
    if axes is None:
        _, axes = new_figure(3, 1, height=1.9, sharex=True)
    s = run.samples
    sc = run.scenario
    t = s["t"]
    axes[0].plot(t, s["in_flight"], color=COLORS["queue"], label="calls in flight (futures)")
    decorate(axes[0], ylabel="calls")
    axes[1].plot(t, 100 * s["heap_mb"] / sc.heap_mb, color=COLORS["queue"], label="heap used")
    axes[1].plot(t, 100 * s["gc"], color=COLORS["wasted"], label="time in full GC")
    decorate(axes[1], ylabel="% of heap / of time", ylim=(0, 105))
    axes[2].plot(t, 100 * s["cpu"], color=COLORS["capacity"], label="cpu")
    axes[2].plot(t, 100 * s["serving"], color=COLORS["goodput"], label="requests served (% of offered)")
    decorate(axes[2], xlabel="time (s)", ylabel="%", ylim=(0, 105))
    for i, ax in enumerate(axes):
        _event_lines(ax, sc)
        handles, labels = ax.get_legend_handles_labels()
        keep = [j for j, lab in enumerate(labels) if i == 0 or not lab.startswith("provider")]
        ax.legend([handles[j] for j in keep], [labels[j] for j in keep], fontsize=8,
                  loc="upper left", bbox_to_anchor=(0.0, 0.9 if i == 2 else 1.0))
    return axes


def plot_leak(broken: Run, healthy: Run, axes=None):
    """In-flight calls: healthy (bounded by Little) vs broken (growing as λ_hung × t), with the
    closed forms dashed. Left: the whole range; right: zoomed on Little's level.

    The two runs share their random stream, so they are the same run until the hang: the broken
    one is drawn first and wider, the healthy one on top, and Little's level on top of both."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    sc = broken.scenario
    hs = healthy.scenario
    bound = healthy_bound(hs.rate_per_s, hs.timeout_ms, hs.tick_ms)
    t_hang = hs.hang_at_ms if hs.hang_at_ms is not None else 0.0
    little = healthy_in_flight(hs.rate_per_s, hs.share_of_hung(t_hang), hs.timeout_ms, hs.service_ms, hs.tick_ms)
    t = broken.samples["t"]
    t0 = sc.leak_start_ms
    for ax, lw in zip(axes, (2.0, 3.0), strict=True):
        ax.plot(broken.samples["t"], broken.samples["in_flight"], color=COLORS["stuck"], lw=lw, zorder=2,
                label="timeouts lost (2.7.12)")
        ax.plot(healthy.samples["t"], healthy.samples["in_flight"], color=COLORS["recovered"], lw=1.2, zorder=3,
                label="timeouts work (fixed)")
        ax.axhline(bound, color=COLORS["capacity"], ls="-.", lw=1.5, zorder=4,
                   label=f"Little's bound λ (T + tick) = {bound:.0f}")
        _event_lines(ax, sc)
    if t0 is not None:
        line = [leaked_calls(sc.rate_per_s, sc.share_of_hung(t0), x * 1000.0, t0) for x in t]
        axes[0].plot(t, line, ls="--", color=COLORS["formula"], lw=1.5, zorder=4,
                     label="λ_hung × (t − t0), no GC feedback")
    if hs.hang_at_ms is not None:
        axes[1].plot([hs.hang_at_ms / 1000.0, t[-1]], [little, little], ls="--", color="black", lw=2.0, zorder=5,
                     label=f"Little: λ W = {little:.1f}")
    top = max(float(broken.samples["in_flight"].max()), bound) * 1.1
    decorate(axes[0], xlabel="time (s)", ylabel="calls in flight", ylim=(0, top), legend=False)
    decorate(axes[1], xlabel="time (s)", ylabel="calls in flight (zoom)", ylim=(0, 2.0 * bound), legend=False)
    axes[0].legend(loc="upper left", fontsize=7)
    axes[1].legend(loc="upper right", fontsize=7)
    return axes


def plot_cluster(run: Run, axes=None):
    """The seed's graphs: requests per B machine (leaking vs the others) and the others' latency."""
    sc = run.scenario
    view = cluster_view(run.samples["serving"], sc.rate_per_s, sc.node_capacity_per_s, sc.b_nodes,
                        sc.b_leaking_nodes)
    t = run.samples["t"]
    if axes is None:
        _, axes = new_figure(2, 1, height=2.2, sharex=True)
    axes[0].plot(t, view["healthy_per_s"], color=COLORS["offered"],
                 label=f"each of the {sc.b_nodes - sc.b_leaking_nodes} other machines")
    axes[0].plot(t, view["leaking_per_s"], color=COLORS["stuck"],
                 label=f"each of the {sc.b_leaking_nodes} leaking machines")
    axes[0].axhline(sc.node_capacity_per_s, color=COLORS["capacity"], ls="--", lw=1.5, label="capacity of a machine")
    decorate(axes[0], ylabel="requests/s", ylim=(0, sc.node_capacity_per_s * 1.1))
    lat = np.where(np.isfinite(view["healthy_latency_ms"]), view["healthy_latency_ms"], np.nan)
    axes[1].plot(t, lat, color=COLORS["latency"], label="latency on the other machines (M/M/1)")
    decorate(axes[1], xlabel="time (s)", ylabel="latency (ms)", ylim=(0, None))
    for i, ax in enumerate(axes):
        _event_lines(ax, sc)
        handles, labels = ax.get_legend_handles_labels()
        keep = [j for j, lab in enumerate(labels) if i == 1 or not lab.startswith("provider")]
        ax.legend([handles[j] for j in keep], [labels[j] for j in keep], fontsize=8,
                  loc="lower left" if i == 0 else "upper left")
    return axes


def log_calls_axis(ax, top: float, label: str = "calls in flight (log scale)"):
    """A log axis for call counts from 1 up: a labelled tick at every power of ten up to the
    first at or above ``top`` (plain numbers: 1, 10, 100, 1 000, …), unlabelled minor ticks, and
    nothing below 1 (a sample with no call in flight is left out of the line, not drawn at 0).
    Returns the decade ticks."""
    from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter

    hi = max(1, math.ceil(math.log10(max(float(top), 10.0)) - 1e-9))
    ticks = [10.0**k for k in range(hi + 1)]
    ax.set_yscale("log", nonpositive="mask")
    ax.set_ylim(1.0, ticks[-1] * 1.05)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.set_yticklabels([f"{t:,.0f}" for t in ticks])
    ax.yaxis.set_minor_locator(LogLocator(base=10.0, subs=tuple(range(2, 10))))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(label)
    return ticks


_FIX_STYLE = {  # colour, line style, width, z-order
    0: (COLORS["stuck"], "-", 2.0, 2),
    1: (COLORS["recovered"], "-", 1.5, 4),
    2: (COLORS["goodput"], "-", 5.0, 3),  # drawn wide and pale under the fixed version it equals
    3: (COLORS["rejected"], "--", 2.0, 5),
}


def plot_fixes(runs: dict, axes=None):
    """Calls in flight (log scale) and heap used under each remedy (from :func:`compare_fixes`),
    as means over the runs' windows (``window_ms``), so that the Poisson noise of a few calls in
    flight does not hide the levels. Until the hang all four runs are the same run.

    The inline-timeout run equals the fixed version (same random stream; only the thread that
    notifies the timeout differs), so it is drawn wide and pale under it: the two show as one
    green line with a pale edge."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    top = 1.0
    for i, (label, run) in enumerate(runs.items()):
        color, ls, lw, z = _FIX_STYLE.get(i, (COLORS["capacity"], "-.", 2.0, 2))
        alpha = 0.35 if lw > 2.0 else 1.0
        if i == 2:
            label = "timeout inline (same run as fixed)"
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0  # each window's mean drawn at its centre
        top = max(top, float(w["in_flight"].max()))
        for ax, y in ((axes[0], w["in_flight"]), (axes[1], 100 * w["heap_mb"] / run.scenario.heap_mb)):
            ax.plot(t, y, color=color, ls=ls, lw=lw, alpha=alpha, zorder=z, label=label)
    win_s = next(iter(runs.values())).scenario.window_ms / 1000.0
    log_calls_axis(axes[0], top, label=f"calls in flight, {win_s:g}-s mean (log scale)")
    decorate(axes[0], xlabel="time (s)", legend=False)
    decorate(axes[1], xlabel="time (s)", ylabel=f"heap used, {win_s:g}-s mean (%)", ylim=(0, 105), legend=False)
    axes[1].legend(loc="upper left", fontsize=7)  # one legend for both panels (same styles)
    return axes
