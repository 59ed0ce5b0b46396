"""01 · Notebook helpers: the what-if callbacks (a run, its figure, its summary) and the widgets
over them."""

from __future__ import annotations

from dataclasses import replace

from .. import plotting
from .figures import plot_batching, plot_gantt, plot_threads
from .model import simulate_group_commit, sweep_threads
from .scenario import SEED_GROUP_COMMIT, SEED_ROW


def what_if_threads(rtt_ms: float = 0.5, round_trips: float = 4, threads: int = 8, statement_ms: float = 0.3,
                    seed: int = 0, show: bool = True) -> dict:  # fmt: skip
    """Widget callback: the hot row with these numbers (``round_trips`` per cycle, 2 of them outside
    the lock); draws the lock Gantt of the first ``6 × cycle`` ms and TPS/latency vs threads 1..32;
    returns the run's summary for ``threads``."""
    sc = replace(SEED_ROW, rtt_ms=rtt_ms, round_trips=round_trips, statement_ms=statement_ms, threads=threads)
    sweep = sweep_threads(sc, threads=sorted({1, 2, 4, 8, 16, 32, int(threads)}), seed=seed)
    run = sweep.runs[list(sweep.threads).index(int(threads))]
    if show:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(9, 5.6))
        g = fig.add_gridspec(2, 2, height_ratios=(1.1, 1))
        plot_gantt(run, t_max_ms=min(sc.horizon_ms, 6 * sc.cycle_ms), ax=fig.add_subplot(g[0, :]))
        plot_threads(sweep, axes=(fig.add_subplot(g[1, 0]), fig.add_subplot(g[1, 1])), mark=int(threads))
        fig.tight_layout()
    return dict(run.summary)


def what_if_batching(rate_per_s: float = 600, max_rows: int = 20, max_wait_ms: float = 20,
                     commit_ms: float = 16, servers: int = 1,
                     fixed_share: float = SEED_GROUP_COMMIT.per_batch_ms / SEED_GROUP_COMMIT.commit_ms,
                     seed: int = 0, show: bool = True) -> dict:  # fmt: skip
    """Widget callback: the group commit with these numbers for 10 simulated seconds (N =
    ``commit_ms`` at the calibration batch, ``fixed_share`` of it paid per batch); draws the
    batch-size histogram and the client-latency histogram; returns the run's summary."""
    sc = replace(
        SEED_GROUP_COMMIT, rate_per_s=rate_per_s, max_rows=max_rows, max_wait_ms=max_wait_ms,
        commit_ms=commit_ms, per_batch_ms=commit_ms, servers=servers, horizon_ms=10_000.0, warmup_ms=1_000.0,
    ).with_fixed_share(fixed_share)  # fmt: skip
    run = simulate_group_commit(sc, seed)
    s = run.summary
    if show:
        fig, axes = plotting.new_figure(1, 2, height=3.2)
        plot_batching(run, axes=axes)
        state = "OVERLOADED, the queue grows" if s["rho"] >= 1 else "stable"
        fig.text(
            0.01, 0.99,
            f"{s['batch_rate_per_s']:.1f} batches/s (formula {s['batch_rate_closed_form']:.1f}), "
            f"{100 * s['timer_share']:.0f}% closed by the timer, ρ (closed form) = {s['rho']:.2f}: {state}",
            va="top", fontsize=9,
        )  # fmt: skip
        fig.tight_layout(rect=(0, 0, 1, 0.93))
    return dict(s)


def _widget(callback, **sliders):
    """``callback`` under ipywidgets ``sliders`` (labels 110 px wide), seed 0, drawing on every
    change."""
    import ipywidgets as w

    for slider in sliders.values():
        if isinstance(slider, w.Widget):
            slider.style.description_width = "110px"
    return w.interactive(callback, {"manual": False}, **sliders, seed=w.fixed(0), show=w.fixed(True))


def widget_threads():
    """The notebook's what-if widget over :func:`what_if_threads` (RTT, round trips, threads)."""
    import ipywidgets as w

    return _widget(
        what_if_threads,
        rtt_ms=w.FloatSlider(value=0.5, min=0.1, max=3.0, step=0.1, description="RTT (ms)"),
        round_trips=w.IntSlider(value=4, min=2, max=20, description="round trips"),
        threads=w.IntSlider(value=8, min=1, max=32, description="worker threads"),
        statement_ms=w.fixed(0.3),
    )


def widget_batching():
    """The notebook's what-if widget over :func:`what_if_batching` (load, batch limits, N, the share
    of N paid per batch, servers)."""
    import ipywidgets as w

    share = SEED_GROUP_COMMIT.per_batch_ms / SEED_GROUP_COMMIT.commit_ms
    return _widget(
        what_if_batching,
        rate_per_s=w.IntSlider(value=600, min=100, max=1500, step=50, description="requests/s"),
        max_rows=w.IntSlider(value=20, min=1, max=40, description="max_rows"),
        max_wait_ms=w.IntSlider(value=20, min=0, max=60, description="max_wait_ms"),
        commit_ms=w.IntSlider(value=16, min=2, max=40, description="N (ms)"),
        fixed_share=w.FloatSlider(value=round(share, 2), min=0.1, max=1.0, step=0.01, description="per-batch share"),
        servers=w.IntSlider(value=1, min=1, max=3, description="servers"),
    )
