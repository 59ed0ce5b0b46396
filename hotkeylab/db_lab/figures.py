"""01b · The lab's figures, taking runs and traces as data (loaded on first use: they import
matplotlib).

:func:`plot_tps_vs_threads` and :func:`plot_latency_vs_threads` put the measured runs beside the
model; :func:`plot_trace` draws lock grants on a timeline; :func:`plot_hold_budget` splits the
hold of each statement order into round trips, statements and COMMIT.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from .. import capacity, plotting
from .closed_form import measured_parts, predicted_latency_ms, predicted_tps
from .results import control_runs, hot_runs
from .scenario import ORDER_LABELS, ORDERS, sleeps_under_lock, statements_under_lock

__all__ = ["plot_tps_vs_threads", "plot_latency_vs_threads", "plot_trace", "plot_hold_budget"]


def _measured_vs_model(ax, runs, rtts, value, model, label):
    """One colour per RTT: the hot-row runs' ``value(run)`` as dots, ``model(one_thread_run, n)`` as a
    line over 1..max threads. Returns the colours used."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = []
    for i, rtt in enumerate(rtts):
        hot = hot_runs(runs, rtt)
        ns = sorted(hot)
        c = cycle[i % len(cycle)]
        colors.append(c)
        ax.plot(ns, [value(hot[n]) for n in ns], "o", color=c, label=label.format(rtt=rtt))
        fine = list(range(1, max(ns) + 1))
        ax.plot(fine, [model(hot[1], n) for n in fine], "-", color=c, lw=2, alpha=0.6)
    return colors


def plot_tps_vs_threads(runs, rtts=(0.5, 1.5, 3.0), *, ax=None, control: bool = True):
    """Measured TPS vs threads on the hot row (dots), the model fed with the one-thread run (line),
    and the control on one row per worker (open squares, dashed, same colour per RTT)."""
    if ax is None:
        _, ax = plotting.new_figure(height=3.6)
    colors = _measured_vs_model(ax, runs, rtts, lambda r: r.tps, predicted_tps,
                                "hot row, RTT {rtt:g} ms (measured)")
    for c, rtt in zip(colors, rtts, strict=True):
        own = control_runs(runs, rtt)
        if control and own:
            ms = sorted(own)
            ax.plot(ms, [own[n].tps for n in ms], "s--", color=c, lw=1, alpha=0.5, mfc="white",
                    label=f"own row per worker, RTT {rtt:g} ms")
    ax.plot([], [], "-", color="0.4", lw=2, alpha=0.6, label="model: min(1000 n / (hold + outside), 1000 / hold)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 4, 8, 16, 32], ["1", "2", "4", "8", "16", "32"])
    lo, hi = ax.get_ylim()
    ticks = [t for t in (50, 100, 200, 500, 1000, 2000, 5000) if lo <= t <= hi]
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    plotting.decorate(ax, xlabel="client threads", ylabel="committed transactions/s")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return ax


def plot_latency_vs_threads(runs, rtts=(0.5, 1.5, 3.0), *, ax=None):
    """Measured latency (BEGIN → COMMIT returned) vs threads, and Little's law from the model."""
    if ax is None:
        _, ax = plotting.new_figure(height=3.2)
    _measured_vs_model(ax, runs, rtts, lambda r: r.latency_ms, predicted_latency_ms, "RTT {rtt:g} ms (measured)")
    ax.plot([], [], "-", color="0.4", lw=2, alpha=0.6, label="model: n × 1000 / model TPS (Little's law)")
    plotting.decorate(ax, xlabel="client threads", ylabel="latency per transaction (ms)")
    return ax


def plot_trace(trace, *, start_ms: float | None = None, span_ms: float = 40.0, ax=None):
    """Lock grants as the client saw them, on a timeline: one row per worker, a bar from the lock
    grant (SELECT … FOR UPDATE returned to the client) to COMMIT returned, the COMMIT itself hatched, and a dotted line
    at each grant. Where a bar starts before the previous one ends, InnoDB had already released the
    row lock while that COMMIT was still flushing."""
    tr = sorted(trace, key=lambda t: t.t_lock)
    if not tr:
        raise ValueError("trace is empty")
    t0 = tr[len(tr) // 2].t_lock if start_ms is None else float(start_ms)
    sel = [t for t in tr if t.t_lock < t0 + span_ms and t.t_commit_done > t0]
    ivs = [(f"worker {t.worker}", t.t_lock, t.t_commit_done) for t in sel]
    workers = sorted({t.worker for t in sel})
    owners = [f"worker {w}" for w in workers]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {f"worker {w}": cycle[w % len(cycle)] for w in workers}
    if ax is None:
        _, ax = plotting.new_figure(height=0.6 + 0.45 * len(owners))
    ax = plotting.lock_gantt(ivs, ax=ax, owners=owners, colors=colors)
    for t in sel:
        y = owners.index(f"worker {t.worker}")
        ax.broken_barh([(t.t_commit_sent, t.t_commit_done - t.t_commit_sent)], (y - 0.35, 0.7),
                       facecolors="none", edgecolor="black", hatch="////", lw=0.5)
        if t0 <= t.t_lock < t0 + span_ms:
            ax.axvline(t.t_lock, color="0.3", lw=0.6, ls=":")
    ax.set_xlim(t0, t0 + span_ms)
    ax.ticklabel_format(axis="x", useOffset=False, style="plain")
    ax.set_xlabel("time since the run started, client clock (ms)")
    return ax


def plot_hold_budget(runs, rtt_ms: float = 1.5, inserts: int = 4, *, ax=None):
    """The hold of each statement order, split into round trips, statements and COMMIT (model, from
    :func:`measured_parts`), with ``1000 / hold`` written at the end of each bar, and a diamond at the
    row's turnover ``1000 / TPS`` measured with 8 threads where the lab ran that configuration (every
    statement paying the RTT)."""
    parts = measured_parts(runs)
    if ax is None:
        _, ax = plotting.new_figure(height=2.4)
    colors = (plotting.COLORS["offered"], plotting.COLORS["retries"], plotting.COLORS["goodput"])
    marked = False
    for y, order in enumerate(ORDERS):
        segs = [sleeps_under_lock(order, inserts) * (rtt_ms + parts.overshoot_ms),
                statements_under_lock(order, inserts) * parts.statement_ms, parts.commit_ms]
        left = 0.0
        for seg, c, lab in zip(segs, colors, ("round trips", "statements", "COMMIT"), strict=True):
            ax.barh(y, seg, left=left, color=c, label=lab if y == 0 else None, height=0.6)
            left += seg
        hits = [r for r in runs if r.shared_row and r.order == order and r.inserts == inserts
                and r.threads == 8 and math.isclose(r.rtt_ms, rtt_ms) and r.rtt_outside_lock]
        x_text = left
        if hits:
            ax.plot(1000.0 / hits[0].tps, y, "D", color="black", ms=6,
                    label=None if marked else "the row's turnover measured with 8 threads (1000 / TPS)")
            marked = True
            x_text = max(left, 1000.0 / hits[0].tps)
        ax.text(x_text, y, f"   {capacity.tps_ceiling(left):.0f} TPS (model)", va="center", fontsize=9)
    ax.set_yticks(range(len(ORDERS)), [ORDER_LABELS[o] for o in ORDERS])
    ax.invert_yaxis()
    ax.set_xlim(0, ax.get_xlim()[1] * 1.3)
    plotting.decorate(ax, xlabel=f"lock hold (ms) at RTT {rtt_ms:g} ms, {inserts} batchInsert statements",
                      legend=False)
    ax.legend(fontsize=8, loc="lower right")
    return ax
