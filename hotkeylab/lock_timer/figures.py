"""05 · Figures: plot_* functions taking runs as data."""

from __future__ import annotations

import math

import numpy as np

from ..plotting import COLORS, decorate, lock_gantt, new_figure
from .closed_form import (
    admitted_ceiling_per_s,
    convoy_growth_per_s,
    seed_lock_capacity_per_s,
)
from .model import _window_stats
from .results import Run
from .scenario import (
    ADMITTED,
    DESIGN_LABELS,
    DESIGN_MARKER,
    DESIGN_STYLE,
)


# --------------------------------------------------------------------------- figures
def plot_lane(run: Run, t0_ms: float, rows: int = 12, ax=None):
    """The single-lane road: the first ``rows`` key2 requests arriving after ``t0_ms``, one row
    each; pale = waiting for the mutex, green = holding it and admitted, red = holding it until
    Taken's timer fired. Time axis in ms from ``t0_ms``."""
    m = np.flatnonzero((run.key == 2) & (run.arrive_ms >= t0_ms) & ~np.isnan(run.unlock_ms))[:rows]
    if len(m) == 0:
        raise ValueError(
            f"t0_ms={t0_ms!r}: no key2 request arriving after it held the mutex in this run"
        )
    holds, colors = [], {}
    for j, i in enumerate(m):
        owner = f"req {j + 1}"
        holds.append((owner, run.lock_ms[i] - t0_ms, run.unlock_ms[i] - t0_ms))
        colors[owner] = COLORS["goodput"] if run.outcome[i] == ADMITTED else COLORS["timeouts"]
    if ax is None:
        _, ax = new_figure(height=0.6 + 0.28 * len(m))
    lock_gantt(holds, ax=ax, colors=colors)
    for j, i in enumerate(m):
        ax.broken_barh(
            [(run.arrive_ms[i] - t0_ms, run.lock_ms[i] - run.arrive_ms[i])],
            (j - 0.2, 0.4),
            facecolors=COLORS["queue"],
            alpha=0.3,
            lw=0,
        )
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color=COLORS["queue"], alpha=0.3, label="waiting for the mutex"),
            Patch(color=COLORS["goodput"], label="holding it, then admitted"),
        ]
        + (
            [Patch(color=COLORS["timeouts"], label="holding it until the timer fired")]
            if any(c == COLORS["timeouts"] for c in colors.values())
            else []
        ),
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
    )
    decorate(ax, xlabel=f"time after t = {t0_ms / 1000:g} s (ms)", legend=False)
    return ax


def plot_run(run: Run, axes=None):
    """Three panels against time (s): offered, forwarded (client waiting), passed after the
    client had gone, timer fired, refused at once, per second, with the limiters' ceiling
    ``min(λ1, r/count) + min(λ2, r/count)``; requests blocked in the gate; p50 and p99 time in
    the gate of the requests finishing."""
    if axes is None:
        _, axes = new_figure(3, 1, height=2.2, sharex=True)
    w = run.windows
    t = w["t"] + run.scenario.window_ms / 2000.0
    a0, a1, a2 = axes
    a0.plot(t, w["offered"], color=COLORS["offered"], label="offered")
    a0.plot(t, w["admitted"], color=COLORS["goodput"], label="forwarded, client waiting")
    if w["client_gone"].any():
        a0.plot(t, w["client_gone"], color=COLORS["wasted"], label="passed, client gone")
    if w["timeouts"].any():
        a0.plot(t, w["timeouts"], color=COLORS["timeouts"], label="timer fired")
    if w["rejected"].any():
        a0.plot(t, w["rejected"], color=COLORS["rejected"], label="refused at once")
    sc = run.scenario
    ceiling = admitted_ceiling_per_s(
        sc.key1_per_s, sc.rate_per_s, sc.count
    ) + admitted_ceiling_per_s(sc.key2_per_s, sc.rate_per_s, sc.count)
    a0.axhline(
        ceiling, color=COLORS["capacity"], ls="--", lw=1.5, label="limiters' ceiling (closed form)"
    )
    decorate(a0, ylabel="requests/s", ylim=(0, None))
    a0.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a1.plot(t, w["blocked"], color=COLORS["queue"], label="blocked in the gate")
    decorate(a1, ylabel="blocked requests", ylim=(0, None))
    a1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.plot(t, w["p99_ms"] / 1000, color=COLORS["latency"], label="p99")
    a2.plot(t, w["p50_ms"] / 1000, color=COLORS["latency"], ls="--", label="p50")
    decorate(a2, xlabel="time (s)", ylabel="time in gate (s)", ylim=(0, None))
    a2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.set_xlim(0, run.scenario.horizon_ms / 1000)
    return axes


def plot_designs(runs: dict, axes=None, labels: dict | None = None, floor: float = 0.1):
    """Blocked requests and the mean time in the gate (of the requests finishing) against
    time (s), one line style per run; log axes from ``floor`` up (smaller values drawn at the
    floor). ``runs`` maps a design name (or any key, with ``labels`` giving its legend text) to
    a :class:`Run`."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    from matplotlib.lines import Line2D

    a0, a1 = axes
    styles = ["-", "--", ":", "-."]
    handles, names = [], []
    for j, (d, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        label = (labels or {}).get(d, DESIGN_LABELS.get(d, str(d)))
        ls = DESIGN_STYLE.get(d, styles[j % len(styles)])
        a0.plot(t, _floored(w["blocked"], floor), color=COLORS["queue"], ls=ls)
        a1.plot(t, _floored(w["mean_ms"], floor), color=COLORS["latency"], ls=ls)
        handles.append(Line2D([], [], color="0.3", ls=ls))
        names.append(label)
    ws = [r.windows for r in runs.values()]
    _log_axis(a0, floor, _nanmin(w["blocked"] for w in ws), "blocked requests (log)")
    _log_axis(a1, floor, _nanmin(w["mean_ms"] for w in ws), "mean time in gate (ms, log)")
    decorate(a0, xlabel="time (s)", legend=False)
    decorate(a1, xlabel="time (s)", legend=False)
    a0.legend(handles, names, loc="lower right", fontsize=8, )
    return axes


def _floored(v, floor: float) -> np.ndarray:
    """Values for a log axis: those below ``floor`` (zeros included) drawn at ``floor``."""
    v = np.asarray(v, dtype=float)
    return np.where(np.isnan(v), np.nan, np.maximum(v, floor))


def _log_axis(ax, floor: float, raw_min: float, ylabel: str) -> None:
    """A log y axis from ``floor`` up (no "0" tick); the label says so when some value lay below
    the floor (``raw_min < floor``) and was drawn on it."""
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    if raw_min < floor:
        ylabel += f"\n(below {floor:g}: on the bottom edge)"
    ax.set_ylabel(ylabel)


def _nanmin(arrays) -> float:
    return min((float(np.nanmin(np.asarray(a, float), initial=np.inf)) for a in arrays), default=np.inf)


def plot_convoy_vs_formula(run: Run, axes=None):
    """The seed's design against its closed forms, time in s: blocked requests vs
    ``growth × t`` and the time in the gate of the key2 requests finishing vs ``(1 − 1/ρ) × t``
    (a FIFO convoy served at ``μ`` from t = 0: a request finishing at t arrived at ``μ t / λ2``)."""
    sc = run.scenario
    mu = seed_lock_capacity_per_s(sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms)
    growth = convoy_growth_per_s(
        sc.key2_per_s, sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms
    )
    rho = sc.key2_per_s / mu if mu > 0 else math.inf
    if axes is None:
        _, axes = new_figure(1, 2, height=3.0)
    a0, a1 = axes
    w = run.windows
    t = w["t"] + sc.window_ms / 2000.0
    tt = np.linspace(0, run.t_end_ms / 1000, 50)
    a0.plot(t, w["blocked"], color=COLORS["queue"], label="simulation")
    a0.plot(tt, growth * tt, color=COLORS["formula"], ls="--", lw=1.5, label="(λ2 − r/count) × t")
    k2 = run.key == 2
    mean2, _, _ = _window_stats(run.done_ms[k2], run.time_in_gate_ms[k2], sc.window_ms, len(t))
    a1.plot(t, mean2 / 1000, color=COLORS["latency"], label="simulation (key2, mean)")
    slope = max(0.0, 1 - 1 / rho) if rho > 0 else 0.0
    a1.plot(tt, slope * tt, color=COLORS["formula"], ls="--", lw=1.5, label="(1 − 1/ρ) × t")
    decorate(a0, xlabel="time (s)", ylabel="blocked requests", ylim=(0, None))
    decorate(a1, xlabel="time the request leaves the gate (s)", ylabel="time in gate (s)", ylim=(0, None))
    return axes


def plot_sweep(
    sw: dict, rate_per_s: float, key2_share: float, axes=None, p99_floor_ms: float = 0.01
):
    """Against offered load (requests/s): forwarded in time and not forwarded (timer fired,
    refused at once, or client gone) per second, p99 time in the gate (log, values below
    ``p99_floor_ms`` drawn at it), most requests blocked at once (log); one line style and
    marker per design, the same in every panel; colour is the quantity. Dashed grey: the load at
    which key2 alone reaches the limiter's rate, ``r / key2_share``."""
    if axes is None:
        fig, axes = new_figure(1, 3, height=3.6)
        fig.set_size_inches(9.0, 3.6)
    a0, a1, a2 = axes
    from matplotlib.lines import Line2D

    for d, s in sw.items():
        x = s["offered_per_s"]
        kw = dict(ls=DESIGN_STYLE[d], marker=DESIGN_MARKER[d], ms=4)
        a0.plot(x, s["admitted_per_s"], color=COLORS["goodput"], **kw)
        lost = s["timed_out_per_s"] + s["rejected_per_s"] + s["client_gone_per_s"]
        a0.plot(x, lost, color=COLORS["rejected"], **kw)
        a1.plot(x, _floored(s["p99_ms"], p99_floor_ms), color=COLORS["latency"], **kw)
        a2.plot(x, _floored(s["peak_blocked"], 1.0), color=COLORS["queue"], **kw)
    for ax in axes:
        if key2_share > 0:
            ax.axvline(rate_per_s / key2_share, color=COLORS["capacity"], ls="--", lw=1)
    _log_axis(a1, p99_floor_ms, _nanmin(s["p99_ms"] for s in sw.values()), "p99 time in gate (ms, log)")
    _log_axis(a2, 1.0, _nanmin(s["peak_blocked"] for s in sw.values()), "most blocked at once (log)")
    decorate(
        a0,
        xlabel="offered (requests/s)",
        ylabel="requests/s",
        legend=False,
        ylim=(0, None),
    )
    a0.text(
        0.03, 0.97, "green: forwarded in time\nbrown: not forwarded",
        transform=a0.transAxes, va="top", fontsize=8,
    )
    decorate(a1, xlabel="offered (requests/s)", legend=False)
    decorate(a2, xlabel="offered (requests/s)", legend=False)
    handles = [
        Line2D([], [], color="0.3", ls=DESIGN_STYLE[d], marker=DESIGN_MARKER[d], ms=4)
        for d in sw
    ]
    a0.figure.legend(
        handles, [DESIGN_LABELS[d] for d in sw], loc="lower center", ncol=3, fontsize=8,
        bbox_to_anchor=(0.5, -0.02), title="line style and marker: design (colour: quantity)",
        title_fontsize=8,
    )
    a0.figure.tight_layout(rect=(0, 0.12, 1, 1))
    return axes
