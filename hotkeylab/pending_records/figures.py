"""06 · Figures: plot_* functions taking runs as data.
"""

from __future__ import annotations

import math

import numpy as np

from ..plotting import COLORS, decorate, lock_gantt, new_figure, shade
from ..validate import check_int, check_number
from .closed_form import (
    batch_time_ms,
    collapse_backlog,
    consumption_per_s,
    detection_ms,
    max_backlog_per_run,
    scan_time_ms,
    scan_timeout_backlog,
    starve_scans,
)
from .results import Run
from .scenario import (
    KILLED,
    SEED_INCIDENT,
    Scenario,
)


# --------------------------------------------------------------------------- figures
def _failover_lines(ax, run: Run, label: bool = True) -> None:
    for j, t in enumerate(run.failovers_ms / 1000.0):
        ax.axvline(t, color=COLORS["timeouts"], ls="--", lw=1.2, label="failover" if (label and j == 0) else None)


def _windows_of(sc: Scenario, horizon_s: float) -> tuple[list, list]:
    trig = []
    if math.isfinite(sc.stockout_ms):
        trig.append((sc.stockout_ms / 1000, min(sc.replenish_ms / 1000, horizon_s), "out of stock"))
    inter = []
    if math.isfinite(sc.stop_batch_ms) and sc.stop_batch_ms < min(sc.limit_from_ms, sc.horizon_ms):
        inter.append((sc.stop_batch_ms / 1000, min(sc.limit_from_ms / 1000, horizon_s), "batch stopped"))
    return trig, inter


def plot_timeline(run: Run, axes=None, show_starve: bool = True):
    """The seed's chain against time (s), three panels: pending records; slow scans on the primary
    against its slots; business queries answered in time, timed out and refused per second.
    Shaded: out of stock (grey), batch stopped (blue); dashed red: failovers. ``show_starve``
    draws the scan count from which the business loses queries (:func:`starve_scans`; the
    notebook's first figure leaves it out, because a predict question asks for it)."""
    if axes is None:
        _, axes = new_figure(3, 1, height=2.1, sharex=True)
    sc = run.scenario
    w = run.windows
    t = w["t"] + sc.window_ms / 2000.0
    horizon_s = sc.horizon_ms / 1000
    trig, inter = _windows_of(sc, horizon_s)
    a0, a1, a2 = axes
    a0.plot(t, w["backlog"] / 1000, color=COLORS["queue"], label="pending records")
    decorate(a0, ylabel="pending (k rows)", legend=False, ylim=(0, None))
    a1.plot(t, w["slow_sql"], color=COLORS["queue"], label="slow scans on the primary")
    a1.axhline(sc.db_slots, color=COLORS["capacity"], ls="--", lw=1.5, label=f"slots ({sc.db_slots})")
    if show_starve:
        a1.axhline(
            starve_scans(sc.db_slots, sc.business_slots), color=COLORS["capacity"], ls=":", lw=1.5,
            label="from here the business loses queries",
        )
    decorate(a1, ylabel="slow scans", legend=False, ylim=(0, None))
    a2.plot(t, w["offered"], color=COLORS["offered"], lw=1.2, label="business queries")
    a2.plot(t, w["served"], color=COLORS["goodput"], label="answered in time")
    a2.plot(t, w["timeouts"], color=COLORS["timeouts"], label="timed out")
    a2.plot(t, w["rejected"], color=COLORS["rejected"], label="refused (failover)")
    decorate(a2, xlabel="time (s)", ylabel="queries/s", legend=False, ylim=(0, None))
    for ax in axes:
        shade(ax, trig, kind="trigger")
        shade(ax, inter, kind="intervention")
        _failover_lines(ax, run, label=ax is a0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.set_xlim(0, horizon_s)
    return axes


def plot_slow_sql(run: Run, t0_s: float, t1_s: float, ax=None, max_rows: int = 24):
    """Each scan submitted between ``t0_s`` and ``t1_s`` (one row per batch run): pale = waiting
    for a slot (in the legend only when some wait is wide enough to see), solid = running (purple: finished or still running, red: killed by a failover);
    the black tick is where its batch run gave up while the scan ran on. Dashed red: failovers;
    dotted grey: a new primary takes over. Time in seconds."""
    rows = [s for s in run.slow_sql if t0_s * 1000 <= s[0] < t1_s * 1000][:max_rows]
    if not rows:
        raise ValueError(f"t0_s={t0_s!r}, t1_s={t1_s!r}: no scan was submitted in this window")
    sc = run.scenario
    bars, colors = [], {}
    for j, (_sub, start, stop, outcome, _) in enumerate(rows):
        name = f"run {j + 1}"
        if not math.isnan(start):
            bars.append((name, start / 1000, stop / 1000))
        colors[name] = COLORS["timeouts"] if outcome == KILLED else COLORS["queue"]
    if ax is None:
        _, ax = new_figure(height=0.8 + 0.22 * max(1, len(rows)))
    lock_gantt(bars, ax=ax, colors=colors, time_unit="s")
    ypos = {name: i for i, name in enumerate(dict.fromkeys(b[0] for b in bars))}
    waited = gave_up = False
    visible_ms = 0.005 * (max(r[2] for r in rows) - t0_s * 1000)  # a wait shorter than this is not seen
    for j, (sub, start, stop, _outcome, _) in enumerate(rows):
        y = ypos.get(f"run {j + 1}", j)
        wait_end = start if not math.isnan(start) else stop
        if wait_end > sub:
            waited = waited or wait_end - sub > visible_ms  # the legend names only a wait one can see
            ax.broken_barh([(sub / 1000, (wait_end - sub) / 1000)], (y - 0.2, 0.4), facecolors=COLORS["queue"], alpha=0.3, lw=0)
        if sub + sc.batch_timeout_ms < stop:  # the run gave up, its scan ran on
            gave_up = True
            ax.plot([(sub + sc.batch_timeout_ms) / 1000] * 2, [y - 0.4, y + 0.4], color="black", lw=1.5)
    t_lo, t_hi = t0_s * 1000, max(r[2] for r in rows)
    for t in run.failovers_ms:
        if t_lo <= t <= t_hi:
            ax.axvline(t / 1000, color=COLORS["timeouts"], ls="--", lw=1.2)
    for t in run.promoted_ms:
        if t_lo <= t <= t_hi:
            ax.axvline(t / 1000, color=COLORS["capacity"], ls=":", lw=1.5)
    from matplotlib.patches import Patch

    outcomes = {r[3] for r in rows}
    handles = []
    if waited:
        handles.append(Patch(color=COLORS["queue"], alpha=0.3, label="waiting for a slot"))
    if outcomes - {KILLED}:
        handles.append(Patch(color=COLORS["queue"], label="running"))
    if KILLED in outcomes:
        handles.append(Patch(color=COLORS["timeouts"], label="killed by the failover"))
    if gave_up:
        handles.append(mpl_line("black", "its run gave up"))
    handles.append(mpl_line(COLORS["timeouts"], "failover", ls="--"))
    handles.append(mpl_line(COLORS["capacity"], "new primary", ls=":"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_xlim(t0_s - 5, t_hi / 1000 + 5)
    ax.set_ylabel("batch run")
    return ax


def mpl_line(color: str, label: str, ls: str = "-"):
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, ls=ls, lw=1.5, label=label)


def plot_fixes(runs: dict, axes=None):
    """Small multiples, one row per scenario (label → :class:`Run`): pending records (left, each
    row on its own scale) and business queries answered in time per second (right) against time
    (s); failovers dashed red; shaded grey: out of stock; shaded blue: no batch run starts (fix 2,
    from ``stop_batch_ms``); solid black: runs start again with the row limit (fix 3, from
    ``limit_from_ms``). A legend above the panels names each mark."""
    n = len(runs)
    if n == 0:
        raise ValueError("runs must hold at least one labelled run, got {}")
    if axes is None:
        fig, axes = new_figure(n, 2, height=1.35, sharex=True, squeeze=False)
        fig.set_size_inches(10.0, 1.35 * n)
    gmax = max(float(np.nanmax(r.windows["offered"])) for r in runs.values()) * 1.15 or 1.0
    for i, (label, run) in enumerate(runs.items()):
        sc = run.scenario
        w = run.windows
        t = w["t"] + sc.window_ms / 2000.0
        trig, inter = _windows_of(sc, sc.horizon_ms / 1000)
        a0, a1 = axes[i]
        a0.plot(t, w["backlog"] / 1000, color=COLORS["queue"])
        a1.plot(t, w["served"], color=COLORS["goodput"])
        for ax in (a0, a1):
            shade(ax, trig, kind="trigger")
            shade(ax, inter, kind="intervention")
            _failover_lines(ax, run, label=False)
            if math.isfinite(sc.limit_from_ms) and sc.limit_from_ms < sc.horizon_ms:
                ax.axvline(sc.limit_from_ms / 1000, color="black", lw=1.5)
        a0.set_ylim(0, max(1.0, float(np.nanmax(w["backlog"])) / 1000 * 1.15))
        a1.set_ylim(0, gmax)
        a1.text(1.04, 0.6, label, transform=a1.transAxes, va="center", fontsize=9)
        a1.text(1.04, 0.3, f"{len(run.failovers_ms)} failovers", transform=a1.transAxes, va="center",
                fontsize=8, color=COLORS["timeouts"] if len(run.failovers_ms) else COLORS["goodput"])
        a0.set_xlim(0, sc.horizon_ms / 1000)
    axes[n // 2, 0].set_ylabel("pending (k rows)")
    axes[n // 2, 1].set_ylabel("answered in time/s")
    axes[-1, 0].set_xlabel("time (s)")
    axes[-1, 1].set_xlabel("time (s)")
    from matplotlib.patches import Patch

    handles = [
        Patch(color=COLORS["trigger"], alpha=0.35, label="out of stock"),
        Patch(color=COLORS["intervention"], alpha=0.35, label="batch stopped: no run starts (fix 2)"),
        mpl_line("black", "runs restart with the row limit (fix 3)"),
        mpl_line(COLORS["timeouts"], "failover", ls="--"),
    ]
    axes[0, 0].figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=8,
                             frameon=False)
    return axes


def plot_scan_vs_backlog(sc: Scenario, backlogs, row_limit: int | None = None, measured: dict | None = None, ax=None,
                         xscale: str = "linear"):
    """Batch time on an idle primary against the backlog: the seed's time-range-only run (solid)
    and a row-limited run (dashed), closed forms; dots: measured runs (``measured`` maps
    ``row_limit → (backlogs, times_ms)``). Grey lines: the run's timeout and the scan time at which
    the pile of slow scans fills the primary long enough to get it failed over
    (:func:`collapse_backlog`). Thin vertical lines mark the three backlogs where the curves cross
    those lines (run-timeout, scan-timeout, failover) and the backlog the stockout leaves, each
    labelled with its value in rows. Backlog in thousands of rows (``xscale="log"`` for a log axis, which
    needs positive backlogs), time in seconds on a log axis that starts at the scan's fixed cost
    ``a`` (the time of a run at an empty backlog), since a log axis has no zero."""
    k = sc.fix_row_limit if row_limit is None else check_int("row_limit", row_limit, low=1)
    if xscale not in ("linear", "log"):
        raise ValueError(f"xscale must be 'linear' or 'log', got {xscale!r}")
    low_b = 0.0 if xscale == "linear" else 1.0
    b = np.asarray([check_number("backlogs", x, low=low_b) for x in backlogs], dtype=float)
    if ax is None:
        _, ax = new_figure(height=3.6)
    a, s, p = sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row
    full = np.array([batch_time_ms(x, 0, a, s, p) for x in b]) / 1000
    scan = np.array([scan_time_ms(x, 0, a, s) for x in b]) / 1000
    lim = np.array([batch_time_ms(x, k, a, s, p) for x in b]) / 1000
    ax.plot(b / 1000, full, color=COLORS["latency"], label="time range only: scan + retry")
    ax.plot(b / 1000, scan, color=COLORS["latency"], lw=1.2, ls=":", label="time range only: scan alone")
    ax.plot(b / 1000, lim, color=COLORS["latency"], ls="--", label=f"row limit {k}: scan + retry")
    for key, (bx, tm) in (measured or {}).items():
        ax.plot(np.asarray(bx) / 1000, np.asarray(tm) / 1000, "o", color=COLORS["latency"], ms=5,
                mfc="white" if key else COLORS["latency"], label="measured (simulation)" if key == 0 else None)
    if math.isfinite(sc.batch_timeout_ms):
        ax.axhline(sc.batch_timeout_ms / 1000, color=COLORS["capacity"], ls="--", lw=1.5, label="the run's timeout")
    fill_s = ((sc.db_slots - 1) * sc.batch_period_ms + detection_ms(sc)) / 1000
    ax.axhline(fill_s, color=COLORS["capacity"], ls="-.", lw=1.5, label="scan time: slots full long enough to fail over")
    # the crossings, marked: where each curve meets its grey line, and the backlog the stockout leaves
    marks = [(collapse_backlog(sc.db_slots, sc.batch_period_ms, a, s, detection_ms(sc)), "failover")]
    if math.isfinite(sc.batch_timeout_ms):
        marks = [(max_backlog_per_run(sc.batch_timeout_ms, a, s, p), "run-timeout"),
                 (scan_timeout_backlog(sc.batch_timeout_ms, a, s), "scan-timeout")] + marks
    if math.isfinite(sc.replenish_ms) and math.isfinite(sc.stockout_ms):
        marks.append((sc.stockout_pending_per_s * (sc.replenish_ms - sc.stockout_ms) / 1000, "at replenishment"))
    x_lo, x_hi = float(b.min()), float(b.max())
    for x, name in marks:
        if math.isfinite(x) and x_lo < x <= x_hi:
            ax.axvline(x / 1000, color="0.45", lw=0.9, ls=(0, (1, 2)), zorder=0)
            ax.text(x / 1000, 0.02, f"{name} {x:,.0f} ", transform=ax.get_xaxis_transform(), rotation=90,
                    va="bottom", ha="right", fontsize=7.5, color="0.25")
    bottom_s = a / 1000 if a > 0 else 10.0 ** math.floor(math.log10(max(float(np.min(scan[scan > 0])), 1e-6)))
    ax.set_yscale("log")
    ax.set_xscale(xscale)
    decorate(ax, xlabel=f"pending records (k rows{', log scale' if xscale == 'log' else ''})",
             ylabel="batch time (s, log scale)", legend=False, ylim=(bottom_s, None), xlim=(x_lo / 1000, x_hi / 1000))
    ax.legend(loc="upper left", fontsize=7.5, framealpha=0.9)
    return ax


def plot_consumption(sc: Scenario, backlogs, row_limit: int | None = None, ax=None):
    """Consumption (rows/s the batch removes, in stock, idle primary) against the backlog, closed
    form: the seed's time-range-only run (solid) rises, peaks where one run just fits its timeout,
    and falls to zero once the scan alone outlasts it; a row-limited run (dashed) stays flat.
    Grey: production while out of stock (every order) and in stock (the occasional pending).
    Log y-axis; backlog in thousands of rows."""
    k = sc.fix_row_limit if row_limit is None else check_int("row_limit", row_limit, low=1)
    b = np.asarray([check_number("backlogs", x, low=0.0) for x in backlogs], dtype=float)
    if ax is None:
        _, ax = new_figure(height=3.2)
    full = np.array([consumption_per_s(x, sc, 0) for x in b])
    lim = np.array([consumption_per_s(x, sc, k) for x in b])
    ax.plot(b / 1000, np.where(full > 0, full, np.nan), color=COLORS["goodput"], label="consumption, time range only")
    ax.plot(b / 1000, np.where(lim > 0, lim, np.nan), color=COLORS["goodput"], ls="--", label=f"consumption, row limit {k}")
    ax.axhline(sc.stockout_pending_per_s, color=COLORS["capacity"], ls="--", lw=1.5,
               label=f"production, out of stock: {sc.stockout_pending_per_s:.0f} rows/s (every order)")
    ax.axhline(sc.normal_pending_per_s, color=COLORS["capacity"], ls=":", lw=1.5,
               label=f"production, in stock: {sc.normal_pending_per_s:.1f} rows/s (the occasional pending)")
    zero = scan_timeout_backlog(sc.batch_timeout_ms, sc.scan_fixed_ms, sc.scan_ms_per_row)
    ax.axvline(zero / 1000, color=COLORS["timeouts"], lw=1.2, ls="-.", label="scan > timeout: consumption 0")
    ax.set_yscale("log")
    if b.max() > zero:
        # zero cannot be drawn on a log axis: say so where the solid line stops
        ax.text(zero / 1000 + 0.01 * b.max() / 1000, 10.0, "time range only:\nconsumption 0 from here\n(off the log axis)",
                color=COLORS["goodput"], fontsize=8, va="center")
    decorate(ax, xlabel="pending records (k rows)", ylabel="rows/s", legend=False, xlim=(0, b.max() / 1000))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return ax


def plot_business_loss(scan_ms, lost, sc: Scenario = SEED_INCIDENT, ax=None):
    """The other business's lost share (timed out or refused, in %) against the scan time (s) at a
    constant backlog: ``lost`` has one row per scan time and one column per seed (line: mean,
    band: min to max over the seeds). Dotted: the closed form's threshold ``(c − ⌊ρ⌋ − 1) P``;
    dashed: the next steps, where the peak count of scans reaches ``n* + 1``, … (one slot fewer each)."""
    x = np.asarray([check_number("scan_ms", v, low=0.0) for v in scan_ms], dtype=float) / 1000
    y = 100 * np.asarray(lost, dtype=float)
    if y.ndim != 2 or y.shape[0] != len(x):
        raise ValueError(f"lost must have one row per scan time ({len(x)}), got shape {y.shape}")
    if ax is None:
        _, ax = new_figure(height=3.0)
    ax.fill_between(x, y.min(axis=1), y.max(axis=1), color=COLORS["timeouts"], alpha=0.25, lw=0,
                    label=f"min to max over {y.shape[1]} seeds")
    ax.plot(x, y.mean(axis=1), color=COLORS["timeouts"], marker="o", ms=4, label="mean")
    n = starve_scans(sc.db_slots, sc.business_slots)
    ax.axvline((n - 1) * sc.batch_period_ms / 1000, color=COLORS["capacity"], ls=":", lw=1.5,
               label=f"closed form: (c − ⌊ρ⌋ − 1) P, {n} scans at the peak, {sc.db_slots - n} slots left")
    # past S = n P the peak count is n + 1: one slot fewer again, so the loss steps up
    for j in range(n + 1, sc.db_slots):
        x_j = (j - 1) * sc.batch_period_ms / 1000
        if x_j <= x.max():
            ax.axvline(x_j, color=COLORS["capacity"], ls="--", lw=1.0,
                       label=f"(c − ⌊ρ⌋) P: {j} scans at the peak, {sc.db_slots - j} slot{'s' if sc.db_slots - j != 1 else ''} left"
                       if j == n + 1 else None)
    decorate(ax, xlabel="scan time S (s)", ylabel="business queries lost (%)", legend=False, ylim=(0, None))
    ax.legend(loc="upper left", fontsize=8)
    return ax
