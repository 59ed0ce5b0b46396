"""08 · The notebook's explore() and what-if widget.
"""

from __future__ import annotations

from dataclasses import replace

from ..plotting import COLORS, decorate, live_figure
from .closed_form import (
    fluid,
    healthy_in_flight,
)
from .figures import (
    _event_lines,
    log_calls_axis,
)
from .scenario import (
    SEED_INCIDENT,
)


def _plot_explore(sc, broken, fixed, axes):
    """The widget's two panels: calls in flight with lost and working timeouts; heap and GC."""
    t = broken["t"]
    # equal until the hang: the working line dashed on top, so that both show
    axes[0].plot(t, broken["in_flight"], color=COLORS["stuck"], label="timeouts lost")
    axes[0].plot(t, fixed["in_flight"], color=COLORS["recovered"], ls="--", label="timeouts work")
    log_calls_axis(axes[0], max(float(broken["in_flight"].max()), float(fixed["in_flight"].max())))
    decorate(axes[0], xlabel="time (s)", legend=False)
    axes[1].plot(t, 100 * broken["heap_mb"] / sc.heap_mb, color=COLORS["queue"], label="heap used")
    axes[1].plot(t, 100 * broken["gc"], color=COLORS["wasted"], label="time in full GC")
    axes[1].plot(t, 100 * fixed["heap_mb"] / sc.heap_mb, color=COLORS["recovered"], ls="--",
                 label="heap used, timeouts work")
    decorate(axes[1], xlabel="time (s)", ylabel="% of heap / of time", ylim=(0, 105))
    for ax in axes:
        _event_lines(ax, sc)
        ax.legend(loc="upper left", fontsize=7)
    return axes


def explore(
    rate_per_s: float = SEED_INCIDENT.rate_per_s,
    hung_share: float = 0.25,
    heap_mb: float = SEED_INCIDENT.heap_mb,
    timeout_ms: float = SEED_INCIDENT.timeout_ms,
    plot: bool = True,
) -> dict:
    """The what-if widget: the fluid model of one B machine with lost timeouts vs working ones.

    Returns the key numbers: ``leak_per_s`` (λ_hung), ``healthy_in_flight`` (Little),
    ``gc50_s`` and ``dead_s`` (None if never within the horizon), ``heap_end_pct``.
    """
    sc = replace(
        SEED_INCIDENT,
        rate_per_s=rate_per_s,
        hung_share=hung_share,
        heap_mb=heap_mb,
        base_live_mb=min(SEED_INCIDENT.base_live_mb, 0.5 * heap_mb),
        timeout_ms=timeout_ms,
        node_capacity_per_s=max(SEED_INCIDENT.node_capacity_per_s, 2.0 * rate_per_s),
    )
    broken = fluid(sc)
    fixed = fluid(replace(sc, fix="no_shutdown"))
    out = {
        "leak_per_s": sc.leak_per_s,
        "healthy_in_flight": healthy_in_flight(sc.rate_per_s, hung_share, sc.timeout_ms, sc.service_ms, sc.tick_ms),
        "fixed_in_flight_end": float(fixed["in_flight"][-1]),
        "in_flight_end": float(broken["in_flight"][-1]),
        "gc50_s": broken["gc50_s"],
        "dead_s": broken["dead_s"],
        "heap_end_pct": 100.0 * float(broken["heap_mb"][-1]) / sc.heap_mb,
    }
    if plot:
        live = live_figure("08.explore", 1, 2, figsize=(8.0, 3.0), layout=None)  # kept between slider moves
        live.replot(_plot_explore, sc, broken, fixed)
        live.show()
    return out


def widget():
    """The notebook's what-if widget over :func:`explore`: call rate, share of calls to the hung
    provider, heap size and timeout."""
    import ipywidgets as w

    style = {"description_width": "170px"}
    layout = w.Layout(width="480px")
    return w.interactive(
        explore,
        rate_per_s=w.FloatSlider(value=SEED_INCIDENT.rate_per_s, min=20.0, max=400.0, step=10.0,
                                 description="calls/s", style=style, layout=layout),
        hung_share=w.FloatSlider(value=0.25, min=0.0, max=1.0, step=0.05,
                                 description="share to hung provider", style=style, layout=layout),
        heap_mb=w.FloatSlider(value=SEED_INCIDENT.heap_mb, min=256.0, max=4096.0, step=256.0,
                              description="heap (MB)", style=style, layout=layout),
        timeout_ms=w.FloatSlider(value=SEED_INCIDENT.timeout_ms, min=100.0, max=5000.0, step=100.0,
                                 description="timeout (ms)", style=style, layout=layout),
        plot=w.fixed(True),
    )
