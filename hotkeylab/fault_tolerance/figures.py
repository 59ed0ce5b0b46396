"""09 · Figures: plot_* functions taking runs (or closed-form results) as data, in the house style
of :mod:`hotkeylab.plotting`."""

from __future__ import annotations

import numpy as np

from ..plotting import COLORS, decorate, lock_gantt, new_figure, shade
from ..sim import plottable
from .closed_form import failover_latency_ms
from .common import Run, check_run, check_runs
from .delivery import PROTECTION_LABELS, PROTECTIONS
from .holding import core_latency_ms, pool_capacity_per_s
from .pool import SEED_POOL
from .retry import RETRY_LABELS

POLICY_STYLE = {"none": ":", "always": "-", "gated": "--"}
POLICY_COLOR = {"none": COLORS["queue"], "always": COLORS["retries"], "gated": COLORS["goodput"]}
# one colour per run when several runs share a panel (none of them the reference lines' blue or grey)
RUN_COLORS = (COLORS["goodput"], COLORS["retries"], COLORS["queue"], COLORS["rejected"])


def _legend_right(ax, **kw):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, **kw)


def _finish_pair(axes, ylabels, horizon_ms):
    """Labels, legends right of the panels and the time axis of a two-panel timeline."""
    a0, a1 = axes
    decorate(a0, ylabel=ylabels[0], legend=False)
    decorate(a1, xlabel="time (s)", ylabel=ylabels[1], legend=False)
    _legend_right(a0)
    _legend_right(a1)
    a1.set_xlim(0, horizon_ms / 1000)
    return axes


def _log_ms_ticks(ax, axis="y", mantissas=(1, 2, 5)):
    """Plain-number ticks (1, 2, 5, 10, 20, 50, …) on a log axis in ms."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, StrMethodFormatter

    ticks = [m * 10.0**e for e in range(-1, 8) for m in mantissas]
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(FixedLocator(ticks))
    a.set_major_formatter(StrMethodFormatter("{x:g}"))
    a.set_minor_locator(NullLocator())
    a.set_minor_formatter(NullFormatter())


def plot_retry(runs: dict, axes=None):
    """Calls reaching the backend per second (top) and users served per second (bottom) against
    time (s), one colour and line style per policy; the backend's capacity dashed, the fault shaded."""
    check_runs("runs", runs)
    if axes is None:
        _, axes = new_figure(2, 1, height=2.4, sharex=True)
    a0, a1 = axes
    sc = next(iter(runs.values())).scenario
    for pol, run in runs.items():
        w = run.windows
        t = w["t"] + sc.window_ms / 2000.0
        ls = POLICY_STYLE.get(pol, "-")
        c = POLICY_COLOR.get(pol, COLORS["capacity"])
        a0.plot(t, w["attempts"], color=c, ls=ls, label=RETRY_LABELS.get(pol, pol))
        a1.plot(t, w["goodput"], color=c, ls=ls, label=RETRY_LABELS.get(pol, pol))
    a0.axhline(sc.capacity_per_s, color=COLORS["capacity"], ls="--", lw=1.5, label="backend capacity")
    a1.axhline(sc.users_per_s, color=COLORS["offered"], ls="--", lw=1.5, label="user requests")
    for ax in axes:
        shade(ax, [(sc.fault_start_ms / 1000, sc.fault_end_ms / 1000)], label="backend fault")
        ax.set_ylim(bottom=0)
    return _finish_pair(axes, ("calls to backend/s", "users served/s"), sc.horizon_ms)


def plot_failover(crash: Run, surge: Run, axes=None):
    """Two runs side by side, one per column, each labelled inside its panels: left, run 1 (A
    unreachable, connect timeouts); right, run 2 (A up, the traffic surges). Top row: p50 and p99
    latency (ms, log scale) against time (s). Bottom row: the share of requests answered (by
    arrival window) and each service's busy share. Panels in a row share their y axis."""
    check_run("crash", crash)
    check_run("surge", surge)
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 2, figsize=(10.0, 5.2), sharey="row")
    axes = np.asarray(axes)
    sc_c, sc_s = crash.scenario, surge.scenario
    runs = [
        (crash, f"run 1: A unreachable {sc_c.down_start_ms / 1000:g}–{sc_c.down_end_ms / 1000:g} s",
         [(sc_c.down_start_ms / 1000, sc_c.down_end_ms / 1000)], "A unreachable (run 1)"),
        (surge, f"run 2: A up, traffic ×{sc_s.surge_factor:g} {sc_s.surge_start_ms / 1000:g}–"
                f"{sc_s.surge_end_ms / 1000:g} s",
         [(sc_s.surge_start_ms / 1000, sc_s.surge_end_ms / 1000)], f"traffic surge ×{sc_s.surge_factor:g} (run 2)"),
    ]
    for col, (run, title, spans, shade_label) in enumerate(runs):
        sc, w = run.scenario, run.windows
        t = w["t"] + sc.window_ms / 2000.0
        top, bottom = axes[0, col], axes[1, col]
        top.plot(t, w["p99_ms"], color=COLORS["latency"], label="p99 latency")
        top.plot(t, w["p50_ms"], color=COLORS["latency"], ls="--", label="p50 latency")
        top.axhline(failover_latency_ms(sc.service_ms, sc.detect_ms if col == 0 else sc.timeout_ms), color=COLORS["capacity"], ls=":",
                    lw=1.5, label="timeout + service")
        shade(top, spans, label=shade_label)
        top.set_yscale("log")
        top.set_ylim(20, 3000)  # a request that fails at A and at B takes two timeouts
        _log_ms_ticks(top)
        decorate(top, ylabel="latency (ms)" if col == 0 else None, legend=False)
        top.text(0.02, 0.95, title, transform=top.transAxes, fontsize=9, va="top",
                 bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
        bottom.plot(t, w["success"], color=COLORS["goodput"], label="answered share")
        bottom.plot(t, w["util_a"], color=COLORS["queue"], label="A busy share")
        bottom.plot(t, w["util_b"], color=COLORS["queue"], ls="--", label="B busy share")
        shade(bottom, spans, label=shade_label)
        decorate(bottom, xlabel="time (s)", ylabel="share" if col == 0 else None, ylim=(0, 1.05),
                 legend=False)
        for ax in (top, bottom):
            ax.set_xlim(0, sc.horizon_ms / 1000)
    for row in (0, 1):  # one legend per row, beside the right panel, naming both runs' shaded windows
        pairs = {}
        for ax in axes[row]:
            h, lab = ax.get_legend_handles_labels()
            pairs.update({k: v for k, v in zip(lab, h, strict=True) if k not in pairs})
        axes[row, 1].legend(list(pairs.values()), list(pairs), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[0, 0].figure.tight_layout()
    return axes


def plot_ejection(runs: dict, strips=None, axes=None):
    """Top: the pool's success rate over time (s), one line per labelled run; the bad window
    shaded; each router with ejection in its own colour and line style, the baseline in grey.
    Below: one strip per run named in ``strips`` (default: every run with ejection),
    showing when each machine was out of rotation (red)."""
    check_runs("runs", runs)
    if strips is None:
        strips = [k for k, r in runs.items() if r.scenario.ejection]
    with_ej = {k: runs[k] for k in strips}
    if axes is None:
        import matplotlib.pyplot as plt

        n_strips = len(with_ej)
        sc_first = next(iter(runs.values())).scenario
        strip_h = max(1.0, 0.25 * sc_first.servers)
        fig = plt.figure(figsize=(8.0, 2.8 + strip_h * n_strips))
        gs = fig.add_gridspec(1 + n_strips, 1, height_ratios=[2.6] + [strip_h] * n_strips, hspace=0.5)
        axes = [fig.add_subplot(gs[0])] + [fig.add_subplot(gs[i + 1]) for i in range(n_strips)]
    a0 = axes[0]
    styles = ["-", "--", ":", "-."]
    sc0 = next(iter(runs.values())).scenario
    n_ej = 0
    for label, run in runs.items():
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        if run.scenario.ejection:  # routers with ejection in their own colours, the baseline in grey
            wide = {"lw": 4.0, "alpha": 0.45} if n_ej == 0 else {"lw": 1.6}  # a line on top of the first stays visible
            a0.plot(t, w["success"], color=RUN_COLORS[n_ej % 4], ls=styles[n_ej % 4], label=label, **wide)
            n_ej += 1
        else:
            a0.plot(t, w["success"], color=COLORS["capacity"], lw=1.5, alpha=0.8, label=label)
    shade(a0, [(sc0.bad_start_ms / 1000, sc0.bad_end_ms / 1000)], label=f"{sc0.bad_label} bad")
    decorate(a0, ylabel="pool success rate", ylim=(0, 1.05), legend=False)
    _legend_right(a0)
    for ax, (label, run) in zip(axes[1:], with_ej.items(), strict=False):
        sc = run.scenario
        bars = [(name, 0.0, 0.0) for name in sc.names]  # every machine's row, in order
        bars += [(sc.names[k], a, b) for k, a, b in run.log["ejections"]]
        lock_gantt(bars, ax=ax, colors=dict.fromkeys(sc.names, COLORS["timeouts"]), time_unit="s")
        panic = _panic_spans(sc, run.log["ejections"])
        if panic:  # in panic the router sends traffic to every machine, ejected or not
            shade(ax, panic, kind="queue", label="panic: traffic to all")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 0.3), fontsize=8, frameon=False)
        ax.set_xlim(0, sc.horizon_ms / 1000)
        ax.set_ylabel("out of\nrotation", fontsize=8)
        ax.set_xlabel("")
        ax.text(1.01, 0.5, label, transform=ax.transAxes, fontsize=8, va="center")
    axes[-1].set_xlabel("time (s)")
    a0.set_xlim(0, sc0.horizon_ms / 1000)
    return axes


def _panic_spans(sc, ejections) -> list:
    """The intervals (s) in which the router of ``sc`` is in panic mode: fewer than
    ``panic_threshold × servers`` machines in rotation, from the ejection log."""
    if not getattr(sc, "panic_threshold", 0.0):
        return []
    edges = sorted([(a, 1) for _, a, _ in ejections] + [(b, -1) for _, _, b in ejections])
    spans, out, start = [], 0, None
    for t, d in edges:
        out += d
        panicking = sc.servers - out < sc.panic_threshold * sc.servers
        if panicking and start is None:
            start = t
        elif not panicking and start is not None:
            spans.append((start, t))
            start = None
    if start is not None:
        spans.append((start, sc.horizon_ms / 1000))
    return [(a, b) for a, b in spans if b > a]


def plot_capacity_curve(
    workers: int = SEED_POOL.workers,
    service_ms: float = SEED_POOL.service_ms,
    timeouts_ms=(SEED_POOL.timeout_ms,),
    points: dict | None = None,
    shape: float = 1.0,
    offered_per_s: float | None = None,
    ax=None,
):
    """Closed-form capacity (requests/s, log scale) against the share of hanging calls, one line
    per timeout; ``points`` = ``{timeout_ms: [(hang_share, measured_per_s), …]}`` from
    :func:`measure_capacity` drawn as dots; ``offered_per_s`` as a dashed line."""
    if not tuple(timeouts_ms):
        raise ValueError(f"timeouts_ms must name at least one timeout, got {timeouts_ms!r}")
    if ax is None:
        _, ax = new_figure(height=3.4)
    h = np.linspace(0.0, 1.0, 201)
    styles = ["-", "--", ":", "-."]
    for j, tmo in enumerate(timeouts_ms):
        cap = [pool_capacity_per_s(workers, service_ms, tmo, x, shape) for x in h]
        ax.plot(h * 100, cap, color=COLORS["goodput"], ls=styles[j % 4],
                label=f"timeout {tmo / 1000:g} s (closed form)")
        for x, y in (points or {}).get(tmo, []):
            ax.plot(x * 100, y, "o", color=COLORS["goodput"], ms=6, mfc="white", mew=2)
    if points:
        ax.plot([], [], "o", color=COLORS["goodput"], mfc="white", mew=2, label="SimPy worker pool")
    if offered_per_s is not None:
        ax.axhline(offered_per_s, color=COLORS["offered"], ls="--", lw=1.5, label="offered load")
    ax.set_yscale("log")
    _log_ms_ticks(ax)
    decorate(ax, xlabel="hanging calls (%)", ylabel="pool capacity (requests/s)", legend=False)
    _legend_right(ax)
    return ax


def plot_pool_runs(runs: dict, axes=None):
    """Top: requests answered ok per second; bottom: the user's mean wait (s); one colour and line
    style per labelled run, a legend beside each panel; the hang window shaded."""
    check_runs("runs", runs)
    if axes is None:
        _, axes = new_figure(2, 1, height=2.3, sharex=True)
    a0, a1 = axes
    styles = ["-", "--", ":", "-."]
    sc0 = next(iter(runs.values())).scenario
    for j, (label, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        a0.plot(t, w["goodput"], color=RUN_COLORS[j % 4], ls=styles[j % 4], label=label)
        a1.plot(t, w["mean_ms"] / 1000.0, color=RUN_COLORS[j % 4], ls=styles[j % 4], label=label)
    a0.axhline(sc0.rate_per_s, color=COLORS["offered"], ls="--", lw=1, label="offered")
    for ax in axes:
        if sc0.hang_end_ms > sc0.hang_start_ms:
            shade(ax, [(sc0.hang_start_ms / 1000, min(sc0.hang_end_ms, sc0.horizon_ms) / 1000)],
                  label=f"{sc0.hang_share:.0%} of calls hang")
        ax.set_ylim(bottom=0)
    return _finish_pair(axes, ("answered ok/s", "user's mean wait (s)"), sc0.horizon_ms)


def plot_sequence(run: Run, ax=None):
    """The seed's sequence for one user as a timeline (s): the user's clicks, AMS waiting for
    the delivery service (each call up to the timeout), what the user is shown, and when gifts
    land in the user's account."""
    sc = check_run("run", run).scenario
    ev = run.log["events"]
    if ax is None:
        _, ax = new_figure(height=2.6)
    rows = {"user": 3, "AMS": 2, "delivery": 1, "account": 0}
    # AMS waits: from "call delivery" to its next shown result
    calls = [t for t, a, w in ev if a == "AMS" and w == "call delivery"]
    shows = [(t, w) for t, a, w in ev if a == "AMS" and w != "call delivery"]
    for t0 in calls:
        t1 = min((t for t, _ in shows if t >= t0), default=t0)
        ax.broken_barh([(t0 / 1000, (t1 - t0) / 1000)], (rows["AMS"] - 0.3, 0.6),
                       facecolors=COLORS["queue"], alpha=0.35)
        ax.broken_barh([(t0 / 1000, min(sc.slow_ms, sc.horizon_ms - t0) / 1000 if t1 - t0 >= sc.timeout_ms - 1e-9
                         else (t1 - t0) / 1000)], (rows["delivery"] - 0.3, 0.6),
                       facecolors=COLORS["latency"], alpha=0.35)
    for t, a, w in ev:
        s = t / 1000
        if a == "user":
            ax.plot(s, rows["user"], "v", color=COLORS["offered"], ms=9)
            ax.annotate(w, (s, rows["user"]), xytext=(4, 6), textcoords="offset points", fontsize=8)
        elif a == "AMS" and w != "call delivery":
            color = COLORS["goodput"] if w == "success" else COLORS["timeouts"]
            text = {"failed": "shows 'claim failed'", "success": "shows success", "refused": "refuses"}[w]
            ax.plot(s, rows["AMS"], "s", color=color, ms=8)
            ax.annotate(text, (s, rows["AMS"]), xytext=(4, 6), textcoords="offset points", fontsize=8)
        elif a == "account":
            ax.plot(s, rows["account"], "*", color=COLORS["wasted"] if w != "gift 1" else COLORS["goodput"], ms=13)
            ax.annotate(w, (s, rows["account"]), xytext=(5, 4), textcoords="offset points", fontsize=8)
    ax.axvline(sc.timeout_ms / 1000, color=COLORS["capacity"], ls=":", lw=1)
    ax.text(sc.timeout_ms / 1000, 3.55, f" timeout {sc.timeout_ms / 1000:g} s", fontsize=8,
            color=COLORS["capacity"])
    ax.set_yticks(list(rows.values()), ["user", "AMS (waits)", "delivery service", "user's account"])
    ax.set_ylim(-0.6, 3.8)
    ax.grid(axis="y", visible=False)
    t_last = max(t for t, _, _ in ev) / 1000 if ev else sc.horizon_ms / 1000
    decorate(ax, xlabel="time since the first click (s)", legend=False, xlim=(-0.3, t_last + 1.5))
    return ax


def plot_duplicates(closed: dict, measured: dict | None = None, ax=None):
    """Duplicate gifts per 1000 users for each protection: the closed form as bars, the
    simulation as dots."""
    if not isinstance(closed, dict) or not closed:
        raise ValueError(f"closed must be a non-empty dict (expected_duplicates), got {closed!r}")
    if ax is None:
        _, ax = new_figure(height=3.0)
    names = [p for p in PROTECTIONS if p in closed]
    x = np.arange(len(names))
    ax.bar(x, [closed[p]["duplicates"] for p in names], color=COLORS["wasted"], alpha=0.7,
           label="closed form")
    if measured:  # a protection with no data (None) is left out
        ax.plot(*plottable([i for i, p in enumerate(names) if p in measured],
                           [measured[p] for p in names if p in measured]), "o", color="black", ms=6,
                label="simulation")
    ax.set_xticks(x, [PROTECTION_LABELS[p] for p in names], fontsize=9)
    ax.grid(axis="x", visible=False)
    decorate(ax, ylabel="duplicate gifts per 1000 users", legend=False)
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_report(runs: dict, sweep: dict | None = None, axes=None):
    """Left: mean core-path latency (ms) against the reporting service's mean time (ms, log
    axes), closed forms as lines and ``sweep`` = ``{mode: [(report_ms, measured_ms), …]}`` as
    dots (a point with no data, None, is skipped). Right: p99 latency over time (s) for each run;
    the slow window shaded."""
    check_runs("runs", runs)
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    a0, a1 = axes
    sc = next(iter(runs.values())).scenario
    r = np.geomspace(1.0, 3000.0, 120)
    a0.plot(r, [core_latency_ms(sc.core_ms, x, sc.report_timeout_ms) for x in r],
            color=COLORS["goodput"], label=f"bypass after {sc.report_timeout_ms:g} ms")
    a0.plot(r, [core_latency_ms(sc.core_ms, x, None) for x in r], color=COLORS["timeouts"],
            label="blocking call")
    for mode, pts in (sweep or {}).items():
        c = COLORS["goodput"] if mode == "bypass" else COLORS["timeouts"]
        a0.plot(*plottable([p[0] for p in pts], [p[1] for p in pts]), "o", color=c, mfc="white", mew=2, ms=6,
                label=f"{mode}: simulated")
    a0.set_xscale("log")
    a0.set_yscale("log")
    _log_ms_ticks(a0, "x", mantissas=(1,))
    _log_ms_ticks(a0, "y")
    decorate(a0, xlabel="reporting mean time (ms)", ylabel="core path mean (ms)", legend=False)
    a0.legend(loc="upper left", fontsize=8)
    for mode, run in runs.items():
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        c = COLORS["goodput"] if run.scenario.mode == "bypass" else COLORS["timeouts"]
        a1.plot(t, w["p99_ms"], color=c, label=f"{mode}: p99")
    shade(a1, [(sc.slow_start_ms / 1000, sc.slow_end_ms / 1000)], label="reporting slow")
    a1.set_yscale("log")
    _log_ms_ticks(a1)
    decorate(a1, xlabel="time (s)", ylabel="core path p99 (ms)", legend=False)
    a1.legend(loc="upper left", fontsize=8)
    a0.figure.tight_layout()
    return axes


def plot_isolation(runs: dict, ax=None):
    """Share of deliveries (solid) and queries (dotted) served over time (s), one colour per
    labelled run, drawn as steps: each step spans the arrival window it counts; the query surge
    shaded."""
    check_runs("runs", runs)
    if ax is None:
        _, ax = new_figure(height=3.0)
    colors = [COLORS["timeouts"], COLORS["goodput"], COLORS["queue"], COLORS["latency"]]
    sc0 = next(iter(runs.values())).scenario
    for j, (label, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"]  # window starts: with steps-post each value is drawn over its own window
        ax.plot(t, w["delivery_success"], color=colors[j % 4], ds="steps-post", label=f"{label}: deliveries")
        ax.plot(t, w["query_success"], color=colors[j % 4], ls=":", lw=1.5, ds="steps-post",
                label=f"{label}: queries")
    shade(ax, [(sc0.surge_start_ms / 1000, sc0.surge_end_ms / 1000)], label=f"query surge ×{sc0.surge_factor:g}")
    decorate(ax, xlabel="time (s)", ylabel="share served", ylim=(0, 1.05), legend=False)
    _legend_right(ax)
    ax.set_xlim(0, sc0.horizon_ms / 1000)
    return ax
