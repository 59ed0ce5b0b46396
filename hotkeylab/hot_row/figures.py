"""01 · Figures: the lock Gantt of a closed-loop run, TPS and latency against threads, and the
group commit's batch sizes and client latencies. Each ``plot_*`` takes results as data."""

from __future__ import annotations

import numpy as np

from .. import plotting
from .results import ClosedLoopRun, GroupCommitRun, LockInterval, ThreadsSweep


def plot_gantt(run: ClosedLoopRun, *, t_max_ms: float | None = None, max_threads: int = 12, ax=None):
    """Who holds the row when (solid bars, via :func:`hotkeylab.plotting.lock_gantt`), who waits
    for it (hatched) and who is on the network outside the lock (thin pale bars: begin, the
    SELECT's way in, the COMMIT reply's way back), for the first ``t_max_ms`` ms of a closed-loop
    run and the first ``max_threads`` threads."""
    from matplotlib.patches import Patch

    t_max = run.scenario.horizon_ms if t_max_ms is None else t_max_ms
    shown = [f"thread {i}" for i in range(1, min(run.scenario.threads, max_threads) + 1)]
    row = {o: i for i, o in enumerate(shown)}
    # a zero-length interval per thread gives every shown thread its row, in order
    holds = [LockInterval(o, 0.0, 0.0) for o in shown]
    holds += [iv for iv in run.holds if iv.start < t_max and iv.owner in row]
    if ax is None:
        _, ax = plotting.new_figure(height=0.8 + 0.35 * len(shown))
    plotting.lock_gantt(holds, ax=ax, colors=dict.fromkeys(shown, plotting.COLORS["owner_b"]))
    for iv in run.outside:
        if iv.start < t_max and iv.owner in row and iv.end > iv.start:
            ax.broken_barh([(iv.start, min(iv.end, t_max) - iv.start)], (row[iv.owner] - 0.12, 0.24),
                           facecolors=plotting.COLORS["owner_b"], alpha=0.3, lw=0)
    for iv in run.waits:
        if iv.start < t_max and iv.owner in row:
            ax.broken_barh(
                [(iv.start, min(iv.end, t_max) - iv.start)], (row[iv.owner] - 0.2, 0.4),
                facecolors="none", edgecolor=plotting.COLORS["capacity"], hatch="////", lw=0.5,
            )  # fmt: skip
    ax.set_xlim(0, t_max)
    if len(shown) > 8:
        ax.tick_params(axis="y", labelsize=7)
    hidden = run.scenario.threads - len(shown)
    drawn_waits = any(iv.start < t_max and iv.owner in row for iv in run.waits)
    drawn_outside = any(iv.start < t_max and iv.owner in row and iv.end > iv.start for iv in run.outside)
    ax.legend(
        handles=[Patch(color=plotting.COLORS["owner_b"], label="holds the row lock")]
        + ([Patch(facecolor="none", edgecolor=plotting.COLORS["capacity"], hatch="////", label="waits for it")]
           if drawn_waits else [])
        + ([Patch(color=plotting.COLORS["owner_b"], alpha=0.3, label="outside the lock (network)")]
           if drawn_outside else [])
        + ([Patch(color="none", label=f"({hidden} more threads not shown)")] if hidden > 0 else []),
        loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
    )  # fmt: skip
    return ax


def plot_threads(sweep: ThreadsSweep, *, axes=None, mark: int | None = None):
    """TPS and latency against worker threads: simulation (dots) and closed form (lines)."""
    if axes is None:
        _, axes = plotting.new_figure(1, 2, height=3.2)
    a1, a2 = axes
    a1.plot(sweep.threads, sweep.tps_closed_form, color=plotting.COLORS["formula"], lw=2, alpha=0.5,
            label="closed form")  # fmt: skip
    a1.plot(sweep.threads, sweep.tps, "o", color=plotting.COLORS["goodput"], ms=4, label="simulation")
    a1.axhline(sweep.ceiling_tps, color=plotting.COLORS["capacity"], ls="--", lw=1.5,
               label=f"ceiling 1000 / hold = {sweep.ceiling_tps:.1f}")  # fmt: skip
    a1.axhline(1000.0 / sweep.scenario.cycle_ms, color=plotting.COLORS["capacity"], ls=":", lw=1.5,
               label=f"one thread: 1000 / cycle = {1000.0 / sweep.scenario.cycle_ms:.1f}")  # fmt: skip
    plotting.decorate(a1, xlabel="worker threads", ylabel="transactions/s", ylim=(0, sweep.ceiling_tps * 1.25))
    a2.plot(sweep.threads, sweep.latency_closed_form_ms, color=plotting.COLORS["formula"], lw=2, alpha=0.5,
            label="Little's law: threads / TPS")  # fmt: skip
    a2.plot(sweep.threads, sweep.latency_ms, "o", color=plotting.COLORS["latency"], ms=4, label="simulation")
    plotting.decorate(a2, xlabel="worker threads", ylabel="latency per transaction (ms)", ylim=(0, None))
    if mark is not None:
        i = int(np.argmin(np.abs(sweep.threads - mark)))
        for ax, y in ((a1, sweep.tps[i]), (a2, sweep.latency_ms[i])):
            ax.plot([sweep.threads[i]], [y], "o", ms=11, mfc="none", mec="black", mew=1.5)
    return axes


def plot_batching(run: GroupCommitRun, *, axes=None):
    """The group commit's rows per batch (histogram, with ``max_rows``) and client latencies
    (histogram, with the mean)."""
    sc, s = run.scenario, run.summary
    if axes is None:
        _, axes = plotting.new_figure(1, 2, height=3.2)
    a1, a2 = axes
    if run.batch_rows.size:
        bins = np.arange(0.5, max(run.batch_rows.max(), sc.max_rows) + 1.5)
        a1.hist(run.batch_rows, bins=bins, color=plotting.COLORS["queue"], alpha=0.8)
    a1.axvline(sc.max_rows, color=plotting.COLORS["capacity"], ls="--", lw=1.5, label="max_rows")
    plotting.decorate(a1, xlabel="rows per batch", ylabel="batches")
    if run.latency_ms.size:
        a2.hist(run.latency_ms, bins=40, color=plotting.COLORS["latency"], alpha=0.8)
        a2.axvline(s["mean_latency_ms"], color="black", lw=1.5, label=f"mean {s['mean_latency_ms']:.1f} ms")
    plotting.decorate(a2, xlabel="client latency (ms)", ylabel="requests")
    return axes
