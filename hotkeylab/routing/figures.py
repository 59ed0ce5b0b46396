"""03 · Figures of notebook 03; each ``plot_*`` takes results as data and returns its axes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from matplotlib.patches import FancyBboxPatch

from .. import plotting
from .closed_form import critical_rate_per_s, dual_owner_share_closed, seed_band
from .results import BandVerdict, TransientRun
from .scenario import LockScenario
from .serverlist import OwnerView, filter_region

#: One colour and marker per hashing scheme (none of them is taken by plotting.COLORS' meanings).
SCHEME_STYLE = {
    "modulo": {"color": "#222222", "marker": "o"},
    "consistent": {"color": "#bcbd22", "marker": "s"},
    "rendezvous": {"color": "#7f7f7f", "marker": "^"},
}

_DC_COLOR = {"B": "owner_b", "C": "owner_c"}


def plot_owner_view(view: OwnerView, ax=None):
    """The owner picture: one row of servers per datacentre (ip order), isolated ones crossed out;
    the server each client datacentre sends the hot key to is outlined in that datacentre's colour,
    with an arrow from a "clients in …" tag (the first client datacentre's tags above, the second's
    below)."""
    lay = view.layout
    dcs = [dc for dc in lay.datacentres if lay.count(dc) > 0 or dc in lay.client_dcs]
    width = max(1, max(lay.count(dc) for dc in dcs))
    gap = 1.6  # vertical distance between datacentre rows
    if ax is None:
        _, ax = plotting.new_figure(height=1.2 + 1.5 * len(dcs))
    iso = {s.name for s in view.isolated}
    pos = {}
    for r, dc in enumerate(dcs):
        y = -r * gap
        label = f"datacentre {dc}" + ("\n(primary DB)" if dc == lay.primary_dc else "")
        ax.text(-0.75, y, label, ha="right", va="center", fontsize=9, color="#555555")
        if lay.count(dc) == 0:
            ax.text(0, y, "no servers", ha="left", va="center", fontsize=9, color="#999999")
        for i, s in enumerate(filter_region(lay.servers, dc)):
            pos[s.name] = (i, y)
            gone = s.name in iso
            ax.add_patch(FancyBboxPatch((i - 0.38, y - 0.28), 0.76, 0.56, boxstyle="round,pad=0.02",
                                        fc="#eeeeee" if gone else "white", ec="#999999", lw=1))
            ax.text(i, y + 0.07, s.name, ha="center", va="center", fontsize=10,
                    color="#aaaaaa" if gone else "black")
            ax.text(i, y - 0.15, s.ip, ha="center", va="center", fontsize=6.5, color="#888888")
            if gone:
                ax.plot([i - 0.3, i + 0.3], [y - 0.22, y + 0.22], color="#888888", lw=1.5)
                ax.plot([i - 0.3, i + 0.3], [y + 0.22, y - 0.22], color="#888888", lw=1.5)
    cycle = ["owner_b", "owner_c", "retries", "queue"]
    for k, dc in enumerate(lay.client_dcs):
        s = view.owners[dc]
        color = plotting.COLORS[_DC_COLOR.get(dc, cycle[k % len(cycle)])]
        x, y = pos[s.name]
        pad = 0.04 * (k + 1)
        ax.add_patch(FancyBboxPatch((x - 0.38 - pad, y - 0.28 - pad), 0.76 + 2 * pad, 0.56 + 2 * pad,
                                    boxstyle="round,pad=0.02", fc="none", ec=color, lw=2.5))
        side = 1 if k % 2 == 0 else -1
        ty = y + side * (0.85 + 0.3 * (k // 2))
        ax.annotate(f"clients in {dc}", xy=(x, y + side * (0.32 + pad)), xytext=(x, ty),
                    ha="center", va="bottom" if side > 0 else "top", fontsize=9, color=color,
                    arrowprops=dict(arrowstyle="->", color=color, lw=2, shrinkA=1, shrinkB=1))
    ax.set_xlim(-2.6, width - 0.4)
    ax.set_ylim(-(len(dcs) - 1) * gap - 1.2, 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def plot_band_map(shared: LockScenario, per_owner: LockScenario, shared_verdicts: Sequence[BandVerdict],
                  per_owner_verdicts: Sequence[tuple[float, BandVerdict]], axes=None):
    """Where "dormant, then the peak tips it" holds, closed forms against the simulation.

    Left, the seed's shared batcher: normal load (linear, zoomed) against the share of seeds that
    show both (markers), with the closed-form band (shaded: with queueing variability; dashed: the
    fluid edges). Right, per-owner batchers: normal load against the share of users in C's region,
    both axes logarithmic, the same two bands, and each simulated point annotated with its count
    of seeds (a point's label sits left of it when the point below it at the same share is close, so
    the labels of one share do not stack). Dotted: the load at which even one owner in B is at
    ρ = 1 at the peak."""
    if axes is None:
        _, axes = plotting.new_figure(1, 2, height=4.6, gridspec_kw={"width_ratios": [1, 3]}, layout="constrained")
    left, right = axes
    shade = dict(color=plotting.COLORS["owner_c"], alpha=0.3, lw=0)
    fluid = dict(color=plotting.COLORS["formula"], ls="--", lw=1.2)
    one_limit = critical_rate_per_s(replace(shared, owners_ms=shared.owners_ms[:1],
                                            owner_names=shared.owner_names[:1])) / shared.peak_factor
    lo, hi = seed_band(shared, variability=True)
    left.axhspan(lo, hi, **shade, label="closed form with\nqueueing variability")
    for k, y in enumerate(seed_band(shared)):
        left.axhline(y, **fluid, label="fluid closed form" if k == 0 else None)
    left.plot([v.both / v.n for v in shared_verdicts], [v.rate_per_s for v in shared_verdicts], "o",
              color=plotting.COLORS["capacity"], ms=6, label=f"simulated (label: seeds dormant,\nthen tipped, of {shared_verdicts[0].n})")
    label_box = dict(facecolor="white", alpha=0.85, lw=0, pad=0.5)
    for v in shared_verdicts:
        right_side = v.both > v.n / 2
        left.annotate(f"{v.both}/{v.n}", (v.both / v.n, v.rate_per_s), xytext=(-8 if right_side else 8, 0),
                      textcoords="offset points", fontsize=7, va="center", ha="right" if right_side else "left",
                      bbox=label_box)
    loads = [v.rate_per_s for v in shared_verdicts]
    left.set_ylim(min(min(loads), lo) * 0.96, max(max(loads), hi) * 1.04)
    left.set_xlim(-0.08, 1.08)
    left.set_xticks([0, 0.5, 1])
    left.set_xlabel("share of seeds dormant at normal\nload, then tipped by the peak")
    left.set_ylabel("normal load (user requests/s)")
    left.set_title("shared batcher (the seed's)", fontsize=9)
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=7, frameon=False)
    cs = np.geomspace(1e-3, 0.7, 40)
    var = np.array([seed_band(replace(per_owner, split=(1 - c, c)), variability=True) for c in cs])
    flu = np.array([seed_band(replace(per_owner, split=(1 - c, c))) for c in cs])
    right.fill_between(cs, var[:, 0], var[:, 1], **shade, label="closed form with queueing variability")
    right.plot(cs, flu[:, 0], **fluid, label="fluid closed form (ρ = 1 at normal load or at the peak)")
    right.plot(cs, flu[:, 1], **fluid)
    right.axhline(one_limit, color=plotting.COLORS["formula"], ls=":", lw=1.5,
                  label=f"one owner in B at ρ = 1 at the peak ({one_limit:.0f}/s)")
    placed: dict[float, list[float]] = {}
    for c, v in sorted(per_owner_verdicts, key=lambda cv: (cv[0], cv[1].rate_per_s)):
        right.plot([c], [v.rate_per_s], "o", color=plotting.COLORS["capacity"], ms=6)
        below = placed.setdefault(c, [])
        crowded = bool(below) and v.rate_per_s / below[-1] < 1.45 and len(below) % 2 == 1
        below.append(v.rate_per_s)
        right.annotate(f"{v.both}/{v.n}", (c, v.rate_per_s), xytext=(-9 if crowded else 9, 0),
                       textcoords="offset points", fontsize=7, va="center", ha="right" if crowded else "left",
                       bbox=label_box)
    right.plot([], [], "o", color=plotting.COLORS["capacity"], ms=6,
               label=f"simulated: seeds dormant, then tipped (of {per_owner_verdicts[0][1].n})" if per_owner_verdicts
               else "simulated")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlim(cs[0], cs[-1])
    right.set_ylim(40, 2000)
    right.set_ylabel("normal load (user requests/s)")
    right.set_xlabel("share of users in C's region (per-owner batchers)")
    right.set_title("per-owner batchers", fontsize=9)
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=7, frameon=False)
    return axes


def plot_transient(run: TransientRun, ax=None):
    """Share of keys with more than one owner over time (per window), the run's mean and the
    closed form (:func:`dual_owner_share_closed`) as dashed lines. The two means lie within a few
    per cent of 0, so a zoomed inset shows them apart; it sits *above* the tallest spike (the main
    axis is extended for it), so it hides none of the series."""
    sc = run.scenario
    if ax is None:
        _, ax = plotting.new_figure()
    w = run.windows
    t = w["t"]
    ax.step(t, w["multi_keys"], where="post", color=plotting.COLORS["owner_c"], lw=2,
            label="keys with > 1 owner (share, per window)")
    closed = dual_owner_share_closed(sc.poll_ms, sc.changes_per_min, sc.n_clients, sc.n_servers, sc.scheme)
    mean_style = dict(color=plotting.COLORS["capacity"], ls=":", lw=2.5,
                      label=f"simulated mean {100 * run.share_key_time:.2f}%")
    closed_style = dict(color=plotting.COLORS["formula"], ls="--", lw=1.5, label=f"closed form {100 * closed:.2f}%")
    ax.axhline(run.share_key_time, **mean_style)
    ax.axhline(closed, **closed_style)
    plotting.decorate(ax, xlabel="time (s)", ylabel="share of keys", xlim=(0, sc.horizon_ms / 1000), legend=False)
    # the inset takes the top 40% of the axes; the series must stay in the bottom 58%
    tallest = max(float(np.max(w["multi_keys"])) if len(t) else 0.0, run.share_key_time, closed, 0.05)
    y_top = max(1.0, tallest / 0.58)
    ax.set_ylim(0, y_top)
    ax.set_yticks(np.linspace(0, 1, 6))  # a share: no ticks above 1 in the room kept for the inset
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8)
    top = 2.0 * max(run.share_key_time, closed, 1e-3)
    ins = ax.inset_axes([0.3, 0.62, 0.68, 0.3])
    ins.step(t, w["multi_keys"], where="post", color=plotting.COLORS["owner_c"], lw=1)
    ins.axhline(run.share_key_time, color=mean_style["color"], ls=":", lw=2.5)
    ins.axhline(closed, color=closed_style["color"], ls="--", lw=1.5)
    ins.set_ylim(0, top)
    ins.set_xlim(0, sc.horizon_ms / 1000)
    ins.set_title(f"zoom on the means: 0 to {100 * top:.0f}% of keys (same time axis)", fontsize=7)
    ins.tick_params(labelsize=6)
    return ax
