"""Figures of notebook 04 that take results as data: the pipeline, the incident in three panels,
the batcher's rate against load, and tables of verdicts over seeds. House style from
:mod:`hotkeylab.plotting`; no simulation happens here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .. import capacity, plotting
from ..plotting import COLORS
from .analysis import closed_forms, effective_timeout_queue
from .scenario import Scenario

__all__ = ["pipeline_diagram", "incident_figure", "batcher_rate_figure", "verdict_table", "log_queue_axis"]

#: Powers of ten the queue axes may tick at (1 to 10⁶ batches).
_DECADES = [10.0**k for k in range(0, 7)]


def log_queue_axis(ax, top: float) -> None:
    """Put ``ax`` (a queue in batches) on a symmetric-log scale, linear from 0 to 1 batch, up to
    ``top``, with major ticks at powers of ten only. The default symlog locator also ticks 0, a
    stray label just below 10⁰; the floor is an empty queue and the axis label says so."""
    from matplotlib.ticker import FixedLocator, LogFormatterSciNotation

    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(0, top)
    ax.yaxis.set_major_locator(FixedLocator(_DECADES))
    ax.yaxis.set_major_formatter(LogFormatterSciNotation())


def pipeline_diagram(sc: Scenario, ax=None):
    """The model as boxes: users → clients (timeout M, retry) → batcher (≤ K rows or T ms) →
    the hot-key queue (QueueMaxSize) → one thread → the row lock, shared with server C."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    if ax is None:
        _, ax = plotting.new_figure(height=2.6, layout="constrained")
    ax.set_axis_off()
    ax.set_xlim(-0.15, 10.2)
    ax.set_ylim(0.05, 4.45)
    boxes = {
        "users": (0.0, 2.4, f"users\n{sc.user_rate_per_s:.0f} requests/s\n(+{100 * (sc.peak.factor - 1):.0f}% at the peak)"
                  if sc.peak is not None else f"users\n{sc.user_rate_per_s:.0f} requests/s"),
        "client": (2.05, 2.4, f"client\ngives up at M = {sc.timeout_ms:g} ms\nretries after 0–{sc.retry.cap_ms:g} ms"),
        "batcher": (4.1, 2.4, f"batcher (group commit)\ncloses at K = {sc.batch_max_rows} rows\nor T = {sc.batch_max_wait_ms:g} ms"),
        "queue": (6.15, 2.4, "queue of batches\nQueueMaxSize = "
                  + (f"{sc.queue_limit}" if sc.queue_limit is not None else "none")),
        "thread": (8.2, 2.4, f"one thread (server B)\nN = {sc.batch_ms:g} ms per\nmerged commit"),
        # C below the queue and the lock below B's thread: each owner's arrow runs straight down, and
        # C's arrow to the lock runs along the bottom, so no two arrows cross
        "server_c": (5.6, 0.2, f"server C (far datacentre)\nN = {sc.cross_batch_ms:g} ms per\nmerged commit"),
        "lock": (8.2, 0.2, "hot row lock\n(S2PL: one merged\ncommit at a time)"),
    }
    w, h = 1.85, 1.25
    for key, (x, y, text) in boxes.items():
        colour = {"server_c": COLORS["owner_c"], "thread": COLORS["owner_b"], "lock": COLORS["capacity"]}.get(
            key, COLORS["queue"] if key == "queue" else COLORS["offered"])
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", fc="white", ec=colour, lw=2))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=7)
    def arrow(a, b, text=None, dy=0.0, style="-|>", colour="#444444"):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, color=colour, lw=1.5))
        if text:
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.15 + dy, text, ha="center", fontsize=7, color=colour)
    y = 2.4 + h / 2
    for x0, x1 in ((0.0 + w, 2.05), (2.05 + w, 4.1), (4.1 + w, 6.15), (6.15 + w, 8.2)):
        arrow((x0 + 0.05, y), (x1 - 0.05, y))
    arrow((8.2 + w / 2, 2.35), (8.2 + w / 2, 0.2 + h + 0.05), colour=COLORS["owner_b"])
    # one queue, the owners alternate (the seed's simplification): every other batch is C's turn
    ax.add_patch(FancyArrowPatch((6.15 + w / 2, 2.35), (6.15 + w / 2, 0.2 + h + 0.05), arrowstyle="-|>",
                                 mutation_scale=10, color=COLORS["owner_c"], lw=1.2, ls="--"))
    ax.text(6.15 + w / 2 - 0.1, 1.95, "every other batch\nwhile C is an owner", fontsize=6.5, color=COLORS["owner_c"],
            ha="right", va="center")
    arrow((5.6 + w + 0.05, 0.2 + h / 2), (8.2 - 0.05, 0.2 + h / 2), colour=COLORS["owner_c"])
    ax.add_patch(FancyArrowPatch((2.05 + 0.8 * w, 2.4 + h + 0.05), (2.05 + 0.2 * w, 2.4 + h + 0.05),
                                 connectionstyle="arc3,rad=0.6", arrowstyle="-|>", mutation_scale=10,
                                 color=COLORS["retries"], lw=1.5))
    ax.text(2.05 + w / 2, 4.42, "timed out or rejected: retry", ha="center", va="top", fontsize=7,
            color=COLORS["retries"])
    return ax


def _shade_owner(ax, sc: Scenario, horizon_s: float) -> None:
    if sc.second_owner is not None:
        plotting.shade(ax, [(sc.second_owner.start_ms / 1e3, min(sc.second_owner.end_ms / 1e3, horizon_s),
                             "second owner C")], kind="trigger")
    if sc.degrade is not None:
        plotting.shade(ax, [(sc.degrade.start_ms / 1e3, min(sc.degrade.end_ms / 1e3, horizon_s),
                             "upstream degraded")], kind="intervention")
    if sc.stretch_retries is not None:
        plotting.shade(ax, [(sc.stretch_retries.start_ms / 1e3, min(sc.stretch_retries.end_ms / 1e3, horizon_s),
                             "retry interval stretched")], kind="intervention")


def incident_figure(run, *, height: float = 1.9):
    """Three panels sharing time. (a) The users' view: user requests/s (dashed line) over goodput,
    the requests answered within M (filled), so neither hides the other. (b) The attempts: retries,
    timeouts and rejections per second; they count attempts, so they can exceed the user rate.
    (c) The queue in batches on a symmetric-log axis, with the timeout threshold (M − T − N)/N,
    M/N and the bound, which a linear 0–250 axis would hide. Returns ``(fig, axes)``."""
    sc: Scenario = run.scenario
    w = run.windows
    t = w["t"]
    horizon_s = float(t[-1] + sc.window_ms / 1e3)
    fig, axes = plotting.new_figure(3, 1, height=height, sharex=True, layout="constrained")
    a, b, c = axes
    a.fill_between(t, 0, w["goodput"], color=COLORS["goodput"], alpha=0.45, lw=0, step="post",
                   label="goodput: answered within M")
    a.step(t, w["offered"], where="post", color="black", ls="--", lw=1.2, label="user requests/s")
    a.set_ylim(0, 1.3 * max(1.0, float(np.max(w["offered"]))))
    a.set_ylabel("requests/s")
    a.text(0.005, 0.93, "a · users", transform=a.transAxes, fontsize=9, va="top")
    # retries as a filled area, timeouts and rejections as lines on top: the retries and rejections
    # often overlap, and a fill under a line keeps both readable
    if np.any(w["retries"] > 0):
        b.fill_between(t, 0, w["retries"], step="post", color=COLORS["retries"], alpha=0.4, lw=0,
                       label=plotting.LABELS["retries"] + " (filled)")
    # red and brown are close hues on a thin line: timeouts solid, rejections dashed and wider
    styles = {"timeouts": dict(lw=1.2, ls="-", suffix=" (solid)"), "rejected": dict(lw=1.8, ls=(0, (4, 2)), suffix=" (dashed)")}
    for key, st in styles.items():
        if np.any(w[key] > 0):
            b.step(t, w[key], where="post", color=COLORS[key], lw=st["lw"], ls=st["ls"],
                   label=plotting.LABELS[key] + st["suffix"])
    b.set_ylabel("attempts/s")
    b.text(0.005, 0.93, "b · attempts", transform=b.transAxes, fontsize=9, va="top")
    c.step(t, w["queue"], where="post", color=COLORS["queue"], lw=2, label="batches waiting")
    cf = closed_forms(sc)
    n_bar = (sc.batch_ms + sc.cross_batch_ms) / 2
    # where timeouts start, as a step over time: the two-owner value while C is an owner, else one owner's
    one, two = effective_timeout_queue(sc), effective_timeout_queue(sc, n_bar)
    so = sc.second_owner
    thr = np.where((t >= so.start_ms / 1e3) & (t < so.end_ms / 1e3), two, one) if so is not None else np.full_like(t, one)
    if so is not None:
        thr_label = (f"timeouts start, (M − T − N)/N: {two:.1f} while C is an owner\n(N̄ = {n_bar:g} ms), "
                     f"{one:.1f} with one owner (N = {sc.batch_ms:g} ms): it steps")
    else:
        thr_label = f"timeouts start: (M − T − N)/N = {one:.1f}"
    c.step(t, thr, where="post", color=COLORS["timeouts"], ls="--", lw=1, label=thr_label)
    c.axhline(cf["critical_queue"], color=COLORS["capacity"], ls=":", lw=1,
              label=f"M/N = {cf['critical_queue']:.1f} (N = {sc.batch_ms:g} ms)")
    if sc.queue_limit is not None:
        c.axhline(sc.queue_limit, color=COLORS["rejected"], ls=(0, (2, 2)), lw=1.5, zorder=6,
                  label=f"QueueMaxSize = {sc.queue_limit} (the queue sits on it)")
    top = max(float(np.max(w["queue"])), float(sc.queue_limit or 0), 20.0)
    log_queue_axis(c, 2.0 * top)
    c.set_ylabel("batches (log above 1,\nlinear below 1;\nfloor = 0, empty)")
    c.text(0.005, 0.93, "c · queue", transform=c.transAxes, fontsize=9, va="top")
    for ax in axes:
        _shade_owner(ax, sc, horizon_s)
        if sc.second_owner is not None and sc.second_owner.end_ms / 1e3 < horizon_s:
            ax.axvline(sc.second_owner.end_ms / 1e3, color=COLORS["capacity"], lw=1, ls=":",
                       label="C isolated" if ax is a else None)
        if sc.peak is not None and 0 < sc.peak.start_ms / 1e3 < horizon_s:
            ax.axvline(sc.peak.start_ms / 1e3, color=COLORS["offered"], lw=1, ls="-.",
                       label=f"peak ×{sc.peak.factor:g} begins" if ax is a else None)
        handles, labels = ax.get_legend_handles_labels()
        keep = [(h, lab) for h, lab in zip(handles, labels, strict=True)
                if ax is a or lab not in ("second owner C", "upstream degraded", "retry interval stretched")]
        ax.legend([k[0] for k in keep], [k[1] for k in keep], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    c.set_xlabel("time (s)")
    c.set_xlim(0, horizon_s)
    return fig, axes


def batcher_rate_figure(sc: Scenario, simulated: Mapping[float, float] | None = None, ax=None,
                        rates: Iterable[float] | None = None):
    """Merged batches per second against user requests per second: the timer batcher's closed
    form (:func:`hotkeylab.capacity.batcher_batch_rate`), its timer-regime approximation
    λ/(1 + λT), full batches λ/K, and the capacities 1000/N with one and two owners. ``simulated``
    maps request rates to measured batch rates (dots)."""
    if ax is None:
        _, ax = plotting.new_figure(height=3.4, layout="constrained")
    lam = np.linspace(50.0, 1600.0, 300) if rates is None else np.asarray(list(rates), float)
    K, T = sc.batch_max_rows, sc.batch_max_wait_ms
    exact = np.array([capacity.batcher_batch_rate(x, K, T) for x in lam])
    ax.plot(lam, exact, color=COLORS["offered"], lw=2, label="timer batcher (closed form)")
    timer = lam <= 1000.0 * K / T  # the approximation holds while λT < K
    ax.plot(lam[timer], lam[timer] / (1.0 + lam[timer] * T / 1000.0), color="#2ca02c", lw=2, ls=(0, (1, 1.5)),
            label=f"timer regime: λ / (1 + λT), drawn where λT < K = {K}")
    ax.plot(lam, lam / K, color=COLORS["retries"], lw=1.5, ls="--", label=f"full batches: λ / {K}")
    cf = closed_forms(sc)
    # the capacities are labelled on the lines themselves (grey, thin), away from the curves
    for key, text, ls in (("capacity_one_owner", "capacity, one owner", "-"),
                          ("capacity_two_owners", "capacity, two owners", "--")):
        ax.axhline(cf[key], color=COLORS["capacity"], lw=1.0, ls=ls, zorder=1)
        ax.text(lam[0] + 5, cf[key] + 1.2, f"{text}: {cf[key]:.1f}/s", fontsize=8, color=COLORS["capacity"],
                va="bottom", ha="left")
    if simulated:
        xs = sorted(simulated)
        ax.plot(xs, [simulated[x] for x in xs], "o", mfc="none", mec="black", mew=1.5, ms=9, zorder=6,
                label="simulated (one run each)")
    # the normal load's label below and to the left of its point, the peak's above it: the two leader
    # lines run away from each other and cannot cross
    for x, text, off, ha, va in ((sc.user_rate_per_s, "normal", (-12, -27), "right", "top"),
                                 (sc.user_rate_per_s * (sc.peak.factor if sc.peak else 1.0), "peak", (-40, 30),
                                  "left", "baseline")):
        y = capacity.batcher_batch_rate(x, K, T)
        ax.plot([x], [y], "s", color=COLORS["timeouts"], ms=4, zorder=5)
        ax.annotate(f"{text}: {x:.0f}/s → {y:.1f} batches/s", (x, y), xytext=off, textcoords="offset points",
                    fontsize=8, ha=ha, va=va, arrowprops=dict(arrowstyle="-", color="#888888", lw=0.8))
    plotting.decorate(ax, xlabel="user requests/s", ylabel="merged batches/s", legend=False)
    ax.set_ylim(0, 1.6 * cf["capacity_one_owner"])
    ax.legend(loc="upper left", fontsize=8)
    return ax


def verdict_table(counts: Mapping, names: Iterable[str], labels: Mapping[str, str] | None = None) -> str:
    """A Markdown table: what was run, the verdict over seeds, the served share's range over seeds
    (all users of the run) and the last 10 s's share of offered answered in time."""
    labels = labels or {}
    rows = ["| run | verdict over seeds | served in time (whole run) | last 10 s: answered / offered |",
            "|---|---|---|---|"]
    for n in names:
        c = counts[n]
        rows.append(f"| {labels.get(n, c.label)} | {c.text} | {c.share_range('served_share')} | "
                    f"{c.share_range('end_share')} |")
    return "\n".join(rows)
